"""``blackjack-evaluate``: a policy's EV per round with a confidence interval, by compiled simulation.

    blackjack-evaluate --policy basic --rounds 1e8 --json
    blackjack-evaluate --policy PATH --baseline basic --rules atlantic-city --set decks=2

With ``--baseline`` both policies play the very same cards each round (common random numbers),
so the interval of their EV difference is far tighter than either EV's own.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

from blackjack_env.rules import DEFAULT_PRESET, PRESETS, Rules
from blackjack_env.simulate import SimulationResult

from .policies import POLICY_CHOICES, load_policy
from .runner import RunOutcome, default_workers, simulate

Z95 = 1.959963984540054


class CliError(Exception):
    """A bad argument: reported as one line, exit code 2."""


def parse_rounds(text: str) -> int:
    """Accept 1000000, 1e8 or 1_000_000."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"rounds must be a number such as 1000000 or 1e8, got {text!r}") from None
    if not math.isfinite(value) or value < 1 or value != int(value):
        raise argparse.ArgumentTypeError(f"rounds must be a whole number >= 1, got {text!r}")
    return int(value)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    """--rules PRESET and repeated --set key=value (shared by every command)."""
    parser.add_argument(
        "--rules",
        default=DEFAULT_PRESET,
        help=f"rules preset (default {DEFAULT_PRESET}); one of: {', '.join(PRESETS)}",
    )
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change one rules field, e.g. --set decks=2 --set hit_soft_17=no (repeatable)",
    )


def rules_from_args(args: argparse.Namespace) -> Rules:
    return Rules.preset(args.rules).with_settings(args.settings)


def add_simulation_arguments(parser: argparse.ArgumentParser) -> None:
    """--policy, --rules, --set, --rounds, --seed and --workers (shared by evaluate and report)."""
    parser.add_argument("--policy", default="basic", help=f"{POLICY_CHOICES} (default basic)")
    add_rules_arguments(parser)
    parser.add_argument("--rounds", type=parse_rounds, default=10_000_000, help="rounds to play (e.g. 1e8)")
    parser.add_argument("--seed", type=int, default=0, help="seed: the same seed gives the same result")
    parser.add_argument(
        "--workers", type=positive_int, default=None, help=f"parallel workers (default: all {default_workers()} cores)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="blackjack-evaluate",
        description="Simulate a policy and report its EV per initial bet with a 95%% confidence interval.",
    )
    add_simulation_arguments(parser)
    parser.add_argument("--baseline", default=None, help="compare with this policy on identical cards (e.g. basic)")
    parser.add_argument("--backend", choices=("local", "ray"), default="local", help="where chunks run")
    parser.add_argument("--ray-address", default=None, help="Ray cluster address (default: start a local Ray)")
    parser.add_argument("--exact", action="store_true", help="also print the exact EV of a strategy-table policy")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def interval(mean: float, stderr: float) -> list[float]:
    return [mean - Z95 * stderr, mean + Z95 * stderr]


def summarize(outcome: RunOutcome, rules: Rules, args: argparse.Namespace) -> dict[str, Any]:
    """The JSON report (keys are a public contract)."""
    result: SimulationResult = outcome.result
    ev, stderr = result.ev(), result.stderr()
    summary: dict[str, Any] = {
        "policy": args.policy,
        "ev": ev,
        "ci95": interval(ev, stderr),
        "stderr": stderr,
        "rounds": result.rounds,
        "rounds_per_second": result.rounds / outcome.seconds if outcome.seconds > 0 else math.inf,
        "seconds": outcome.seconds,
        **result.rates(),
        "seed": args.seed,
        "workers": args.workers,
        "backend": args.backend,
        "interrupted": outcome.interrupted,
        "rules": rules.to_dict(),
    }
    if args.baseline:
        diff, diff_stderr, paired = result.diff()
        baseline_ev, baseline_stderr = result.ev(1), result.stderr(1)
        summary.update(
            {
                "baseline": args.baseline,
                "baseline_ev": baseline_ev,
                "baseline_ci95": interval(baseline_ev, baseline_stderr),
                "baseline_rates": result.rates(1),
                "ev_diff": diff,
                "ev_diff_ci95": interval(diff, diff_stderr),
                "ev_diff_stderr": diff_stderr,
                "paired_rounds": paired,
            }
        )
    return summary


def format_text(summary: dict[str, Any]) -> str:
    low, high = summary["ci95"]
    lines = [
        f"policy {summary['policy']}: EV {summary['ev']:+.5f} per initial bet "
        f"(95% CI {low:+.5f} .. {high:+.5f}; {100 * summary['ev']:+.3f}%)",
        f"{summary['rounds']:,} rounds in {summary['seconds']:.2f} s ({summary['rounds_per_second']:,.0f} rounds/s)",
        "rates: " + ", ".join(f"{k} {summary[k]:.4f}" for k in ("win", "push", "loss", "blackjack", "bust")),
        "       " + ", ".join(f"{k} {summary[k]:.4f}" for k in ("surrender", "double", "split", "insurance")),
    ]
    if "exact_ev" in summary:
        lines.append(f"exact EV (no sampling): {summary['exact_ev']:+.6f}")
    if "baseline_ev" in summary:
        d_low, d_high = summary["ev_diff_ci95"]
        lines.append(f"baseline {summary['baseline']}: EV {summary['baseline_ev']:+.5f}")
        lines.append(
            f"difference (policy - baseline, same cards): {summary['ev_diff']:+.5f} "
            f"(95% CI {d_low:+.5f} .. {d_high:+.5f})"
        )
    if summary["interrupted"]:
        lines.append("(interrupted: the result covers the rounds finished so far)")
    return "\n".join(lines)


def exact_ev(policy_spec: str, rules: Rules) -> float:
    """Exact EV of a table policy from the solver (no simulation)."""
    from blackjack_env.solver import solve

    policy = load_policy(policy_spec, rules)
    if policy.table is None:
        raise CliError(f"--exact needs a strategy-table policy; {policy_spec!r} is not one")
    return float(solve(rules).evaluate(policy.table))


def run(args: argparse.Namespace) -> dict[str, Any]:
    rules = rules_from_args(args)
    policy = load_policy(args.policy, rules)
    baseline = load_policy(args.baseline, rules) if args.baseline else None
    args.workers = args.workers or default_workers()
    progress_bar = None
    if not args.no_progress and sys.stderr.isatty():
        from tqdm import tqdm

        progress_bar = tqdm(total=args.rounds, unit="round", unit_scale=True, file=sys.stderr)
    try:
        outcome = simulate(
            rules,
            policy,
            args.rounds,
            seed=args.seed,
            baseline=baseline,
            workers=args.workers,
            backend=args.backend,
            ray_address=args.ray_address,
            progress=progress_bar.update if progress_bar else None,
        )
    finally:
        if progress_bar:
            progress_bar.close()
    if outcome.result.rounds == 0:
        raise CliError("interrupted before any round finished")
    summary = summarize(outcome, rules, args)
    if args.exact:
        summary["exact_ev"] = exact_ev(args.policy, rules)
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "report":
        from .report import main as report_main

        return report_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        summary = run(args)
    except (CliError, ValueError) as error:
        print(f"blackjack-evaluate: error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2) if args.json else format_text(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
