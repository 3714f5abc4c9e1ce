"""Rounds per second of a Hi-Lo counting simulation (the 1-8 ramp and I18 + Fab 4, one seat)
against flat-betting basic strategy in the same run, on one core and on two.

    python benchmarks/counting_speed.py [--rounds 4e7] [--repeats 3]

The issue's marks: counting >= 0.8x flat basic strategy's rounds per second (1 core), and the
counting run >= 1.8x faster on two cores than on one. Each figure is the median of ``--repeats``
runs, flat and counting interleaved so that a busy machine slows both alike. Absolute figures on
shared machines are noise; compare the ratios.
"""

from __future__ import annotations

import argparse
import statistics

from blackjack_env import Rules
from blackjack_env.counting import built_in_strategy, spread_ramp
from blackjack_env.simulate import Policy
from evaluate.policies import basic_strategy_table
from evaluate.runner import simulate

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
    flat = Policy.from_table(basic)
    counting = Policy.from_counting(
        built_in_strategy("hilo-i18-fab4", RULES.hit_soft_17).with_ramp(spread_ramp("1-8")), RULES, basic
    )
    for policy in (flat, counting):
        rate(RULES, policy, 10_000, 1)  # compile (or load numba's cache) before timing
    rates: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.repeats):
        for workers in (1, 2):
            for name, policy in (("flat", flat), ("counting", counting)):
                rates.setdefault((name, workers), []).append(rate(RULES, policy, rounds, workers))
    median = {key: statistics.median(values) for key, values in rates.items()}
    print(f"{RULES.describe()}, {rounds:,} rounds per run, median of {args.repeats}:")
    for workers in (1, 2):
        f, c = median[("flat", workers)], median[("counting", workers)]
        print(
            f"  {workers} core{'s' if workers > 1 else ' '}: flat basic {f / 1e6:6.2f} M rounds/s, "
            f"Hi-Lo 1-8 + I18/Fab 4 {c / 1e6:6.2f} M rounds/s; counting / flat = {c / f:.2f}"
        )
    scaling = median[("counting", 2)] / median[("counting", 1)]
    print(f"  counting on 2 cores / 1 core = {scaling:.2f}")


if __name__ == "__main__":
    main()
