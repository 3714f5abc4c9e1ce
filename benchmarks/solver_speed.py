"""Timings of the exact analysis: an infinite deck and a 6-deck rule set, cold and warm.

    python benchmarks/solver_speed.py [--rules ultimatebet] [--decks 6]
    python benchmarks/solver_speed.py --before REV [--repeats 6]

"cold" is the first analysis of a shoe size in a fresh process (every dealer outcome computed),
"warm" a second rule set on the same shoe (dealer outcomes shared), then a table evaluated and the
composition-dependent EV on that shoe (the backward pass's other two modes), "cached" a solve() that
reads the disk cache. Numba compilation is excluded by a warm-up on a tiny case. Tests never assert
these figures; they belong in the speed note.

--before REV times the code of git revision REV (checked out into a temporary worktree) and the
working tree alternately, each run a fresh process, and prints each timing's median ratio of CPU
seconds (this tree / REV): on a shared machine absolute figures are noise, the ratio is the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from worktree import ROOT, checked_out, run_fresh


def timed(label: str, fn: Callable[[], float], seconds: dict[str, float], quiet: bool) -> None:
    """Run ``fn`` (it returns an EV), keep its CPU seconds under ``label`` and print the wall time."""
    start, cpu = time.perf_counter(), time.process_time()
    value = fn()
    seconds[label] = time.process_time() - cpu
    if not quiet:
        print(f"{label:<52} {time.perf_counter() - start:8.3f} s   EV {value:+.6f}")


def measure(rules_name: str, decks: int, quiet: bool = False) -> dict[str, float]:
    """CPU seconds of each timing, in this process (whichever blackjack_env it imports)."""
    from blackjack_env.rules import Rules
    from blackjack_env.solver import solve
    from blackjack_env.solver._analysis import analyse, clear_dealer_caches, composition_ev

    os.environ["BLACKJACK_ENV_CACHE"] = tempfile.mkdtemp(prefix="bj-solver-speed-")
    analyse(Rules(decks=0))  # compile everything once
    composition_ev(Rules(decks=0))
    clear_dealer_caches()
    if not quiet:
        print(f"cpus: {os.cpu_count()}")
    seconds: dict[str, float] = {}
    infinite = Rules.preset(rules_name).replace(decks=0)
    timed(f"{infinite.describe()}", lambda: analyse(infinite).ev, seconds, quiet)
    finite = Rules.preset(rules_name).replace(decks=decks)
    timed(f"{finite.describe()}, cold", lambda: analyse(finite).ev, seconds, quiet)
    variant = finite.replace(double_after_split=not finite.double_after_split)
    timed(f"{variant.describe()}, warm", lambda: analyse(variant).ev, seconds, quiet)
    table = solve(variant).table
    timed(f"{finite.describe()}, evaluate a table, warm", lambda: analyse(finite, table).ev, seconds, quiet)
    timed(f"{finite.describe()}, composition EV, warm", lambda: composition_ev(finite), seconds, quiet)
    solve(finite)
    timed("solve() again, from the disk cache", lambda: solve(finite).ev, seconds, quiet)
    return seconds


def run_tree(tree: Path, args: argparse.Namespace) -> dict[str, float]:
    """One fresh process timing ``tree``'s code (its blackjack_env first on the path)."""
    return json.loads(run_fresh(tree, [__file__, "--rules", args.rules, "--decks", str(args.decks), "--json"]))


def compare(args: argparse.Namespace) -> None:
    """Alternate runs over REV's code and this tree's, then print the median CPU-time ratios."""
    with checked_out(args.before, "solver_speed") as old:
        trees = {"before": old, "after": ROOT}
        for tree in trees.values():
            run_tree(tree, args)  # compile (or load numba's cache) outside the timed runs
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for i in range(args.repeats):
            order = list(trees) if i % 2 == 0 else list(trees)[::-1]
            for name in order:
                runs[name].append(run_tree(trees[name], args))
    print(f"{'CPU seconds, medians of ' + str(args.repeats):<52} {'before':>8} {'after':>8} {'ratio':>6}")
    for label in runs["after"][0]:
        before = statistics.median(r[label] for r in runs["before"])
        after = statistics.median(r[label] for r in runs["after"])
        ratios = [a[label] / b[label] for a, b in zip(runs["after"], runs["before"], strict=True) if b[label] > 0]
        ratio = statistics.median(ratios) if ratios else float("nan")
        print(f"{label:<52} {before:8.3f} {after:8.3f} {ratio:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description="Timings of the exact analysis.")
    parser.add_argument("--rules", default="ultimatebet", help="rules preset for the finite-shoe timing")
    parser.add_argument("--decks", type=int, default=6)
    parser.add_argument("--before", metavar="REV", help="compare with git revision REV's code (a ratio)")
    parser.add_argument("--repeats", type=int, default=6, help="runs of each tree with --before")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.before:
        compare(args)
    elif args.json:
        print(json.dumps(measure(args.rules, args.decks, quiet=True)))
    else:
        measure(args.rules, args.decks)


if __name__ == "__main__":
    main()
