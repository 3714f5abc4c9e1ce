"""``blackjack-evaluate sweep``: card counting's figures over a grid of penetrations, spreads and systems.

    blackjack-evaluate sweep --systems hilo,hilo-i18-fab4,ko --spreads 1-4,1-8,1-12 \\
        --penetrations 0.67,0.75,0.83 --rounds 1e7 --json

Every penetration is one paired run (a penetration is a different shoe rule, so it cannot share a
run): flat-betting basic strategy (the baseline, system ``basic``, spread ``flat``) and every
system x spread policy are dealt the very same shoes in one simulation, each in the seat of
``--seats``/``--seat``. Every run uses the same ``--seed`` and plays ``--rounds`` rounds, so every
cell covers as many rounds. A cell's figures are those of ``blackjack-evaluate --json`` for a
counting policy (SCORE, advantage, win and sd per 100 rounds, N0, DI, ...; see
``counting_figures``), its EV per round with a 95% interval, and its gain over the baseline
on the same rounds (a paired difference: a far tighter interval than either EV's).

A system is a counting strategy as ``--policy`` takes it (``hilo-i18-fab4``, a system name such as
``hilo`` for that count with no index plays, or a counting-strategy JSON); a spread is MIN-MAX as
``--spread`` takes it, or ``own`` for the strategy's own ramp (flat for the built-ins).
``--penetrations`` defaults to the rules' own penetration (``--set penetration=...``), or 0.75
where they shuffle every round.

Output: a text table (``--json``: one object with ``cells``; ``--csv``: a header and one row per
cell) and a PNG of SCORE across the grid (one panel per system, penetration across, a line per
spread, the baseline dashed), ``--plot PATH`` (default ``sweep.png``), written through a temporary
file and a rename, never over an existing file without ``--overwrite``; ``--no-plot`` skips it.

Every argument is checked before anything runs: a bad one is one line naming it, exit status 2, and
nothing is written. Ctrl-C keeps the cells finished so far (the interrupted penetration's cover the
rounds it had played) and says so.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import math
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blackjack_env.counting import spread_ramp
from blackjack_env.rules import Rules
from blackjack_env.simulate import Policy, SimulationResult, interval
from blackjack_env.solver.ceiling import check_rules, policy_bets, policy_share

from .counting_stats import counting_figures, n0_text
from .options import (
    CliError,
    OneLineParser,
    RunFeedback,
    add_backend_arguments,
    add_ceiling_arguments,
    add_simulation_arguments,
    game_ceiling,
    note_compile,
    rules_from_args,
    table_from_args,
    warnings_as_lines,
)
from .policies import is_counting, load_policy

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PROG = "blackjack-evaluate sweep"
DEFAULT_PLOT = "sweep.png"
#: The baseline of every run: basic strategy at a flat bet.
BASELINE_SYSTEM, BASELINE_SPREAD = "basic", "flat"
#: A spread entry that keeps the strategy's own ramp.
OWN_RAMP = "own"
#: Where the rules shuffle every round and no --penetrations is given.
DEFAULT_PENETRATION = 0.75
#: CSV columns (one row per cell); the JSON cells hold these and more (by_true_count).
CSV_COLUMNS = (
    "penetration",
    "system",
    "spread",
    "rounds",
    "score",
    "advantage",
    "win_per_100",
    "sd_per_100",
    "n0",
    "di",
    "sd",
    "avg_bet",
    "ev",
    "ev_low",
    "ev_high",
    "gain_vs_basic",
    "gain_low",
    "gain_high",
    "rounds_per_shoe",
)


@dataclass(frozen=True)
class Run:
    """One penetration's paired run: its rules and its policies after the baseline, as (system, spread)."""

    penetration: float
    rules: Rules
    baseline: Policy
    cells: tuple[tuple[str, str], ...]
    policies: tuple[Policy, ...]


# ====================================================================== arguments
def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Card counting over a grid of penetrations x spreads x systems: each penetration one paired "
        "run (every policy and flat basic strategy on the same shoes); SCORE, advantage, win and sd per 100 "
        "rounds, N0 per cell, and a plot of SCORE.",
    )
    parser.add_argument(
        "--systems",
        default="hilo-i18-fab4",
        help="comma-separated counting strategies: hilo-i18-fab4, a system name (hilo, ko, hiopt1, hiopt2, omega2, "
        "zen, halves: that count with no index plays) or a counting-strategy JSON (default hilo-i18-fab4)",
    )
    parser.add_argument(
        "--spreads",
        default="1-8",
        help=f"comma-separated bet spreads MIN-MAX as --spread takes them, or {OWN_RAMP!r} for the strategy's own "
        "ramp (default 1-8)",
    )
    parser.add_argument(
        "--penetrations",
        default=None,
        help="comma-separated fractions of the shoe dealt before the cut card, each in (0, 1) "
        f"(default: the rules' penetration, or {DEFAULT_PENETRATION} where they shuffle every round)",
    )
    add_simulation_arguments(parser, policy=False)
    add_backend_arguments(parser)
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON object")
    output.add_argument("--csv", action="store_true", help="print CSV: a header and one row per cell")
    parser.add_argument("--plot", default=DEFAULT_PLOT, metavar="PATH", help=f"SCORE plot (default {DEFAULT_PLOT})")
    parser.add_argument("--no-plot", action="store_true", help="write no plot")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing plot file")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_ceiling_arguments(
        parser,
        "add each cell's share of the ceiling: what knowing the shoe before every round gains at that penetration "
        "with the cell's bets (one ceiling per penetration)",
        samples="round-start shoes per penetration",
    )
    return parser


def split_list(text: str, option: str) -> list[str]:
    """Comma-separated entries, each non-empty and listed once (a repeat would be a duplicate cell)."""
    entries = [entry.strip() for entry in text.split(",")]
    if not all(entries):
        raise CliError(f"{option} has an empty entry in {text!r}; give comma-separated values")
    repeated = next((entry for i, entry in enumerate(entries) if entry in entries[:i]), None)
    if repeated is not None:
        raise CliError(f"{option} lists {repeated!r} twice")
    return entries


def parse_penetrations(text: str | None, rules: Rules) -> list[float]:
    if text is None:
        return [rules.penetration or DEFAULT_PENETRATION]
    values = []
    for entry in split_list(text, "--penetrations"):
        try:
            value = float(entry)
        except ValueError:
            raise CliError(f"--penetrations: {entry!r} is not a number; give fractions such as 0.75") from None
        if value == 0:
            raise CliError("--penetrations: 0 shuffles every round, but a counting strategy needs a cut card")
        if not 0 < value < 1:
            raise CliError(f"--penetrations: {entry!r} is not a fraction of the shoe in (0, 1), e.g. 0.75")
        values.append(value)
    return values


def check_spread(entry: str) -> str:
    if entry != OWN_RAMP:
        try:
            spread_ramp(entry)
        except ValueError:
            raise CliError(
                f"--spreads: {entry!r} is not MIN-MAX with 0 < MIN <= MAX (e.g. 1-8), nor {OWN_RAMP!r}"
            ) from None
    return entry


def plan_runs(args: argparse.Namespace, rules: Rules) -> list[Run]:
    """Every run's rules and policies, built (and so checked) before anything is simulated. A cell is
    labelled by its strategy's name (a file's ``name``, else its stem), unless two share one."""
    if rules.infinite:
        raise CliError("a counting strategy needs a finite shoe, not an infinite deck (decks=0)")
    penetrations = parse_penetrations(args.penetrations, rules)
    systems = split_list(args.systems, "--systems")
    spreads = [check_spread(entry) for entry in split_list(args.spreads, "--spreads")]
    for system in systems:
        if system.endswith(".json") and not Path(system).is_file():
            raise CliError(f"--systems: no such file {system!r} (a counting-strategy JSON)")
        if not is_counting(system, rules):
            raise CliError(
                f"--systems: unknown system {system!r}; use hilo-i18-fab4, a system name (hilo, ko, ...) "
                "or a counting-strategy JSON"
            )
    runs = []
    labels: dict[str, str] = {}
    for penetration in penetrations:
        at = dataclasses.replace(rules, penetration=penetration)
        cells = tuple((system, spread) for system in systems for spread in spreads)
        policies = tuple(load_policy(system, at, None if spread == OWN_RAMP else spread) for system, spread in cells)
        labels = labels or {system: policy.name for (system, _), policy in zip(cells, policies, strict=True)}
        if len(set(labels.values())) < len(labels) or BASELINE_SYSTEM in labels.values():  # tell them apart by the spec
            labels = {system: system for system in systems}
        named = tuple((labels[system], spread) for system, spread in cells)
        runs.append(Run(penetration, at, load_policy("basic", at), named, policies))
    return runs


def check_plot(path: Path, overwrite: bool) -> None:
    """Refuse, before any work, a plot path that would replace a file (unless overwrite) or has no folder."""
    if path.is_dir():
        raise CliError(f"--plot {path} is a folder; give a file name such as {DEFAULT_PLOT}")
    if path.exists() and not overwrite:
        raise CliError(f"--plot {path} exists; pass --overwrite to replace it or choose another --plot")
    if not path.parent.is_dir():
        raise CliError(f"--plot {path}: no such folder {path.parent}")
    try:
        import matplotlib  # noqa: F401  (optional dependency, the report extra: checked before the runs)
    except ImportError:
        raise CliError("the plot needs matplotlib: pip install 'blackjack-env[report]', or pass --no-plot") from None


# ====================================================================== the sweep
def cell_figures(
    result: SimulationResult, policy: int, penetration: float, system: str, spread: str, bankroll: float | None
) -> dict[str, Any]:
    """One cell: policy ``policy`` of a run (0 the baseline); its gain over the baseline is paired."""
    ev, stderr = result.ev(policy), result.stderr(policy)
    cell: dict[str, Any] = {
        "penetration": penetration,
        "system": system,
        "spread": spread,
        "rounds": result.rounds,
        "ev": ev,
        "ci95": interval(ev, stderr),
        "stderr": stderr,
        "avg_bet": result.avg_bet(policy),
        "rounds_played": result.rounds_played(policy),
        "gain_vs_basic": 0.0,
        "gain_ci95": [0.0, 0.0],
    }
    if policy:
        diff, diff_stderr, _ = result.diff(policy)  # baseline - policy
        gain = 0.0 - diff  # not -0.0 where they play alike
        cell["gain_vs_basic"], cell["gain_ci95"] = gain, interval(gain, diff_stderr)
    cell.update(counting_figures(result, bankroll, policy))
    return cell


def run_sweep(args: argparse.Namespace) -> dict[str, Any]:
    rules = rules_from_args(args)
    table = table_from_args(args, rules)
    runs = plan_runs(args, rules)
    if args.ceiling:
        for run in runs:
            check_rules(run.rules, args.ceiling_samples, args.seats, args.seat)
    plot = None if args.no_plot else Path(args.plot)
    if plot is not None:
        check_plot(plot, args.overwrite)
    feedback = RunFeedback(PROG, args.rounds * len(runs), bar=not args.no_progress and sys.stderr.isatty())
    cells: list[dict[str, Any]] = []
    seconds = warmup_seconds = 0.0
    workers, interrupted = args.workers, False
    try:
        for run in runs:
            feedback.description = f"penetration {run.penetration:g}"
            outcome = feedback.simulate(args, run.rules, run.baseline, table, others=run.policies)
            note_compile(outcome, PROG)
            seconds += outcome.seconds
            warmup_seconds += outcome.warmup_seconds
            workers = outcome.workers
            if outcome.result.rounds:
                cells.extend(run_cells(run, outcome.result, args.bankroll))
                if args.ceiling:
                    add_ceiling(cells[-len(run.cells) - 1 :], run, args)
            if outcome.interrupted:
                interrupted = True
                break
    except KeyboardInterrupt:  # between runs, or while one set up
        interrupted = True
    finally:
        feedback.close()
    if not cells:
        raise CliError("interrupted before any round finished")
    if plot is not None:
        per_cell = f"{'up to ' if interrupted else ''}{args.rounds:,} rounds per cell"
        subtitle = f"{rules.describe()}, {per_cell} (each penetration: the same shoes for all)"
        write_plot(cells, plot, args.overwrite, subtitle)
    return {
        "cells": cells,
        "penetrations": [run.penetration for run in runs],
        "systems": list(dict.fromkeys(system for system, _ in runs[0].cells)),
        "spreads": list(dict.fromkeys(spread for _, spread in runs[0].cells)),
        "rules": rules.to_dict(),
        "rounds": args.rounds,
        "seed": args.seed,
        "seats": args.seats,
        "seat": args.seat,
        "workers": workers,
        "backend": args.backend,
        "seconds": seconds,
        "warmup_seconds": warmup_seconds,
        "interrupted": interrupted,
        "plot": str(plot) if plot is not None else None,
    }


def add_ceiling(cells: list[dict[str, Any]], run: Run, args: argparse.Namespace) -> None:
    """--ceiling: one ceiling per penetration (its sampled shoes), each cell's share of it for the cell's
    bets (the baseline's: 0); a cell's ``ceiling`` is ``blackjack-evaluate --ceiling``'s."""
    result = game_ceiling(run.rules, args)
    if result.samples:
        for cell, policy in zip(cells, (run.baseline, *run.policies), strict=True):
            bets = policy_bets(policy.counting)
            cell["ceiling"] = policy_share(result, cell["gain_vs_basic"], cell["gain_ci95"], bets)
            cell["ceiling_share"] = cell["ceiling"]["share"]
    if result.interrupted:
        raise KeyboardInterrupt  # Ctrl-C in the ceiling ends the sweep; the cells so far are kept


def run_cells(run: Run, result: SimulationResult, bankroll: float | None) -> list[dict[str, Any]]:
    """The baseline's cell, then one per system x spread, as the run placed them (policy 1, 2, ...)."""
    labels = [(BASELINE_SYSTEM, BASELINE_SPREAD), *run.cells]
    return [
        cell_figures(result, index, run.penetration, system, spread, bankroll)
        for index, (system, spread) in enumerate(labels)
    ]


# ====================================================================== plot
def score_interval(cell: dict[str, Any]) -> tuple[float, float]:
    """SCORE at the ends of the EV's 95% interval (the SD held at its estimate): SCORE = DI |DI| rises
    with the EV, so these bound it as the EV's interval does."""
    sd = cell["sd"]
    if not sd > 0:
        return cell["score"], cell["score"]
    low, high = (1000.0 * ev / sd for ev in cell["ci95"])
    return low * abs(low), high * abs(high)


def score_figure(cells: list[dict[str, Any]], subtitle: str) -> Figure:
    """SCORE across the grid: a panel per system, penetration across, a line per spread with error
    bars (the SCORE of the EV's 95% interval). The flat basic-strategy baseline (a losing game, its
    SCORE far below 0) is drawn where it fits the counting lines' scale and otherwise named in the
    panel with its value, so that it does not squash them."""
    from matplotlib.figure import Figure  # optional dependency: matplotlib (the report extra)

    counting = [c for c in cells if c["system"] != BASELINE_SYSTEM]
    baseline = [c for c in cells if c["system"] == BASELINE_SYSTEM]
    systems = list(dict.fromkeys(c["system"] for c in counting))
    spreads = list(dict.fromkeys(c["spread"] for c in counting))
    columns = min(len(systems), 3)
    rows = math.ceil(len(systems) / columns)
    fig = Figure(figsize=(4.6 * columns, 3.6 * rows + 0.6), dpi=100, layout="constrained")
    axes = fig.subplots(rows, columns, sharey=True, squeeze=False)
    penetrations = sorted({c["penetration"] for c in cells})
    ends = [end for c in counting for end in score_interval(c)] + [0.0]
    low, high = min(ends), max(ends)
    pad = 0.08 * (high - low) or 1.0
    baseline_fits = all(low - pad <= c["score"] for c in baseline)
    for ax, system in zip(axes.flat, systems, strict=False):
        step = 0.08 * (max(penetrations) - min(penetrations) or 0.1) / max(len(spreads), 1)
        for k, spread in enumerate(spreads):
            mine = [c for c in counting if (c["system"], c["spread"]) == (system, spread)]
            bounds = [score_interval(c) for c in mine]
            scores = [c["score"] for c in mine]
            dodge = (k - (len(spreads) - 1) / 2) * step  # the spreads' error bars side by side
            ax.errorbar(
                [c["penetration"] + dodge for c in mine],
                scores,
                yerr=[
                    [s - b[0] for s, b in zip(scores, bounds, strict=True)],
                    [b[1] - s for s, b in zip(scores, bounds, strict=True)],
                ],
                marker="o",
                capsize=3,
                label=f"spread {spread}",
            )
        if baseline_fits:
            ax.plot(
                [c["penetration"] for c in baseline],
                [c["score"] for c in baseline],
                linestyle="--",
                marker=".",
                color="grey",
                label="basic strategy, flat bet",
            )
        else:
            text = ", ".join(f"{c['score']:+.1f}" for c in baseline)
            ax.text(
                0.02, 0.02, f"basic strategy, flat bet (off the scale): SCORE {text}",
                transform=ax.transAxes, fontsize=8, color="dimgrey", va="bottom",
            )  # fmt: skip
        ax.axhline(0.0, color="black", linewidth=0.6)
        ax.set_title(system)
        ax.set_xticks(penetrations)
        ax.set_xlabel("penetration")
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylim(low - pad, high + pad)
    for ax in axes[:, 0]:
        ax.set_ylabel("SCORE (95% CI)")
    for ax in list(axes.flat)[len(systems) :]:
        ax.set_visible(False)
    axes[0, 0].legend(fontsize="small", loc="upper left")
    fig.suptitle(f"SCORE: win per 100 rounds of a 10,000-unit Kelly bettor\n{subtitle}")
    return fig


def write_plot(cells: list[dict[str, Any]], path: Path, overwrite: bool, subtitle: str) -> None:
    """Draw into a temporary file beside ``path`` and rename it into place: no half-written plot."""
    figure = score_figure(cells, subtitle)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".png", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            figure.savefig(out, format="png")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # mkstemp's 0600 would make the plot private
        check_plot(path, overwrite)  # again: the file may have appeared while the sweep ran
        os.replace(temp, path)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)


# ====================================================================== output
def _signed(digits: int) -> Callable[[float], str]:
    return lambda value: f"{value:+.{digits}f}"


#: Text table columns: header, cell key, format.
TEXT_COLUMNS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("pen", "penetration", lambda v: f"{v:g}"),
    ("system", "system", str),
    ("spread", "spread", str),
    ("SCORE", "score", _signed(2)),
    ("adv %", "advantage", lambda v: f"{100 * v:+.3f}"),
    ("win/100", "win_per_100", _signed(3)),
    ("sd/100", "sd_per_100", lambda v: f"{v:.2f}"),
    ("N0", "n0", n0_text),
    ("DI", "di", _signed(2)),
    ("avg bet", "avg_bet", lambda v: f"{v:.3f}"),
    ("EV/round", "ev", _signed(5)),
    ("95% CI", "ci95", lambda v: f"{v[0]:+.5f} .. {v[1]:+.5f}"),
)
ROR_COLUMN = ("RoR", "ror", lambda v: f"{v:.4f}")
CEILING_COLUMN = ("ceiling %", "ceiling_share", lambda v: f"{100 * v:.0f}" if math.isfinite(v) else "-")


def format_text(sweep: dict[str, Any]) -> str:
    columns = [*TEXT_COLUMNS, *([ROR_COLUMN] if "ror" in sweep["cells"][0] else [])]
    columns += [CEILING_COLUMN] if all("ceiling_share" in cell for cell in sweep["cells"]) else []
    rows = [[header for header, _, _ in columns]]
    rows += [[text(cell[key]) for _, key, text in columns] for cell in sweep["cells"]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    left = {"system", "spread"}

    def line(row: list[str]) -> str:
        return "  ".join(
            value.ljust(width) if key in left else value.rjust(width)
            for value, width, (_, key, _) in zip(row, widths, columns, strict=True)
        ).rstrip()

    rules = Rules(**sweep["rules"])
    per_cell = f"{'up to ' if sweep['interrupted'] else ''}{sweep['rounds']:,} rounds per cell"
    lines = [
        f"sweep: {rules.describe()}, {per_cell}, seed {sweep['seed']}; each penetration "
        f"one run in which every policy is dealt the same shoes ({sweep['seconds']:.1f} s of simulation)",
        line(rows[0]),
        *(line(row) for row in rows[1:]),
    ]
    if sweep["interrupted"]:
        lines.append("(interrupted: the last penetration's cells cover the rounds it finished; any later are missing)")
    if sweep["plot"]:
        lines.append(f"SCORE plot: {sweep['plot']}")
    return "\n".join(lines)


def format_csv(sweep: dict[str, Any]) -> str:
    columns = [*CSV_COLUMNS, *(["bankroll", "ror"] if "ror" in sweep["cells"][0] else [])]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for cell in sweep["cells"]:
        flat = {
            **cell,
            "ev_low": cell["ci95"][0],
            "ev_high": cell["ci95"][1],
            "gain_low": cell["gain_ci95"][0],
            "gain_high": cell["gain_ci95"][1],
        }
        writer.writerow(["" if flat[name] is None else flat[name] for name in columns])
    return out.getvalue().rstrip("\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with warnings_as_lines(PROG):
            sweep = run_sweep(args)
    except (CliError, ValueError, OSError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(sweep, indent=2))
    elif args.csv:
        print(format_csv(sweep))
    else:
        print(format_text(sweep))
    return 0


__all__ = ["build_parser", "main"]


if __name__ == "__main__":
    sys.exit(main())
