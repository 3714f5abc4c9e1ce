"""``blackjack-evaluate report``'s command line: parse, build the report, write it, say so.

Errors are one line and exit status 2 with nothing written; Ctrl-C at any point (the simulation, the
ceiling, drawing) writes nothing and exits 130; see :mod:`.writer` for what happens in ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..options import (
    CliError,
    OneLineParser,
    add_backend_arguments,
    add_ceiling_arguments,
    add_simulation_arguments,
    warnings_as_lines,
)
from .formats import fmt_ev, fmt_optional, fmt_share
from .model import METRICS_FILE, PROG, Report, build_report
from .writer import check_out, write_report


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Simulate a policy and write report.html, report.md, PNG figures and summary.json.",
    )
    add_simulation_arguments(parser, run_default=True)
    add_backend_arguments(parser)
    add_ceiling_arguments(
        parser,
        "add the ceiling: what knowing the shoe before every round gains over basic strategy in the same game with "
        "the policy's bets, the policy's share of it and the round-start EV's distribution (a bar and a histogram)",
    )
    parser.add_argument("--run", default=None, help=f"a training run's folder: learning curve from its {METRICS_FILE}")
    parser.add_argument("--out", required=True, help="folder to write the report into")
    parser.add_argument("--overwrite", action="store_true", help="replace report files already in --out")
    return parser


def format_headline(report: Report) -> str:
    """The line printed when the report is written (and, with --ceiling, the policy's share)."""
    p, gap = report.ev["policy"], report.gap_to_basic
    line = (
        f"policy {report.policy}: EV {fmt_ev(p.value)} (95% CI {fmt_ev(p.low)} .. {fmt_ev(p.high)}); "
        f"gap to basic strategy {fmt_ev(gap.value)} (95% CI {fmt_ev(gap.low)} .. {fmt_ev(gap.high)})"
    )
    if report.ceiling:
        share, (low, high) = report.ceiling.share["share"], report.ceiling.share["share_ci95"]
        shares = [fmt_optional(v, fmt_share) for v in (share, low, high)]
        line += f"\nshare of the ceiling {shares[0]} (95% CI {shares[1]} .. {shares[2]})"
    return line


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.run is not None and not Path(args.run).is_dir():
            raise CliError(
                f"--run {args.run}: no such folder (give a training run's folder, which holds {METRICS_FILE})"
            )
        check_out(Path(args.out).resolve(), args.overwrite)
        with warnings_as_lines(PROG):
            report = build_report(args)
        paths = write_report(report, Path(args.out), overwrite=args.overwrite)
    except (CliError, ValueError, OSError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:
        why = f" ({stop})" if str(stop) else ""
        print(f"{PROG}: interrupted; no report written{why}", file=sys.stderr)
        return 130
    except ImportError as error:
        print(
            f"{PROG}: error: {error}; the report needs matplotlib and jinja2: pip install 'blackjack-env[report]'",
            file=sys.stderr,
        )
        return 2
    print(format_headline(report))
    print(f"wrote {len(paths)} files to {Path(args.out).resolve()}: {', '.join(p.name for p in paths)}")
    return 0
