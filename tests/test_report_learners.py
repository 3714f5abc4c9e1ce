"""The learners' report pages (``blackjack-evaluate report --policy RUN_DIR`` for a count-table and a
composition run) and the ceiling's share in the trainers' evaluations (``blackjack-train --ceiling``):
tiny runs trained here write the pages, figures and summary keys, report.md and report.html print the
same numbers, a folder that is no learner's run is one line and exit 2, and so is a bad --ceiling.

The generated indices the pages compare with are the solver's (``generate_indices``, tens of seconds
per game); the page tests stand in a fixed list for them (the comparison itself is tested on its own)."""

from __future__ import annotations

import csv
import html
import itertools
import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_report import assert_images, texts

from blackjack_env.counting import system
from blackjack_env.evaluate.policies import run_rules
from blackjack_env.evaluate.report import fmt_ev, fmt_optional, fmt_per_100, fmt_share, main
from blackjack_env.evaluate.report import learner as learner_module
from blackjack_env.evaluate.report.learner import (
    balanced_tags,
    compare_entries,
    correlation,
    implied_slope,
)
from blackjack_env.rules import Rules
from blackjack_env.train.ceiling import CEILING_COLUMNS, CEILING_FILE
from blackjack_env.train.cli import main as train_main
from blackjack_env.train.shoe import COUNT_TABLE_SYSTEM

GAME = ["--rules", "ultimatebet", "--set", "decks=2", "--set", "penetration=0.75"]
TRAIN = [*GAME, "--env", "shoe", "--steps", "40000", "--chunk-steps", "20000", "--eval-every", "20000"]
TRAIN += ["--eval-rounds", "20000", "--seed", "5", "--no-progress"]
#: The generated indices the page tests stand in (see the module docstring).
GENERATED = [
    {"hand": "insurance", "up": "A", "index": 3.0, "gain_per_100": 0.02},
    {"hand": "hard 16", "up": "10", "index": 0.0, "action": "S", "when": "at_or_above", "gain_per_100": 0.01},
    {"hand": "hard 12", "up": "4", "index": 0.0, "action": "H", "when": "at_or_above", "gain_per_100": 0.001},
]


@pytest.fixture(autouse=True)
def _generated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(learner_module, "generate", lambda rules, system: [dict(e) for e in GENERATED])


@pytest.fixture(scope="module")
def count_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A count-table run of two chunks with the ceiling (4 shoes) in every evaluation."""
    run = tmp_path_factory.mktemp("learners") / "count"
    assert train_main([*TRAIN, "--algo", "tabular", "--ceiling", "--ceiling-samples", "4", "--out", str(run)]) == 0
    return run


@pytest.fixture(scope="module")
def linear_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("learners") / "linear"
    assert train_main([*TRAIN, "--algo", "linear", "--seats", "3", "--seat", "all", "--out", str(run)]) == 0
    return run


def report(out: Path, policy: Path, *args: str) -> dict[str, Any]:
    argv = ["--policy", str(policy), *GAME, "--rounds", "20000", "--workers", "1", "--seed", "3", "--out", str(out)]
    assert main([*argv, *args]) == 0
    return json.loads((out / "summary.json").read_text())


def assert_learner_printed(summary: dict[str, Any], out: Path) -> None:
    """Every number of the learner's pages in summary.json appears, formatted alike, in both documents."""
    learner = summary["learner"]
    numbers = []
    for row in learner["learning_curve"] or []:
        numbers.append(f"{row['step']:,.0f}")
        for key in ("ev", "gain_vs_basic", "gain_vs_hilo", "flat_gain", "flat_gain_hilo"):
            numbers.append(fmt_per_100(row[key]))
        for key in ("gain_vs_basic", "gain_vs_hilo", "flat_gain"):
            numbers += [fmt_per_100(row[f"{key}_low"]), fmt_per_100(row[f"{key}_high"])]
        if "flat_share" in row:
            for key in ("flat_share", "bets_share"):
                numbers += [fmt_optional(row[k], fmt_share) for k in (key, f"{key}_low", f"{key}_high")]
    for row in learner["ramp"]:
        numbers += [row["label"], fmt_optional(row["value"])]
        if row["ci95"]:
            numbers += [fmt_ev(v) for v in row["ci95"]]
    for row in learner["deviations"]:
        numbers += [text for text in (row["learned"], row["generated"]) if text]
    counts = learner["deviation_status"]
    numbers += [f"{n} {status}" for status, n in counts.items()]
    for text in texts(out):
        missing = [n for n in numbers if n not in html.unescape(text)]  # HTML escapes "<"
        assert not missing, missing


def _metrics(run: Path) -> list[dict[str, str]]:
    with (run / "metrics.csv").open() as f:
        return list(csv.DictReader(f))


# ----------------------------------------------------------------------------- the ceiling in training
def test_every_evaluation_carries_the_share_of_the_ceiling(count_run: Path) -> None:
    rows = _metrics(count_run)
    assert [int(r["step"]) for r in rows] == [0, 20000, 40000]
    ceiling = json.loads((count_run / CEILING_FILE).read_text())
    assert ceiling["samples"] == 4 and ceiling["learner_bets"] == [1, 2, 4, 8]
    for row in rows:
        values = {k: float(row[k]) for k in CEILING_COLUMNS}
        assert values["ceiling_gain"] == pytest.approx(ceiling["gain"])
        assert values["ceiling_bets_gain"] == pytest.approx(ceiling["bets_gain"])
        if values["ceiling_gain"] != 0:
            assert values["flat_share"] == pytest.approx(float(row["flat_gain"]) / values["ceiling_gain"])
        share = float(row["gain_vs_basic"]) / values["ceiling_bets_gain"]
        assert values["bets_share"] == pytest.approx(share)
        assert values["bets_share_low"] <= values["bets_share"] <= values["bets_share_high"]


def test_a_run_without_ceiling_has_no_ceiling_columns(linear_run: Path) -> None:
    assert not set(CEILING_COLUMNS) & set(_metrics(linear_run)[0]) and not (linear_run / CEILING_FILE).exists()


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--ceiling-samples", "0", "--ceiling"], "--ceiling-samples must be >= 1"),
        (["--ceiling", "--set", "penetration=0"], "cut card"),
        (["--ceiling", "--algo", "ppo"], "only with --env shoe --algo tabular or linear"),
    ],
)
def test_bad_ceiling_is_one_line_exit_2_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], says: str
) -> None:
    out = tmp_path / "run"
    assert train_main([*TRAIN, *extra, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err
    assert not out.exists()


def test_ceiling_needs_the_shoe_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert train_main(["--ceiling", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "only with --env shoe" in err and not (tmp_path / "r").exists()


# ----------------------------------------------------------------------------- the pages
def test_count_table_run_report(count_run: Path, tmp_path: Path) -> None:
    """Pages from the statistics: the learned value per bucket with CIs, the curve with the ceiling's
    share, the learned entries beside the generated ones; both documents say the same."""
    out = tmp_path / "rep"
    summary = report(out, count_run, "--seats", "1")
    learner = summary["learner"]
    assert learner["kind"] == "count-table" and learner["system"] == COUNT_TABLE_SYSTEM
    assert {"learner_curve.png", "learned_ramp.png", "learned_indices.png"} <= set(summary["figures"])
    assert "learned_count.png" not in summary["figures"]
    assert_images(out, summary)
    assert_learner_printed(summary, out)
    assert [row["step"] for row in learner["learning_curve"]] == [0, 20000, 40000]
    assert all("flat_share" in row and "bets_share" in row for row in learner["learning_curve"])
    assert "statistics" in learner["ramp_source"]
    assert any(row["value"] is not None and row["ci95"] for row in learner["ramp"])
    assert {row["bet"] for row in learner["ramp"]} <= {1.0, 2.0, 4.0, 8.0}
    generated = [row for row in learner["deviations"] if row["generated"]]
    assert len(generated) == len(GENERATED)
    assert sum(learner["deviation_status"].values()) == len(learner["deviations"])
    md, page = texts(out)
    assert "## What the count-table learner learned" in md and "What the count-table learner learned</h2>" in page


def test_a_run_folder_without_statistics_says_so(count_run: Path, tmp_path: Path) -> None:
    """The committed runs keep no statistics: the ramp is the exported one, and the pages say so."""
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("counting-strategy.json", "metrics.csv", "config.json"):
        shutil.copy(count_run / name, bare / name)
    summary = report(tmp_path / "rep", bare)
    learner = summary["learner"]
    assert "no statistics" in learner["ramp_source"]
    assert all(row["value"] is None for row in learner["ramp"])
    assert "no statistics" in texts(tmp_path / "rep")[0]


def test_composition_run_report_at_a_flat_bet_in_a_seat(linear_run: Path, tmp_path: Path) -> None:
    """A composition model's pages: its learned count, its implied ramp with the bets it learned; and
    the rest of the report plays it in seat 1 of 3 at a flat bet (--spread 1-1) without random play on
    its shoes, beside the flat ceiling of that seat."""
    out = tmp_path / "rep"
    table = ["--seats", "3", "--seat", "1", "--spread", "1-1"]
    summary = report(out, linear_run, *table, "--ceiling-samples", "4", "--ceiling")
    learner = summary["learner"]
    assert learner["kind"] == "composition" and learner["bets"] == [1, 2, 4, 8]  # what it learned; played flat
    assert {"learner_curve.png", "learned_ramp.png", "learned_indices.png", "learned_count.png"} <= set(
        summary["figures"]
    )
    assert "random" not in summary["ev"] and summary["counting"]["avg_bet"] == 1.0
    ceiling, gap = summary["ceiling"], summary["gap_to_basic"]
    assert ceiling["bets"] is None and ceiling["policy_gain"] == gap["value"]  # played flat: the flat ceiling
    tags = learner["learned_count"]
    assert len(tags["learned"]) == 10 and set(tags["correlation"]) >= {"hilo", "ko", "halves"}
    assert_images(out, summary)
    assert_learner_printed(summary, out)
    md, page = texts(out)
    assert "### A learned count" in md and "A learned count</h3>" in page


@pytest.mark.parametrize("content", [None, "metrics.csv"])
def test_a_folder_that_is_no_learners_run_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    if content:
        (folder / content).write_text("step,ev\n0,0\n")
    out = tmp_path / "rep"
    assert main(["--policy", str(folder), *GAME, "--rounds", "1000", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file or agent directory" in err, err
    assert not out.exists()


def test_a_learner_run_with_a_broken_curve_is_one_line(
    count_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    shutil.copy(count_run / "counting-strategy.json", broken)
    (broken / "metrics.csv").write_text("step,ev\n0,0\n")
    out = tmp_path / "rep"
    assert main(["--policy", str(broken), *GAME, "--rounds", "1000", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing column(s)" in err, err
    assert not out.exists()


# ----------------------------------------------------------------------------- the run's game
def test_a_learner_run_is_reported_in_its_own_game(count_run: Path, tmp_path: Path) -> None:
    """Without --rules/--set the report plays the game the run was trained in (2 decks, not the default
    6), and says which file gave it; a --set alone that gives that game is taken too."""
    game = json.loads((count_run / "rules.json").read_text())
    assert game["decks"] == 2 and game != Rules().to_dict()
    for given in ([], ["--set", "decks=2", "--set", "penetration=0.75"]):
        out = tmp_path / f"rep{len(given)}"
        argv = ["--policy", str(count_run), *given, "--rounds", "20000", "--workers", "1", "--out", str(out)]
        assert main(argv) == 0
        summary = json.loads((out / "summary.json").read_text())
        assert summary["rules"] == game
        assert summary["learner"]["rules_source"] == str(count_run / "rules.json")
        assert str(count_run / "rules.json") in texts(out)[0]


def test_the_runs_game_is_read_from_agent_json_where_rules_json_is_missing(linear_run: Path, tmp_path: Path) -> None:
    """A composition run's folder, or its model file alone, without rules.json: agent.json's rules; with
    neither, no game (the report then plays the given one and says so)."""
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("linear-model.json", "agent.json"):
        shutil.copy(linear_run / name, folder / name)
    game = Rules.from_dict(json.loads((linear_run / "rules.json").read_text()))
    assert run_rules(str(folder)) == (game, folder / "agent.json")
    assert run_rules(str(folder / "linear-model.json")) == (game, folder / "agent.json")
    (folder / "agent.json").unlink()
    assert run_rules(str(folder)) is None
    assert run_rules("basic") is None and run_rules(str(linear_run / "hilo-i18-fab4-ev-max.json")) is None


@pytest.mark.parametrize(
    ("policy", "given", "differ"),
    [
        ("count", ["--rules", "ultimatebet", "--set", "penetration=0.75"], ("decks=2", "decks=6")),
        ("count", ["--set", "decks=2"], ("penetration=0.75", "penetration=0.0")),
        ("linear-model.json", [*GAME, "--set", "hit_soft_17=no"], ("hit_soft_17=True", "hit_soft_17=False")),
    ],
)
def test_rules_other_than_the_runs_are_one_line_exit_2_nothing_written(
    count_run: Path,
    linear_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    policy: str,
    given: list[str],
    differ: tuple[str, str],
) -> None:
    """The run's game and the given one, both named (the fields that differ, the run's file); no report."""
    spec = count_run if policy == "count" else linear_run / policy
    run_game = Rules.from_dict(json.loads((spec if spec.is_dir() else spec.parent).joinpath("rules.json").read_text()))
    given_game = Rules.preset(given[1] if given[0] == "--rules" else "ultimatebet").with_settings(
        [v for k, v in itertools.pairwise(given) if k == "--set"]
    )
    out = tmp_path / "rep"
    assert main(["--policy", str(spec), *given, "--rounds", "1000", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "was trained in" in err and run_game.describe() in err and given_game.describe() in err, err
    assert all(text in err for text in differ) and "rules.json" in err, err
    assert not out.exists()


def test_a_broken_rules_file_is_one_line(count_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(count_run / "counting-strategy.json", folder)
    (folder / "rules.json").write_text('{"decks": "many"}')
    out = tmp_path / "rep"
    assert main(["--policy", str(folder), "--rounds", "1000", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rules.json: not the rules of a training run" in err, err
    assert not out.exists()


# ----------------------------------------------------------------------------- the comparisons
def test_learned_and_generated_entries_compare_question_by_question() -> None:
    learned = [
        {"hand": "hard 16", "up": "10", "index": 1.0, "action": "S", "when": "at_or_above"},  # agrees (within 1)
        {"hand": "hard 12", "up": "4", "index": 0.0, "action": "S", "when": "at_or_above"},  # H >= 0 is S below 0
        {"hand": "pair 10", "up": "6", "index": 5.0, "action": "P", "when": "at_or_above"},  # learned only
        {"hand": "insurance", "up": "A", "index": 5.0, "when": "at_or_above"},  # 2 from the generated: differs
    ]
    rows = {(r["hand"], r["up"]): r for r in compare_entries(learned, GENERATED, width=1.0)}
    assert rows[("hard 16", "10")]["status"] == "agree"
    assert rows[("hard 12", "4")]["status"] == "differ"
    assert rows[("hard 12", "4")]["generated"] == "S<+0" and rows[("hard 12", "4")]["learned"] == "S≥+0"
    assert rows[("pair 10", "6")]["status"] == "learned only"
    assert rows[("insurance", "A")]["status"] == "differ"
    assert [r["status"] for r in compare_entries([], GENERATED, 1.0)] == ["generated only"] * 3


def test_entries_narrowed_by_their_cards_compare_as_two_card_and_later_questions() -> None:
    """A two-card entry faces the generated index (read off two-card hands); an entry for three or
    more cards has a row of its own, its hand saying so in the report's table."""
    from blackjack_env.counting import hand_label

    sixteen = {"hand": "hard 16", "up": "10", "action": "S", "when": "at_or_above"}
    learned = [{**sixteen, "index": 1.0, "cards": "two"}, {**sixteen, "index": -2.0, "cards": "three_or_more"}]
    rows = compare_entries(learned, GENERATED, width=1.0)
    two, later = (next(r for r in rows if r["hand"] == "hard 16" and r["cards"] == c) for c in ("any", "three_or_more"))
    assert (two["learned"], two["generated"], two["status"]) == ("S≥+1 (2)", "S≥+0", "agree")
    assert (later["learned"], later["generated"], later["status"]) == ("S≥-2 (3+)", None, "learned only")
    assert hand_label(later["hand"], later["cards"]) == "hard 16, 3+ cards"


def test_a_model_betting_the_hilo_count_implies_it() -> None:
    """Weights equal to minus Hi-Lo's tags value a shoe at its Hi-Lo true count: slope 1, tags Hi-Lo's."""
    tags = np.asarray(system("hilo").tags, dtype=float)
    weights = np.concatenate([[0.0], -tags])
    assert implied_slope(weights, system("hilo")) == pytest.approx(1.0)
    learned, to_ten = balanced_tags(tags)
    assert to_ten and np.allclose(learned, tags)
    assert correlation(learned, learned) == pytest.approx(1.0)
    shifted, _ = balanced_tags(tags + 3.0)  # a shift changes no true count: the same tags
    assert np.allclose(shifted, tags)
    assert math.isnan(correlation(np.zeros(10), learned))


def test_implied_indices_of_a_model() -> None:
    """A model valuing basic strategy's first action above the rest at every count implies no play
    entry; insurance valued at -0.0275 + 0.01 x the Hi-Lo true count implies insuring from +3 (the
    first count of the grid past +2.75), as the generated entries are written."""
    from blackjack_env.linear_policy import N_FEATURES, LinearModel
    from blackjack_env.rules import Rules
    from blackjack_env.solver import solve
    from blackjack_env.strategy import N_PLAY, N_ROWS, N_UP

    rules = Rules.preset("ultimatebet").with_settings(["decks=2", "penetration=0.75"])
    basic = solve(rules).table
    play = np.zeros((N_ROWS, N_UP, N_PLAY, N_FEATURES))
    for row in range(N_ROWS):
        for col in range(N_UP):
            for rank, action in enumerate(basic.actions[row, col]):
                play[row, col, int(action), 0] = -float(rank)  # the chart's preference order, at every count
    insurance = np.zeros((2, 2, N_FEATURES))
    insurance[0, 1, 0] = -0.0275
    insurance[0, 1, 1:] = -0.01 * np.asarray(system("hilo").tags)
    tried = np.ones((N_ROWS, N_UP, N_PLAY), np.bool_)
    model = LinearModel(play, tried, insurance, np.zeros(N_FEATURES), (1.0, 8.0))
    entries = learner_module.implied_indices(model, basic, rules)
    assert entries == [{"hand": "insurance", "up": "A", "index": 3.0, "when": "at_or_above"}]


def test_a_resumed_run_with_the_ceiling_equals_an_uninterrupted_one(count_run: Path, tmp_path: Path) -> None:
    """The ceiling is read back (the same shoes, from the solver's cache): every column the same."""
    half = tmp_path / "half"
    argv = [*TRAIN, "--algo", "tabular", "--ceiling", "--ceiling-samples", "4"]
    assert train_main([*[a if a != "40000" else "20000" for a in argv], "--out", str(half)]) == 0
    assert train_main(["--out", str(half), "--resume", "--steps", "40000", "--no-progress"]) == 0

    def rows(run: Path) -> list[dict[str, str]]:
        return [{k: v for k, v in r.items() if k != "wall_s"} for r in _metrics(run)]

    assert rows(half) == rows(count_run)
    assert (
        json.loads((half / CEILING_FILE).read_text())["gain"]
        == json.loads((count_run / CEILING_FILE).read_text())["gain"]
    )
