"""``blackjack-evaluate``: a policy's EV per round with a confidence interval, by compiled simulation.

    blackjack-evaluate --policy basic --rounds 1e8 --json
    blackjack-evaluate --policy PATH --baseline basic --rules atlantic-city --set decks=2

With ``--baseline`` both policies play the very same cards each round (common random numbers),
so the interval of their EV difference is far tighter than either EV's own. The reported time and rate
are the simulation's own: the kernels are compiled (or loaded from numba's cache) before the clock starts.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from blackjack_env.rules import Rules
from blackjack_env.simulate import Policy, SimulationResult, interval
from blackjack_env.solver import solve
from blackjack_env.solver.ceiling import check_rules, policy_share
from blackjack_env.strategy import StrategyTable

from .counting_stats import counting_figures, n0_text
from .options import (
    CliError,
    OneLineParser,
    RunFeedback,
    add_backend_arguments,
    add_ceiling_arguments,
    add_simulation_arguments,
    ceiling_bets,
    console_entry,
    game_ceiling,
    note_compile,
    policy_rules,
    shoe_agent_for,
    table_from_args,
    warnings_as_lines,
)
from .policies import is_counting, load_policy, shoe_agent_run
from .runner import RunOutcome

PROG = "blackjack-evaluate"


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="blackjack-evaluate",
        usage="%(prog)s [report | sweep] [options]",
        description="Simulate a policy and report its EV per initial bet with a 95% confidence interval.",
        epilog="subcommands:\n"
        "  blackjack-evaluate report ...  an evaluation report of a policy (Markdown, HTML, JSON, figures);\n"
        "                                 see blackjack-evaluate report --help\n"
        "  blackjack-evaluate sweep ...   counting systems x bet spreads x penetrations on identical shoes;\n"
        "                                 see blackjack-evaluate sweep --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_simulation_arguments(parser, run_default=True)
    parser.add_argument("--baseline", default=None, help="compare with this policy on identical cards (e.g. basic)")
    add_backend_arguments(parser)
    exact = parser.add_mutually_exclusive_group()
    exact.add_argument(
        "--exact",
        action="store_true",
        help="require the exact EV (an error where the solver cannot price the policy); by default it is printed "
        "wherever it can be: a strategy-table policy (basic, a saved table or agent) at a shoe shuffled every round",
    )
    exact.add_argument("--no-exact", action="store_true", help="skip the exact EV (saves the seconds it takes)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_ceiling_arguments(
        parser,
        "also the policy's gain over basic strategy (the baseline, paired) as a share of the ceiling: what "
        "knowing the shoe before every round gains in the same game with the same bets",
    )
    return parser


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
        "rounds_played": result.rounds_played(),
        "avg_bet": result.avg_bet(),
        "ev_per_unit_bet": result.ev_per_unit_bet(),
        **counting_figures(result, args.bankroll),
        "seats": args.seats,
        "seat": args.seat,
        "rounds_per_second": result.rounds / outcome.seconds if outcome.seconds > 0 else math.inf,
        "seconds": outcome.seconds,
        "warmup_seconds": outcome.warmup_seconds,
        **result.rates(),
        "seed": args.seed,
        "workers": outcome.workers,
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
    speed = f"{summary['rounds']:,} rounds in {summary['seconds']:.2f} s ({summary['rounds_per_second']:,.0f} rounds/s"
    if summary["backend"] == "ray":  # the wall time a user sees is far longer: say why
        speed += f"; not counted: {summary['warmup_seconds']:.1f} s starting Ray and warming up the kernels"
    lines = [
        f"policy {summary['policy']}: EV {summary['ev']:+.5f} per initial bet "
        f"(95% CI {low:+.5f} .. {high:+.5f}; {100 * summary['ev']:+.3f}%)",
        speed + ")",
    ]
    if summary.get("rules_source"):
        game = Rules.from_dict(summary["rules"]).describe()
        lines.append(f"played in the game the run was trained in: {game} ({summary['rules_source']})")
    lines += [
        "rates: " + ", ".join(f"{k} {summary[k]:.4f}" for k in ("win", "push", "loss", "blackjack", "bust")),
        "       " + ", ".join(f"{k} {summary[k]:.4f}" for k in ("surrender", "double", "split", "insurance")),
    ]
    lines.append(
        f"per 100 rounds: win {summary['win_per_100']:+.3f} units, sd {summary['sd_per_100']:.2f}; "
        f"average bet {summary['avg_bet']:.3f}, advantage {100 * summary['advantage']:+.3f}%; "
        f"DI {summary['di']:.2f}, SCORE {summary['score']:.2f}, N0 {n0_text(summary['n0'])}"
        + (f"; risk of ruin {summary['ror']:.4f} with {summary['bankroll']:g} units" if "ror" in summary else "")
    )
    if "exact_ev" in summary:
        lines.append(exact_line("exact EV (the solver, no sampling)", summary["exact_ev"], summary["ci95"]))
    if "ceiling" in summary:
        lines.append(ceiling_line(summary["ceiling"]))
    if "baseline_ev" in summary:
        d_low, d_high = summary["ev_diff_ci95"]
        lines.append(f"baseline {summary['baseline']}: EV {summary['baseline_ev']:+.5f}")
        lines.append(
            f"difference (policy - baseline, same cards): {summary['ev_diff']:+.5f} "
            f"(95% CI {d_low:+.5f} .. {d_high:+.5f})"
        )
        if "exact_ev_diff" in summary:
            lines.append(exact_line("exact difference", summary["exact_ev_diff"], summary["ev_diff_ci95"]))
    if any(not summary.get(key, True) for key in ("ci95_covers_exact", "ev_diff_ci95_covers_exact")):
        lines.append(
            "(by design a 95% interval misses the true value in 1 run of 20; another --seed usually covers it)"
        )
    if summary["interrupted"]:
        lines.append("(interrupted: the result covers the rounds finished so far)")
    return "\n".join(lines)


def exact_line(label: str, exact: float, ci: Sequence[float]) -> str:
    """One line: an exact figure and whether the simulation's 95% interval covers it."""
    low, high = ci
    verdict = (
        "the 95% CI covers it"
        if low <= exact <= high
        else f"the 95% CI misses it by {max(low - exact, exact - high):.5f}"
    )
    return f"{label}: {exact:+.6f}; {verdict}"


def why_not_exact(policy: Policy, spec: str, rules: Rules) -> str | None:
    """Why the solver cannot price this policy under these rules (None: it can). It prices a strategy
    table off a fresh shoe; a counting policy, random play or a shoe dealt to a cut card are beyond it."""
    if policy.table is None or policy.compiled_count:
        return f"{spec!r} is not a strategy-table policy"
    if rules.penetration > 0:
        return "the shoe is dealt to a cut card (penetration > 0); the solver prices a shoe shuffled every round"
    return None


def exact_ev(table: StrategyTable, rules: Rules) -> float:
    """Exact EV of a strategy table from the solver (no simulation): basic strategy's is the
    solution's own (cached on disk), any other table is analysed (a few seconds)."""
    solution = solve(rules)
    basic = solution.table
    if np.array_equal(table.actions, basic.actions) and np.array_equal(table.insurance, basic.insurance):
        return float(solution.ev)
    return float(solution.evaluate(table).ev)


def add_exact(summary: dict[str, Any], tables: Sequence[StrategyTable | None], rules: Rules) -> None:
    """Put the exact EVs of the policy (and the baseline, and their difference) beside the simulated
    ones, and whether each 95% interval covers its exact value."""
    values = [exact_ev(table, rules) for table in tables if table is not None]
    summary["exact_ev"] = values[0]
    summary["ci95_covers_exact"] = bool(summary["ci95"][0] <= values[0] <= summary["ci95"][1])
    if len(values) == 2:
        summary["baseline_exact_ev"] = values[1]
        summary["exact_ev_diff"] = values[0] - values[1]
        low, high = summary["ev_diff_ci95"]
        summary["ev_diff_ci95_covers_exact"] = bool(low <= summary["exact_ev_diff"] <= high)


def ceiling_line(c: dict[str, Any]) -> str:
    """The --ceiling line: the policy's gain and the ceiling's, per 100 rounds, and the share."""
    bets = "a flat bet" if c["bets"] is None else "bets " + ",".join(f"{b:g}" for b in c["bets"])
    return (
        f"ceiling ({c['samples']} sampled shoes, {bets}): gain over basic {100 * c['gain']:+.3f} per 100 rounds "
        f"(95% CI {100 * c['gain_ci95'][0]:+.3f} .. {100 * c['gain_ci95'][1]:+.3f}); the policy's "
        f"{100 * c['policy_gain']:+.3f} is {100 * c['share']:.0f}% of it "
        f"(95% CI {100 * c['share_ci95'][0]:.0f} .. {100 * c['share_ci95'][1]:.0f}%)"
    )


def add_ceiling(summary: dict[str, Any], policy: Policy, rules: Rules, args: argparse.Namespace) -> None:
    """--ceiling: the ceiling of the same game (seats, seed, workers, backend) for the policy's bets."""
    bets = ceiling_bets(policy)
    result = game_ceiling(rules, args)
    if result.samples == 0:
        raise CliError("--ceiling: interrupted before any shoe was analysed")
    gain = summary["ev_diff"]
    summary["ceiling"] = policy_share(result, gain, summary["ev_diff_ci95"], bets)


def run(args: argparse.Namespace) -> dict[str, Any]:
    rules, rules_source = policy_rules(args)  # a learner run plays in its own game
    if shoe_agent_run(args.policy) is not None:
        return run_shoe_agent(args, rules, rules_source)
    table = table_from_args(args, rules)
    if args.ceiling:
        check_rules(rules, args.ceiling_samples, args.seats, args.seat)
        if args.baseline not in (None, "basic"):
            raise CliError(
                f"--ceiling compares with basic strategy: give --baseline basic or none, not {args.baseline!r}"
            )
        args.baseline = "basic"
    specs = [args.policy, *([args.baseline] if args.baseline else [])]
    counting = {spec: is_counting(spec, rules) for spec in specs}
    if args.spread is not None and not any(counting.values()):
        raise CliError(f"--spread needs a counting strategy as --policy or --baseline; {args.policy!r} is not one")
    # --spread applies to every counting strategy of the run, policy and baseline alike
    policy, *rest = (load_policy(spec, rules, args.spread if counting[spec] else None) for spec in specs)
    baseline = rest[0] if rest else None
    why_not = [why_not_exact(p, spec, rules) for spec, p in zip(specs, [policy, *rest], strict=True)]
    if args.exact and why_not[0]:
        raise CliError(f"--exact: {why_not[0]}")
    # the policy's exact EV, and the baseline's (and the exact difference) where it has one too
    pairs = zip([policy, *rest], why_not, strict=True)
    priced = [] if args.no_exact or why_not[0] else [p.table for p, why in pairs if not why]
    feedback = RunFeedback(PROG, args.rounds, bar=not args.no_progress and sys.stderr.isatty())
    try:
        outcome = feedback.simulate(args, rules, policy, table, baseline=baseline)
    finally:
        feedback.close()
    note_compile(outcome, PROG)
    if outcome.result.rounds == 0:
        raise CliError("interrupted before any round finished")
    summary = summarize(outcome, rules, args)
    summary["rules_source"] = None if rules_source is None else str(rules_source)
    if priced:
        add_exact(summary, priced, rules)
    if args.ceiling:
        add_ceiling(summary, policy, rules, args)
    return summary


def run_shoe_agent(args: argparse.Namespace, rules: Rules, rules_source: Any) -> dict[str, Any]:
    """--policy RUN_DIR of a network of the shoe game: the compiled simulator cannot run it, so the vector
    env plays it beside basic strategy at a flat bet on the same shoes (``shoe_agents``), at its own seat
    and with its own bets."""
    from .shoe_agents import paired_evaluation  # start-up time: only this path plays the vector env

    agent = shoe_agent_for(
        args,
        {
            "--spread": args.spread is not None,
            "--exact": args.exact,
            "--bankroll": args.bankroll is not None,
            "--backend ray": args.backend == "ray",
        },
        args.baseline,
    )
    if args.ceiling:
        check_rules(rules, args.ceiling_samples, args.seats, args.seat)
    feedback = RunFeedback(PROG, args.rounds, bar=not args.no_progress and sys.stderr.isatty())
    start = time.perf_counter()
    try:
        feedback.started()
        row = paired_evaluation(agent, args.rounds, args.seed, progress=feedback.update)
    finally:
        feedback.close()
    seconds = time.perf_counter() - start
    rounds = int(row["rounds"])
    summary: dict[str, Any] = {
        "policy": args.policy,
        "played_in": "vector env",
        "ev": row["ev"],
        "ci95": interval(row["ev"], row["stderr_own"]),
        "stderr": row["stderr_own"],
        "rounds": rounds,
        "avg_bet": row["avg_bet"],
        "ev_per_unit_bet": row["ev"] / row["avg_bet"],
        "bets": list(agent.shoe["bets"]),
        "seats": args.seats,
        "seat": args.seat,
        "rounds_per_second": rounds / seconds if seconds > 0 else math.inf,
        "seconds": seconds,
        "seed": args.seed,
        "interrupted": row["interrupted"],
        "rules": rules.to_dict(),
        "rules_source": None if rules_source is None else str(rules_source),
        "baseline": "basic",
        "baseline_ev": row["ev_basic"],
        "baseline_ci95": interval(row["ev_basic"], row["stderr_basic"]),
        "ev_diff": row["gain_vs_basic"],
        "ev_diff_ci95": [row["gain_vs_basic_low"], row["gain_vs_basic_high"]],
        "paired_rounds": rounds,
        "flat_ev": row["ev_flat"],
        "flat_ci95": interval(row["ev_flat"], row["stderr_flat"]),
        "flat_ev_diff": row["flat_gain"],
        "flat_ev_diff_ci95": [row["flat_gain_low"], row["flat_gain_high"]],
    }
    if args.ceiling:
        summary["ceiling"] = policy_share(
            game_ceiling(rules, args), summary["ev_diff"], summary["ev_diff_ci95"], tuple(summary["bets"])
        )
    return summary


def format_shoe_agent_text(summary: dict[str, Any]) -> str:
    """The text report of ``run_shoe_agent``."""

    def ev_ci(ev: float, ci: Sequence[float]) -> str:
        return f"{ev:+.5f} (95% CI {ci[0]:+.5f} .. {ci[1]:+.5f}; {100 * ev:+.3f} per 100 rounds)"

    bets = ",".join(f"{b:g}" for b in summary["bets"])
    lines = [
        f"policy {summary['policy']}: EV {ev_ci(summary['ev'], summary['ci95'])} per round in table minimums, "
        f"with its bets {bets} (average {summary['avg_bet']:.3f})",
        f"{summary['rounds']:,} rounds in {summary['seconds']:.2f} s ({summary['rounds_per_second']:,.0f} rounds/s), "
        f"played in the vector env at seat {summary['seat']} of {summary['seats']}: a network of the shoe game, "
        "which the compiled simulator cannot run",
    ]
    if summary.get("rules_source"):
        game = Rules.from_dict(summary["rules"]).describe()
        lines.append(f"played in the game the run was trained in: {game} ({summary['rules_source']})")
    lines += [
        f"baseline basic at a flat bet: EV {ev_ci(summary['baseline_ev'], summary['baseline_ci95'])}",
        f"difference (policy - baseline, same shoes): {ev_ci(summary['ev_diff'], summary['ev_diff_ci95'])}",
        f"its play at a flat bet: EV {summary['flat_ev']:+.5f}; difference from basic (same shoes): "
        + ev_ci(summary["flat_ev_diff"], summary["flat_ev_diff_ci95"]),
    ]
    if "ceiling" in summary:
        lines.append(ceiling_line(summary["ceiling"]))
    if summary["interrupted"]:
        lines.append("(interrupted: the result covers the shoes finished so far)")
    return "\n".join(lines)


@console_entry("blackjack-evaluate")
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "report":
        from .report import main as report_main  # start-up time: a subcommand's modules load when it runs

        return report_main(argv[1:])
    if argv and argv[0] == "sweep":
        from .sweep import main as sweep_main  # start-up time: a subcommand's modules load when it runs

        return sweep_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings_as_lines("blackjack-evaluate"):
            summary = run(args)
    except (CliError, ValueError) as error:
        print(f"blackjack-evaluate: error: {error}", file=sys.stderr)
        return 2
    text = format_shoe_agent_text if summary.get("played_in") == "vector env" else format_text
    print(json.dumps(summary, indent=2) if args.json else text(summary))
    return 0


__all__ = ["build_parser", "main"]


if __name__ == "__main__":
    sys.exit(main())
