"""``blackjack-strategy``: the exact basic strategy and house edge for any rule set.

    blackjack-strategy --rules vegas-strip --set decks=2
    blackjack-strategy --rules atlantic-city --json
    python -m evaluate.strategy --set surrender=none --format csv

Nothing is simulated: the numbers come from the solver (``blackjack_env.solver``) and are cached
on disk, so a second call with the same rules is instant.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Sequence

from blackjack_env.solver import ACTION_NAMES, Solution, solve
from blackjack_env.strategy import CHART_UPS, N_ROWS, row_label, up_label

from .options import add_rules_arguments, rules_from_args

FORMATS = ("chart", "json", "csv")


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr (exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="blackjack-strategy",
        description="Print the exact total-dependent basic strategy and its EV for a rule set.",
    )
    add_rules_arguments(parser)
    parser.add_argument("--format", choices=FORMATS, default="chart", help="output format (default chart)")
    parser.add_argument("--json", action="store_true", help="shorthand for --format json")
    return parser


def format_chart(solution: Solution) -> str:
    """The printed chart with a one-line header giving the rules and the EV."""
    header = f"{solution.rules.describe()}: EV {solution.ev:+.6f} per round (house edge {-100 * solution.ev:.4f}%)"
    legend = "H hit, S stand, D double, P split, R surrender; a second letter is the fallback"
    return "\n".join([header, legend, solution.table.format_chart()])


def format_csv(solution: Solution) -> str:
    """One line per chart cell: its code, each action's EV and how often it arises per round."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["section", "hand", "up", "code", *ACTION_NAMES, "frequency"])
    for row in range(N_ROWS):
        section, key = row_label(row)
        for up in CHART_UPS:
            evs = solution.cell_ev(section, key, up)
            writer.writerow(
                [
                    section,
                    key,
                    up_label(up),
                    solution.table.cell_code(row, up),
                    *(f"{evs[name]:.6f}" if name in evs else "" for name in ACTION_NAMES),
                    f"{solution.freq[row, up - 1]:.8f}",
                ]
            )
    return out.getvalue().rstrip("\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        solution = solve(rules_from_args(args))
    except ValueError as error:
        print(f"blackjack-strategy: error: {error}", file=sys.stderr)
        return 2
    fmt = "json" if args.json else args.format
    if fmt == "json":
        print(json.dumps(solution.to_json_dict(), indent=1))
    elif fmt == "csv":
        print(format_csv(solution))
    else:
        print(format_chart(solution))
    return 0


if __name__ == "__main__":
    sys.exit(main())
