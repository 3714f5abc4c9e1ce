"""Rounds per second of Hi-Lo counting simulations (the 1-8 ramp with the Illustrious 18, and with
I18 + Fab 4; one seat) against flat-betting basic strategy in the same run, on one core and on two.

    python benchmarks/counting_speed.py [--rounds 4e7] [--repeats 3]

The marks, for "ramp, I18, one seat": counting >= 0.8x flat basic strategy's rounds per
second (1 core), and the counting run >= 1.8x faster on two cores than on one; the I18 + Fab 4
strategy (the must-show figures' one) is timed beside it. Each figure is the median of
``--repeats`` runs, the policies interleaved so that a busy machine slows them alike. Absolute
figures on shared machines are noise; compare the ratios.
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import replace

from blackjack_env import Rules
from blackjack_env.counting import ILLUSTRIOUS_18, built_in_strategy, spread_ramp
from blackjack_env.evaluate.policies import basic_strategy_table
from blackjack_env.evaluate.runner import simulate
from blackjack_env.simulate import Policy

#: The must-show game: 6 decks, H17, DAS, late surrender, 75% penetration.
RULES = Rules(decks=6, hit_soft_17=True, double_after_split=True, surrender="late", penetration=0.75)


def rate(rules: Rules, policy: Policy, rounds: int, workers: int) -> float:
    outcome = simulate(rules, policy, rounds, seed=1, workers=workers)
    return rounds / outcome.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=float, default=4e7)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rounds = int(args.rounds)
    basic = basic_strategy_table(RULES)
    i18_fab4 = built_in_strategy("hilo-i18-fab4", RULES.hit_soft_17).with_ramp(spread_ramp("1-8"))
    i18 = replace(i18_fab4, indices=i18_fab4.indices[: len(ILLUSTRIOUS_18)], name="hilo-i18")  # listed first
    policies = {
        "flat": Policy.from_table(basic),
        "I18": Policy.from_counting(i18, RULES, basic),
        "I18 + Fab 4": Policy.from_counting(i18_fab4, RULES, basic),
    }
    for policy in policies.values():
        rate(RULES, policy, 10_000, 1)  # compile (or load numba's cache) before timing
    rates: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.repeats):
        for workers in (1, 2):
            for name, policy in policies.items():
                rates.setdefault((name, workers), []).append(rate(RULES, policy, rounds, workers))
    median = {key: statistics.median(values) for key, values in rates.items()}
    print(f"{RULES.describe()}, {rounds:,} rounds per run, median of {args.repeats}:")
    for workers in (1, 2):
        flat = median[("flat", workers)]
        counted = ", ".join(
            f"Hi-Lo 1-8 + {name} {median[(name, workers)] / 1e6:5.2f} M ({median[(name, workers)] / flat:.2f}x)"
            for name in ("I18", "I18 + Fab 4")
        )
        print(f"  {workers} core{'s' if workers > 1 else ' '}: flat basic {flat / 1e6:5.2f} M rounds/s; {counted}")
    for name in ("I18", "I18 + Fab 4"):
        print(f"  Hi-Lo 1-8 + {name} on 2 cores / 1 core = {median[(name, 2)] / median[(name, 1)]:.2f}")


if __name__ == "__main__":
    main()
