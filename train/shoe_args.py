"""The shoe game's command-line values (``--bets``/``--spread``, ``--seat``), read and checked in one place
for every learner of ``blackjack-train --env shoe`` (count-table, composition, PPO) and for ``--ceiling``;
``--system`` is read by :func:`blackjack_env.counting.load_system`."""

from __future__ import annotations

from dataclasses import dataclass

from blackjack_env.agents.shoe_game import parse_bets, spread_bets
from blackjack_env.engine import check_seat, check_seats


def bets_of(bets: str, spread: str) -> tuple[float, ...]:
    """The allowed bets from --bets or --spread (not both); default 1, 2, 4, 8."""
    if bets and spread:
        raise ValueError("give --bets or --spread, not both")
    if spread:
        return spread_bets(spread)
    return parse_bets(bets or "1,2,4,8")


def seat_of(text: str, seats: int) -> int:
    """--seat K (0..seats-1) or all (-1)."""
    if text == "all":
        return -1
    try:
        seat = int(text)
    except ValueError:
        seat = -1
    # every seat (-1) is spelled all: a negative number or a word is refused as given
    return check_seat(seat if seat >= 0 else text, seats, "--seat", every=True)


@dataclass(frozen=True)
class ShoeGame:
    """A shoe learner's table: its allowed bets, the boxes at the table, and its own (-1: every box)."""

    bets: tuple[float, ...]
    seats: int = 1
    seat: int = 0


def shoe_game_of(bets: str, spread: str, seats: int, seat: str) -> ShoeGame:
    """The shoe game from --bets / --spread, --seats and --seat, checked in that order (one line each)."""
    check_seats(seats, "--seats")
    return ShoeGame(bets_of(bets, spread), seats, seat_of(seat, seats))
