"""The perfect bettor's SD: exact beside the ceiling's approximation, in games without splits.

    python benchmarks/ceiling_sd.py [--samples 200] [--workers 2]

In a game with splits the ceiling's SD of the perfect bettor is approximate (E[bet^2] times the
simulated second moment of a flat-bet round: a round's spread taken as the same on every shoe),
because the solver's split model gives a split round no second moment. Without splits each shoe's
E[X^2] is exact (``solver.moments``), so the ceiling reports both there; this prints them side by side
for the must-show game without splits (6 decks H17 DAS LS, 75% penetration; the ceiling's stratified
shoes) and a deep double deck (half dealt; plain sampling: the strata's extreme shoes can hold fewer
than the solver's 8 ten-value cards), one seat, bets 1-8 and 1-4: how far the approximation is off
where it can be checked.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from blackjack_env import Rules
from blackjack_env.solver import ceiling

#: name: (rules, strata)
GAMES = {
    "6D H17 DAS LS no split, pen 0.75": (
        Rules(decks=6, hit_soft_17=True, double_after_split=True, split_to=1, surrender="late", penetration=0.75),
        8,
    ),
    "2D H17 LS no split, pen 0.5": (
        Rules(decks=2, hit_soft_17=True, split_to=1, surrender="late", penetration=0.5),
        1,
    ),
}
BETS = ((1.0, 8.0), (1.0, 4.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200, help="shoes per game (stratified, as the ceiling)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=None, help="also write the figures to this JSON file")
    parser.add_argument("--only", default=None, help="only the games whose name holds this text, e.g. 2D")
    args = parser.parse_args()
    rows = []
    for name, (rules, strata) in GAMES.items():
        if args.only and args.only not in name:
            continue
        result = ceiling(rules, samples=args.samples, seed=args.seed, workers=args.workers, strata=strata, cache=False)
        for bets in BETS:
            b = result.bettor(bets)
            rows.append({"game": name, "samples": result.samples, "bets": list(bets), "ev": b["ev"],
                         "sd_exact": b["sd"], "sd_method": b["sd_method"], "sd_approximate": b["sd_approximate"],
                         "ratio": b["sd_approximate"] / b["sd"]})  # fmt: skip
            r = rows[-1]
            print(f"{name}, {r['samples']} shoes, bets {bets[0]:g}-{bets[1]:g}: win/100 {100 * r['ev']:+.3f}; "
                  f"SD exact {r['sd_exact']:.4f}, approximate {r['sd_approximate']:.4f} "
                  f"(approximate / exact {r['ratio']:.4f})", flush=True)  # fmt: skip
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
