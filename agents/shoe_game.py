"""What a shoe-game learner takes and refuses (the count-table and the composition learners): the table
and seat, the bets (``--bets``, ``--spread``), one line per problem."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from blackjack_env import engine as E
from blackjack_env.counting import parse_spread
from blackjack_env.rules import Rules


def check_table(
    rules: Rules, bets: Sequence[float], seats: int, seat: int, epsilon: float | None, chunk_rounds: int
) -> None:
    """What a shoe-game learner refuses (one line each): no cut card, a bad table or seat, a bet of 0
    with nobody else at the table, epsilon (where one explores) outside (0, 1), an empty chunk."""
    if rules.infinite or rules.penetration <= 0:
        raise ValueError(
            "the shoe game needs a shoe dealt to a cut card; these rules shuffle every round "
            "(set penetration, e.g. --set penetration=0.75)"
        )
    E.check_seats(seats, "--seats")
    E.check_seat(seat, seats, "--seat", every=True)
    if bets[0] == 0 and (seats < 2 or seat < 0):
        raise ValueError(
            "a bet of 0 sits a round out, which needs other players at the table: "
            "use --seats >= 2 with one --seat (with --seat all nobody else plays)"
        )
    if epsilon is not None and not 0.0 < epsilon < 1.0:
        raise ValueError(f"--epsilon must be in (0, 1), got {epsilon}")
    if chunk_rounds < 1:
        raise ValueError(f"chunk_rounds must be >= 1, got {chunk_rounds}")


def parse_bets(text: str) -> tuple[float, ...]:
    """--bets "1,2,4,8": increasing, >= 0 (0 sits a round out), the largest > 0."""
    try:
        bets = tuple(float(b) for b in text.split(","))
    except ValueError:
        raise ValueError(f"--bets must be increasing numbers such as 1,2,4,8, got {text!r}") from None
    if any(not math.isfinite(b) or b < 0 for b in bets):
        raise ValueError(f"--bets must be >= 0 (0 sits a round out), got {text!r}")
    if any(b2 <= b1 for b1, b2 in itertools.pairwise(bets)):
        raise ValueError(f"--bets must increase, such as 1,2,4,8, got {text!r}")
    if bets[-1] <= 0:
        raise ValueError(f"--bets needs a bet above 0, got {text!r}")
    return bets


def spread_bets(text: str) -> tuple[float, ...]:
    """--spread "1-8" as bets: the minimum, then doubling up to the maximum (1-8: 1, 2, 4, 8)."""
    low, high = parse_spread(text)
    bets = [low]
    while bets[-1] * 2 < high:
        bets.append(bets[-1] * 2)
    if bets[-1] != high:
        bets.append(high)
    return tuple(bets)
