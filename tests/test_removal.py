"""Effects of removal from the solver, the systems' BC/PE/IC, and ``blackjack-strategy --removal``.

The published test vectors (tests/data/counting_systems.json, with sources) are the Wizard of Odds
six-deck table (bjstrat.net's composition-dependent analyser, strategy re-optimised) and Blackjack
Apprenticeship's BC/PE/IC (game unstated). Three games are analysed once each (about 9 s apiece)
into a module-wide disk cache, which the CLI tests then read.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import blackjack_env.solver.removal as removal_module
from blackjack_env.counting import SYSTEMS, VALUES, weighted_correlation
from blackjack_env.evaluate.strategy import main
from blackjack_env.rules import Rules
from blackjack_env.solver import Removal, cache_dir, effects_of_removal, system_efficiencies

DATA = json.loads((Path(__file__).parent / "data" / "counting_systems.json").read_text())
LABELS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "A"]

#: The Wizard of Odds game as printed (six decks, double any two, DAS, split once), surrender not
#: mentioned, and the same game with late surrender (the default of ``Rules``).
WOO_S17 = Rules(hit_soft_17=False, split_to=2, surrender="none")
WOO_S17_LS = Rules(hit_soft_17=False, split_to=2)
WOO_H17_LS = Rules(split_to=2)
#: The CLI's spelling of WOO_S17_LS (the default preset is 6D H17 DAS LS).
WOO_S17_LS_ARGS = ["--set", "hit_soft_17=no", "--set", "split_to=2"]


@pytest.fixture(scope="module", autouse=True)
def _module_cache(tmp_path_factory):
    """One disk cache for the module: each game is analysed once, and the CLI reads it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BLACKJACK_ENV_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


def _vector(effects: dict[str, float]) -> np.ndarray:
    return np.array([effects[v] for v in VALUES])


def _published(column: str) -> dict[str, float]:
    return DATA[column]["eor"]


# ----------------------------------------------------------------------- effects of removal
@pytest.mark.parametrize(("rules", "column"), [(WOO_S17_LS, "eor_six_decks_s17"), (WOO_H17_LS, "eor_six_decks_h17")])
def test_eor_with_late_surrender_matches_the_published_table(rules: Rules, column: str) -> None:
    """The page does not mention surrender; with late surrender both of its columns are matched
    within 0.004 (S17) and 0.0035 (H17) per card, without it ours are ~9% smaller (next test).
    The remaining gap is the published analyser's composition-dependent strategy against our
    total-dependent one (and our split approximation): 0.005 leaves room for that and no more."""
    removal = effects_of_removal(rules)
    published = _published(column)
    assert list(removal.eor) == LABELS
    for label in LABELS:
        assert removal.eor[label] == pytest.approx(published[label], abs=0.005), label
    assert weighted_correlation(_vector(removal.eor), _vector(published)) > 0.999


def test_eor_of_the_game_as_printed_has_the_published_shape() -> None:
    """Without surrender (as the page's rule list reads) the shape is the same (correlation > 0.99,
    every sign, the 5 the best card to remove and the ace the worst) but our EORs are about 9%
    smaller, up to 0.017 per card: surrender is evidently part of the published game."""
    removal = effects_of_removal(WOO_S17)
    ours, published = _vector(removal.eor), _vector(_published("eor_six_decks_s17"))
    assert weighted_correlation(ours, published) > 0.99
    assert (np.sign(ours) == np.sign(published)).all()
    assert VALUES[int(np.argmax(ours))] == "5" and VALUES[int(np.argmin(ours))] == "A"
    assert np.abs(ours - published).max() < 0.02
    assert 0.85 < float(ours @ ours) / float(ours @ published) < 1.0  # smaller, by the regression slope


@pytest.mark.parametrize("rules", [WOO_S17, WOO_S17_LS, WOO_H17_LS], ids=lambda r: r.describe())
def test_reoptimising_never_does_worse_than_the_fixed_basic_strategy(rules: Rules) -> None:
    """Both start from the same full-shoe EV; re-optimising for the depleted shoe can only gain."""
    removal = effects_of_removal(rules)
    assert list(removal.eor_fixed) == LABELS
    for label in LABELS:
        assert removal.eor[label] >= removal.eor_fixed[label] - 1e-9, label
    # removing a card changes the basic strategy only a little: the two differ by < 0.01 %
    assert max(abs(removal.eor[v] - removal.eor_fixed[v]) for v in LABELS) < 0.01


def test_insurance_eor_is_the_exact_change_of_the_insurance_bet() -> None:
    """Ace up, hole card from the other 311 cards (96 tens): the bet as placed (half a unit at 2:1)
    is worth 1.5 P(ten) - 0.5 units; in percent of the initial bet per card removed."""
    removal = effects_of_removal(WOO_S17_LS)

    def value(tens: int, cards: int) -> float:
        return 100 * (1.5 * tens / cards - 0.5)

    for label in LABELS:
        expected = value(95 if label == "10" else 96, 310) - value(96, 311)
        assert removal.insurance_eor[label] == pytest.approx(expected, rel=1e-12)
    assert removal.insurance_eor["10"] < 0 < removal.insurance_eor["5"]


def test_an_infinite_deck_has_no_effects_of_removal() -> None:
    with pytest.raises(ValueError, match=r"finite shoe.*infinite deck"):
        effects_of_removal(Rules(decks=0))


def test_effects_are_kept_on_disk_and_read_back_equal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second call reads the file (no analysis runs) and gives what a fresh analysis gives."""
    fresh = effects_of_removal(WOO_S17_LS, cache=False)
    effects_of_removal(WOO_S17_LS)  # written now if no earlier test wrote it
    assert list(cache_dir().glob("removal-*.json"))

    def no_analysis(rules: Rules) -> Removal:
        raise AssertionError("the effects were recomputed instead of read from disk")

    monkeypatch.setattr(removal_module, "_compute", no_analysis)
    assert effects_of_removal(WOO_S17_LS) == fresh


# ----------------------------------------------------------------------- BC, PE, IC
@pytest.fixture(scope="module")
def efficiencies() -> dict[str, dict[str, float]]:
    return system_efficiencies(WOO_S17_LS)


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_bc_and_ic_match_the_published_figures(name: str, efficiencies) -> None:
    """IC is exact (the insurance EORs are affine in "is a ten": any tags correlate with them as
    with the +4/-9 tags), within 0.006 of the published two-digit figures. BC: the published game
    is unstated; 0.025 as for the BC from the published EORs (KO's gap, 0.021, is the largest)."""
    published = DATA["systems"][name]
    ours = efficiencies[name]
    assert ours["ic"] == pytest.approx(SYSTEMS[name].insurance_correlation(), abs=1e-12)
    assert ours["ic"] == pytest.approx(published["ic"], abs=0.006)
    assert ours["bc"] == pytest.approx(published["bc"], abs=0.025)


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_pe_is_near_the_published_figure(name: str, efficiencies) -> None:
    """The published PEs come from an unstated game and method (Griffin's are single-deck); ours
    are a normal approximation over a six-deck shoe dealt to 75%. Measured gaps are at most 0.037
    (Halves, whose PE is printed .56 and .57); 0.05 allows for the unstated conditions."""
    assert efficiencies[name]["pe"] == pytest.approx(DATA["systems"][name]["pe"], abs=0.05)


def test_pe_ranks_the_systems_as_published(efficiencies) -> None:
    """Hi-Lo plays worst; the level-two Hi-Opt II and Omega II beat every level-one count and
    Halves; Hi-Opt I (no ace) beats Hi-Lo and KO, as in the published figures."""
    pe = {name: row["pe"] for name, row in efficiencies.items()}
    assert min(pe, key=pe.get) == "hilo"
    for strong in ("hiopt2", "omega2"):
        assert all(pe[strong] > pe[weak] for weak in ("hilo", "ko", "hiopt1", "halves"))
    assert pe["hiopt1"] > max(pe["hilo"], pe["ko"])


# ----------------------------------------------------------------------- the command line
def test_cli_json_adds_the_removal_keys_in_percent(capsys) -> None:
    assert main([*WOO_S17_LS_ARGS, "--removal", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"rules", "ev", "chart", "insurance", "action_ev"} <= set(out)  # the existing keys stay
    removal = effects_of_removal(WOO_S17_LS)
    for key in ("eor", "eor_fixed", "insurance_eor"):
        assert list(out[key]) == LABELS
        assert out[key] == pytest.approx(getattr(removal, key), abs=1e-12)
    assert out["eor"]["5"] == pytest.approx(0.145, abs=0.005)  # percent: 0.145 %, not 0.00145
    assert set(out["systems"]) == set(SYSTEMS)
    for row in out["systems"].values():
        assert set(row) == {"bc", "pe", "ic"} and all(0 < v <= 1 for v in row.values())


def test_cli_chart_and_csv_print_the_tables(capsys) -> None:
    assert main([*WOO_S17_LS_ARGS, "--removal"]) == 0
    chart = capsys.readouterr().out
    assert "Effects of removal" in chart and "eor_fixed" in chart and "re-optimised" in chart
    assert all(name in chart for name in SYSTEMS)
    assert main([*WOO_S17_LS_ARGS, "--removal", "--format", "csv"]) == 0
    blocks = capsys.readouterr().out.split("\n\n")
    assert blocks[1].splitlines()[0] == "card,eor,eor_fixed,insurance_eor"
    assert [line.split(",")[0] for line in blocks[1].splitlines()[1:]] == LABELS
    assert blocks[2].splitlines()[0] == "system,bc,pe,ic"


def test_cli_without_removal_is_unchanged_and_an_infinite_deck_is_one_error_line(capsys) -> None:
    assert main([*WOO_S17_LS_ARGS, "--json"]) == 0
    assert "eor" not in json.loads(capsys.readouterr().out)
    assert main(["--set", "decks=inf", "--removal", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "infinite deck" in captured.err
