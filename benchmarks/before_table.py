"""The lone player's simulator against the engine from before the table (commit 8ba1894), the two
run alternately: "not slower than before", measured as a ratio.

    python benchmarks/before_table.py [--rounds 4e7] [--repeats 8] [--rules ultimatebet]
    python benchmarks/before_table.py --before 0c7e627^ --workload counting   # any refactor's before/after

``--before REV`` compares this tree with any earlier commit (a refactor's "speed within noise" mark),
and ``--workload`` picks what is timed: ``flat`` basic strategy, ``counting`` (Hi-Lo 1-8 with I18 + Fab 4,
6 decks H17 DAS LS 75%) or ``paired`` (basic strategy paired with itself on identical cards).

The old engine is checked out into a temporary git worktree (this needs the repository's history)
and each run is a fresh process over one tree or the other, flat basic strategy on one core.
The size of a process's environment moves its stack, and either engine's speed moves with it by a
few percent (each way): each repeat runs the pair under its own environment size (a padding
variable, 0..4 KB), so the medians are over layouts, not one lucky or unlucky one. Absolute
figures on shared machines are noise; the ratio is the figure to compare.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from worktree import ROOT, checked_out, run_fresh

#: The last commit before the table (seats, shoes, bets) came into the engine.
BEFORE_TABLE = "8ba1894"

#: One timed run, the same code for both trees (both have this API).
RUN = """
import sys
from blackjack_env import Rules
from blackjack_env.simulate import Policy
from blackjack_env.evaluate.policies import basic_strategy_table
from blackjack_env.evaluate.runner import simulate
workload = sys.argv[3]
if workload == "counting":
    from blackjack_env.counting import built_in_strategy, spread_ramp
    rules = Rules(decks=6, hit_soft_17=True, double_after_split=True, surrender="late", penetration=0.75)
    counted = built_in_strategy("hilo-i18-fab4", True).with_ramp(spread_ramp("1-8"))
    policy = Policy.from_counting(counted, rules, basic_strategy_table(rules))
else:
    rules = Rules.preset(sys.argv[2])
    policy = Policy.from_table(basic_strategy_table(rules))
baseline = policy if workload == "paired" else None
simulate(rules, policy, 10_000, seed=1, baseline=baseline, workers=1)  # compile, or load numba's cache
rounds = int(float(sys.argv[1]))
print(rounds / simulate(rules, policy, rounds, seed=1, baseline=baseline, workers=1).seconds)
"""


#: Bytes of environment padding of repeat i: (i * PAD_STEP) % 4096 (a step prime to the page size).
PAD_STEP = 1543


def rate(tree: Path, rounds: int, rules: str, workload: str = "flat", pad: int = 0) -> float:
    """Rounds per second of one fresh process over ``tree``'s code, its environment ``pad`` bytes larger."""
    return float(run_fresh(tree, ["-c", RUN, str(rounds), rules, workload], {"BEFORE_TABLE_PAD": "x" * pad}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=float, default=4e7)
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--rules", default="ultimatebet", help="preset of the flat and paired workloads")
    parser.add_argument("--before", default=BEFORE_TABLE, help="the commit to compare with (default: before the table)")
    parser.add_argument("--workload", choices=("flat", "counting", "paired"), default="flat")
    args = parser.parse_args()
    with checked_out(args.before, "before_table") as old:
        for tree in (old, ROOT):
            rate(tree, 10_000, args.rules, args.workload)  # compile both once, outside the timed runs
        before, now = [], []
        for i in range(args.repeats):
            pad = i * PAD_STEP % 4096
            before.append(rate(old, int(args.rounds), args.rules, args.workload, pad))
            now.append(rate(ROOT, int(args.rounds), args.rules, args.workload, pad))
    b, n = statistics.median(before), statistics.median(now)
    game = "Hi-Lo 1-8 I18 + Fab 4, 6D H17 DAS LS 75%" if args.workload == "counting" else args.rules
    print(f"{args.workload} workload, {game}, 1 seat, 1 core, median of {args.repeats} alternating runs (each pair")
    print("under its own environment size):")
    for label, median, runs in ((f"before ({args.before})", b, before), ("this tree", n, now)):
        listed = ", ".join(f"{x / 1e6:.2f}" for x in runs)
        print(f"  {label:26s} {median / 1e6:6.2f} M rounds/s  (runs {listed})")
    pairs = sorted(x / y for x, y in zip(now, before, strict=True))
    print(f"  this tree / before = {n / b:.2f} (the mark: >= 1.00); pair by pair {pairs[0]:.2f}-{pairs[-1]:.2f}")


if __name__ == "__main__":
    main()
