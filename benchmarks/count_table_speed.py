"""The count-table learner's speed beside the flat simulator's, in one process on one core.

    python benchmarks/count_table_speed.py
    python benchmarks/count_table_speed.py --learner linear --seat all   # the composition learner

The issue's game (default rules at 75% penetration, 3 seats, the learner in seat 0, or in every seat with
--seat all): eight learning chunks of 262,144 rounds, then the simulator playing basic strategy at the same
table for as many rounds on one worker; three repetitions, each printing both rates and their ratio (the
machine's load moves both alike).
"""

from __future__ import annotations

import argparse
import time

from blackjack_env.agents.count_table import CountTableAgent
from blackjack_env.agents.linear import LinearAgent
from blackjack_env.counting import system
from blackjack_env.evaluate.runner import simulate
from blackjack_env.rules import Rules
from blackjack_env.simulate import Policy, Table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learner", choices=("count-table", "linear"), default="count-table")
    parser.add_argument("--seat", choices=("0", "all"), default="0", help="the learner's seat, or every seat")
    args = parser.parse_args()
    rules = Rules.preset("ultimatebet").with_settings(["penetration=0.75"])
    seat = -1 if args.seat == "all" else 0
    agent: CountTableAgent | LinearAgent
    if args.learner == "linear":
        agent = LinearAgent(rules, bets=(1, 2, 4, 8), seats=3, seat=seat, chunk_rounds=1 << 18)
    else:
        agent = CountTableAgent(rules, system("hilo"), bets=(1, 2, 4, 8), seats=3, seat=seat, chunk_rounds=1 << 18)
    basic = Policy.from_table(agent.basic_table())
    table = Table(3, 0, basic)
    agent.learn_chunk()  # compile (or load) both kernels before timing
    simulate(rules, basic, 1 << 16, 0, table=table, workers=1)
    for _ in range(3):
        start = time.perf_counter()
        rounds = sum(agent.learn_chunk()[0] for _ in range(8))
        learn = rounds / (time.perf_counter() - start)
        start = time.perf_counter()
        simulate(rules, basic, rounds, 1, table=table, workers=1)
        flat = rounds / (time.perf_counter() - start)
        print(f"learn {learn:,.0f} rounds/s  simulate(basic, 1 worker) {flat:,.0f} rounds/s  ratio {learn / flat:.2f}")


if __name__ == "__main__":
    main()
