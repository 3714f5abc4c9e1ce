"""Simulated basic strategy against the exact analysis, and the power of paired comparisons.

For several rule sets: the exact EV of basic strategy (no cut card), the simulated EV with its
95% CI over --rounds rounds, and whether the exact value lies inside. Then one paired run:
basic strategy with one deviation (stand on hard 16 against a ten) against basic strategy on
the same cards, showing how much narrower the CI of the difference is than either EV's own.

    python benchmarks/agreement.py [--rounds 1e8] [--seed 0]
"""

from __future__ import annotations

import argparse

from blackjack_env import Rules
from blackjack_env import engine as E
from blackjack_env.evaluate.runner import simulate
from blackjack_env.simulate import Z95, Policy
from blackjack_env.solver import solve
from blackjack_env.strategy import StrategyTable, row_of_label

RULE_SETS = {
    "6D H17 DAS LS (default)": Rules(),
    "6D S17 DAS LS": Rules(hit_soft_17=False),
    "1 deck H17 DAS SP4": Rules(decks=1, split_to=4),
    "infinite deck S17": Rules(decks=0, hit_soft_17=False),
    "6D no hole card, no OBO": Rules(peek=False, obo=False, surrender="none"),
}


def with_deviation(table: StrategyTable, section: str, key: str, up: int, action: int) -> StrategyTable:
    actions = table.actions.copy()
    row = row_of_label(section, key)
    actions[row, up - 1] = [action] + [a for a in actions[row, up - 1] if a != action]
    return StrategyTable(actions, table.insurance.copy(), name=f"basic, but {section} {key} vs {up}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=float, default=1e8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rounds = int(args.rounds)
    print(f"{'rules':<28} {'exact EV':>10} {'simulated EV':>13} {'95% CI':>23}  inside  rounds/s")
    for name, rules in RULE_SETS.items():
        solution = solve(rules)
        run = simulate(rules, Policy.from_table(solution.table), rounds, seed=args.seed)
        ev, se = run.result.ev(), run.result.stderr()
        low, high = ev - Z95 * se, ev + Z95 * se
        inside = "yes" if low <= solution.ev <= high else "NO"
        print(
            f"{name:<28} {solution.ev:+10.5f} {ev:+13.5f} [{low:+.5f}, {high:+.5f}]  {inside:>6}"
            f"  {run.result.rounds / run.seconds:,.0f}"
        )
    rules = Rules()
    basic = solve(rules).table
    deviant = with_deviation(basic, "hard", "16", 10, E.STAND)
    run = simulate(rules, Policy.from_table(deviant), rounds, seed=args.seed, baseline=Policy.from_table(basic))
    diff, diff_se, _ = run.result.diff()
    exact_gap = solve(rules).evaluate(deviant).ev - solve(rules).ev
    print()
    print(f"paired: {deviant.name} minus basic, {rounds:,} rounds on identical cards")
    print(f"  EV CI half-width {Z95 * run.result.stderr():.6f}; difference CI half-width {Z95 * diff_se:.6f}")
    print(f"  the difference's CI is {run.result.stderr() / diff_se:.1f}x narrower")
    print(f"  simulated difference {diff:+.6f} (exact {exact_gap:+.6f})")


if __name__ == "__main__":
    main()
