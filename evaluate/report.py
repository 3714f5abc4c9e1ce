"""``blackjack-evaluate report``: a policy's evaluation as a report to open in a browser.

    blackjack-evaluate report --policy basic --rounds 1e7 --out reports/basic
    blackjack-evaluate report --policy my_agent/ --run my_agent/ --rules vegas-strip --out reports/agent

writes into ``--out``:

* ``report.html``: self-contained (figures embedded as base64 PNG; nothing is fetched when opened),
* ``report.md``: the same content as Markdown, beside the PNG files it shows,
* ``ev.png``, ``rates.png``, and for strategy-table policies ``chart.png`` (and ``deviations.png``
  where the policy differs from basic strategy), with ``--run`` ``learning_curve.png``; for a
  counting strategy ``true_count.png``, ``chart.png`` (basic strategy's chart with the index plays
  marked) and ``bankroll.png``,
* ``summary.json``: every number the report prints.

The simulated numbers come from one run in which basic strategy and random play are dealt the very
cards the policy was dealt, every round (common random numbers), so the gap to basic strategy has a
tight interval and random play shows the scale (on a panel of its own in ``ev.png``, so that it does not
flatten the others). For a strategy-table policy the exact analysis adds its exact EV and, for every cell
where it plays otherwise than basic strategy, that deviation's exact cost per occurrence and per round.

A counting strategy (``--policy hilo-i18-fab4 --spread 1-8``, a system's name, or a counting-strategy
JSON; the rules need a finite shoe dealt to a cut card) gets the counter's pages instead of the exact
analysis: SCORE, DI, N0, the risk of ruin of ``--bankroll`` units (1,000 when not given), win and SD
per 100 rounds, its EV per unit bet by true count with 95% CIs beside the distribution of the true
count and the average bet there, its index plays beside basic strategy's chart, and a few bankroll
paths. Its baseline is basic strategy at a flat bet on the same shoes, so the paired gap is what
counting gains; random play is left out (see :func:`paired_run`).

``--run DIR`` (a training run) adds the learning curve from ``DIR/metrics.csv``: a CSV with a
header and the columns ``step`` (training steps), ``ev_gap`` (EV minus basic strategy's EV per
round), ``ev_gap_low`` and ``ev_gap_high`` (its 95% interval) and ``agreement`` (share of
decisions that agree with basic strategy, 0..1); other columns are ignored.

The files are built in a temporary folder beside ``--out`` and moved in when complete. A new
``--out`` is created by one rename; an existing one keeps every file the report does not write,
and the report refuses (naming them) to replace files it would write unless ``--overwrite``.
"""

from __future__ import annotations

import argparse
import base64
import csv
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from blackjack_env.counting import VALUES, CountingStrategy
from blackjack_env.rules import Rules
from blackjack_env.simulate import OUTCOMES, Z95, Policy, SimulationResult, interval
from blackjack_env.strategy import StrategyTable, row_of_label, up_label

from .counting_stats import counting_figures, n0_text
from .options import (
    CliError,
    OneLineParser,
    RunFeedback,
    add_simulation_arguments,
    note_compile,
    rules_from_args,
    table_from_args,
    warnings_as_lines,
)
from .policies import load_policy
from .runner import RunOutcome, simulate

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

METRICS_FILE = "metrics.csv"
METRICS_COLUMNS = ("step", "ev_gap", "ev_gap_low", "ev_gap_high", "agreement")
FIGURE_FILES = (
    "ev.png",
    "rates.png",
    "chart.png",
    "deviations.png",
    "learning_curve.png",
    "true_count.png",
    "bankroll.png",
)
#: Every file a report may write (checked against --out before any work is done).
REPORT_FILES = ("report.html", "report.md", "summary.json", *FIGURE_FILES)

#: Chart sections as printed charts show them: hard 5-21, soft 13-21, pairs 2..A.
CHART_ROWS = {
    "hard": [str(t) for t in range(5, 22)],
    "soft": [str(t) for t in range(13, 22)],
    "pairs": ["2", "3", "4", "5", "6", "7", "8", "9", "10", "A"],
}
CHART_COLUMNS = [up_label(up) for up in (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)]
#: Colours of the chart's first letters, close to the familiar printed charts.
ACTION_COLOURS = {
    "H": ("#f6b8b0", "hit"),
    "S": ("#f7dc6f", "stand"),
    "D": ("#82d99b", "double"),
    "P": ("#8ec5ef", "split"),
    "R": ("#d2b4de", "surrender"),
}
#: Index plays' actions by name (I: take insurance).
ACTION_NAMES = {**{code: name for code, (_colour, name) in ACTION_COLOURS.items()}, "I": "insure"}
#: The counter's bankroll when --bankroll is not given (table-minimum units).
DEFAULT_BANKROLL = 1000.0
#: Bankroll paths drawn, and the rounds each one lasts.
BANKROLL_PATHS = 5
BANKROLL_ROUNDS = 100_000
#: SeedSequence spawn key of the bankroll paths' generator: far beyond the chunks' keys (0, 1, ...),
#: so the paths never reuse the cards' random numbers.
BANKROLL_STREAM = 2**31
BANKROLL_METHOD = "normal approximation with the simulated EV and SD per round"


# ====================================================================== number formats
# One formatter per kind of number: the templates print through these, and the tests check that
# every number in summary.json appears, formatted the same way, in report.md and report.html.
def fmt_ev(value: float) -> str:
    """An EV or an EV gap per initial bet."""
    return f"{value:+.5f}"


def fmt_cost(value: float) -> str:
    """An exact deviation cost (tiny numbers: six decimals)."""
    return f"{value:.6f}"


def fmt_rate(value: float) -> str:
    return f"{value:.4f}"


def fmt_index(value: float) -> str:
    """A true count (an index, a ramp step): signed, as index tables print them."""
    return f"{value:+g}"


def fmt_optional(value: float | None, formatter: Callable[[float], str] = fmt_ev) -> str:
    """A number that may be missing (a true-count bucket with no round played has no EV; one
    round has no interval): "n/a", as summary.json's null."""
    if value is None or not math.isfinite(value):
        return "n/a"
    return formatter(value)


#: The counter's figures (``counting_figures``' keys, with avg_bet and rounds_played): format,
#: label and what the figure means, in the order the report lists them.
COUNT_FIGURES: dict[str, tuple[str, str, str]] = {
    "avg_bet": ("{:.3f}", "average bet", "units per round played"),
    "advantage": ("{:+.5f}", "advantage", "result per unit bet"),
    "win_per_100": ("{:+.3f}", "win per 100 rounds", "units"),
    "sd_per_100": ("{:.2f}", "SD per 100 rounds", "units"),
    "sd": ("{:.4f}", "SD per round", "units"),
    "di": ("{:.2f}", "DI", "desirability index: 1000 x EV / SD per round"),
    "score": ("{:.2f}", "SCORE", "win per 100 rounds of a 10,000-unit Kelly bettor: DI squared"),
    "n0": ("{:,.0f}", "N0", "rounds after which the expected win equals one SD"),
    "ror": ("{:.4f}", "risk of ruin", "of the bankroll below, with no time limit: exp(-2 bankroll EV / SD^2)"),
    "bankroll": ("{:,g}", "bankroll", "units"),
    "rounds_per_shoe": ("{:.1f}", "rounds per shoe", "rounds dealt between shuffles"),
    "rounds_played": ("{:,}", "rounds played", "rounds with a bet"),
}


def fmt_count(key: str, value: float | None) -> str:
    """One of the counter's figures, as COUNT_FIGURES formats it (N0 of a 0 EV is infinite)."""
    if key == "n0":
        return n0_text(value)
    return fmt_optional(value, COUNT_FIGURES[key][0].format)


# ====================================================================== the numbers
@dataclass
class Estimate:
    """A simulated mean with its 95% confidence interval."""

    value: float
    low: float
    high: float
    stderr: float

    @classmethod
    def of(cls, mean: float, stderr: float) -> Estimate:
        low, high = interval(mean, stderr)
        return cls(mean, low, high, stderr)

    def to_dict(self) -> dict[str, float]:
        return {"value": self.value, "ci95_low": self.low, "ci95_high": self.high, "stderr": self.stderr}


@dataclass
class BankrollPaths:
    """A few bankrolls over ``rounds`` rounds, each round's result drawn from a normal law with the
    simulated EV and SD per round. Resampling simulated rounds would not be honest for a counter:
    its results come in runs, its bets following the count. A path that reaches 0 is ruined there."""

    start: float
    ev: float
    sd: float
    seed: int
    values: np.ndarray  # float[paths, rounds + 1]: the bankroll after 0, 1, ..., rounds rounds; NaN after ruin
    ruined_at: list[int | None]

    @classmethod
    def simulate(
        cls, start: float, ev: float, sd: float, seed: int, paths: int = BANKROLL_PATHS, rounds: int = BANKROLL_ROUNDS
    ) -> BankrollPaths:
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(BANKROLL_STREAM,)))
        walk = start + np.cumsum(rng.normal(ev, sd, size=(paths, rounds)), axis=1)
        values = np.concatenate([np.full((paths, 1), start), walk], axis=1)
        ruined_at: list[int | None] = []
        for row in values:
            broke = np.flatnonzero(row <= 0)
            if broke.size:
                row[broke[0]] = 0.0
                row[broke[0] + 1 :] = np.nan
            ruined_at.append(int(broke[0]) if broke.size else None)
        return cls(start, ev, sd, seed, values, ruined_at)

    @property
    def rounds(self) -> int:
        return self.values.shape[1] - 1

    @property
    def final(self) -> list[float]:
        """Each path's bankroll at the end (0 once ruined)."""
        return [0.0 if r is not None else float(v[-1]) for v, r in zip(self.values, self.ruined_at, strict=True)]

    def describe(self) -> str:
        """One sentence with every path's end, as both documents print it."""
        ruined = [r for r in self.ruined_at if r is not None]
        finals = ", ".join(f"{v:,.0f}" for v in self.final)
        text = (
            f"After {self.rounds:,} rounds from {self.start:,g} units the {len(self.ruined_at)} paths end at {finals}"
        )
        if not ruined:
            return text + "; none is ruined."
        return text + f"; {len(ruined)} ruined, after " + ", ".join(f"{r:,}" for r in ruined) + " rounds."

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": BANKROLL_METHOD,
            "start": self.start,
            "rounds": self.rounds,
            "paths": len(self.ruined_at),
            "seed": self.seed,
            "final": self.final,
            "ruined_at": self.ruined_at,
        }


@dataclass
class Counting:
    """The counter's pages: its strategy, its figures (``counting_figures``' keys, with avg_bet and
    rounds_played), the basic strategy its un-indexed questions follow, and bankroll paths."""

    strategy: CountingStrategy
    basic: StrategyTable
    figures: dict[str, Any]
    bankroll_given: bool
    spread: str | None
    paths: BankrollPaths

    @classmethod
    def of(cls, policy: Policy, result: SimulationResult, args: argparse.Namespace) -> Counting:
        assert policy.counting is not None and policy.table is not None
        bankroll = DEFAULT_BANKROLL if args.bankroll is None else args.bankroll
        figures = {
            "avg_bet": result.avg_bet(),
            "rounds_played": result.rounds_played(),
            **counting_figures(result, bankroll),
        }
        paths = BankrollPaths.simulate(bankroll, result.ev(), result.sd(), args.seed)
        return cls(policy.counting, policy.table, figures, args.bankroll is not None, args.spread, paths)

    def figure_rows(self) -> list[tuple[str, str, str]]:
        """(label, value, meaning) of every figure in COUNT_FIGURES, as both documents list them."""
        rows = []
        for key, (_format, label, meaning) in COUNT_FIGURES.items():
            if key == "bankroll" and not self.bankroll_given:
                meaning += f" (no --bankroll: {DEFAULT_BANKROLL:,.0f} by default)"
            rows.append((label, fmt_count(key, self.figures.get(key)), meaning))
        return rows

    @property
    def count_name(self) -> str:
        """What the buckets count (``CountingSystem.count_name``)."""
        return self.strategy.system.count_name

    def system_text(self) -> str:
        system = self.strategy.system
        tags = ", ".join(f"{v} {t:+g}" for v, t in zip(VALUES, system.tags, strict=True))
        return f"{system.name} ({'balanced' if system.balanced else 'unbalanced'}; tags {tags})"

    def ramp_rows(self) -> list[tuple[str, float]]:
        """(range of the count, bet) per ramp pair: a pair's bet holds from its count up to the
        next pair's, the first pair's also below it."""
        ramp = self.strategy.ramp
        rows = []
        for i, (count, bet) in enumerate(ramp):
            if len(ramp) == 1:
                where = "any"
            elif i == 0:
                where = f"below {ramp[1][0]:+g}"
            elif i == len(ramp) - 1:
                where = f"{count:+g} and above"
            else:
                where = f"{count:+g} to below {ramp[i + 1][0]:+g}"
            rows.append((where, bet))
        return rows

    def index_rows(self) -> list[dict[str, Any]]:
        """The index plays, each with what basic strategy's chart plays there."""
        rows = []
        for entry in self.strategy.indices:
            if entry.hand == "insurance":
                basic = "insure" if self.basic.insurance[0] else "no insurance"
            else:
                basic = self.basic.cell_code(entry.row, entry.col + 1)
            rows.append({**entry.to_dict(), "up": entry.up, "action": entry.action, "basic": basic})
        return rows

    def chart_marks(self) -> dict[tuple[int, int], str]:
        """Index plays by chart cell (row, up card): the play and the count it needs, e.g. "S≥+0"."""
        marks: dict[tuple[int, int], str] = {}
        for entry in self.strategy.indices:
            if entry.hand != "insurance":
                mark = f"{entry.action}{'≥' if entry.when == 'at_or_above' else '<'}{entry.index:+g}"
                key = (entry.row, entry.col + 1)
                marks[key] = f"{marks[key]}\n{mark}" if key in marks else mark
        return marks

    def to_dict(self) -> dict[str, Any]:
        strategy = self.strategy.to_dict()
        del strategy["indices"]  # listed below, with basic strategy's plays
        return {
            **self.figures,
            "bankroll_given": self.bankroll_given,
            "spread": self.spread,
            "strategy": strategy,
            "indices": self.index_rows(),
            "bankroll_paths": self.paths.to_dict(),
        }


@dataclass
class Report:
    """Everything the report shows (``to_summary`` is summary.json)."""

    policy: str
    rules: Rules
    rounds: int
    seed: int
    interrupted: bool
    ev: dict[str, Estimate]  # policy, basic and random: all three on the same cards every round
    gap_to_basic: Estimate
    paired_rounds: int
    rates: dict[str, dict[str, float]]  # policy, basic
    exact: dict[str, float] | None  # policy and basic strategy's exact EVs (table policies)
    deviations: list[dict[str, Any]] = field(default_factory=list)
    table: StrategyTable | None = None
    basic_table: StrategyTable | None = None
    curve: list[dict[str, float]] | None = None
    counting: Counting | None = None
    notes: list[str] = field(default_factory=list)
    figures: dict[str, str] = field(default_factory=dict)  # file name -> caption

    @property
    def ev_unit(self) -> str:
        """A counter's bet varies: its EV is per round, in table-minimum units."""
        return "per round (table-minimum units)" if self.counting else "per initial bet"

    def to_summary(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "rules": self.rules.to_dict(),
            "rules_description": self.rules.describe(),
            "rounds": self.rounds,
            "seed": self.seed,
            "interrupted": self.interrupted,
            "ev": {name: estimate.to_dict() for name, estimate in self.ev.items()},
            "ev_unit": self.ev_unit,
            "ev_cards": {
                name: "the policy's cards"
                if name == "policy"
                else "paired: the cards the policy was dealt, every round"
                for name in self.ev
            },
            "gap_to_basic": {**self.gap_to_basic.to_dict(), "paired_rounds": self.paired_rounds},
            "rates": self.rates,
            "exact": self.exact,
            "deviations": self.deviations,
            "learning_curve": self.curve,
            "counting": self.counting.to_dict() if self.counting else None,
            "figures": sorted(self.figures),
            "notes": self.notes,
        }


def paired_run(args: argparse.Namespace, rules: Rules, policy: Policy) -> RunOutcome:
    """The policy, basic strategy (at a flat bet) and random play, all on the same cards every round.

    A counting strategy is paired with basic strategy alone: the shoe advances along the last
    player's play, so random play last would deal the counter other shoes than its own (more
    rounds per shoe, another spread of the true count), and it has nothing to say about a count."""
    outcome = simulate(
        rules,
        policy,
        args.rounds,
        seed=args.seed,
        baseline=load_policy("basic", rules),
        others=[] if policy.counting is not None else [Policy.random()],
        workers=args.workers,
        table=table_from_args(args, rules),
        on_compiling=RunFeedback("blackjack-evaluate report", args.rounds, bar=False).compiling,
    )
    note_compile(outcome, "blackjack-evaluate report")
    if outcome.result.rounds == 0:
        raise CliError("interrupted before any round finished")
    return outcome


def build_report(args: argparse.Namespace) -> Report:
    """Simulate, analyse and collect every number of the report."""
    rules = rules_from_args(args)
    policy = load_policy(args.policy, rules, args.spread)
    run = paired_run(args, rules, policy)
    a = run.result
    diff, diff_stderr, paired = a.diff(1)
    ev = {"policy": Estimate.of(a.ev(), a.stderr()), "basic": Estimate.of(a.ev(1), a.stderr(1))}
    if policy.counting is None:
        ev["random"] = Estimate.of(a.ev(2), a.stderr(2))
    report = Report(
        policy=args.policy,
        rules=rules,
        rounds=a.rounds,
        seed=args.seed,
        interrupted=run.interrupted,
        ev=ev,
        gap_to_basic=Estimate.of(diff, diff_stderr),
        paired_rounds=paired,
        rates={"policy": a.rates(), "basic": a.rates(1)},
        exact=None,
    )
    if report.interrupted:
        report.notes.append(f"Interrupted: the simulated numbers cover the {a.rounds:,} rounds finished.")
    if args.bankroll is not None and policy.counting is None:
        report.notes.append("--bankroll is used by a counting strategy's pages only; this policy does not count.")
    if policy.counting is not None:  # no exact analysis: a count's play follows the cards seen
        report.counting = Counting.of(policy, a, args)
        report.notes.append(
            "Basic strategy plays a flat bet of one unit on the counter's very cards, so the paired gap is "
            "what counting (bet ramp and index plays) gains per round. Random play is left out: the shoe "
            "advances along the last player's cards, so random play after the counter would deal it other shoes."
        )
        if not report.counting.bankroll_given:
            report.notes.append(
                f"No --bankroll: the risk of ruin and the bankroll paths use {DEFAULT_BANKROLL:,.0f} units."
            )
    elif policy.table is not None:
        from blackjack_env.solver import solve

        solution = solve(rules)
        evaluation = solution.evaluate(policy.table)
        report.table, report.basic_table = policy.table, solution.table
        report.exact = {"policy": evaluation.ev, "basic": evaluation.basic_ev, "loss": evaluation.loss}
        deviations = sorted(evaluation.deviations, key=lambda d: d.cost_per_round, reverse=True)
        if not np.array_equal(policy.table.insurance, solution.table.insurance):
            report.notes.append(
                "Insurance choices differ from basic strategy's (not a chart cell: their cost is in the exact EV)."
            )
        report.deviations = [
            {
                "section": d.section,
                "hand": d.key,
                "up": d.up,
                "basic": d.basic,
                "played": d.played,
                "cost": d.cost,
                "frequency": d.frequency,
                "cost_per_round": d.cost_per_round,
            }
            for d in deviations
        ]
    else:
        report.notes.append(f"Policy {args.policy!r} is not a strategy table: it has no chart and no exact analysis.")
    if args.run is not None:
        metrics = Path(args.run) / METRICS_FILE
        if metrics.is_file():
            report.curve = read_metrics(metrics)
        else:
            note = f"--run {args.run}: no {METRICS_FILE} there, so no learning curve"
            print(f"blackjack-evaluate report: note: {note}", file=sys.stderr)
            report.notes.append(note[0].upper() + note[1:] + ".")
    return report


def read_metrics(path: Path) -> list[dict[str, float]]:
    """A training run's metrics.csv (see the module docstring), checked row by row."""
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in METRICS_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise CliError(f"{path}: missing column(s) {', '.join(missing)}; needs {', '.join(METRICS_COLUMNS)}")
        rows = []
        for line, record in enumerate(reader, start=2):
            try:
                row = {c: float(record[c]) for c in METRICS_COLUMNS}
            except (TypeError, ValueError):
                raise CliError(f"{path} line {line}: every column of {METRICS_COLUMNS} must be a number") from None
            if not all(math.isfinite(v) for v in row.values()):
                raise CliError(f"{path} line {line}: numbers must be finite")
            rows.append(row)
    if not rows:
        raise CliError(f"{path}: no rows after the header")
    return sorted(rows, key=lambda r: r["step"])


# ====================================================================== figures
def _figure(width: float, height: float):
    """A matplotlib Figure on the Agg canvas (no pyplot: no global state, no display needed)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def short_name(policy: str, width: int = 24) -> str:
    """A policy name that fits a figure's axis (long paths keep their end)."""
    return policy if len(policy) <= width else "..." + policy[-(width - 3) :]


def ev_figure(report: Report) -> Figure:
    """Three panels, each on its own scale: the policy beside basic strategy, their paired gap, and
    random play (where it played). On one shared axis random play's -0.4 would shrink the other
    intervals (a few 1e-4 wide) to nothing; the exact EVs, where known, are marked on the intervals
    that should hold them."""
    exact = report.exact or {}
    with_random = "random" in report.ev
    fig = _figure(7, 4.4 if with_random else 3.4)
    axes = fig.subplots(2 + with_random, 1, height_ratios=[2, 1, 1][: 2 + with_random])
    ev_ax, gap_ax = axes[:2]
    per = "round" if report.counting else "initial bet"  # the unit in full is on the x axis
    _interval_panel(
        ev_ax,
        f"EV per {per}, 95% CI: the policy and basic strategy on the same cards",
        [
            (short_name(report.policy), report.ev["policy"], "#4c72b0", exact.get("policy")),
            ("basic strategy", report.ev["basic"], "#55a868", exact.get("basic")),
        ],
        mark_zero=True,  # break-even: a line where it is in view, else an arrow to the side it lies on
    )
    exact_gap = exact["policy"] - exact["basic"] if exact else None
    _interval_panel(
        gap_ax,
        "paired gap to basic strategy, 95% CI (0 = plays as well)",
        [("policy - basic", report.gap_to_basic, "#8172b2", exact_gap)],
        zero=True,
    )
    if with_random:
        _interval_panel(
            axes[2], "random play on the same cards, 95% CI", [("random play", report.ev["random"], "#c44e52", None)]
        )
    axes[-1].set_xlabel(f"EV {report.ev_unit}")
    if exact:
        ev_ax.legend(loc="best", fontsize=8)
    return fig


def _interval_panel(
    ax: Axes,
    title: str,
    rows: list[tuple[str, Estimate, str, float | None]],
    zero: bool = False,
    mark_zero: bool = False,
) -> None:
    """One point with its 95% CI per row (label, estimate, colour, exact value or None), the x axis
    fitted to those intervals (and to 0 when ``zero``) rather than to the other panels. ``mark_zero``
    draws the zero line where 0 is in view, else names it at the edge it lies beyond (fitting 0 would
    shrink intervals a few 1e-4 wide to dots)."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    ends = [0.0] if zero else []
    for i, (_label, estimate, colour, exact) in enumerate(rows):
        finite = math.isfinite(estimate.stderr)  # fewer than two rounds: no interval to draw
        xerr = [[estimate.value - estimate.low], [estimate.high - estimate.value]] if finite else None
        ax.errorbar([estimate.value], [i], xerr=xerr, fmt="o", color=colour, capsize=5)
        ends += [estimate.low, estimate.high] if finite else [estimate.value]
        if exact is not None:
            ax.plot([exact], [i], "x", color="black", ms=8, label="exact EV" if i == 0 else None)
            ends.append(exact)
    low, high = min(ends), max(ends)
    pad = 0.1 * (high - low) or 1e-3
    ax.set_xlim(low - pad, high + pad)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_yticks(range(len(rows)), [label for label, *_ in rows])
    ax.xaxis.set_major_locator(MaxNLocator(6))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))  # no offset: EVs as printed
    ax.set_title(title, fontsize=9, loc="left")
    if zero or (mark_zero and low - pad <= 0.0 <= high + pad):
        ax.axvline(0, color="black", lw=0.8)
    elif mark_zero:
        right = high < 0.0
        ax.annotate(
            f"0 (break-even) {'→' if right else '←'}",
            xy=(0.99 if right else 0.01, 0.5),
            xycoords="axes fraction",
            ha="right" if right else "left",
            va="center",
            fontsize=8,
            color="dimgrey",
        )


def rates_figure(report: Report, path: Path) -> None:
    fig = _figure(8, 3.2)
    ax = fig.subplots()
    x = np.arange(len(OUTCOMES))
    ax.bar(
        x - 0.2, [report.rates["policy"][k] for k in OUTCOMES], 0.4, label=short_name(report.policy), color="#4c72b0"
    )
    ax.bar(x + 0.2, [report.rates["basic"][k] for k in OUTCOMES], 0.4, label="basic strategy", color="#55a868")
    ax.set_xticks(x, OUTCOMES)
    ax.set_ylabel("share of rounds")
    ax.legend()
    fig.savefig(path, format="png")


def chart_figure(
    table: StrategyTable, basic: StrategyTable, path: Path, marks: dict[tuple[int, int], str] | None = None
) -> None:
    """Hard, soft and pair grids coloured by action; cells that differ from basic strategy are
    framed in black and show basic strategy's code below the policy's. ``marks`` (a counter's
    index plays, by (row, up card)) frames those cells instead, with the mark below the code."""
    from matplotlib.patches import Patch, Rectangle

    marks = marks or {}
    fig = _figure(15, 9.6)  # cells about 45 px: the marks' 7.5 pt text (10 px) reads at 100% zoom
    axes = fig.subplots(1, 3)
    for ax, (section, keys) in zip(axes, CHART_ROWS.items(), strict=True):
        for i, key in enumerate(keys):
            row = row_of_label(section, key)
            for j, up in enumerate((2, 3, 4, 5, 6, 7, 8, 9, 10, 1)):
                code, base = table.cell_code(row, up), basic.cell_code(row, up)
                mark = marks.get((row, up)) or (f"basic {base}" if code != base else None)
                framed = mark is not None
                ax.add_patch(
                    Rectangle(
                        (j, i),
                        1,
                        1,
                        facecolor=ACTION_COLOURS[code[0]][0],
                        edgecolor="black" if framed else "white",
                        lw=2.5 if framed else 0.8,
                        zorder=2 if framed else 1,
                    )
                )
                weight = "bold" if framed else "normal"
                two_lines = framed and "\n" in mark
                y = i + (0.25 if two_lines else 0.35)
                ax.text(j + 0.5, y, code, ha="center", va="center", fontsize=10, weight=weight, zorder=3)
                if framed:
                    y = i + (0.68 if two_lines else 0.75)
                    size = 7.5 if two_lines else 8.5
                    ax.text(j + 0.5, y, mark, ha="center", va="center", fontsize=size, linespacing=0.85, zorder=3)
        ax.set_xlim(0, 10)
        ax.set_ylim(len(keys), 0)
        ax.set_xticks(np.arange(10) + 0.5, CHART_COLUMNS)
        ax.set_yticks(np.arange(len(keys)) + 0.5, [f"{k},{k}" if section == "pairs" else k for k in keys])
        ax.set_title(section)
        ax.set_aspect("equal")
        ax.set_anchor("N")
        ax.tick_params(length=0)
        ax.set_xlabel("dealer up card")
    handles = [Patch(facecolor=c, label=name) for c, name in ACTION_COLOURS.values()]
    framed = "index play: its play and count below" if marks else "differs from basic strategy"
    handles.append(Patch(facecolor="white", edgecolor="black", lw=2.5, label=framed))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles))
    fig.suptitle(f"{table.name}: second letter = fallback when the first is not allowed")
    fig.savefig(path, format="png")


def deviations_figure(report: Report, path: Path, top: int = 20) -> None:
    shown = report.deviations[:top]
    fig = _figure(7, 0.8 + 0.28 * len(shown))
    ax = fig.subplots()
    labels = [f"{d['section']} {d['hand']} v {d['up']}: {d['played']} (basic {d['basic']})" for d in shown]
    ax.barh(labels, [d["cost_per_round"] for d in shown], color="#c44e52")
    ax.invert_yaxis()
    ax.set_xlabel("exact EV cost per round (cost per occurrence x frequency)")
    ax.tick_params(axis="y", labelsize=7)
    fig.savefig(path, format="png")


def curve_figure(curve: list[dict[str, float]], path: Path) -> None:
    steps = [r["step"] for r in curve]
    fig = _figure(7, 5)
    gap_ax, agree_ax = fig.subplots(2, 1, sharex=True)
    gap_ax.fill_between(steps, [r["ev_gap_low"] for r in curve], [r["ev_gap_high"] for r in curve], alpha=0.3)
    gap_ax.plot(steps, [r["ev_gap"] for r in curve], marker=".")
    gap_ax.axhline(0, color="black", lw=0.8)
    gap_ax.set_ylabel("EV gap to basic (95% CI)")
    agree_ax.plot(steps, [r["agreement"] for r in curve], marker=".", color="#55a868")
    agree_ax.set_ylabel("agreement with basic")
    agree_ax.set_xlabel("training step")
    fig.savefig(path, format="png")


def true_count_figure(counting: Counting, path: Path) -> None:
    """The EV per unit bet per count bucket with its 95% CI (a bucket of one played round: the point
    alone, hollow), above the share of rounds per bucket with the average bet there on a twin axis."""
    buckets = counting.figures["by_true_count"]
    x = np.array([b["true_count"] for b in buckets])
    ev = np.array([b["ev_per_unit_bet"] for b in buckets])
    low, high = (np.array([b["ci95"][k] for b in buckets]) for k in (0, 1))
    shown = np.isfinite(ev)
    with_ci = shown & np.isfinite(low) & np.isfinite(high)
    fig = _figure(8, 6)
    ev_ax, share_ax = fig.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    ev_ax.errorbar(
        x[with_ci], ev[with_ci], yerr=[ev[with_ci] - low[with_ci], high[with_ci] - ev[with_ci]], fmt="o", capsize=3
    )
    ev_ax.plot(x[shown & ~with_ci], ev[shown & ~with_ci], "o", mfc="none", color="#4c72b0")
    ev_ax.axhline(0, color="black", lw=0.8)
    ev_ax.axhline(counting.figures["advantage"], color="#c44e52", ls="--", lw=1, label="overall advantage")
    ev_ax.set_ylabel("EV per unit bet (95% CI)")
    ev_ax.legend(loc="upper left", fontsize=8)
    name = counting.count_name
    ev_ax.set_title(f"{counting.strategy.name}: EV per unit bet by {name} (floored; the end buckets pool the tails)")
    share_ax.bar(x, [b["share"] for b in buckets], color="#8c8c8c", label="share of rounds")
    share_ax.set_ylabel("share of rounds")
    share_ax.set_xlabel(name)
    share_ax.set_xticks(x, [b["label"] for b in buckets], fontsize=8)
    bet_ax = share_ax.twinx()
    played = np.array([b["rounds_played"] > 0 for b in buckets])
    bet_ax.step(
        x[played],
        [b["avg_bet"] for b, p in zip(buckets, played, strict=True) if p],
        where="mid",
        color="#dd8452",
        lw=2,
        label="average bet",
    )
    bet_ax.set_ylabel("average bet (units)", color="#dd8452")
    bet_ax.set_ylim(bottom=0)
    fig.legend(
        loc="outside lower center",
        ncols=2,
        handles=[*share_ax.get_legend_handles_labels()[0], *bet_ax.get_legend_handles_labels()[0]],
    )
    fig.savefig(path, format="png")


def bankroll_figure(paths: BankrollPaths, path: Path) -> None:
    """The paths, with the expected bankroll and the normal law's 95% range around it (ruin aside)."""
    n = np.arange(paths.rounds + 1)
    fig = _figure(8, 4.2)
    ax = fig.subplots()
    middle = paths.start + paths.ev * n
    half = Z95 * paths.sd * np.sqrt(n)
    ax.fill_between(n, middle - half, middle + half, color="#cccccc", alpha=0.5, label="95% range (no ruin)")
    ax.plot(n, middle, color="black", ls="--", lw=1, label="expected")
    for i, (values, ruined) in enumerate(zip(paths.values, paths.ruined_at, strict=True)):
        line = ax.plot(n, values, lw=0.8, label=f"path {i + 1}")[0]
        if ruined is not None:
            ax.plot([ruined], [0], "x", color=line.get_color(), ms=9, mew=2)
    ax.axhline(0, color="#c44e52", lw=1)
    ax.set_xlabel("rounds")
    ax.set_ylabel("bankroll (units)")
    ax.set_title(
        f"{len(paths.ruined_at)} bankrolls of {paths.start:,g} units ({BANKROLL_METHOD}; x: ruined)", fontsize=9
    )
    ax.legend(loc="upper left", fontsize=7, ncols=2)
    fig.savefig(path, format="png")


def draw_figures(report: Report, folder: Path) -> None:
    """Write the PNG figures into ``folder`` and list them (with captions) in the report."""
    ev_figure(report).savefig(folder / "ev.png", format="png")
    report.figures["ev.png"] = (
        f"EV {report.ev_unit} with 95% CIs, each panel on its own scale: the policy beside basic strategy, "
        + ("and the paired gap" if report.counting else "the paired gap, and random play")
    )
    rates_figure(report, folder / "rates.png")
    report.figures["rates.png"] = "Outcome rates beside basic strategy's"
    if report.counting:
        counting = report.counting
        true_count_figure(counting, folder / "true_count.png")
        report.figures["true_count.png"] = (
            f"EV per unit bet by {counting.count_name} with 95% CIs; below, the share of rounds at each "
            f"{counting.count_name} and the average bet there"
        )
        chart_figure(counting.basic, counting.basic, folder / "chart.png", counting.chart_marks())
        report.figures["chart.png"] = (
            "Basic strategy's chart, which answers every question without an index play; framed cells "
            "have index plays (the play, and the count at or above (≥) or below (<) which it is made)"
        )
        bankroll_figure(counting.paths, folder / "bankroll.png")
        report.figures["bankroll.png"] = (
            f"{len(counting.paths.ruined_at)} bankroll paths of {counting.paths.rounds:,} rounds from "
            f"{counting.paths.start:,g} units: {BANKROLL_METHOD} (seed {counting.paths.seed}), not resampled "
            "rounds, whose results follow the count's runs of bets"
        )
    if report.table is not None and report.basic_table is not None:
        chart_figure(report.table, report.basic_table, folder / "chart.png")
        report.figures["chart.png"] = "The policy's strategy chart; framed cells differ from basic strategy"
        if report.deviations:
            deviations_figure(report, folder / "deviations.png")
            report.figures["deviations.png"] = "Deviations from basic strategy by exact cost per round"
    if report.curve:
        curve_figure(report.curve, folder / "learning_curve.png")
        report.figures["learning_curve.png"] = "Learning curve: EV gap to basic strategy and agreement"


# ====================================================================== documents
MARKDOWN = """\
# Evaluation of {{ r.policy }}

Rules: {{ r.rules.describe() }}. {{ "{:,}".format(r.rounds) }} rounds, seed {{ r.seed }}.
{% for note in r.notes %}
> {{ note }}
{% endfor %}
## Headline

| player | EV {{ r.ev_unit }} | 95% CI | cards |
|---|---|---|---|
{% for name, label, cards in labels %}| {{ label }} | {{ ev(r.ev[name].value) }} | \
{{ ev(r.ev[name].low) }} .. {{ ev(r.ev[name].high) }} | {{ cards }} |
{% endfor %}
Paired gap to basic strategy (policy - basic, {{ "{:,}".format(r.paired_rounds) }} rounds on identical cards): \
**{{ ev(r.gap_to_basic.value) }}** (95% CI {{ ev(r.gap_to_basic.low) }} .. {{ ev(r.gap_to_basic.high) }}).
{% if r.exact %}
Exact EV (no sampling): policy {{ ev(r.exact.policy) }}, basic strategy {{ ev(r.exact.basic) }}; \
the policy gives up {{ cost(r.exact.loss) }} per round.
{% endif %}
![EV]({{ img("ev.png") }})

{% if c %}## Card counting

{{ c.strategy.name }}: the {{ c.system_text() }} count\
{% if c.strategy.exit_below is not none %}; it leaves the table below a {{ c.count_name }} of \
{{ idx(c.strategy.exit_below) }}{% endif %}.

| figure | value | meaning |
|---|---|---|
{% for label, value, meaning in c.figure_rows() %}| {{ label }} | {{ value }} | {{ meaning }} |
{% endfor %}
![true count]({{ img("true_count.png") }})

| {{ c.count_name }} | share of rounds | rounds | average bet | EV per unit bet | 95% CI |
|---|---|---|---|---|---|
{% for b in c.figures.by_true_count %}| {{ b.label }} | {{ rate(b.share) }} | {{ "{:,}".format(b.rounds) }} | \
{{ cf("avg_bet", b.avg_bet) }} | {{ opt(b.ev_per_unit_bet) }} | {{ opt(b.ci95[0]) }} .. {{ opt(b.ci95[1]) }} |
{% endfor %}
### Bet ramp

{% if c.spread %}From --spread {{ c.spread }}. {% endif %}Bets in table-minimum units, by the {{ c.count_name }} \
when the round is dealt.

| {{ c.count_name }} | bet |
|---|---|
{% for where, bet in c.ramp_rows() %}| {{ where }} | {{ "{:g}".format(bet) }} |
{% endfor %}
## Index plays

{% if c.strategy.indices %}Where an index play answers a question, the count decides; every other question is \
answered by basic strategy's chart.

| hand | up | play | when the {{ c.count_name }} is | index | basic strategy plays |
|---|---|---|---|---|---|
{% for e in c.index_rows() %}| {{ e.hand }} | {{ e.up }} | {{ play(e.action) }} | {{ when[e.when] }} | \
{{ idx(e.index) }} | {{ e.basic }} |
{% endfor %}{% else %}No index plays: every decision is basic strategy's.
{% endif %}
![chart]({{ img("chart.png") }})

## Bankroll

![bankroll]({{ img("bankroll.png") }})

{{ c.paths.describe() }} {{ r.figures["bankroll.png"] }}.
{% else %}## Strategy chart
{% if r.table %}
![chart]({{ img("chart.png") }})

{% if r.deviations %}{{ r.deviations|length }} cell(s) differ from basic strategy. \
Cost: the exact EV lost each time the situation arises (units of the initial bet), \
every other decision staying basic strategy; per round: cost x frequency of the situation.

| hand | up | played | basic | cost per occurrence | frequency per round | cost per round |
|---|---|---|---|---|---|---|
{% for d in r.deviations %}| {{ d.section }} {{ d.hand }} | {{ d.up }} | {{ d.played }} | {{ d.basic }} | \
{{ cost(d.cost) }} | {{ cost(d.frequency) }} | {{ cost(d.cost_per_round) }} |
{% endfor %}
![deviations]({{ img("deviations.png") }})
{% else %}Every cell plays basic strategy.
{% endif %}{% else %}The policy is not a strategy table: no chart.
{% endif %}{% endif %}
## Outcome rates

| outcome | {{ r.policy }} | basic strategy |
|---|---|---|
{% for k in outcomes %}| {{ k }} | {{ rate(r.rates.policy[k]) }} | {{ rate(r.rates.basic[k]) }} |
{% endfor %}
![rates]({{ img("rates.png") }})
{% if r.curve %}
## Learning curve

![learning curve]({{ img("learning_curve.png") }})

| step | EV gap | 95% CI | agreement |
|---|---|---|---|
{% for p in r.curve %}| {{ "{:g}".format(p.step) }} | {{ ev(p.ev_gap) }} | \
{{ ev(p.ev_gap_low) }} .. {{ ev(p.ev_gap_high) }} | {{ rate(p.agreement) }} |
{% endfor %}{% endif %}
## Rules

| field | value |
|---|---|
{% for k, v in r.rules.to_dict().items() %}| {{ k }} | {{ v }} |
{% endfor %}"""

HTML = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Evaluation of {{ r.policy }}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; } th, td { border: 1px solid #ccc; padding: 4px 10px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } img { max-width: 100%; }
.note { background: #fff3cd; padding: 6px 10px; } .gap { font-size: 1.2em; }
.side { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
.side figure { flex: 1 1 560px; margin: 0; }
</style></head><body>
<h1>Evaluation of {{ r.policy }}</h1>
<p>Rules: {{ r.rules.describe() }}. {{ "{:,}".format(r.rounds) }} rounds, seed {{ r.seed }}.</p>
{% for note in r.notes %}<p class="note">{{ note }}</p>{% endfor %}
<h2>Headline</h2>
<table><tr><th>player</th><th>EV {{ r.ev_unit }}</th><th>95% CI</th><th>cards</th></tr>
{% for name, label, cards in labels %}<tr><td>{{ label }}</td><td class="num">{{ ev(r.ev[name].value) }}</td>
<td class="num">{{ ev(r.ev[name].low) }} .. {{ ev(r.ev[name].high) }}</td><td>{{ cards }}</td></tr>{% endfor %}
</table>
<p class="gap">Paired gap to basic strategy (policy - basic,
{{ "{:,}".format(r.paired_rounds) }} rounds on identical cards): <b>{{ ev(r.gap_to_basic.value) }}</b>
(95% CI {{ ev(r.gap_to_basic.low) }} .. {{ ev(r.gap_to_basic.high) }}).</p>
{% if r.exact %}<p>Exact EV (no sampling): policy {{ ev(r.exact.policy) }}, basic strategy {{ ev(r.exact.basic) }};
the policy gives up {{ cost(r.exact.loss) }} per round.</p>{% endif %}
<figure><img alt="EV" src="{{ img('ev.png') }}"><figcaption>{{ r.figures['ev.png'] }}</figcaption></figure>
{% if c %}<h2>Card counting</h2>
<p>{{ c.strategy.name }}: the {{ c.system_text() }} count{% if c.strategy.exit_below is not none %}; it leaves the
table below a {{ c.count_name }} of {{ idx(c.strategy.exit_below) }}{% endif %}.</p>
<table><tr><th>figure</th><th>value</th><th>meaning</th></tr>
{% for label, value, meaning in c.figure_rows() %}<tr><td>{{ label }}</td><td class="num">{{ value }}</td>
<td>{{ meaning }}</td></tr>{% endfor %}
</table>
<figure><img alt="true count" src="{{ img('true_count.png') }}">
<figcaption>{{ r.figures['true_count.png'] }}</figcaption></figure>
<table><tr><th>{{ c.count_name }}</th><th>share of rounds</th><th>rounds</th><th>average bet</th>
<th>EV per unit bet</th><th>95% CI</th></tr>
{% for b in c.figures.by_true_count %}<tr><td>{{ b.label }}</td><td class="num">{{ rate(b.share) }}</td>
<td class="num">{{ "{:,}".format(b.rounds) }}</td><td class="num">{{ cf("avg_bet", b.avg_bet) }}</td>
<td class="num">{{ opt(b.ev_per_unit_bet) }}</td>
<td class="num">{{ opt(b.ci95[0]) }} .. {{ opt(b.ci95[1]) }}</td></tr>{% endfor %}
</table>
<h3>Bet ramp</h3>
<p>{% if c.spread %}From --spread {{ c.spread }}. {% endif %}Bets in table-minimum units, by the
{{ c.count_name }} when the round is dealt.</p>
<table><tr><th>{{ c.count_name }}</th><th>bet</th></tr>
{% for where, bet in c.ramp_rows() %}<tr><td>{{ where }}</td><td class="num">{{ "{:g}".format(bet) }}</td></tr>
{% endfor %}</table>
<h2>Index plays</h2>
<div class="side"><div>
{% if c.strategy.indices %}<p>Where an index play answers a question, the count decides; every other question is
answered by basic strategy's chart.</p>
<table><tr><th>hand</th><th>up</th><th>play</th><th>when the {{ c.count_name }} is</th><th>index</th>
<th>basic strategy plays</th></tr>
{% for e in c.index_rows() %}<tr><td>{{ e.hand }}</td><td>{{ e.up }}</td><td>{{ play(e.action) }}</td>
<td>{{ when[e.when] }}</td><td class="num">{{ idx(e.index) }}</td><td>{{ e.basic }}</td></tr>{% endfor %}
</table>{% else %}<p>No index plays: every decision is basic strategy's.</p>{% endif %}</div>
<figure><img alt="chart" src="{{ img('chart.png') }}"><figcaption>{{ r.figures['chart.png'] }}</figcaption></figure>
</div>
<h2>Bankroll</h2>
<figure><img alt="bankroll" src="{{ img('bankroll.png') }}">
<figcaption>{{ r.figures['bankroll.png'] }}</figcaption></figure>
<p>{{ c.paths.describe() }}</p>
{% else %}<h2>Strategy chart</h2>
{% if r.table %}<figure><img alt="chart" src="{{ img('chart.png') }}">
<figcaption>{{ r.figures['chart.png'] }}</figcaption></figure>
{% if r.deviations %}<p>{{ r.deviations|length }} cell(s) differ from basic strategy. Cost: the exact EV lost each time
the situation arises (units of the initial bet), every other decision staying basic strategy; per round: cost x
frequency of the situation.</p>
<table><tr><th>hand</th><th>up</th><th>played</th><th>basic</th><th>cost per occurrence</th>
<th>frequency per round</th><th>cost per round</th></tr>
{% for d in r.deviations %}<tr><td>{{ d.section }} {{ d.hand }}</td><td>{{ d.up }}</td><td>{{ d.played }}</td>
<td>{{ d.basic }}</td><td class="num">{{ cost(d.cost) }}</td><td class="num">{{ cost(d.frequency) }}</td>
<td class="num">{{ cost(d.cost_per_round) }}</td></tr>{% endfor %}
</table>
<figure><img alt="deviations" src="{{ img('deviations.png') }}"></figure>
{% else %}<p>Every cell plays basic strategy.</p>{% endif %}
{% else %}<p>The policy is not a strategy table: no chart.</p>{% endif %}{% endif %}
<h2>Outcome rates</h2>
<table><tr><th>outcome</th><th>{{ r.policy }}</th><th>basic strategy</th></tr>
{% for k in outcomes %}<tr><td>{{ k }}</td><td class="num">{{ rate(r.rates.policy[k]) }}</td>
<td class="num">{{ rate(r.rates.basic[k]) }}</td></tr>{% endfor %}
</table>
<figure><img alt="rates" src="{{ img('rates.png') }}"><figcaption>{{ r.figures['rates.png'] }}</figcaption></figure>
{% if r.curve %}<h2>Learning curve</h2>
<figure><img alt="learning curve" src="{{ img('learning_curve.png') }}"></figure>
<table><tr><th>step</th><th>EV gap</th><th>95% CI</th><th>agreement</th></tr>
{% for p in r.curve %}<tr><td class="num">{{ "{:g}".format(p.step) }}</td><td class="num">{{ ev(p.ev_gap) }}</td>
<td class="num">{{ ev(p.ev_gap_low) }} .. {{ ev(p.ev_gap_high) }}</td><td class="num">{{ rate(p.agreement) }}</td>
</tr>{% endfor %}</table>{% endif %}
<h2>Rules</h2>
<table><tr><th>field</th><th>value</th></tr>
{% for k, v in r.rules.to_dict().items() %}<tr><td>{{ k }}</td><td>{{ v }}</td></tr>{% endfor %}
</table>
</body></html>
"""


def render_documents(report: Report, folder: Path) -> None:
    """report.md (linking the PNG files) and report.html (embedding them), from one set of numbers."""
    import jinja2

    labels = [
        (name, label, cards)
        for name, label, cards in (
            ("policy", report.policy, "the policy's cards"),
            ("basic", "basic strategy" + (", flat bet" if report.counting else ""), "the policy's cards, every round"),
            ("random", "random play", "the policy's cards, every round"),
        )
        if name in report.ev
    ]
    common = {
        "r": report,
        "c": report.counting,
        "labels": labels,
        "outcomes": OUTCOMES,
        "ev": fmt_ev,
        "cost": fmt_cost,
        "rate": fmt_rate,
        "opt": fmt_optional,
        "cf": fmt_count,
        "idx": fmt_index,
        "play": lambda action: f"{action} ({ACTION_NAMES[action]})",
        "when": {"at_or_above": "at or above", "below": "below"},
    }

    def embedded(name: str) -> str:
        return "data:image/png;base64," + base64.b64encode((folder / name).read_bytes()).decode("ascii")

    md = jinja2.Environment(autoescape=False, keep_trailing_newline=True).from_string(MARKDOWN)
    (folder / "report.md").write_text(md.render(**common, img=lambda name: name))
    html = jinja2.Environment(autoescape=True).from_string(HTML)
    (folder / "report.html").write_text(html.render(**common, img=embedded))
    (folder / "summary.json").write_text(json.dumps(_finite(report.to_summary()), indent=1, allow_nan=False))


def _finite(value: Any) -> Any:
    """Strict JSON: an infinite interval (fewer than two rounds) is written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


# ====================================================================== output folder
def check_out(out: Path, overwrite: bool) -> None:
    """Refuse, before any work, an --out that is a file or holds report files (unless overwrite)."""
    if out.exists() and not out.is_dir():
        raise CliError(f"--out {out} exists and is not a folder")
    clashes = [name for name in REPORT_FILES if (out / name).exists()]
    if clashes and not overwrite:
        raise CliError(
            f"--out {out} already holds {', '.join(clashes)}; pass --overwrite to replace them "
            "(other files there are left alone) or choose another --out"
        )


def write_report(report: Report, out: Path, overwrite: bool = False) -> list[Path]:
    """Build every file in a temporary folder beside ``out``, then move them in.

    A new ``out`` appears whole (one rename). In an existing ``out`` only the report's own files
    are replaced, each by an atomic rename, and only with ``overwrite``; other files stay."""
    out = out.resolve()
    check_out(out, overwrite)
    out.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temp, 0o777 & ~umask)  # mkdtemp's 0700 would make a new --out private
    try:
        draw_figures(report, temp)
        render_documents(report, temp)
        names = sorted(p.name for p in temp.iterdir())
        if not out.exists():
            os.rename(temp, out)
            return [out / name for name in names]
        check_out(out, overwrite)  # again: files may have appeared while the report was built
        for name in names:
            os.replace(temp / name, out / name)
        return [out / name for name in names]
    finally:
        if temp.exists():
            shutil.rmtree(temp, ignore_errors=True)


# ====================================================================== command line
def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="blackjack-evaluate report",
        description="Simulate a policy and write report.html, report.md, PNG figures and summary.json.",
    )
    add_simulation_arguments(parser)
    parser.add_argument("--run", default=None, help=f"a training run's folder: learning curve from its {METRICS_FILE}")
    parser.add_argument("--out", required=True, help="folder to write the report into")
    parser.add_argument("--overwrite", action="store_true", help="replace report files already in --out")
    return parser


def format_headline(report: Report) -> str:
    p, gap = report.ev["policy"], report.gap_to_basic
    return (
        f"policy {report.policy}: EV {fmt_ev(p.value)} (95% CI {fmt_ev(p.low)} .. {fmt_ev(p.high)}); "
        f"gap to basic strategy {fmt_ev(gap.value)} (95% CI {fmt_ev(gap.low)} .. {fmt_ev(gap.high)})"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.run is not None and not Path(args.run).is_dir():
            raise CliError(
                f"--run {args.run}: no such folder (give a training run's folder, which holds {METRICS_FILE})"
            )
        check_out(Path(args.out).resolve(), args.overwrite)
        with warnings_as_lines("blackjack-evaluate report"):
            report = build_report(args)
        paths = write_report(report, Path(args.out), overwrite=args.overwrite)
    except (CliError, ValueError, OSError) as error:
        print(f"blackjack-evaluate report: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("blackjack-evaluate report: interrupted; no report written", file=sys.stderr)
        return 130
    except ImportError as error:
        print(
            f"blackjack-evaluate report: error: {error}; the report needs matplotlib and jinja2: "
            "pip install 'blackjack-env[report]'",
            file=sys.stderr,
        )
        return 2
    print(format_headline(report))
    print(f"wrote {len(paths)} files to {Path(args.out).resolve()}: {', '.join(p.name for p in paths)}")
    return 0
