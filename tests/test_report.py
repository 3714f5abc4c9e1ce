"""blackjack-evaluate report: builds for basic, random, a saved table and a counting strategy, figures
decode, the numbers in summary.json are the ones printed, a learning curve from metrics.csv, a bad
counting strategy is one line and no file, and no user file is lost."""

from __future__ import annotations

import base64
import csv
import io
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from blackjack_env import Rules
from blackjack_env.evaluate import cli
from blackjack_env.evaluate.counting_stats import counting_figures
from blackjack_env.evaluate.policies import load_policy
from blackjack_env.evaluate.report import (
    BANKROLL_METHOD,
    COUNT_FIGURES,
    BankrollPaths,
    Estimate,
    Report,
    ev_figure,
    fmt_cost,
    fmt_count,
    fmt_ev,
    fmt_index,
    fmt_optional,
    fmt_rate,
    main,
)
from blackjack_env.evaluate.runner import simulate
from blackjack_env.simulate import Policy, SimulationResult
from blackjack_env.solver import solve
from blackjack_env.strategy import StrategyTable, order_of_code, row_of_label, up_of_label

ROUNDS = "30000"
RATE_KEYS = ("win", "push", "loss", "blackjack", "bust", "surrender", "double", "split", "insurance")
METRICS = (
    "step,ev_gap,ev_gap_low,ev_gap_high,agreement,loss\n"  # an extra column is ignored
    "20000,-0.004,-0.0052,-0.0031,0.97,1\n"
    "1000,-0.3,-0.32,-0.28,0.41,9\n"  # rows are sorted by step
)


def build(out: Path, *args: str, rounds: str = ROUNDS) -> dict:
    assert main(["--rounds", rounds, "--workers", "2", "--seed", "3", "--out", str(out), *args]) == 0
    return json.loads((out / "summary.json").read_text())


def texts(out: Path) -> tuple[str, str]:
    return (out / "report.md").read_text(), (out / "report.html").read_text()


def assert_printed(summary: dict, out: Path) -> None:
    """Every number of summary.json appears, formatted as the report formats it, in both documents."""
    numbers = []
    for estimate in [*summary["ev"].values(), summary["gap_to_basic"]]:
        numbers += [fmt_ev(estimate[k]) for k in ("value", "ci95_low", "ci95_high")]
    for who in ("policy", "basic"):
        numbers += [fmt_rate(summary["rates"][who][k]) for k in RATE_KEYS]
    if summary["exact"]:
        numbers += [fmt_ev(summary["exact"]["policy"]), fmt_ev(summary["exact"]["basic"])]
        numbers.append(fmt_cost(summary["exact"]["loss"]))
    for d in summary["deviations"]:
        numbers += [fmt_cost(d[k]) for k in ("cost", "frequency", "cost_per_round")]
    for point in summary["learning_curve"] or []:
        numbers += [fmt_ev(point[k]) for k in ("ev_gap", "ev_gap_low", "ev_gap_high")]
        numbers.append(fmt_rate(point["agreement"]))
    numbers.append(f"{summary['rounds']:,}")
    counting = summary.get("counting")
    if counting:
        numbers += [fmt_count(key, counting[key]) for key in COUNT_FIGURES]
        for b in counting["by_true_count"]:
            numbers += [fmt_rate(b["share"]), f"{b['rounds']:,}", fmt_count("avg_bet", b["avg_bet"])]
            numbers += [fmt_optional(v) for v in (b["ev_per_unit_bet"], *b["ci95"])]
        numbers += [fmt_index(entry["index"]) for entry in counting["indices"]]
        paths = counting["bankroll_paths"]
        numbers += [f"{v:,.0f}" for v in paths["final"]]
        numbers += [f"{r:,}" for r in paths["ruined_at"] if r is not None]
    for text in texts(out):
        missing = [n for n in numbers if n not in text]
        assert not missing, missing


def assert_images(out: Path, summary: dict) -> None:
    """Each listed PNG decodes; report.html embeds exactly those bytes and fetches nothing."""
    html = (out / "report.html").read_text()
    embedded = [base64.b64decode(b) for b in re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)]
    assert len(embedded) == len(summary["figures"]) > 0
    for name in summary["figures"]:
        data = (out / name).read_bytes()
        with Image.open(io.BytesIO(data)) as image:
            image.verify()
            assert image.format == "PNG"
        assert data in embedded
        assert f"]({name})" in (out / "report.md").read_text()
    assert not re.search(r"(src|href)=\"(?!data:)", html)
    # no address anywhere outside the embedded images (their base64 may spell "http" by chance:
    # about one report in twenty does)
    assert "http" not in re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", html)


@pytest.fixture(scope="module")
def basic_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("reports") / "basic"
    return out, build(out, "--policy", "basic")


def test_basic_report(basic_report: tuple[Path, dict], capsys: pytest.CaptureFixture[str]) -> None:
    out, summary = basic_report
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["chart.png", "ev.png", "rates.png", "report.html", "report.md", "summary.json"]
    )
    assert_images(out, summary)
    assert_printed(summary, out)
    assert summary["rounds"] == int(ROUNDS) and summary["deviations"] == []
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o777 & ~umask  # a new --out is as open as mkdir makes it
    assert summary["gap_to_basic"]["value"] == 0.0  # basic strategy against itself on the same cards
    assert summary["exact"]["policy"] == pytest.approx(solve(Rules()).ev)
    md, html = texts(out)
    assert "Every cell plays basic strategy." in md and "Every cell plays basic strategy." in html
    for field, value in Rules().to_dict().items():
        assert f"| {field} | {value} |" in md


def test_simulated_numbers_are_one_three_way_paired_run(basic_report: tuple[Path, dict]) -> None:
    """The report's EVs are those of one run where basic strategy and random play are dealt the
    policy's cards every round (the same seed gives the same numbers)."""
    _, summary = basic_report
    rules = Rules()
    basic = load_policy("basic", rules)
    run = simulate(rules, basic, int(float(ROUNDS)), seed=3, baseline=basic, others=[Policy.random()]).result
    assert summary["ev"]["policy"]["value"] == run.ev(0)
    assert summary["ev"]["basic"]["value"] == run.ev(1)
    assert summary["ev"]["random"]["value"] == run.ev(2)
    assert summary["gap_to_basic"]["value"] == run.diff(1)[0] == 0.0  # basic against itself, same cards
    assert summary["rates"]["policy"] == run.rates(0)
    assert summary["gap_to_basic"]["paired_rounds"] == run.rounds
    assert run.diff(2)[2] == run.rounds  # random play was paired too


def test_random_report_has_no_chart(tmp_path: Path) -> None:
    out = tmp_path / "random"
    summary = build(out, "--policy", "random", "--rules", "vegas-strip")
    assert summary["exact"] is None and "chart.png" not in summary["figures"]
    assert summary["gap_to_basic"]["ci95_high"] < 0
    assert summary["rules"] == Rules.preset("vegas-strip").to_dict()
    assert_images(out, summary)
    assert_printed(summary, out)
    assert "is not a strategy table" in texts(out)[0]


def test_a_saved_table_with_deviations_and_a_learning_curve(tmp_path: Path, capsys) -> None:
    rules = Rules()
    basic = solve(rules).table
    actions = basic.actions.copy()
    for section, key, up, code in (("hard", "16", "10", "S"), ("pairs", "8", "9", "S"), ("hard", "11", "6", "H")):
        actions[row_of_label(section, key), up_of_label(up) - 1] = order_of_code(code)
    agent = tmp_path / "agent"
    agent.mkdir()
    StrategyTable(actions, basic.insurance, name="agent").save(agent / "strategy.json")
    (agent / "metrics.csv").write_text(METRICS)
    out = tmp_path / "report"
    summary = build(out, "--policy", str(agent), "--run", str(agent))
    assert "learning_curve.png" in summary["figures"] and "deviations.png" in summary["figures"]
    assert_images(out, summary)
    assert_printed(summary, out)
    expected = solve(rules).evaluate(StrategyTable(actions, basic.insurance))
    assert len(summary["deviations"]) == 3
    costs = {(d.section, d.key, d.up): d for d in expected.deviations}
    for d in summary["deviations"]:
        exact = costs[(d["section"], d["hand"], d["up"])]
        assert (d["cost"], d["frequency"], d["played"], d["basic"]) == (
            exact.cost,
            exact.frequency,
            exact.played,
            exact.basic,
        )
        assert d["cost_per_round"] == pytest.approx(exact.cost * exact.frequency)
    per_round = [d["cost_per_round"] for d in summary["deviations"]]
    assert per_round == sorted(per_round, reverse=True)
    assert summary["exact"]["loss"] == pytest.approx(expected.loss)
    gap = summary["gap_to_basic"]
    assert gap["value"] < 0 and abs(gap["value"] + expected.loss) < 4 * gap["stderr"]  # the exact loss, sampled
    assert [p["step"] for p in summary["learning_curve"]] == [1000, 20000]
    assert "policy " in capsys.readouterr().out


def test_learning_curve_file_errors(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.csv").write_text("step,ev_gap\n1,0.1\n")
    assert main(["--rounds", "100", "--run", str(run), "--out", str(tmp_path / "x")]) == 2
    assert "missing column(s) ev_gap_low, ev_gap_high, agreement" in capsys.readouterr().err
    (run / "metrics.csv").write_text("step,ev_gap,ev_gap_low,ev_gap_high,agreement\n1,0.1,x,0.2,0.5\n")
    assert main(["--rounds", "100", "--run", str(run), "--out", str(tmp_path / "x")]) == 2
    assert "line 2" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_run_without_metrics_is_said_not_skipped_silently(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r"
    summary = build(out, "--policy", "random", "--run", str(tmp_path))
    assert "no metrics.csv" in capsys.readouterr().err
    assert any("no metrics.csv" in note for note in summary["notes"])
    assert "no metrics.csv" in texts(out)[0]


def test_existing_files_are_never_lost(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    first = build(out, "--policy", "random")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # a second report refuses, names the files, and changes nothing
    assert main(["--rounds", "100", "--seed", "9", "--policy", "random", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "already holds" in err and "report.html" in err and "--overwrite" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # --overwrite replaces the report's own files and keeps the user's
    second = build(out, "--policy", "random", "--overwrite", "--seed", "4")
    assert (out / "notes.txt").read_text() == "mine"
    assert second["seed"] == 4 and first["seed"] == 3
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary folder left behind
    # an --out that is a file is refused
    (tmp_path / "file").write_text("x")
    assert main(["--rounds", "100", "--out", str(tmp_path / "file")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_blackjack_evaluate_dispatches_report(tmp_path: Path, capsys) -> None:
    out = tmp_path / "via-cli"
    assert cli.main(["report", "--rounds", "2000", "--policy", "random", "--out", str(out)]) == 0
    assert (out / "report.html").is_file()
    assert "wrote 5 files" in capsys.readouterr().out


def test_report_for_a_trained_agent_and_its_learning_curve(tmp_path: Path) -> None:
    """A short blackjack-train run, then its report: the agent's chart, priced deviations and the
    learning curve the run recorded."""
    from blackjack_env.train.cli import main as train_main

    run = tmp_path / "run"
    train_args = ["--algo", "tabular", "--steps", "2e6", "--eval-every", "1e6", "--eval-rounds", "100000"]
    assert train_main([*train_args, "--chunk-steps", "65536", "--no-progress", "--out", str(run)]) == 0
    out = tmp_path / "report"
    summary = build(out, "--policy", str(run), "--run", str(run))
    assert {"chart.png", "learning_curve.png"} <= set(summary["figures"])
    with (run / "metrics.csv").open() as rows:
        recorded = [float(row["step"]) for row in csv.DictReader(rows)]
    assert [point["step"] for point in summary["learning_curve"]] == recorded and len(recorded) >= 3
    assert summary["exact"]["loss"] > 0 and summary["deviations"]  # a 2e6-step learner is not basic strategy yet
    assert_images(out, summary)
    assert_printed(summary, out)


def test_ev_figure_shows_policy_and_basic_on_the_scale_of_their_intervals() -> None:
    """Random play's -0.43 gets its own panel: the policy's and basic strategy's 95% intervals
    (about 0.001 wide) fill theirs, the gap's panel holds 0, and random play's holds -0.43."""
    ev = {
        "policy": Estimate.of(-0.0062, 0.0003),
        "basic": Estimate.of(-0.0054, 0.0003),
        "random": Estimate.of(-0.43, 0.0007),
    }
    gap = Estimate.of(-0.0008, 0.00004)
    report = Report("agent", Rules(), 10**7, 0, False, ev, gap, paired_rounds=10**7, rates={}, exact=None)
    ev_ax, gap_ax, random_ax = ev_figure(report).axes
    low, high = ev_ax.get_xlim()
    assert low <= ev["policy"].low and ev["basic"].high <= high
    assert high - low < 2 * (ev["basic"].high - ev["policy"].low)  # the intervals fill the panel
    assert gap_ax.get_xlim()[0] <= report.gap_to_basic.low and gap_ax.get_xlim()[1] >= 0
    low, high = random_ax.get_xlim()
    assert low < -0.43 < high and high - low < 0.01


def test_random_play_stays_in_the_headline_table(basic_report: tuple[Path, dict]) -> None:
    out, summary = basic_report
    random = summary["ev"]["random"]
    md, html = texts(out)
    assert f"| random play | {fmt_ev(random['value'])} | {fmt_ev(random['ci95_low'])} .. " in md
    assert f'<td>random play</td><td class="num">{fmt_ev(random["value"])}</td>' in html


def test_the_report_does_not_import_the_command_line() -> None:
    """Shared option helpers live in blackjack_env.evaluate.options, so the report and blackjack-strategy load
    without blackjack_env.evaluate.cli (which reaches the report only lazily, to dispatch it): no import cycle."""
    code = (
        "import sys, blackjack_env.evaluate.report, blackjack_env.evaluate.strategy, blackjack_env.evaluate.options\n"
        "cli = ('blackjack_env.evaluate.cli', 'blackjack_env.evaluate.play')\n"
        "sys.exit(sorted(m for m in cli if m in sys.modules) or None)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# ====================================================================== a card counter's pages
COUNTING = ("--policy", "hilo-i18-fab4", "--spread", "1-8", "--set", "penetration=0.75", "--bankroll", "400")


@pytest.fixture(scope="module")
def counting_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("reports") / "counting"
    return out, build(out, *COUNTING, rounds="2e5")


def test_a_counting_report_has_the_counters_pages(counting_report: tuple[Path, dict]) -> None:
    out, summary = counting_report
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            "bankroll.png",
            "chart.png",
            "ev.png",
            "rates.png",
            "true_count.png",
            "report.html",
            "report.md",
            "summary.json",
        ]
    )
    assert_images(out, summary)
    assert_printed(summary, out)
    md, html = texts(out)
    for heading in ("Card counting", "Bet ramp", "Index plays", "Bankroll"):
        assert f"## {heading}" in md and f">{heading}</h" in html
    assert BANKROLL_METHOD in md and BANKROLL_METHOD in html
    assert summary["exact"] is None and summary["deviations"] == []  # a count has no exact analysis
    assert summary["ev_unit"] == "per round (table-minimum units)"


def test_a_counting_reports_figures_are_sane(counting_report: tuple[Path, dict]) -> None:
    _, summary = counting_report
    c, ev = summary["counting"], summary["ev"]["policy"]["value"]
    assert set(counting_figures(SimulationResult(2), 400)) <= set(c)  # the key names of blackjack-evaluate --json
    assert c["bankroll"] == 400 and c["bankroll_given"] and c["spread"] == "1-8"
    assert c["win_per_100"] == pytest.approx(100 * ev)
    assert c["di"] == pytest.approx(1000 * ev / c["sd"]) and c["score"] == pytest.approx(c["di"] * abs(c["di"]))
    assert math.copysign(1, c["score"]) == math.copysign(1, ev) == math.copysign(1, c["advantage"])
    assert c["n0"] == pytest.approx(c["sd"] ** 2 / ev**2)
    assert c["ror"] == pytest.approx(math.exp(-2 * 400 * ev / c["sd"] ** 2) if ev > 0 else 1.0)
    assert 1 < c["avg_bet"] < 8 and c["rounds_played"] == summary["rounds"] == 200_000
    assert 35 < c["rounds_per_shoe"] < 55  # 6 decks to 75%: 234 cards at about 5.4 a round
    buckets = c["by_true_count"]
    assert sum(b["share"] for b in buckets) == pytest.approx(1.0)
    assert sum(b["rounds"] for b in buckets) == summary["rounds"]
    bets = {b["true_count"]: b["avg_bet"] for b in buckets}
    assert bets[0] == bets[1] == 1 and bets[2] == 2 and bets[3] == 4 and bets[4] == 6 and bets[10] == 8  # the 1-8 ramp
    assert [list(p) for p in c["strategy"]["ramp"]] == [[1, 1], [2, 2], [3, 4], [4, 6], [5, 8]]
    # basic strategy at a flat bet on the same cards, and no random play (see paired_run)
    assert set(summary["ev"]) == {"policy", "basic"}
    assert summary["rates"]["basic"]["insurance"] == 0 < summary["rates"]["policy"]["insurance"]
    assert summary["gap_to_basic"]["paired_rounds"] == summary["rounds"]
    assert summary["gap_to_basic"]["value"] == pytest.approx(ev - summary["ev"]["basic"]["value"], abs=1e-12)


def test_a_counting_report_lists_the_index_plays_beside_basic_strategy(counting_report: tuple[Path, dict]) -> None:
    out, summary = counting_report
    indices = summary["counting"]["indices"]
    assert len(indices) == 22  # the Illustrious 18 and the Fab 4
    cell = {(e["hand"], e["up"], e["action"]): e for e in indices}
    assert cell[("hard 16", "10", "S")]["basic"] == "Rs" and cell[("hard 16", "10", "S")]["index"] == 0
    assert cell[("insurance", "A", "I")]["basic"] == "no insurance"
    md, html = texts(out)
    assert "| hard 16 | 10 | S (stand) | at or above | +0 | Rs |" in md
    assert '<div class="side">' in html  # the index table and the chart side by side


def test_bankroll_paths_are_a_seeded_normal_walk_stopped_at_ruin(counting_report: tuple[Path, dict]) -> None:
    _, summary = counting_report
    paths = summary["counting"]["bankroll_paths"]
    assert paths["method"] == BANKROLL_METHOD and paths["start"] == 400 and paths["paths"] == len(paths["final"]) == 5
    walk = BankrollPaths.simulate(100.0, -0.01, 1.15, seed=3, paths=40, rounds=20_000)
    again = BankrollPaths.simulate(100.0, -0.01, 1.15, seed=3, paths=40, rounds=20_000)
    assert walk.final == again.final and walk.ruined_at == again.ruined_at
    assert any(r is not None for r in walk.ruined_at) and any(r is None for r in walk.ruined_at)
    for values, ruined in zip(walk.values, walk.ruined_at, strict=True):
        if ruined is None:
            assert (values > 0).all()
        else:
            assert (values[:ruined] > 0).all() and values[ruined] == 0 and np.isnan(values[ruined + 1 :]).all()
    steps = np.diff(walk.values, axis=1)
    steps = steps[np.isfinite(steps)]
    assert abs(steps.mean() + 0.01) < 0.005 and abs(steps.std() - 1.15) < 0.01


def test_a_count_without_index_plays_on_its_running_count(tmp_path: Path) -> None:
    """KO (unbalanced) names its buckets by running count; with no index, basic strategy plays every hand;
    without --bankroll the default bankroll is used and said."""
    out = tmp_path / "ko"
    summary = build(out, "--policy", "ko", "--set", "penetration=0.75")
    c = summary["counting"]
    assert c["indices"] == [] and c["bankroll"] == 1000 and not c["bankroll_given"] and c["spread"] is None
    assert summary["gap_to_basic"]["value"] == 0.0  # a flat-bet count with no index plays is basic strategy
    md, _ = texts(out)
    assert "No index plays" in md and "| running count | share of rounds |" in md
    assert any("No --bankroll" in note for note in summary["notes"])
    assert_printed(summary, out)


@pytest.mark.parametrize(
    ("strategy", "args", "problem"),
    [
        ({"system": "nope"}, (), "unknown counting system 'nope'"),
        ({"system": "hilo", "ramp": [[2, 2], [1, 4]]}, (), "ramp: true counts must increase"),
        ({"system": "hilo", "ramp": [[1, "big"]]}, (), "ramp[0] bet must be a finite number"),
        (
            {"system": "hilo", "indices": [{"hand": "hard 99", "up": "10", "index": 0, "action": "S"}]},
            (),
            "indices[0].hand",
        ),
        (
            {"system": "hilo", "indices": [{"hand": "hard 16", "up": "10", "index": 0, "action": "X"}]},
            (),
            "indices[0].action",
        ),
        (None, ("--set", "decks=0"), "needs a finite shoe, not an infinite deck"),
        (None, ("--set", "penetration=0"), "needs a shoe dealt to a cut card"),
        (None, ("--spread", "8-1"), "--spread must be MIN-MAX"),
    ],
)
def test_a_bad_counting_strategy_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], strategy: dict | None, args: tuple[str, ...], problem: str
) -> None:
    policy = "hilo-i18-fab4"
    if strategy is not None:
        policy = str(tmp_path / "count.json")
        Path(policy).write_text(json.dumps(strategy))
    out = tmp_path / "out"
    argv = ["--policy", policy, "--set", "penetration=0.75", *args, "--rounds", "1000", "--out", str(out)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("blackjack-evaluate report: error: ") and problem in lines[0], lines
    assert captured.out == "" and not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == (["count.json"] if strategy is not None else [])


def test_spread_and_bankroll_on_a_policy_that_does_not_count(tmp_path: Path, capsys) -> None:
    assert main(["--policy", "basic", "--spread", "1-8", "--rounds", "1000", "--out", str(tmp_path / "x")]) == 2
    assert "--spread needs a counting strategy" in capsys.readouterr().err and not (tmp_path / "x").exists()
    summary = build(tmp_path / "y", "--policy", "random", "--bankroll", "500", rounds="2000")
    assert summary["counting"] is None and "random" in summary["ev"]
    assert any("--bankroll is used by a counting strategy" in note for note in summary["notes"])
