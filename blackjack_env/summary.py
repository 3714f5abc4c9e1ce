"""A round as plain Python: each seat's hands, insurance and result, and the dealer's cards.

The house's view (the hole card included), read from a table's state arrays once a round is over or
a picture is drawn: the single envs' ``info`` and ``round_summary()``, the PettingZoo table's and
the pictures (``blackjack_env.render``) all take their words and numbers from here, so none of
them imports another to describe a round.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import engine as E
from .cards import card_names
from .rules import MAX_HANDS
from .slots import View, seat_outcome_fields

_STATUS_NAMES = {
    E.HS_WAIT: "waiting",
    E.HS_PLAY: "playing",
    E.HS_STOOD: "stood",
    E.HS_BUST: "bust",
    E.HS_SURRENDERED: "surrendered",
}
_INSURANCE_NAMES = {
    E.INS_NONE: "not offered",
    E.INS_PENDING: "offered",
    E.INS_TAKEN: "taken",
    E.INS_DECLINED: "declined",
    E.INS_EVEN_MONEY: "even money",
}


def _best_total(hard: int, aces: int) -> int:
    """``engine.best_total`` in plain Python, for summaries (a compiled call costs more from Python)."""
    return hard + 10 if aces and hard + 10 <= 21 else hard


def seat_summary(st: np.ndarray, hands: np.ndarray, res: np.ndarray, s: int) -> dict[str, Any]:
    """Seat s's hands, insurance and result (per unit of its bet), from its block (read as Python
    lists once: this runs at the end of every episode); the single envs' and the PettingZoo
    table's round summaries."""
    n_hands, insurance, active = seat_outcome_fields(st, s)
    rows = hands[s * MAX_HANDS : s * MAX_HANDS + n_hands].tolist()
    results = res[s * E.RES_SIZE : (s + 1) * E.RES_SIZE].tolist()
    return {
        "seat": s,
        "playing": bool(active),
        "hands": [
            {
                "cards": card_names(row[E.H_CARDS : E.H_CARDS + row[E.H_N]]),
                "total": _best_total(row[E.H_HARD], row[E.H_ACES]),
                "bet": float(row[E.H_BET]),
                "doubled": bool(row[E.H_DOUBLED]),
                "split": bool(row[E.H_SPLIT]),
                "status": _STATUS_NAMES[row[E.H_STATUS]],
                "result": results[i],
            }
            for i, row in enumerate(rows)
        ],
        "insurance": results[E.RES_INSURANCE],
        "insurance_state": _INSURANCE_NAMES[insurance],
        "result": results[E.RES_TOTAL],
    }


def dealer_summary(st: np.ndarray) -> dict[str, Any]:
    """The dealer's cards and total, hole card included (the summaries are the house's view)."""
    codes, hard, aces = View(st).dealer()
    return {"cards": card_names(codes), "total": _best_total(hard, aces)}
