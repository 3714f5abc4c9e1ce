"""The composition learner (``blackjack-train --env shoe --algo linear``): from nothing it learns to play
and bet with the unseen cards, its chunks merge exactly (resume = uninterrupted, same seed = same run),
its run directory plays in ``blackjack-evaluate`` exactly as the learner's own evaluation, and bad
input is one line, exit 2, nothing written."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from chunk_learners import (
    assert_cli_run_resumes_exactly,
    assert_refused_in_one_line,
    assert_resume_equals_uninterrupted,
)

from blackjack_env import Action, BlackjackEnv
from blackjack_env import engine as E
from blackjack_env.agents import load_agent
from blackjack_env.agents.linear import LinearAgent, band_weights
from blackjack_env.counting import system
from blackjack_env.evaluate.cli import main as evaluate_main
from blackjack_env.evaluate.runner import simulate
from blackjack_env.linear_policy import FEATURE_NAMES, LP_N_BANDS, LinearModel, linear_decision
from blackjack_env.rules import Rules
from blackjack_env.simulate import Policy, Table
from blackjack_env.train.cli import main as train_main

#: One deck dealt to 75%: the composition moves far, so a short run learns what it is worth.
RULES = Rules.preset("ultimatebet").with_settings(["decks=1", "penetration=0.75"])
ARGV_RULES = ["--set", "decks=1", "--set", "penetration=0.75"]
T, FIVE = FEATURE_NAMES.index("T"), FEATURE_NAMES.index("5")
S, H = int(Action.STAND), int(Action.HIT)


@pytest.fixture(scope="module")
def learned() -> LinearAgent:
    """2.6 million rounds in one seat, bets 1 and 8: about ten seconds once compiled."""
    agent = LinearAgent(RULES, bets=(1, 8), seed=3, chunk_rounds=1 << 18)
    while agent.rounds < 2_600_000:
        agent.learn_chunk()
    return agent


def _flat(model: LinearModel, agent: LinearAgent) -> Policy:
    return Policy.from_linear(model.with_bets((1.0,)), RULES, agent.basic_table())


def test_flat_bet_gain_over_basic_rises_above_zero(learned: LinearAgent) -> None:
    """Played at a flat bet on identical shoes, the learned play beats basic strategy (it was given
    none of it): the gain from playing the composition, which the untrained model is far from."""
    basic = Policy.from_table(learned.basic_table())
    untrained = LinearAgent(RULES, bets=(1, 8)).model()
    before = simulate(RULES, _flat(untrained, learned), 200_000, seed=11, baseline=basic).result.diff()
    after = simulate(RULES, _flat(learned.model(), learned), 1_000_000, seed=11, baseline=basic).result.diff()
    assert before[0] < -0.1  # standing on everything
    gain, stderr, _ = after
    assert gain > 4 * stderr, (gain, stderr)


def test_betting_model_rises_with_the_hilo_count_and_the_tens(learned: LinearAgent) -> None:
    """The round's learned value grows with the ten excess and with Hi-Lo's true count (TC = -tags . x),
    and the bets follow it: 8 at high counts, 1 at low ones, filed by Hi-Lo's count by the simulator."""
    w = learned.model().bet
    tags = np.array(system("hilo").tags, float)
    assert w[T] > 0 > w[FIVE]
    assert -(w[1:] @ tags) / (tags @ tags) > 0.003  # value per true count: about 0.5% published
    run = simulate(RULES, Policy.from_linear(learned.model(), RULES, learned.basic_table()), 500_000, seed=12)
    rows = {row["true_count"]: row for row in run.result.by_true_count() or []}
    assert rows[5]["avg_bet"] > 6.0 and rows[-3]["avg_bet"] < 1.1  # (the count is not the composition)
    assert rows[5]["ev_per_unit_bet"] > 0 > rows[-3]["ev_per_unit_bet"]


def test_insurance_is_learned_by_the_tens(learned: LinearAgent) -> None:
    ins = learned.model().insurance[0]  # no natural: [decline, take]
    assert ins[1, T] - ins[0, T] > 0.02  # 3/52 of a unit per excess ten per deck, published
    assert ins[1, 0] < ins[0, 0]  # declined at a full shoe's composition


def test_a_model_valuing_the_chart_plays_it_exactly() -> None:
    """A model whose values rank each cell's actions as basic strategy's preference list (no composition
    weights, insurance declined) plays every round exactly as basic strategy, at a table of 3 too: the
    compiled decision reads the same cells and legal actions as the table policy."""
    rules = Rules.preset("ultimatebet").with_settings(["penetration=0.75"])
    basic = Policy.from_table(LinearAgent(rules).basic_table())
    order = basic.table.actions  # [row, up, k]: the k-th preferred action
    play = np.zeros((*order.shape, len(FEATURE_NAMES)))
    rows, ups, ranks = np.indices(order.shape)
    play[rows, ups, order, 0] = order.shape[-1] - ranks
    insurance = np.zeros((2, 2, len(FEATURE_NAMES)))
    insurance[:, 1, 0] = -1.0
    model = LinearModel(play, np.ones(order.shape, np.bool_), insurance, np.zeros(len(FEATURE_NAMES)), (1.0,))
    policy = Policy.from_linear(model, rules, basic.table)
    for table in (Table(), Table(3, 1, basic)):
        result = simulate(rules, policy, 100_000, seed=9, baseline=basic, table=table).result
        assert result.diff() == (0.0, 0.0, 100_000) and result.ev(0) == result.ev(1)


def test_resume_equals_uninterrupted_and_same_seed_same_run(tmp_path: Path) -> None:
    rules = Rules.preset("ultimatebet").with_settings(["penetration=0.75"])

    assert_resume_equals_uninterrupted(
        lambda seed: LinearAgent(rules, bets=(1, 2), seats=3, seat=-1, seed=seed, chunk_rounds=1 << 13), tmp_path
    )


def _digest(agent: LinearAgent, names: tuple[str, ...]) -> str:
    return hashlib.sha256(b"".join(np.ascontiguousarray(getattr(agent, n)).tobytes() for n in names)).hexdigest()[:16]


@pytest.mark.parametrize(
    ("seat", "play", "pre"),
    [(1, "89b6fd92a42ca46b", "f1ceebb47b49f8a1"), (-1, "0cfafb081f55f925", None)],
)
def test_statistics_are_those_of_the_kernel_before_its_speed_up(seat: int, play: str, pre: str | None) -> None:
    """Two chunks at a table of 3 (the second played with the first's weights) give, to the last bit,
    the statistics the one-sample-at-a-time kernel gave before the speed-up (packed sums, one call
    site of the engine, the helpers inlined): digests recorded then. The round-before-the-deal sums
    of seats learning together are now added as one sample per round (their summed weight, their
    weighted mean result): the same sums to rounding (recorded values); with one learning seat they
    are exact too. (Plain IEEE double arithmetic, no fast-math: the digests hold on any x86-64.)
    One depth band: the model of every depth, as the kernel had then."""
    rules = Rules.preset("ultimatebet").with_settings(["penetration=0.75"])
    agent = LinearAgent(rules, bets=(1, 2), seats=3, seat=seat, seed=7, chunk_rounds=1 << 13, depth_bands=1)
    agent.learn_chunk()
    agent.learn_chunk()
    assert _digest(agent, ("xtx", "xty", "ins_xtx", "ins_xty")) == play
    if pre is not None:
        assert _digest(agent, ("pre_xtx", "pre_xty")) == pre
    else:
        before = [-10436.331201497547, 153.10305209269958, -100.74880789539333, -245.76082574722753]
        before += [-182.42206310151582, -335.41577241390485, -133.51987873805987, -57.5465852445454]
        before += [-79.7541628066391, 353.4863748644318, 628.5786689901632]
        assert np.allclose(agent.pre_xty, before, rtol=1e-12, atol=0)
        assert np.isclose(agent.pre_xtx[0, 0], 49227.83795153251, rtol=1e-12, atol=0)


def test_ridge_solve_is_the_documented_ridge_exactly() -> None:
    """The fast ridge_solve gives, bit for bit, the module docstring's ridge written out directly (the
    full symmetric X'WX, S on the diagonal, every (cell, action) solved), and 0 where there is no data."""
    from blackjack_env.agents.linear import RIDGE, ridge_solve

    rng = np.random.default_rng(5)
    x = np.concatenate([np.ones((40, 200, 1)), rng.normal(0, 2, (40, 200, 10))], axis=2)
    w = rng.uniform(0.5, 3.0, (40, 200))
    w[::3] = 0.0  # a third of the cells never visited
    upper = np.triu(np.einsum("cs,csi,csj->cij", w, x, x))
    full = upper + np.swapaxes(np.triu(upper, 1), 1, 2)
    xty = np.einsum("cs,csi,cs->ci", w, x, rng.normal(0, 1, (40, 200)))
    got, tried = ridge_solve(upper + np.tril(rng.normal(size=upper.shape), -1), xty)  # (below: not read)
    n = full[:, 0, 0]
    safe = np.where(n > 0, n, 1.0)
    scale = np.where((n > 0)[:, None], np.maximum(np.diagonal(full, axis1=1, axis2=2) / safe[:, None], 1e-3), 1.0)
    scale[:, 0] = 1.0
    rhs = xty.copy()
    rhs[:, 0] += RIDGE * np.where(n > 0, xty[:, 0] / safe, 0.0)
    want = np.linalg.solve(full + RIDGE * scale[:, :, None] * np.eye(len(FEATURE_NAMES)), rhs[..., None])[..., 0]
    assert np.array_equal(tried, n > 0) and np.array_equal(got, want) and not got[::3].any()


def _bet_model(value: float, bets: tuple[float, ...], **kelly: float) -> LinearModel:
    """A model whose round value before the deal is ``value`` at every composition."""
    nf = len(FEATURE_NAMES)
    bet = np.zeros(nf)
    bet[0] = value
    play = np.zeros((*LinearAgent(RULES).xty.shape[-4:-1], nf))
    return LinearModel(play, np.zeros(play.shape[:3], np.bool_), np.zeros((2, 2, nf)), bet, bets, **kelly)


@pytest.mark.parametrize(
    ("value", "bets", "ev_max", "kelly"),
    [
        (0.03, (1, 2, 4, 8), 8, 8),
        (0.01, (1, 2, 4, 8), 8, 2),
        (0.001, (1, 2, 4, 8), 8, 1),
        (-0.01, (1, 2, 4, 8), 1, 1),
        (0.001, (0, 1, 2, 4, 8), 8, 0),
        (-0.01, (0, 1, 8), 0, 0),
    ],
)
def test_kelly_bet_is_the_largest_allowed_at_or_below_its_target(
    value: float, bets: tuple[float, ...], ev_max: float, kelly: float
) -> None:
    """EV-maximising: the largest bet where the value is positive, else the smallest. Kelly with F = 0.5 of
    B = 1000 units: the largest allowed at or below F B v / 1.3 (11.5, 3.8, 0.38 units here), else the smallest
    (0 sits the round out)."""
    from blackjack_env.engine import ST_SIZE
    from blackjack_env.linear_policy import linear_bet

    st = np.zeros(ST_SIZE, np.int64)
    assert linear_bet(_bet_model(value, bets).params(RULES), st, True) == ev_max
    params = _bet_model(value, bets, kelly=0.5, bankroll=1000.0).params(RULES)
    assert linear_bet(params, st, True) == kelly


def test_kelly_settings_are_saved_and_bad_ones_are_one_line(tmp_path: Path) -> None:
    agent = LinearAgent(RULES, bets=(1, 8), kelly=0.25, bankroll=400.0)
    agent.save(tmp_path)
    assert (LinearAgent.load(tmp_path).kelly, LinearAgent.load(tmp_path).bankroll) == (0.25, 400.0)
    model = LinearModel.load(tmp_path / "linear-model.json")
    assert (model.kelly, model.bankroll) == (0.25, 400.0) and model.with_bets((1.0, 2.0)).kelly == 0.25
    assert "kelly" not in LinearAgent(RULES).model().to_dict()
    for fraction, bankroll in ((1.5, 100.0), (0.5, 0.0), (0.0, 100.0)):
        with pytest.raises(ValueError, match=r"^a Kelly bet needs a fraction in \(0, 1\] and a bankroll > 0"):
            LinearAgent(RULES, kelly=fraction, bankroll=bankroll)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--kelly", "0.5", "--bankroll", "100"], "--kelly and --bankroll only with --env shoe --algo linear"),
        (["--depth-bands", "1"], "--depth-bands only with --env shoe --algo linear"),
    ],
)
def test_the_composition_learners_options_belong_to_it(tmp_path: Path, capsys, options: list[str], says: str) -> None:
    out = tmp_path / "run"
    argv = ["--env", "shoe", "--algo", "tabular", *options, *ARGV_RULES]
    assert train_main([*argv, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err
    assert not out.exists()


def _evaluate(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert evaluate_main([*argv, *ARGV_RULES, "--json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


def test_run_dir_plays_in_evaluate_exactly(learned: LinearAgent, tmp_path: Path, capsys) -> None:
    """blackjack-evaluate --policy RUN_DIR plays the saved model exactly as the learner's own
    evaluation does: its bets, --spread 1-1 (a flat bet), and at a table with --baseline."""
    learned.save(tmp_path)
    model = learned.model()
    assert np.array_equal(LinearModel.load(tmp_path / "linear-model.json").params(RULES), model.params(RULES))
    own = simulate(RULES, Policy.from_linear(model, RULES, learned.basic_table()), 200_000, seed=11).result
    summary = _evaluate(["--policy", str(tmp_path), "--rounds", "2e5", "--seed", "11"], capsys)
    assert summary["ev"] == own.ev() and summary["avg_bet"] == own.avg_bet() > 1.0
    loaded = load_agent(tmp_path)  # the run directory loads as the learner, whose model() is what plays
    assert isinstance(loaded, LinearAgent) and loaded.model().to_dict() == model.to_dict()
    with pytest.raises(ValueError, match=r"linear-model\.json"):
        loaded.to_table()
    basic = Policy.from_table(learned.basic_table())
    table = Table(3, 1, basic)
    flat = simulate(RULES, _flat(model, learned), 200_000, seed=4, baseline=basic, table=table).result
    argv = ["--policy", str(tmp_path), "--spread", "1-1", "--seats", "3", "--seat", "1", "--baseline", "basic"]
    summary = _evaluate([*argv, "--rounds", "2e5", "--seed", "4"], capsys)
    assert summary["avg_bet"] == 1.0
    assert (summary["ev"], summary["ev_diff"]) == (flat.ev(), flat.diff()[0])


def test_bad_model_file_is_one_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "model.json"
    data = LinearAgent(RULES).model().to_dict()
    data["bet"] = [0.0, 1.0]
    bad.write_text(json.dumps(data))
    assert evaluate_main(["--policy", str(bad), *ARGV_RULES, "--rounds", "1000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bet: needs 11 finite weights" in err, err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--env", "shoe"], "cut card"),
        (["--env", "shoe", "--bets", "1,4,2", "--set", "penetration=0.75"], "--bets must increase"),
        (
            ["--env", "shoe", "--bets", "0,1", "--seats", "3", "--seat", "all", "--set", "penetration=0.75"],
            "other players",
        ),
        (["--set", "penetration=0.75"], "add --env shoe"),
        (
            ["--env", "shoe", "--system", "hilo", "--set", "penetration=0.75"],
            "--system is not used by the composition learner",
        ),
        (["--env", "shoe", "--kelly", "0.5", "--set", "penetration=0.75"], "a Kelly bet needs"),
        (["--env", "shoe", "--depth-bands", "5", "--set", "penetration=0.75"], "depth bands must be a whole number"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path: Path, capsys, argv: list[str], says: str) -> None:
    assert_refused_in_one_line(["--algo", "linear", *argv], says, tmp_path, capsys)


def test_cli_run_resumes_exactly(tmp_path: Path) -> None:
    """A run in two halves (--resume) equals one uninterrupted run: statistics, model, curve."""
    common = ["--env", "shoe", "--algo", "linear", *ARGV_RULES, "--seats", "2", "--seat", "all"]
    common += [
        "--chunk-steps",
        "8192",
        "--seed",
        "2",
        "--eval-every",
        "16384",
        "--eval-rounds",
        "10000",
        "--no-progress",
    ]
    assert_cli_run_resumes_exactly(common, 16384, tmp_path, "linear_stats.npz", "linear-model.json")


def _stand_or_hit_model(stand_band: int, edges: tuple[int, ...]) -> LinearModel:
    """Every cell valued to stand in band ``stand_band`` and to hit in every other band."""
    shape = (*LinearAgent(RULES).xty.shape[-4:-1], len(FEATURE_NAMES))
    bands = np.zeros((len(edges) + 1, *shape))
    bands[:, :, :, H, 0] = 1.0
    bands[stand_band, :, :, H, 0] = -1.0
    tried = np.ones(shape[:3], np.bool_)
    nf = len(FEATURE_NAMES)
    return LinearModel(bands.mean(0), tried, np.zeros((2, 2, nf)), np.zeros(nf), (1.0,), "", 0, 0, edges, bands)


@pytest.mark.parametrize(
    ("edge", "steps", "band"),
    [
        pytest.param(49, (), 1, id="49-unseen-at-the-edge"),
        pytest.param(48, (), 0, id="49-unseen-above-the-edge"),
        pytest.param(48, (H,), 1, id="48-unseen-after-a-hit"),
    ],
)
def test_a_model_plays_the_band_of_the_unseen_cards(edge: int, steps: tuple[int, ...], band: int) -> None:
    """One seat, one deck: before its first decision 3 cards are seen (the hole card is unseen), 49
    are not; a hit leaves 48. A band starts at its edge's unseen count: the compiled decision and
    the model read back from its JSON play the band the unseen cards fall in."""
    env = BlackjackEnv(rules=RULES)
    env.reset(seed=0, options={"cards": ["2", "9", "3", "8", "2"]})
    for action in steps:
        env.step(action)
    model = _stand_or_hit_model(band, (edge,))
    for played in (model, LinearModel.from_dict(json.loads(json.dumps(model.to_dict())))):
        params = played.params(RULES)
        assert env.action_masks()[H]
        assert linear_decision(params, env._st, env._hands, np.zeros(E.N_ACTIONS, np.bool_)) == S
    other = _stand_or_hit_model(1 - band, (edge,)).params(RULES)
    assert linear_decision(other, env._st, env._hands, np.zeros(E.N_ACTIONS, np.bool_)) == H


def _band_sums(rng: np.random.Generator, slopes: tuple[float, float], n: int = 200_000) -> tuple[np.ndarray, ...]:
    """The sums of one (cell, action) per band: results of unit variance around 0.1 + slope * e_T."""
    nf = len(FEATURE_NAMES)
    xtx, xty, yy = np.zeros((2, nf, nf)), np.zeros((2, nf)), np.zeros((2, 2))
    for b, slope in enumerate(slopes):
        x = np.zeros((n, nf))
        x[:, 0] = 1.0
        x[:, 1:] = rng.normal(0.0, 1.0, (n, nf - 1))
        y = 0.1 + slope * x[:, T] + rng.normal(0.0, 1.0, n)
        xtx[b], xty[b] = np.triu(x.T @ x), x.T @ y
        yy[b] = (y @ y, n)
    return xtx, xty, yy


@pytest.mark.parametrize(("slopes", "apart"), [((0.05, 0.05), False), ((0.05, 0.0), True)])
def test_bands_are_fitted_apart_only_where_depth_changes_the_value(slopes: tuple[float, float], apart: bool) -> None:
    """The same line at both depths is answered by one fit; a tens slope that vanishes deeper in the
    shoe (0.05 against 0, 25 standard errors) gets a fit per band, each near its own slope."""
    xtx, xty, yy = _band_sums(np.random.default_rng(5), slopes)
    weights, tried, pooled = band_weights(xtx, xty, yy)
    assert tried
    assert np.array_equal(weights[0], weights[1]) != apart
    if apart:
        assert np.allclose(weights[:, T], slopes, atol=0.01)
    else:
        assert np.array_equal(weights[0], pooled) and abs(pooled[T] - 0.05) < 0.01


def test_a_shoe_dealt_to_fewer_cards_than_bands_leaves_a_band_empty() -> None:
    """One deck dealt to 3%: three bands' edges round to 51 and 51, the middle band never played; the
    model exports and compiles."""
    rules = Rules.preset("ultimatebet").with_settings(["decks=1", "penetration=0.03"])
    agent = LinearAgent(rules, seed=1, chunk_rounds=1 << 10, depth_bands=3)
    agent.learn_chunk()
    assert agent.depth_edges == (51, 51) and not agent.xtx[1].any() and agent.xtx[2].any()
    assert agent.model().params(rules)[LP_N_BANDS] == 3


def test_a_run_saved_before_depth_bands_loads_with_one(tmp_path: Path) -> None:
    """A run saved without depth bands (no ``depth_bands`` in agent.json, no residual sums) loads as
    it learned: one band, its statistics intact, the same model."""
    agent = LinearAgent(RULES, seed=4, chunk_rounds=1 << 12, depth_bands=1)
    agent.learn_chunk()
    agent.save(tmp_path)
    manifest = json.loads((tmp_path / "agent.json").read_text())
    del manifest["depth_bands"]
    (tmp_path / "agent.json").write_text(json.dumps(manifest))
    with np.load(tmp_path / "linear_stats.npz") as data:
        old = {name: data[name] for name in data.files if name != "yy"}
    old["xtx"], old["xty"] = old["xtx"][0], old["xty"][0]
    np.savez(tmp_path / "linear_stats.npz", **old)
    loaded = LinearAgent.load(tmp_path)
    assert loaded.depth_bands == 1 and np.array_equal(loaded.xtx, agent.xtx) and not loaded.yy.any()
    assert loaded.model().to_dict() == agent.model().to_dict()


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda d: d["depth"].update(edges=[30, 35], bands=[*d["depth"]["bands"], {}]), "none above the one before"),
        (lambda d: d["depth"]["bands"].pop(), "1 edges need 2 bands"),
        (lambda d: d.update(format=3), "format must be 1..2"),
        (lambda d: d["depth"]["bands"][1].update({"hard 5": {"2": {"split": [0.0] * 11}}}), "does not have"),
    ],
)
def test_a_bad_depth_section_is_refused_naming_it(change: Any, says: str) -> None:
    model = _stand_or_hit_model(0, (35,))
    data = json.loads(json.dumps(model.to_dict()))
    assert data["format"] == 2 and LinearAgent(RULES, depth_bands=1).model().to_dict()["format"] == 1
    data["play"]["hard 5"]["2"].pop("split", None)
    change(data)
    with pytest.raises(ValueError, match=says):
        LinearModel.from_dict(data)
