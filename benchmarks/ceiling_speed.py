"""The ceiling's per-shoe cost: one exact shoe analysis (``ceiling.shoe_values``), this tree beside another.

    python benchmarks/ceiling_speed.py [--samples 8] [--seed 0]
    python benchmarks/ceiling_speed.py --before REV [--samples 8] [--repeats 3]

The shoes are the ceiling's own for 6 decks H17 DAS LS split to 4 hands, 75% penetration, one seat
(the first ``--samples`` of its stratified design: half of them from its top strata, where the
re-optimised table differs most from basic strategy). Each is analysed as the ceiling does (basic
strategy's EV, the best table's, and, on every other shoe, the in-round part). Numba compilation is
excluded by a warm-up on a one-deck shoe.

--before REV runs REV's code (a temporary git worktree) and this tree's alternately, each run a fresh
process on the same shoes (written to a file by this process), prints the median CPU seconds per
shoe of each and their ratio, and checks that both trees computed every value bit for bit alike (the
columns both have: a newer tree may add some). On
a shared machine absolute figures are noise; the ratio is the figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from worktree import ROOT, checked_out, run_fresh

GAME = {"decks": 6, "hit_soft_17": True, "double_after_split": True, "split_to": 4, "surrender": "late",
        "penetration": 0.75}  # fmt: skip


def ceiling_shoes(samples: int, seed: int) -> np.ndarray:
    """The first ``samples`` shoes of the ceiling's design for GAME (its analysis order)."""
    from blackjack_env.rules import Rules
    from blackjack_env.solver import solve
    from blackjack_env.solver.ceiling import POOL_PER_SAMPLE, Design, gain_proxy, n_strata, record_shoes

    rules = Rules(**GAME)
    basic = solve(rules).table
    recording = record_shoes(rules, basic, POOL_PER_SAMPLE * samples, seed, min_rounds=1)
    design = Design.stratified(gain_proxy(rules, recording.shoes), samples, n_strata(samples))
    return recording.shoes[design.chosen]


def measure(shoes: np.ndarray) -> dict[str, list]:
    """CPU seconds and values of each shoe's analysis, in this process (whichever blackjack_env it imports)."""
    from blackjack_env.rules import Rules
    from blackjack_env.solver import solve
    from blackjack_env.solver.ceiling import shoe_values

    small = Rules(decks=1, split_to=2, penetration=0.5)
    shoe_values(small, np.array([3.0] * 9 + [12.0]), solve(small).table, in_round=True)  # compile
    rules = Rules(**GAME)
    basic = solve(rules).table
    seconds, values = [], []
    for i, shoe in enumerate(shoes):
        cpu = time.process_time()
        values.append(shoe_values(rules, shoe, basic, in_round=i % 2 == 0).tolist())
        seconds.append(time.process_time() - cpu)
    return {"seconds": seconds, "values": values}


def run_tree(tree: Path, shoes: Path) -> dict[str, list]:
    """One fresh process analysing the shoes with ``tree``'s code (its blackjack_env first on the path)."""
    return json.loads(run_fresh(tree, [__file__, "--measure", str(shoes)]))


def compare(args: argparse.Namespace) -> None:
    """Alternate REV's code and this tree's on the same shoes; the median CPU seconds per shoe and the ratio."""
    shoes = ceiling_shoes(args.samples, args.seed)
    with tempfile.TemporaryDirectory() as scratch, checked_out(args.before, "ceiling_speed") as old:
        path = Path(scratch) / "shoes.npy"
        np.save(path, shoes)
        trees = {"before": old, "after": ROOT}
        runs: dict[str, list[dict[str, list]]] = {name: [] for name in trees}
        for i in range(args.repeats):
            for name in list(trees) if i % 2 == 0 else list(trees)[::-1]:
                runs[name].append(run_tree(trees[name], path))
    before = np.array(runs["before"][0]["values"])
    after = np.array(runs["after"][0]["values"])[:, : before.shape[1]]  # a newer tree may add columns
    same = bool(np.array_equal(before, after, equal_nan=True))
    per_shoe = {name: statistics.median(sum(r["seconds"]) / len(shoes) for r in rs) for name, rs in runs.items()}
    ratios = [sum(a["seconds"]) / sum(b["seconds"]) for a, b in zip(runs["after"], runs["before"], strict=True)]
    print(f"{len(shoes)} shoes of the ceiling's design (6D H17 DAS SP4 LS, pen 0.75, seed {args.seed}), "
          f"{args.repeats} runs of each tree alternately; CPU seconds per shoe, medians")  # fmt: skip
    print(f"  before ({args.before}): {per_shoe['before']:.3f} s ({1 / per_shoe['before']:.2f} shoes/s)")
    print(f"  after (this tree):  {per_shoe['after']:.3f} s ({1 / per_shoe['after']:.2f} shoes/s)")
    print(f"  ratio after / before: {statistics.median(ratios):.2f} (per run: {', '.join(f'{r:.2f}' for r in ratios)})")
    print(f"  values bit for bit identical: {same}")
    if not same:
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=8, help="shoes of the ceiling's design to analyse")
    parser.add_argument("--seed", type=int, default=0, help="the ceiling's seed")
    parser.add_argument("--before", metavar="REV", help="compare with git revision REV's code (a ratio)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each tree with --before")
    parser.add_argument("--measure", metavar="SHOES", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.samples < 1 or args.repeats < 1:
        parser.error(f"--samples and --repeats must be at least 1, got {args.samples} and {args.repeats}")
    if args.measure:
        print(json.dumps(measure(np.load(args.measure))))
    elif args.before:
        compare(args)
    else:
        out = measure(ceiling_shoes(args.samples, args.seed))
        for seconds, values in zip(out["seconds"], out["values"], strict=True):
            print(f"{seconds:7.3f} s  basic {values[0]:+.6f}  best {values[1]:+.6f}  cells changed {values[5]:.0f}")
        print(f"{len(out['seconds']) / sum(out['seconds']):.2f} shoes per CPU second")


if __name__ == "__main__":
    main()
