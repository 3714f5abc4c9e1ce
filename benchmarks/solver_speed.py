"""Timings of the exact analysis: an infinite deck and a 6-deck rule set, cold and warm.

    python benchmarks/solver_speed.py [--rules ultimatebet] [--decks 6]

"cold" is the first analysis of a shoe size in a fresh process (every dealer outcome computed),
"warm" a second rule set on the same shoe (dealer outcomes shared), "cached" a solve() that reads
the disk cache. Numba compilation is excluded by a warm-up on a tiny case. Tests never assert
these figures; they belong in the speed note.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable

from blackjack_env.rules import Rules
from blackjack_env.solver import solve
from blackjack_env.solver._analysis import analyse, clear_dealer_caches


def timed(label: str, fn: Callable[[], float]) -> float:
    start = time.perf_counter()
    value = fn()
    seconds = time.perf_counter() - start
    print(f"{label:<52} {seconds:8.3f} s   EV {value:+.6f}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description="Timings of the exact analysis.")
    parser.add_argument("--rules", default="ultimatebet", help="rules preset for the finite-shoe timing")
    parser.add_argument("--decks", type=int, default=6)
    args = parser.parse_args()
    os.environ["BLACKJACK_ENV_CACHE"] = tempfile.mkdtemp(prefix="bj-solver-speed-")
    analyse(Rules(decks=0))  # compile everything once
    clear_dealer_caches()
    print(f"cpus: {os.cpu_count()}")
    infinite = Rules.preset(args.rules).replace(decks=0)
    timed(f"{infinite.describe()}", lambda: analyse(infinite).ev)
    finite = Rules.preset(args.rules).replace(decks=args.decks)
    timed(f"{finite.describe()}, cold", lambda: analyse(finite).ev)
    variant = finite.replace(double_after_split=not finite.double_after_split)
    timed(f"{variant.describe()}, warm", lambda: analyse(variant).ev)
    solve(finite)
    timed("solve() again, from the disk cache", lambda: solve(finite).ev)


if __name__ == "__main__":
    main()
