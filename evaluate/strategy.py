"""``blackjack-strategy``: the exact basic strategy and house edge for any rule set.

    blackjack-strategy --rules vegas-strip --set decks=2
    blackjack-strategy --rules atlantic-city --json
    blackjack-strategy --set hit_soft_17=no --removal --json   # effects of removal, BC/PE/IC
    blackjack-strategy --indices hilo --set penetration=0.75 --json   # index plays and their gains
    blackjack-strategy --ceiling --set penetration=0.75 --bets 1,8 --samples 600   # knowing the shoe
    python -m blackjack_env.evaluate.strategy --set surrender=none --format csv

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
from pathlib import Path

from blackjack_env.counting import load_system
from blackjack_env.solver import ACTION_NAMES, Removal, Solution, effects_of_removal, generate_indices, solve
from blackjack_env.solver.ceiling import ceiling as shoe_ceiling
from blackjack_env.solver.ceiling import check_bets, format_text
from blackjack_env.solver.ceiling import check_rules as check_ceiling_rules
from blackjack_env.solver.indices import check_rules
from blackjack_env.strategy import CHART_UPS, N_ROWS, row_label, up_label

from .options import OneLineParser, add_rules_arguments, console_entry, rules_from_args

FORMATS = ("chart", "json", "csv")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="blackjack-strategy",
        description="Print the exact total-dependent basic strategy and its EV for a rule set.",
    )
    add_rules_arguments(parser)
    parser.add_argument("--format", choices=FORMATS, default="chart", help="output format (default chart)")
    parser.add_argument("--json", action="store_true", help="shorthand for --format json")
    parser.add_argument(
        "--removal",
        action="store_true",
        help="add the effects of removal (re-optimised and fixed strategy, insurance) and each built-in "
        "counting system's BC, PE and IC (finite shoes only; about 10 s the first time, then cached)",
    )
    parser.add_argument(
        "--indices",
        metavar="SYSTEM",
        help="instead of the chart: the index plays of a counting system (a built-in name such as hilo, or a "
        'JSON file {"tags": {"A": .., "2": .., ...}, "balanced": ..}) at the rules\' penetration (needs a cut '
        'card: --set penetration=0.75); --json prints {"indices": [...]}; about 15 s the first time, then cached',
    )
    parser.add_argument("--plot", metavar="PATH", help="with --indices: also write a PNG chart of the indices")
    ceiling = parser.add_argument_group("the ceiling (--ceiling)")
    ceiling.add_argument(
        "--ceiling",
        action="store_true",
        help="instead of the chart: what a player who knew the shoe's composition before every round would win "
        "(sampled round-start shoes, each analysed exactly; needs a cut card: --set penetration=0.75)",
    )
    ceiling.add_argument("--samples", type=int, default=600, help="round-start shoes to analyse (default 600)")
    ceiling.add_argument(
        "--strata",
        type=int,
        default=8,
        help="strata of the shoes by the gain predictor (default 8; 1: plain sampling); see the docs' ceiling guide",
    )
    ceiling.add_argument("--seed", type=int, default=0, help="seed of the sampled shoes")
    ceiling.add_argument("--seats", type=int, default=1, help="boxes at the table, 1-7 (the others play basic)")
    ceiling.add_argument("--seat", type=int, default=0, help="the player's box, 0..seats-1 (0 is dealt first)")
    ceiling.add_argument("--bets", default=None, help="the perfect bettor's bets, increasing, e.g. 1,2,4,8 or 0,3")
    ceiling.add_argument("--spread", default=None, metavar="MIN-MAX", help="bets MIN and MAX, e.g. 1-8")
    ceiling.add_argument("--workers", type=int, default=None, help="parallel processes (default: every core)")
    ceiling.add_argument("--backend", choices=("local", "ray"), default="local", help="where the shoes run")
    ceiling.add_argument("--ray-address", default=None, help="Ray cluster address (default: start a local Ray)")
    ceiling.add_argument("--no-progress", action="store_true", help="no progress count on stderr")
    return parser


def parse_bets(bets: str | None, spread: str | None) -> tuple[float, ...] | None:
    """--bets 1,2,4,8 or --spread 1-8 (MIN and MAX) as numbers; checked by the ceiling."""
    if bets is not None and spread is not None:
        raise ValueError("give --bets or --spread, not both")
    text, sep, name = (bets, ",", "--bets") if bets is not None else (spread, "-", "--spread")
    if text is None:
        return None
    try:
        return tuple(float(part) for part in text.split(sep))
    except ValueError:
        example = "1,2,4,8" if name == "--bets" else "1-8"
        raise ValueError(f"{name} must be numbers such as {example}, got {text!r}") from None


def ceiling_main(args: argparse.Namespace) -> int:
    """--ceiling: every argument checked before any work; Ctrl-C reports the finished shoes."""
    try:
        if args.removal or args.indices is not None or args.plot is not None:
            raise ValueError("--ceiling is its own output; give it without --removal, --indices or --plot")
        rules = rules_from_args(args)
        check_ceiling_rules(rules, args.samples, args.seats, args.seat)
        if args.strata < 1:
            raise ValueError(f"--strata must be >= 1 (1: plain sampling), got {args.strata}")
        bets = parse_bets(args.bets, args.spread)
        if bets is not None:
            check_bets(bets, args.seats)
        if args.workers is not None and args.workers < 1:
            raise ValueError(f"--workers must be >= 1, got {args.workers}")
        progress = None
        if not args.no_progress and sys.stderr.isatty():
            done = [0]

            def progress(n: int) -> None:
                done[0] += n
                print(f"\rblackjack-strategy: {done[0]}/{args.samples} shoes", end="", file=sys.stderr, flush=True)

        result = shoe_ceiling(
            rules,
            seats=args.seats,
            seat=args.seat,
            samples=args.samples,
            strata=args.strata,
            seed=args.seed,
            workers=args.workers,
            backend=args.backend,
            ray_address=args.ray_address,
            bets=bets,
            progress=progress,
        )
    except ValueError as error:
        print(f"blackjack-strategy: error: {error}", file=sys.stderr)
        return 2
    if progress is not None:
        print(file=sys.stderr)
    if result.samples == 0:
        print("blackjack-strategy: error: interrupted before any shoe was analysed", file=sys.stderr)
        return 2
    summary = result.to_json()  # interrupted: the finished shoes, said in the output (as blackjack-evaluate)
    print(json.dumps(summary, indent=1) if args.json or args.format == "json" else format_text(summary))
    return 0


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


_REMOVAL_ROWS = (
    ("eor", "strategy re-optimised for the depleted shoe"),
    ("eor_fixed", "the full shoe's basic strategy held fixed"),
    ("insurance_eor", "the insurance bet (half the bet, pays 2:1) against an ace"),
)
_PE_NOTE = (
    "BC, IC: weighted correlation of the tags with eor, insurance_eor (ten-value cards weigh 4)",
    "PE: share of the gain from perfect knowledge of every chart decision that the count's indices",
    "    capture (Griffin-style, normal approximation, shoe dealt to the penetration or 75%)",
)


def format_removal(removal: Removal, systems: dict[str, dict[str, float]]) -> str:
    """The effects of removal and each system's BC, PE and IC as small aligned tables."""
    labels = list(removal.eor)
    lines = [
        "Effects of removal: change of EV in % of the initial bet per card removed from the full shoe",
        f"{'card':<14}" + "".join(f"{label:>9}" for label in labels),
    ]
    for key, _ in _REMOVAL_ROWS:
        values = getattr(removal, key)
        lines.append(f"{key:<14}" + "".join(f"{values[label]:>+9.4f}" for label in labels))
    lines += [f"  {key}: {meaning}" for key, meaning in _REMOVAL_ROWS]
    lines += ["", f"{'system':<14}{'BC':>7}{'PE':>7}{'IC':>7}"]
    lines += [f"{name:<14}" + "".join(f"{row[k]:>7.3f}" for k in ("bc", "pe", "ic")) for name, row in systems.items()]
    return "\n".join([*lines, *_PE_NOTE])


def format_removal_csv(removal: Removal, systems: dict[str, dict[str, float]]) -> str:
    """Two more CSV blocks after a blank line: EORs per card value (percent), then BC/PE/IC per system."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["card", *(key for key, _ in _REMOVAL_ROWS)])
    for label in removal.eor:
        writer.writerow([label, *(f"{getattr(removal, key)[label]:.6f}" for key, _ in _REMOVAL_ROWS)])
    writer.writerow([])
    writer.writerow(["system", "bc", "pe", "ic"])
    for name, row in systems.items():
        writer.writerow([name, *(f"{row[k]:.6f}" for k in ("bc", "pe", "ic"))])
    return out.getvalue().rstrip("\n")


def indices_main(args: argparse.Namespace) -> int:
    """--indices: generate, then write the plot (if asked) before printing, so an error writes nothing."""
    try:
        if args.indices is None:
            raise ValueError("--plot needs --indices SYSTEM")
        if args.removal:
            raise ValueError("--indices and --removal are separate outputs; give one")
        rules = rules_from_args(args)
        system = load_system(args.indices, "--indices")
        check_rules(rules)
        if args.plot:
            import matplotlib  # noqa: F401  (optional dependency, the report extra: fail before the work)

            folder = Path(args.plot).resolve().parent
            if not folder.is_dir():
                raise ValueError(f"--plot {args.plot}: there is no folder {folder}")
        table = generate_indices(rules, system)
        if args.plot:
            table.plot(args.plot)
    except (ValueError, OSError) as error:
        print(f"blackjack-strategy: error: {error}", file=sys.stderr)
        return 2
    except ImportError as error:
        print(
            f"blackjack-strategy: error: {error}; --plot needs matplotlib: pip install 'blackjack-env[report]'",
            file=sys.stderr,
        )
        return 2
    fmt = "json" if args.json else args.format
    if fmt == "json":
        print(json.dumps(table.to_json(), indent=1))
    else:
        print(table.to_csv() if fmt == "csv" else table.format_chart())
    return 0


@console_entry("blackjack-strategy")
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.ceiling:
        return ceiling_main(args)
    if args.indices is not None or args.plot is not None:
        return indices_main(args)
    try:
        rules = rules_from_args(args)
        removal = effects_of_removal(rules) if args.removal else None  # first: an infinite deck fails fast
        solution = solve(rules)
    except ValueError as error:
        print(f"blackjack-strategy: error: {error}", file=sys.stderr)
        return 2
    systems = removal.efficiencies() if removal is not None else {}
    fmt = "json" if args.json else args.format
    if fmt == "json":
        out = solution.to_json_dict()
        if removal is not None:
            out.update(removal.to_json_dict(), systems=systems)
        print(json.dumps(out, indent=1))
    elif fmt == "csv":
        print(format_csv(solution) + (f"\n\n{format_removal_csv(removal, systems)}" if removal else ""))
    else:
        print(format_chart(solution) + (f"\n\n{format_removal(removal, systems)}" if removal else ""))
    return 0


__all__ = ["build_parser", "main"]


if __name__ == "__main__":
    sys.exit(main())
