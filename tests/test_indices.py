"""Index generation (``blackjack_env.solver.indices``) and ``blackjack-strategy --indices``.

Published vectors (tests/data/index_plays.json, with sources): the Illustrious 18 and the Fab 4,
Hi-Lo, both secondary copies whose game is unconfirmed. Two games are generated once each (about
10-15 s apiece on two cores) into one disk cache shared by the test workers, which the CLI tests
then read.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from blackjack_env import counting
from blackjack_env.counting import system
from blackjack_env.evaluate.strategy import main
from blackjack_env.rules import Rules
from blackjack_env.solver import IndexTable, generate_indices
from blackjack_env.solver.indices import _Counts, tilted_shoe

DATA = json.loads((Path(__file__).parent / "data" / "index_plays.json").read_text())
#: The I18's game: 4 decks S17 DAS, no surrender, cut at 75%.
I18_GAME = Rules(decks=4, hit_soft_17=False, surrender="none", penetration=0.75)
I18_ARGS = ["--set", "decks=4", "--set", "hit_soft_17=no", "--set", "surrender=none", "--set", "penetration=0.75"]
#: The Fab 4 (H17 figures): 6 decks H17 DAS late surrender, cut at 75%.
FAB4_GAME = Rules(decks=6, hit_soft_17=True, surrender="late", penetration=0.75)
UPS = {"A", *(str(v) for v in range(2, 11))}
HANDS = {f"hard {t}" for t in range(4, 22)} | {f"soft {t}" for t in range(12, 22)} | {"pair A"}
HANDS |= {f"pair {v}" for v in range(2, 11)}


@pytest.fixture(scope="module", autouse=True)
def _shared_cache(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Path]:
    """One disk cache for every test worker of this run (the parent of a worker's temp dir)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if hasattr(request.config, "workerinput") else base
    cache = root / "indices-cache"
    cache.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BLACKJACK_ENV_CACHE", str(cache))
        yield cache


def _generate(cache: Path, rules: Rules, name: str) -> IndexTable:
    """Generate under a file lock: a second worker waits, then reads the first one's cache."""
    with open(cache / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return generate_indices(rules, name)


@pytest.fixture(scope="module")
def i18_table(_shared_cache: Path) -> IndexTable:
    return _generate(_shared_cache, I18_GAME, "hilo")


@pytest.fixture(scope="module")
def fab4_table(_shared_cache: Path) -> IndexTable:
    return _generate(_shared_cache, FAB4_GAME, "hilo")


def _find(table: IndexTable, published: dict) -> dict | None:
    """The generated entry answering the published entry's question in its cell."""
    same_cell = (e for e in table.entries if (e["hand"], e["up"]) == (published["hand"], published["up"]))
    return next((e for e in same_cell if e["hand"] == "insurance" or e["action"] == published["action"]), None)


def _agrees(generated: dict | None, published: dict) -> bool:
    return (
        generated is not None
        and generated.get("when", "at_or_above") == published.get("when", "at_or_above")
        and abs(generated["index"] - published["index"]) <= 1.0
    )


# ----------------------------------------------------------------------- the published indices
def test_illustrious_18_within_one_of_the_published(i18_table: IndexTable) -> None:
    """The mark: at least 15 of the 18 within 1 (same play, same direction). As run:
    16 of 18; 12 v 2 (stand at +4.1) and 10,10 v 6 (split at +5.1) are the two further off."""
    published = DATA["illustrious_18"]["entries"]
    assert len(published) == 18
    agree = [p for p in published if _agrees(_find(i18_table, p), p)]
    assert len(agree) >= 15, [(p["hand"], p["up"], _find(i18_table, p)) for p in published if p not in agree]


def test_fab_4_surrenders_six_decks_h17(fab4_table: IndexTable) -> None:
    """Reported, not forced: 3 of 4 within 1. 15 v A comes out at -1.25: this game's basic strategy
    already surrenders 15 v A (H17), so an index above 0 (the printed +1) would contradict it."""
    published = DATA["fab_4"]["entries_h17"]
    found = {(p["hand"], p["up"]): _find(fab4_table, p) for p in published}
    assert all(e is not None and e["action"] == "R" and e["when"] == "at_or_above" for e in found.values())
    assert sum(_agrees(found[p["hand"], p["up"]], p) for p in published) >= 3
    assert found["hard 15", "A"]["index"] < 0


def test_signs_are_sane(i18_table: IndexTable) -> None:
    """16 v 10 stands near 0, insurance near +3, 10,10 splits only at high counts; every gain >= 0."""
    entry = {(e["hand"], e["up"], e.get("action")): e for e in i18_table.entries}
    assert -1 < entry["hard 16", "10", "S"]["index"] < 1
    assert 2 < entry["insurance", "A", None]["index"] < 4
    assert entry["pair 10", "6", "P"]["index"] > 3
    assert entry["hard 13", "2", "S"]["index"] < 0  # stands at small negative counts, hits below
    assert all(e["gain_per_100"] >= 0 for e in i18_table.entries)
    top = max(i18_table.entries, key=lambda e: e["gain_per_100"])
    assert top["hand"] == "insurance"  # the most valuable play, as in every published ranking


# ----------------------------------------------------------------------- the format
def test_entries_are_in_the_counting_strategys_format(i18_table: IndexTable) -> None:
    keys = {"hand", "up", "index", "action", "when", "gain_per_100"}
    for e in i18_table.entries:
        if e["hand"] == "insurance":
            assert set(e) == {"hand", "up", "index", "gain_per_100"} and e["up"] == "A"
            continue
        assert set(e) == keys, e
        assert e["hand"] in HANDS and e["up"] in UPS
        assert e["action"] in ("S", "H", "D", "P", "R") and e["when"] in ("at_or_above", "below")
        assert e["action"] in (("P", "R") if e["hand"].startswith("pair") else ("S", "H", "D", "R"))
        assert -10 <= e["index"] <= 12 and isinstance(e["index"], float)
    cells = [(e["hand"], e["up"], e.get("action")) for e in i18_table.entries]
    assert len(cells) == len(set(cells))  # one entry per question of a cell


def test_entries_round_trip_through_the_counting_strategy(i18_table: IndexTable) -> None:
    """A counting strategy takes the generated list as its ``indices`` unchanged."""
    strategy = counting.CountingStrategy.from_dict({"system": "hilo", **i18_table.to_json()})
    assert len(strategy.indices) == len(i18_table.entries)
    for parsed, e in zip(strategy.indices, i18_table.entries, strict=True):
        written = (e["hand"], e["up"], e["index"], e.get("action", "I"), e.get("when", "at_or_above"))
        assert (parsed.hand, parsed.up, parsed.index, parsed.action, parsed.when) == written


# ----------------------------------------------------------------------- the count model
def test_count_scale() -> None:
    """A balanced system's tau is its true count at every depth; KO's running count of +4 (its
    pivot) is tau +4 at every depth; the tilted shoe has the asked size and tag sum."""
    hilo = _Counts.of(I18_GAME, system("hilo"))
    tau, slope = hilo.tau(np.array([2.0]), 0.0, 0.0)
    assert np.allclose(tau, 2.0) and np.allclose(slope, 1.0)
    ko = _Counts.of(FAB4_GAME, system("ko"))
    assert np.allclose(ko.tau(np.array([4.0]), 0.0, 0.0)[0], 4.0)
    assert ko.x_of_tau(0.0, 6.0) == system("ko").initial_running_count(6)  # off the top
    shoe = tilted_shoe(I18_GAME, system("hilo"), 3.0, 2.5)
    assert shoe.sum() == pytest.approx(52 * 2.5)
    assert shoe @ np.array(system("hilo").tags) == pytest.approx(-3.0 * 2.5)
    assert shoe[6] / shoe.sum() == pytest.approx(1 / 13, rel=0.01)  # untagged 7s barely move


def test_no_count_without_a_cut_card_or_with_an_infinite_deck() -> None:
    with pytest.raises(ValueError, match="cut card"):
        generate_indices(Rules(decks=4), "hilo")
    with pytest.raises(ValueError, match="infinite"):
        generate_indices(Rules(decks=0, penetration=0.5), "hilo")
    with pytest.raises(ValueError, match="unknown counting system"):
        generate_indices(I18_GAME, "nope")


# ----------------------------------------------------------------------- the CLI
def test_cli_json_prints_just_the_indices(i18_table: IndexTable, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--indices", "hilo", *I18_ARGS, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == i18_table.to_json()


def test_cli_csv_and_chart(i18_table: IndexTable, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--indices", "hilo", *I18_ARGS, "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "hand,up,action,when,index,gain_per_100"
    assert len(lines) == 1 + len(i18_table.entries)
    assert "insurance,A,I,at_or_above," in lines[1]
    assert main(["--indices", "hilo", *I18_ARGS]) == 0
    chart = capsys.readouterr().out
    assert "hilo index plays, 4D S17" in chart and "insure >=" in chart and "S >= " in chart


def test_cli_system_from_a_file(tmp_path: Path, i18_table: IndexTable, capsys: pytest.CaptureFixture[str]) -> None:
    """A JSON system with Hi-Lo's tags gives Hi-Lo's indices (the cache is keyed by the tags)."""
    path = tmp_path / "mine.json"
    tags = dict(zip(counting.VALUES, system("hilo").tags, strict=True))
    path.write_text(json.dumps({"tags": tags, "balanced": True}))
    assert main(["--indices", str(path), *I18_ARGS, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == i18_table.to_json()


def test_cli_plot(tmp_path: Path, i18_table: IndexTable, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "indices.png"
    assert main(["--indices", "hilo", *I18_ARGS, "--plot", str(path), "--json"]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(capsys.readouterr().out) == i18_table.to_json()


def test_a_plot_into_a_missing_folder_fails_before_the_work(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    args = ["--indices", "hilo", "--set", "penetration=0.75", "--plot", "no-such-folder/indices.png"]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "there is no folder" in captured.err


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ({"A": None}, "system.tags['A'] must be a finite number"),
        ({"J": 3}, "unknown card value 'J'"),
    ],
    ids=["null-tag", "unknown-value"],
)
def test_a_bad_system_file_is_one_line_exit_2(
    tags: dict[str, Any], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A system file is checked as a counting strategy's system is: every tag, every value."""
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"tags": {**dict.fromkeys(counting.VALUES, 0), **tags}, "balanced": True}))
    assert main(["--indices", str(path), "--set", "penetration=0.75"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert f"counting system file {path}" in captured.err and message in captured.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--indices", "nope", "--set", "penetration=0.75"], "unknown counting system 'nope'"),
        (["--indices", "hilo"], "needs a cut card"),
        (["--indices", "hilo", "--set", "decks=inf", "--set", "penetration=0.5"], "infinite deck"),
        (["--plot", "x.png"], "--plot needs --indices"),
        (["--indices", "missing.json", "--set", "penetration=0.75"], "counting system file missing.json"),
    ],
)
def test_cli_errors_are_one_line_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err


def test_counts_analysed_on_a_larger_shoe_are_reported(i18_table: IndexTable) -> None:
    """Deep in a small shoe a low count leaves fewer tens than the analysis needs (MIN_TENS): that
    grid point is analysed on a larger shoe of the same composition, and the table says where, by
    how much and for what share of rounds (no analysis run here: the shoes alone decide it)."""
    from blackjack_env.counting import CountingStrategy
    from blackjack_env.solver.indices import GRID, MIN_TENS, _enlargements

    rules = Rules(decks=1, penetration=0.5)
    hilo = system("hilo")
    counts = _Counts.of(rules, hilo)
    shoes = np.stack([tilted_shoe(rules, hilo, float(t), counts.grid_depth(float(t))) for t in GRID])
    enlarged = _enlargements(counts, shoes)
    assert [e.count for e in enlarged] == [-12.0, -11.0, -10.0, -9.0, -8.0]  # tens-poor: the lowest counts
    for e in enlarged:
        shoe = shoes[list(GRID).index(e.count)]
        assert shoe[9] == pytest.approx(MIN_TENS)
        assert shoe.sum() / 52 == pytest.approx(e.factor * e.decks)
    assert [round(e.factor, 2) for e in enlarged] == [1.22, 1.17, 1.11, 1.06, 1.01]  # measured
    assert sum(counts.grid_share(i) for i in range(len(GRID))) == pytest.approx(1.0, abs=1e-12)
    assert 0 < sum(e.share for e in enlarged) < 0.1
    table = IndexTable(rules, hilo, [], enlarged)
    note = table.approximation()
    assert note is not None and note.startswith("approximated: at counts (tau) -12 to -8 the shoe holds fewer than 8")
    assert "1.01-1.22 times larger" in note
    assert table.format_chart().endswith(note) and table.to_json()["about"] == note
    CountingStrategy.from_dict({"system": "hilo", **table.to_json()})  # a strategy file still reads it
    # the 4-deck game cut at 75% analyses every count on the shoe it arises in
    assert i18_table.enlarged == () and "about" not in i18_table.to_json()
