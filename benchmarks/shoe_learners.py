"""The shoe learner the speed benchmarks time, built one way for all of them.

Shared by count_table_speed.py and train_scaling.py (run as scripts, so this folder is on ``sys.path``):
the game (default rules at 75% penetration, 3 seats unless --seats), bets 1, 2, 4, 8, chunks of 262,144 rounds,
the learner in seat 0 or in every seat.
"""

from __future__ import annotations

import argparse

from blackjack_env.agents.count_table import CountTableAgent
from blackjack_env.agents.linear import LinearAgent
from blackjack_env.counting import system
from blackjack_env.rules import Rules


def add_learner_options(parser: argparse.ArgumentParser) -> None:
    """--learner and --seat: which learner, and where it sits."""
    parser.add_argument("--learner", choices=("count-table", "linear"), default="count-table")
    parser.add_argument("--seat", choices=("0", "all"), default="0", help="the learner's seat, or every seat")
    parser.add_argument(
        "--seats",
        type=int,
        choices=range(1, 8),
        default=3,
        help="boxes at the table (default 3; blackjack-train's is 1)",
    )


def benchmark_learner(learner: str, seat: str, seats: int = 3) -> CountTableAgent | LinearAgent:
    """A fresh learner (``learner``: count-table or linear; ``seat``: "0" or "all") in the benchmark
    game at a table of ``seats``."""
    rules = Rules.preset("ultimatebet").with_settings(["penetration=0.75"])
    where = -1 if seat == "all" else 0
    if learner == "linear":
        return LinearAgent(rules, bets=(1, 2, 4, 8), seats=seats, seat=where, chunk_rounds=1 << 18)
    return CountTableAgent(rules, system("hilo"), bets=(1, 2, 4, 8), seats=seats, seat=where, chunk_rounds=1 << 18)
