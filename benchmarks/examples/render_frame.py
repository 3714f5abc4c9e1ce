"""The README's picture of the table: one rgb_array frame of a 3-seat PettingZoo table, mid-round.

python benchmarks/examples/render_frame.py benchmarks/results/table-frame.png
"""

from __future__ import annotations

import argparse

from PIL import Image

from blackjack_env import Action
from blackjack_env.multiagent import raw_env


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the PNG to write")
    args = parser.parse_args(argv)
    table = raw_env(seats=3, game="shoe", bets=(1, 2, 5), render_mode="rgb_array")
    # seats 0-2 bet 1, 5, 2; deal 8,8 / 10,6 / A,7 against a 6 (9 in the hole); seat 0 splits its 8s
    table.reset(seed=0, options={"cards": ["8", "10", "A", "6", "8", "6", "7", "9", "3", "K"]})
    for bet in (7, 9, 8):
        table.step(bet)
    table.step(Action.SPLIT)  # seat 0's first 8 gets the 3: its 11 is the acting hand
    Image.fromarray(table.render()).save(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
