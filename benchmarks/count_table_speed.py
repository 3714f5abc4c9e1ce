"""The count-table learner's speed beside the flat simulator's, in one process on one core.

    python benchmarks/count_table_speed.py
    python benchmarks/count_table_speed.py --learner linear --seat all   # the composition learner

The game (default rules at 75% penetration, 3 seats (--seats), the learner in seat 0, or in every seat with
--seat all): eight learning chunks of 262,144 rounds, then the simulator playing basic strategy at the same
table for as many rounds on one worker; three repetitions (--repeats), each printing both rates and their
ratio (the machine's load moves both alike), and the same on the CPU time the process got (thread_time: what
other processes take from it left out) with the 1-minute load average. --skip N first learns N chunks untimed
(the speed later in a run).
"""

from __future__ import annotations

import argparse
import os
import time

from shoe_learners import add_learner_options, benchmark_learner

from blackjack_env.evaluate.runner import simulate
from blackjack_env.simulate import Policy, Table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_learner_options(parser)
    parser.add_argument("--repeats", type=int, default=3, help="repetitions (each: learn, then simulate)")
    parser.add_argument(
        "--skip", type=int, default=0, help="chunks learned before the timing starts (a run's later, trained speed)"
    )
    args = parser.parse_args()
    agent = benchmark_learner(args.learner, args.seat, args.seats)
    rules = agent.rules
    basic = Policy.from_table(agent.basic_table())
    table = Table(args.seats, 0, basic)
    for _ in range(1 + args.skip):  # compile (or load) both kernels before timing
        agent.learn_chunk()
    simulate(rules, basic, 1 << 16, 0, table=table, workers=1)
    for _ in range(args.repeats):
        start, cpu = time.perf_counter(), time.thread_time()
        rounds = sum(agent.learn_chunk()[0] for _ in range(8))
        learn, learn_cpu = rounds / (time.perf_counter() - start), rounds / (time.thread_time() - cpu)
        start, cpu = time.perf_counter(), time.thread_time()
        simulate(rules, basic, rounds, 1, table=table, workers=1)
        flat, flat_cpu = rounds / (time.perf_counter() - start), rounds / (time.thread_time() - cpu)
        print(
            f"learn {learn:,.0f} rounds/s  simulate(basic, 1 worker) {flat:,.0f} rounds/s  ratio {learn / flat:.2f}"
            f"  (on the CPU: {learn_cpu:,.0f} / {flat_cpu:,.0f} = {learn_cpu / flat_cpu:.2f}; "
            f"load {os.getloadavg()[0]:.1f})",
            flush=True,
        )


if __name__ == "__main__":
    main()
