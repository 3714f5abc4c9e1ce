"""The report's figures: matplotlib figures drawn from a :class:`~.model.Report`.

Each figure is a function of the report's numbers (no pyplot: no global state, no display);
:func:`draw_figures` writes the PNG files a report has and lists them, with captions, in
``report.figures`` for the documents.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from blackjack_env.simulate import OUTCOMES, Z95
from blackjack_env.strategy import StrategyTable, row_of_label, up_label

from .formats import ACTIONS
from .learner import COUNT_FIGURE_SYSTEMS, STATUS, Learner, has_hilo_flat
from .model import BANKROLL_METHOD, BankrollPaths, Ceiling, Counting, Estimate, Report

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .network import Network

#: The learner's pages' figures (a blackjack-train --env shoe run as --policy).
LEARNER_FIGURES = ("learner_curve.png", "learned_ramp.png", "learned_indices.png", "learned_count.png")
#: Every figure a report may draw (checked against --out before any work is done).
FIGURE_FILES = (
    "ev.png",
    "rates.png",
    "chart.png",
    "deviations.png",
    "learning_curve.png",
    "true_count.png",
    "bankroll.png",
    "ceiling.png",
    "round_ev.png",
    *LEARNER_FIGURES,
)
#: round_ev.png's EV axis fits the count buckets holding at least this share of the rounds.
MIN_BUCKET_SHARE = 0.01
#: Chart sections as printed charts show them: hard 5-21, soft 13-21, pairs 2..A.
CHART_ROWS = {
    "hard": [str(t) for t in range(5, 22)],
    "soft": [str(t) for t in range(13, 22)],
    "pairs": ["2", "3", "4", "5", "6", "7", "8", "9", "10", "A"],
}
CHART_COLUMNS = [up_label(up) for up in (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)]
#: Colours of the chart's first letters, close to the familiar printed charts.
ACTION_COLOURS = {
    code: (colour, ACTIONS[code])
    for code, colour in (("H", "#f6b8b0"), ("S", "#f7dc6f"), ("D", "#82d99b"), ("P", "#8ec5ef"), ("R", "#d2b4de"))
}


def _figure(width: float, height: float) -> Figure:
    """A matplotlib Figure on the Agg canvas (no pyplot: no global state, no display needed)."""
    from matplotlib.figure import Figure  # optional dependency: matplotlib (the report extra)

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
    from matplotlib.ticker import FuncFormatter, MaxNLocator  # optional dependency: matplotlib (the report extra)

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
    table: StrategyTable,
    basic: StrategyTable,
    path: Path,
    marks: dict[tuple[int, int], str] | None = None,
    frames: dict[tuple[int, int], str] | None = None,
    legend: list[tuple[str, str]] | None = None,
    size: tuple[float, float] = (15, 9.6),
) -> None:
    """Hard, soft and pair grids coloured by action; cells that differ from basic strategy are
    framed in black and show basic strategy's code below the policy's. ``marks`` (a counter's
    index plays, by (row, up card)) frames those cells instead, with the mark below the code;
    ``frames`` colours a marked cell's frame (by cell), ``legend`` names those colours; ``size`` in
    inches (a larger chart gives longer marks room, the text staying the same size)."""
    from matplotlib.patches import Patch, Rectangle  # optional dependency: matplotlib (the report extra)

    marks = marks or {}
    frames = frames or {}
    fig = _figure(*size)  # by default cells about 45 px: the marks' 7.5 pt text (10 px) reads at 100% zoom
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
                        edgecolor=frames.get((row, up), "black") if framed else "white",
                        lw=2.5 if framed else 0.8,
                        zorder=2 if framed else 1,
                    )
                )
                weight = "bold" if framed else "normal"
                lines = mark.count("\n") + 1 if mark is not None else 0
                two_lines = lines > 1
                y = i + (0.2 if lines > 2 else 0.25 if two_lines else 0.35)
                ax.text(j + 0.5, y, code, ha="center", va="center", fontsize=10, weight=weight, zorder=3)
                if framed:
                    y = i + (0.66 if lines > 2 else 0.68 if two_lines else 0.75)
                    points = 6 if lines > 2 else 7.5 if two_lines else 8.5
                    ax.text(j + 0.5, y, mark, ha="center", va="center", fontsize=points, linespacing=0.85, zorder=3)
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
    if legend:
        handles += [Patch(facecolor="white", edgecolor=colour, lw=2.5, label=label) for colour, label in legend]
    else:
        meaning = "index play: its play and count below" if marks else "differs from basic strategy"
        handles.append(Patch(facecolor="white", edgecolor="black", lw=2.5, label=meaning))
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 6))
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


def _bucket_evs(ax: Axes, counting: Counting) -> None:
    """The counter's EV per unit bet per count bucket with its 95% CI (a bucket of one played round:
    the point alone, hollow), 0 and the overall advantage marked."""
    buckets = counting.figures["by_true_count"]
    x = np.array([b["true_count"] for b in buckets])
    ev = np.array([b["ev_per_unit_bet"] for b in buckets], dtype=float)
    low, high = (np.array([b["ci95"][k] for b in buckets], dtype=float) for k in (0, 1))
    shown = np.isfinite(ev)
    with_ci = shown & np.isfinite(low) & np.isfinite(high)
    ax.errorbar(
        x[with_ci], ev[with_ci], yerr=[ev[with_ci] - low[with_ci], high[with_ci] - ev[with_ci]], fmt="o", capsize=3
    )
    ax.plot(x[shown & ~with_ci], ev[shown & ~with_ci], "o", mfc="none", color="#4c72b0")
    ax.axhline(0, color="black", lw=0.8)
    ax.axhline(counting.figures["advantage"], color="#c44e52", ls="--", lw=1, label="overall advantage")
    ax.set_ylabel("EV per unit bet (95% CI)")


def true_count_figure(counting: Counting, path: Path) -> None:
    """The EV per unit bet per count bucket with its 95% CI (a bucket of one played round: the point
    alone, hollow), above the share of rounds per bucket with the average bet there on a twin axis."""
    buckets = counting.figures["by_true_count"]
    x = np.array([b["true_count"] for b in buckets])
    fig = _figure(8, 6)
    ev_ax, share_ax = fig.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    _bucket_evs(ev_ax, counting)
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


def ceiling_figure(ceiling: Ceiling, policy: str) -> Figure:
    """Left, the gain over basic strategy per 100 rounds with 95% CIs: basic strategy (0 by
    definition), the policy (simulated, paired) and the perfect counter (the ceiling, same game and
    bets); right, the policy's share of the ceiling with its 95% CI, the ceiling at 100%."""
    s = ceiling.share
    fig = _figure(9, 3.6)
    gain_ax, share_ax = fig.subplots(1, 2, width_ratios=[3, 2])
    rows = [
        ("basic strategy", 0.0, None, "#55a868"),
        (short_name(policy), s["policy_gain"], s["policy_gain_ci95"], "#4c72b0"),
        ("perfect counter", s["gain"], s["gain_ci95"], "#dd8452"),
    ]
    for i, (_name, value, ci, colour) in enumerate(rows):
        gain_ax.bar([i], [100 * value], width=0.6, color=colour)
        if ci is not None and all(math.isfinite(c) for c in ci):
            yerr = [[100 * (value - ci[0])], [100 * (ci[1] - value)]]
            gain_ax.errorbar([i], [100 * value], yerr=yerr, fmt="none", color="black", capsize=6)
    gain_ax.axhline(0, color="black", lw=0.8)
    gain_ax.annotate("0: the baseline", (0, 0), xytext=(0, 4), textcoords="offset points", ha="center", fontsize=8)
    gain_ax.set_xticks(range(len(rows)), [name for name, *_ in rows])
    gain_ax.set_ylabel("gain over basic strategy\nper 100 rounds (units)")
    gain_ax.set_title(f"{ceiling.bets_text}; 95% CIs", fontsize=9, loc="left")
    share, (low, high) = s["share"], s["share_ci95"]
    if math.isfinite(share):
        xerr = [[100 * (share - low)], [100 * (high - share)]] if math.isfinite(low) and math.isfinite(high) else None
        share_ax.barh([0], [100 * share], height=0.5, color="#4c72b0")
        share_ax.errorbar([100 * share], [0], xerr=xerr, fmt="none", color="black", capsize=6)
        ends = [100 * v for v in (share, low, high) if math.isfinite(v)]
        share_ax.set_xlim(min(0.0, *ends) - 5, max(100.0, *ends) + 5)
    else:
        share_ax.text(0.5, 0.5, "n/a: the ceiling's gain is 0", ha="center", va="center", transform=share_ax.transAxes)
        share_ax.set_xlim(-5, 105)
    share_ax.axvline(0, color="black", lw=0.8)
    share_ax.axvline(100, color="#dd8452", ls="--", lw=1.5, label="the ceiling")
    share_ax.set_ylim(-1, 1)
    share_ax.set_yticks([])
    share_ax.set_xlabel("% of the ceiling")
    share_ax.set_title("the policy's share of the ceiling, 95% CI", fontsize=9, loc="left")
    share_ax.legend(loc="upper right", fontsize=8)
    return fig


def round_ev_figure(ceiling: Ceiling, counting: Counting | None) -> Figure:
    """The round-start EV over the ceiling's sampled shoes (exact: basic strategy's, filled, and the
    best strategy's for each shoe, outlined; a histogram on its side) beside a counter's simulated EV
    per unit bet by count bucket, on one EV axis: how far the count's buckets spread the EV beside
    how far the shoes themselves do. The axis fits the histogram and the buckets holding at least
    ``MIN_BUCKET_SHARE`` of the rounds; rarer buckets' points (noisy) off it are counted in a note."""
    edges = np.array(ceiling.round_ev["histogram"]["edges"], dtype=float)
    basic, best = ceiling.histogram_shares().values()
    held = np.flatnonzero((basic + best) > 0)
    ends = list(edges[[held[0], held[-1] + 1]]) if held.size else [0.0]
    fig = _figure(9, 4.8)
    if counting is not None:
        count_ax, hist_ax = fig.subplots(1, 2, sharey=True, width_ratios=[3, 2])
        _bucket_evs(count_ax, counting)
        buckets = counting.figures["by_true_count"]
        count_ax.set_xticks([b["true_count"] for b in buckets], [b["label"] for b in buckets], fontsize=8)
        count_ax.set_xlabel(counting.count_name)
        name = counting.strategy.name
        count_ax.set_title(f"{name}: EV by {counting.count_name} (simulated)", fontsize=9, loc="left")
        count_ax.legend(loc="upper left", fontsize=8)
        evs = [b["ev_per_unit_bet"] for b in buckets]
        common = [ev for b, ev in zip(buckets, evs, strict=True) if b["share"] >= MIN_BUCKET_SHARE]
        ends += [ev for ev in common if ev is not None and math.isfinite(ev)]
    else:
        hist_ax = fig.subplots()
        hist_ax.set_ylabel("EV per initial bet")
    hist_ax.barh(edges[:-1], basic, height=np.diff(edges), align="edge", color="#8c8c8c", label="basic strategy")
    hist_ax.stairs(best, edges, orientation="horizontal", color="#dd8452", lw=1.5, label="best for the shoe")
    hist_ax.axhline(0, color="black", lw=0.8)
    hist_ax.set_xlabel("share of rounds")
    hist_ax.set_title(f"round-start EV at {ceiling.samples:,} sampled shoes (exact)", fontsize=9, loc="left")
    hist_ax.legend(loc="lower right", fontsize=8)
    low, high = min(ends), max(ends)
    pad = 0.1 * (high - low) or 0.005
    hist_ax.set_ylim(low - pad, high + pad)
    if counting is not None:
        off = sum(1 for ev in evs if ev is not None and math.isfinite(ev) and not low - pad <= ev <= high + pad)
        if off:
            count_ax.annotate(
                f"{off} rare bucket(s) off the scale (see true_count.png)",
                xy=(0.99, 0.01),
                xycoords="axes fraction",
                ha="right",
                va="bottom",
                fontsize=8,
                color="dimgrey",
            )
    return fig


def _band(ax: Axes, x: list[float], rows: list[dict[str, float]], key: str, colour: str, label: str) -> None:
    """A per-100-rounds curve with its 95% band (``key``, ``key_low``, ``key_high``)."""
    ax.fill_between(
        x, [100 * r[f"{key}_low"] for r in rows], [100 * r[f"{key}_high"] for r in rows], color=colour, alpha=0.25
    )
    ax.plot(x, [100 * r[key] for r in rows], marker=".", color=colour, label=label)


def _fit_trained(
    ax: Axes, curve: list[dict[str, float]], keys: tuple[str, ...], also: tuple[float, ...] = (0.0,)
) -> None:
    """Fit the y axis (per 100 rounds) to the evaluations after the first, when there are two or
    more: the untrained start (tens of units per 100 rounds below) would flatten the rest; the
    table keeps it, and the panel says it is off the scale. ``also``: values kept in view (0, the
    ceiling's 100%); values that are not finite (a share of a ceiling of 0) are passed over."""
    trained = [r for r in curve if r["step"] > 0]
    if len(trained) < 2:
        return
    values = [v for v in (100 * r[k] for r in trained for k in keys) if math.isfinite(v)] + list(also)
    low, high = min(values), max(values)
    pad = 0.1 * (high - low) or 0.1
    ax.set_ylim(low - pad, high + pad)
    start = [100 * r[k] for r in curve if r["step"] == 0 for k in keys]
    if any(not low - pad <= v <= high + pad for v in start):
        ax.annotate(
            "the untrained start is off the scale (see the table)",
            xy=(0.01, 0.02),
            xycoords="axes fraction",
            fontsize=7,
            color="dimgrey",
        )


def learner_curve_figure(learner: Learner | Network) -> Figure:
    """The learning curve against rounds (left) and wall time (right): the EV per 100 rounds with the
    bets of the learner, Hi-Lo I18 + Fab 4 (EV-maximising bets) and flat basic strategy; the gains
    with their bets over both (95% bands); the flat-bet gain over basic strategy beside Hi-Lo I18 +
    Fab 4's at a flat bet on the same shoes (where the run has it: a network's has not); and, where
    the run priced the ceiling, the flat share of it."""
    curve = learner.curve or []
    rows = 4 if learner.has_share else 3
    fig = _figure(12, 2.6 * rows + 0.6)
    axes = fig.subplots(rows, 2, sharex="col")
    xs = ([r["step"] for r in curve], [r["wall_s"] / 60 for r in curve])
    for col, x in enumerate(xs):
        ev_ax, gain_ax, flat_ax = axes[0, col], axes[1, col], axes[2, col]
        for key, colour, label in (
            ("ev", "#4c72b0", "the learner, its bets"),
            ("ev_hilo", "#dd8452", "Hi-Lo I18+Fab4, EV-max bets"),
            ("ev_basic", "#55a868", "basic strategy, flat"),
        ):
            ev_ax.plot(x, [100 * r[key] for r in curve], marker=".", color=colour, label=label)
        _band(gain_ax, x, curve, "gain_vs_basic", "#4c72b0", "over basic strategy (flat)")
        _band(gain_ax, x, curve, "gain_vs_hilo", "#dd8452", "over Hi-Lo I18+Fab4, EV-max bets")
        _band(flat_ax, x, curve, "flat_gain", "#8172b2", "the learner over basic strategy")
        hilo_flat = has_hilo_flat(curve)
        if hilo_flat:
            flat_ax.plot(
                x,
                [100 * r["flat_gain_hilo"] for r in curve],
                ls="--",
                color="#dd8452",
                label="Hi-Lo I18+Fab4 over basic",
            )
        for ax, keys in (
            (ev_ax, ("ev", "ev_hilo", "ev_basic")),
            (gain_ax, ("gain_vs_basic_low", "gain_vs_basic_high", "gain_vs_hilo_low", "gain_vs_hilo_high")),
            (flat_ax, ("flat_gain_low", "flat_gain_high", *(("flat_gain_hilo",) if hilo_flat else ()))),
        ):
            ax.axhline(0, color="black", lw=0.8)
            _fit_trained(ax, curve, keys)
        if learner.has_share:
            share_ax = axes[3, col]
            _band(share_ax, x, curve, "flat_share", "#c44e52", "flat bet")
            _band(share_ax, x, curve, "bets_share", "#4c72b0", "with its bets (the ceiling's with the same bets)")
            keys = ("flat_share_low", "flat_share_high", "bets_share_low", "bets_share_high")
            _fit_trained(share_ax, curve, keys, also=(0.0, 100.0))
            share_ax.axhline(100, color="#dd8452", ls="--", lw=1.2, label="the ceiling")
            share_ax.axhline(0, color="black", lw=0.8)
            if col == 0:
                share_ax.set_ylabel("share of the ceiling\n(%, 95% CI)")
        if col == 0:
            ev_ax.set_ylabel("EV per 100 rounds\n(units)")
            gain_ax.set_ylabel("gain with its bets\nper 100 rounds (95% CI)")
            flat_ax.set_ylabel("flat-bet gain\nper 100 rounds (95% CI)")
            for ax in axes[:, 0]:
                ax.legend(loc="best", fontsize=7)
        axes[-1, col].set_xlabel(learner.trained if col == 0 else "wall time (minutes)")
    axes[0, 0].set_title(f"{learner.title}: against {learner.trained}", fontsize=10, loc="left")
    axes[0, 1].set_title("against wall time (evaluations included)", fontsize=10, loc="left")
    return fig


def learned_ramp_figure(learner: Learner, counting: Counting | None) -> Figure:
    """The learned bet by count (above) and the learned round value per unit bet by count (below: a
    count-table run's buckets with 95% CIs where its statistics are kept, a composition model's
    line), beside this report's simulated EV per unit bet by count with 95% CIs."""
    fig = _figure(9, 6)
    bet_ax, ev_ax = fig.subplots(2, 1, sharex=True, height_ratios=[1, 2])
    ramp = learner.ramp
    counts = [r["count"] for r in ramp]
    if learner.kind == "composition":  # its bet follows the line's sign: drawn on a fine grid
        fine = np.linspace(counts[0], counts[-1], 400)
        slope = (ramp[-1]["value"] - ramp[0]["value"]) / (counts[-1] - counts[0])
        value = ramp[0]["value"] + slope * (fine - counts[0])
        bet_ax.plot(fine, np.where(value > 0, learner.bets[-1], learner.bets[0]), color="#dd8452", lw=2)
    else:
        ends = [*counts, counts[-1] + (counts[-1] - counts[-2] if len(counts) > 1 else 1.0)]
        bet_ax.stairs([r["bet"] for r in ramp], ends, color="#dd8452", lw=2, baseline=None)
    bet_ax.set_ylabel("bet (units)")
    bet_ax.set_ylim(bottom=0, top=max(r["bet"] for r in ramp) * 1.15 or 1)
    where = "from its betting weights" if learner.kind == "composition" else "(the end steps hold the tails)"
    bet_ax.set_title(f"{learner.title}: bet by {learner.count_name} {where}", fontsize=9, loc="left")
    if learner.kind == "composition":
        ev_ax.plot(counts, [r["value"] for r in ramp], color="#4c72b0", lw=2, label="learned (betting weights)")
    else:
        shown = [r for r in ramp if r["value"] is not None]
        width = learner.width
        x = np.array([r["count"] + width / 2 for r in shown])
        v = np.array([r["value"] for r in shown])
        ci = [r["ci95"] for r in shown]
        has = np.array([c is not None for c in ci], dtype=bool)
        if has.any():
            low = np.array([c[0] for c, h in zip(ci, has, strict=True) if h])
            high = np.array([c[1] for c, h in zip(ci, has, strict=True) if h])
            ev_ax.errorbar(
                x[has], v[has], yerr=[v[has] - low, high - v[has]], fmt="s", color="#4c72b0", capsize=3,
                label="learned round value (95% CI)",
            )  # fmt: skip
    if counting is not None:
        buckets = [b for b in counting.figures["by_true_count"] if b["share"] >= MIN_BUCKET_SHARE]
        x = np.array([b["true_count"] + 0.5 for b in buckets], dtype=float)
        ev = np.array([b["ev_per_unit_bet"] for b in buckets], dtype=float)
        low, high = (np.array([b["ci95"][k] for b in buckets], dtype=float) for k in (0, 1))
        ok = np.isfinite(ev) & np.isfinite(low) & np.isfinite(high)
        ev_ax.errorbar(
            x[ok], ev[ok], yerr=[ev[ok] - low[ok], high[ok] - ev[ok]], fmt="o", color="#55a868", capsize=3, mfc="none",
            label=f"simulated here, by {counting.count_name} (95% CI)",
        )  # fmt: skip
    ev_ax.axhline(0, color="black", lw=0.8)
    ev_ax.set_ylabel("round value per unit bet")
    ev_ax.set_xlabel(learner.count_name)
    ev_ax.legend(loc="upper left", fontsize=8)
    return fig


def learned_count_figure(learner: Learner) -> Figure:
    """The composition model's betting weights as a count's tags beside built-in systems' (all
    balanced over a full shoe and scaled alike), one group of bars per card value."""
    tags = learner.count_tags or {}
    names = ["learned", *COUNT_FIGURE_SYSTEMS]
    series = [tags["learned"], *(tags["systems"][n] for n in COUNT_FIGURE_SYSTEMS)]
    colours = ["#4c72b0", "#dd8452", "#55a868", "#8172b2"]
    fig = _figure(9, 4)
    ax = fig.subplots()
    x = np.arange(len(tags["values"]))
    width = 0.8 / len(series)
    for k, (name, values, colour) in enumerate(zip(names, series, colours, strict=True)):
        label = "learned (betting weights)" if name == "learned" else f"{name} (r = {tags['correlation'][name]:.2f})"
        ax.bar(x - 0.4 + (k + 0.5) * width, values, width, color=colour, label=label)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(x, tags["values"])
    ax.set_xlabel("card value")
    ax.set_ylabel(f"tag ({tags['scaled']})")
    ax.set_title(
        "a learned count: the betting model's weight per value as tags, balanced and scaled alike "
        "(r: correlation with the learned tags)",
        fontsize=9,
        loc="left",
    )
    ax.legend(fontsize=8, ncols=2)
    return fig


def draw_learner_figures(report: Report, folder: Path) -> None:
    """The learner's pages' figures (see :mod:`.learner`), listed with captions in the report."""
    learner = report.learner
    assert learner is not None
    if learner.curve:
        learner_curve_figure(learner).savefig(folder / "learner_curve.png", format="png")
        report.figures["learner_curve.png"] = (
            "Learning curve against rounds and wall time: EV per 100 rounds, the paired gains with 95% bands, the "
            "flat-bet gain over basic strategy"
            + (", and the flat-bet share of the ceiling" if learner.has_share else "")
        )
    learned_ramp_figure(learner, report.counting).savefig(folder / "learned_ramp.png", format="png")
    report.figures["learned_ramp.png"] = (
        f"The learned bet and round value by {learner.count_name}, beside this report's simulated EV per unit bet "
        "(buckets holding at least 1% of the rounds)"
    )
    marks, status = learner.marks()
    colours = {cell: STATUS[s][0] for cell, s in status.items()}
    legend = [STATUS[s] for s in STATUS]
    basic = report.counting.basic if report.counting else None
    if basic is not None:
        chart_figure(basic, basic, folder / "learned_indices.png", marks, colours, legend, size=(21, 13.4))
        report.figures["learned_indices.png"] = (
            "Basic strategy's chart with the learned (L) and generated (G) index plays of each cell, the frame "
            "coloured by how they compare"
        )
    if learner.count_tags:
        learned_count_figure(learner).savefig(folder / "learned_count.png", format="png")
        report.figures["learned_count.png"] = (
            "A learned count: the betting weights per card value as tags beside Hi-Lo's, Halves' and Omega II's"
        )


def draw_figures(report: Report, folder: Path) -> None:
    """Write the PNG figures into ``folder`` and list them (with captions) in the report."""
    ev_figure(report).savefig(folder / "ev.png", format="png")
    report.figures["ev.png"] = (
        f"EV {report.ev_unit} with 95% CIs, each panel on its own scale: the policy beside basic strategy, "
        + ("and the paired gap" if report.counting else "the paired gap, and random play")
    )
    if report.rates:  # a network played in the vector env has none
        rates_figure(report, folder / "rates.png")
        report.figures["rates.png"] = "Outcome rates beside basic strategy's"
    if report.counting:
        counting = report.counting
        true_count_figure(counting, folder / "true_count.png")
        report.figures["true_count.png"] = (
            f"EV per unit bet by {counting.count_name} with 95% CIs; below, the share of rounds at each "
            f"{counting.count_name} and the average bet there"
        )
        if counting.model is None and report.network is None:  # a composition model and a network: no index plays
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
    if report.learner:
        draw_learner_figures(report, folder)
    if report.network and report.network.curve:
        learner_curve_figure(report.network).savefig(folder / "learner_curve.png", format="png")
        report.figures["learner_curve.png"] = (
            "Learning curve against steps and wall time: EV per 100 rounds, the gains with 95% bands over basic "
            "strategy (paired) and Hi-Lo I18 + Fab 4 (unpaired), and its play's flat-bet gain over basic strategy"
        )
    if report.ceiling:
        ceiling = report.ceiling
        ceiling_figure(ceiling, report.policy).savefig(folder / "ceiling.png", format="png")
        report.figures["ceiling.png"] = (
            f"Gain over basic strategy per 100 rounds with 95% CIs: basic strategy, the policy and the perfect "
            f"counter ({ceiling.bets_text}); right, the policy's share of the ceiling"
        )
        round_ev_figure(ceiling, report.counting).savefig(folder / "round_ev.png", format="png")
        report.figures["round_ev.png"] = (
            f"The round-start EV at the ceiling's {ceiling.samples:,} sampled shoes (exact; basic strategy's "
            "filled, the best strategy's for each shoe outlined; the end bins hold the tails)"
            + (f", beside the policy's EV per unit bet by {report.counting.count_name}" if report.counting else "")
        )
