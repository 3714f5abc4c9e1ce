"""blackjack-evaluate report --ceiling: the counting report's bar (basic strategy, the policy, the
perfect counter) and the round-start EV beside the EVs by true count, their numbers in summary.json,
report.md and report.html alike; bad input is one line and writes nothing, and so does Ctrl-C."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_report import COUNTING, assert_images, assert_printed, build, texts

from blackjack_env import Rules
from blackjack_env.evaluate.report import (
    Ceiling,
    Estimate,
    fmt_ev,
    fmt_optional,
    fmt_per_100,
    fmt_rate,
    fmt_share,
    main,
)
from blackjack_env.evaluate.report import model as report_model
from blackjack_env.evaluate.report.figures import ceiling_figure, round_ev_figure
from blackjack_env.solver.ceiling import N_VALUES, V_BASIC, V_BEST, CeilingResult, Recording

#: Round-start shoes of the end-to-end test: the ceiling analyses one in a few seconds on 2 cores.
SAMPLES = 8


def assert_ceiling_printed(summary: dict, out: Path) -> None:
    """Every number of summary.json's ceiling appears, formatted as the report formats it, in both documents."""
    c = summary["ceiling"]
    numbers = [fmt_per_100(c[k]) for k in ("gain", "policy_gain")]
    numbers += [fmt_optional(v, fmt_per_100) for v in (*c["gain_ci95"], *c["policy_gain_ci95"])]
    numbers += [fmt_optional(v, fmt_share) for v in (c["share"], *c["share_ci95"])]
    numbers += [fmt_ev(c["basic_ev"]["value"])] + [fmt_optional(c["basic_ev"][k]) for k in ("ci95_low", "ci95_high")]
    round_ev = c["round_ev"]
    for name in ("basic", "best"):
        numbers += [fmt_optional(v) for v in round_ev["percentiles"][name].values()]
        numbers.append(fmt_optional(round_ev["share_positive"][name], fmt_share))
        hist = np.array(round_ev["histogram"][name], dtype=float)
        numbers += [fmt_rate(v) for v in hist[hist > 0] / hist.sum()]
    numbers += [f"{c['samples']:,}", f"{c['seconds']:.0f} s"]
    for text in texts(out):
        missing = [n for n in numbers if n not in text]
        assert not missing, missing


def test_a_counting_report_with_the_ceiling(tmp_path: Path) -> None:
    """The real ceiling of the counter's game, on a few shoes: the bar and the distribution are drawn,
    every number is printed in both documents, and the policy's gain is the report's paired gap."""
    out = tmp_path / "ceiling"
    summary = build(out, *COUNTING, "--ceiling", "--ceiling-samples", str(SAMPLES), rounds="2e5")
    assert {"ceiling.png", "round_ev.png"} <= set(summary["figures"])
    assert_images(out, summary)
    assert_printed(summary, out)
    assert_ceiling_printed(summary, out)
    c, gap = summary["ceiling"], summary["gap_to_basic"]
    assert c["samples"] == SAMPLES and not c["interrupted"] and c["seed"] == 3
    assert c["bets"] == [1, 2, 4, 6, 8]  # the perfect counter bets what the policy's ramp bets
    assert c["policy_gain"] == gap["value"] and c["policy_gain_ci95"] == [gap["ci95_low"], gap["ci95_high"]]
    assert c["share"] == pytest.approx(c["policy_gain"] / c["gain"])
    assert c["gain_ci95"][0] < c["gain"] < c["gain_ci95"][1]
    for name in ("basic", "best"):
        percentiles = list(c["round_ev"]["percentiles"][name].values())
        assert percentiles == sorted(percentiles)
    md, html = texts(out)
    assert "## The ceiling" in md and ">The ceiling</h" in html
    assert "| the perfect counter (the ceiling) | " + fmt_per_100(c["gain"]) + " | " in md


# ---------------------------------------------------------------------- a ceiling made up, for speed
def fake_ceiling(rules: Rules, samples: int, interrupted: bool = False) -> CeilingResult:
    """A ceiling result with made-up per-shoe values (the report's wiring, not the solver, is tested)."""
    rng = np.random.default_rng(7)
    values = np.zeros((samples, N_VALUES))
    values[:, V_BASIC] = rng.normal(-0.005, 0.01, samples)
    values[:, V_BEST] = values[:, V_BASIC] + np.abs(rng.normal(0.0, 0.003, samples))
    recording = Recording(np.full((samples, 10), 16.0), np.zeros(samples), np.array([-5.0, 1300.0, 1000.0, 9.0]), 101)
    return CeilingResult(
        rules=rules, seats=1, seat=0, seed=3, values=values, recording=recording, seconds=1.5, interrupted=interrupted
    )


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Rules, argparse.Namespace]]:
    """game_ceiling replaced by fake_ceiling; the calls it got."""
    seen: list[tuple[Rules, argparse.Namespace]] = []

    def game_ceiling(rules: Rules, args: argparse.Namespace) -> CeilingResult:
        seen.append((rules, args))
        return fake_ceiling(rules, args.ceiling_samples, interrupted=args.seed == 99)

    monkeypatch.setattr(report_model, "game_ceiling", game_ceiling)
    return seen


def test_the_ceiling_of_a_policy_that_does_not_count(tmp_path: Path, calls: list) -> None:
    """Random play's report with --ceiling: a flat bet, its (negative) gain over basic strategy as a share of
    the ceiling of the same game (the report's rules, seats and seed), the histogram without count buckets."""
    out = tmp_path / "random"
    argv = ("--policy", "random", "--set", "penetration=0.75", "--ceiling", "--ceiling-samples", "5", "--seats", "2")
    summary = build(out, *argv, rounds="3000")
    ((rules, args),) = calls
    assert rules.penetration == 0.75 and args.seats == 2 and args.seat == 0 and args.seed == 3
    c, gap = summary["ceiling"], summary["gap_to_basic"]
    assert c["bets"] is None and c["samples"] == 5 and c["policy_gain"] == gap["value"] < 0
    assert c["share"] == pytest.approx(c["policy_gain"] / c["gain"]) and c["share"] < 0
    assert_images(out, summary)
    assert_printed(summary, out)
    assert_ceiling_printed(summary, out)
    assert "a flat bet of one unit" in texts(out)[0]
    assert not any("Interrupted" in note for note in summary["notes"])


def test_an_interrupted_ceiling_writes_nothing_and_says_its_shoes_are_kept(
    tmp_path: Path, calls: list, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C in the ceiling (which keeps the shoes analysed in its cache): no report, exit 130."""
    out = tmp_path / "interrupted"
    argv = ["--policy", "random", "--set", "penetration=0.75", "--ceiling", "--ceiling-samples", "4", "--seed", "99"]
    assert main([*argv, "--rounds", "3000", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert "no report written" in err and "4 shoes analysed are kept" in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("--set", "penetration=0"), "--ceiling: the ceiling needs a shoe dealt to a cut card"),
        (("--set", "decks=0", "--set", "penetration=0.75"), "--ceiling: the ceiling needs a finite shoe"),
        (("--set", "penetration=0.75", "--ceiling-samples", "0"), "--ceiling-samples must be >= 1, got 0"),
    ],
)
def test_bad_ceiling_input_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], problem: str
) -> None:
    out = tmp_path / "out"
    assert main(["--ceiling", *args, "--rounds", "1000", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("blackjack-evaluate report: error: ") and problem in lines[0], lines
    assert captured.out == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("raised", "code"), [(KeyboardInterrupt, 130), ("no shoe", 130)])
def test_ctrl_c_in_the_ceiling_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], raised: Any, code: int
) -> None:
    """Ctrl-C that reaches the report while the ceiling runs, or a ceiling interrupted before its
    first shoe: exit 130, no report, no temporary folder."""

    def game_ceiling(rules: Rules, args: argparse.Namespace) -> CeilingResult:
        if raised is KeyboardInterrupt:
            raise KeyboardInterrupt
        return fake_ceiling(rules, 0, interrupted=True)

    monkeypatch.setattr(report_model, "game_ceiling", game_ceiling)
    out = tmp_path / "out"
    argv = ["--policy", "random", "--set", "penetration=0.75", "--ceiling", "--rounds", "2000", "--out", str(out)]
    assert main(argv) == code
    err = capsys.readouterr().err
    assert "no report written" in err and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []


def test_the_ceiling_bar_shows_the_three_gains_and_the_share() -> None:
    result = fake_ceiling(Rules(penetration=0.75), 40)
    gap = Estimate.of(0.25 * result.gain, 0.0004)
    ceiling = Ceiling.of(result, gap, None)
    gain_ax, share_ax = ceiling_figure(ceiling, "hilo").axes[:2]
    heights = [patch.get_height() for patch in gain_ax.patches]
    assert heights == pytest.approx([0.0, 100 * gap.value, 100 * result.gain])
    (bar,) = share_ax.patches
    assert bar.get_width() == pytest.approx(25.0)  # the policy's gain is a quarter of the ceiling's
    low, high = share_ax.get_xlim()
    assert low < 0 < 100 < high and low <= 100 * ceiling.share["share_ci95"][0]
    assert [t.get_text() for t in round_ev_figure(ceiling, None).axes[0].get_xticklabels()]  # one panel drawn
    assert math.isfinite(ceiling.basic_ev.stderr)
