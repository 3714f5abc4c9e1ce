"""A table's state by name: the one place outside the engine and the table driver that knows its slots.

The kernels read and write a table's ``st`` (``engine``'s int64 slots) through the small functions here,
so the slot layout stays the engine's business and a reader sees ``phase(st)``, not ``st[0]``. Each is
inlined by LLVM (``forceinline``, as ``engine.seat_slot``): a call to a callee loaded from numba's cache
is otherwise kept, and would cost a hot loop more than its work. Python code (the adapters, the
summaries, the pictures) reads and writes the same slots through :class:`View`'s properties, which work on
one table's state or on a batch's (``st[..., slot]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import engine as E
from ._jit import njit


# ============================================================================= the kernels' accessors
@njit(cache=True, _nrt=False, forceinline=True)
def phase(st):
    """The round's phase (``engine.P_*``)."""
    return st[E.S_PHASE]


@njit(cache=True, _nrt=False, forceinline=True)
def natural(st):
    """Whether the acting seat was dealt a natural (the insurance question's row)."""
    return st[E.S_NATURAL]


@njit(cache=True, _nrt=False, forceinline=True)
def acting_hands(st):
    """The acting seat's hands this round."""
    return st[E.S_NUM_HANDS]


@njit(cache=True, _nrt=False, forceinline=True)
def insurance(st):
    """The acting seat's insurance state (``engine.INS_*``)."""
    return st[E.S_INS]


@njit(cache=True, _nrt=False, forceinline=True)
def current_row(st):
    """The acting seat's current hand: its row in ``hands``."""
    return st[E.S_CUR]


@njit(cache=True, _nrt=False, forceinline=True)
def hole_card(st):
    """The dealer's hole card while it is face down (its code), else 0."""
    return st[E.S_DEALER + 1] if st[E.S_HOLE_HIDDEN] else 0


@njit(cache=True, _nrt=False, forceinline=True)
def cards_left(st, code):
    """Cards of ``code`` (1..13) still in the shoe (a face-down hole card counts as dealt)."""
    return st[E.S_COUNTS + code]


@njit(cache=True, _nrt=False, forceinline=True)
def cards_dealt(st):
    """The shoe's position: cards dealt from it."""
    return st[E.S_SHOE_POS]


@njit(cache=True, _nrt=False, forceinline=True)
def shoe_left(st):
    """Cards not yet dealt from the shoe."""
    return st[E.S_SHOE_LEN] - st[E.S_SHOE_POS]


@njit(cache=True, _nrt=False, forceinline=True)
def unseen_cards(st):
    """Cards no player has seen: the shoe's and a face-down hole card."""
    return st[E.S_SHOE_LEN] - st[E.S_SHOE_POS] + (st[E.S_HOLE_HIDDEN] != 0)


@njit(cache=True, _nrt=False)
def hilo_state(st):
    """(Hi-Lo running count, cards unseen) in one compiled call: a shoe env's info reads both on
    every step, and Python's slot reads and sum beside a compiled count cost that step more."""
    unseen = np.int64(st[E.S_HOLE_HIDDEN] != 0)
    for code in range(1, 14):
        unseen += st[E.S_COUNTS + code]
    return -E.unseen_tags(E.HILO_TAGS, 0, st), unseen


@njit(cache=True, _nrt=False, forceinline=True)
def shuffles(st):
    """Shoes begun since the table was cleared."""
    return st[E.S_SHUFFLES]


@njit(cache=True, _nrt=False, forceinline=True)
def round_start(st):
    """The shoe's position when this round was dealt."""
    return st[E.S_ROUND_START]


@njit(cache=True, _nrt=False, forceinline=True)
def mid_shuffle(st):
    """The shoe ran out during this round and the discards were reshuffled."""
    return st[E.S_MID_SHUFFLE]


@njit(cache=True, _nrt=False, forceinline=True)
def set_fixed_end(st, end):
    """``shoe[pos:end]`` is already in deal order (a paired replay): drawn without swaps."""
    st[E.S_FIXED_END] = end


@njit(cache=True, _nrt=False, forceinline=True)
def set_reward_mode(st, mode):
    """The reward paid: ``engine.REWARD_SAMPLED`` or ``REWARD_EXPECTED``."""
    st[E.S_REWARD_MODE] = mode


@njit(cache=True, _nrt=False, forceinline=True)
def save_rng(st, words):
    """The card generator's state, copied into ``words[:4]``."""
    for k in range(4):
        words[k] = st[E.S_RNG + k]


@njit(cache=True, _nrt=False, forceinline=True)
def restore_rng(st, words):
    """The card generator's state, set back from ``words[:4]``."""
    for k in range(4):
        st[E.S_RNG + k] = words[k]


@njit(cache=True, _nrt=False, forceinline=True)
def put_back(st, shoe, start, end):
    """The cards dealt since shoe position ``start`` back in the shoe, in deal order, to be dealt
    again up to ``end`` (a paired replay of the round)."""
    for i in range(start, st[E.S_SHOE_POS]):
        st[E.S_COUNTS + shoe[i]] += 1
    st[E.S_SHOE_POS] = start
    st[E.S_FIXED_END] = end


@njit(cache=True, _nrt=False, forceinline=True)
def seat_hands(st, s):
    """Seat s's hands this round (from its block: current for every seat after ``engine.save_seat``)."""
    return st[E.seat_slot(s, E.SEAT_NUM_HANDS)]


@njit(cache=True, _nrt=False, forceinline=True)
def seat_natural(st, s):
    """Whether seat s was dealt a natural (from its block)."""
    return st[E.seat_slot(s, E.SEAT_NATURAL)]


@njit(cache=True, _nrt=False, forceinline=True)
def seat_insurance(st, s):
    """Seat s's insurance state (``engine.INS_*``, from its block)."""
    return st[E.seat_slot(s, E.SEAT_INS)]


@njit(cache=True, _nrt=False, forceinline=True)
def set_seat_active(st, s, active):
    """Seat s plays the coming round (0: it sits out and is dealt no cards)."""
    st[E.seat_slot(s, E.SEAT_ACTIVE)] = active


@njit(cache=True, _nrt=False, forceinline=True)
def set_seat_policy(st, s, p):
    """Which of the driver's policies plays seat s (``table.play_until``)."""
    st[E.seat_slot(s, E.SEAT_POLICY)] = p


# ============================================================================= Python's view
def _seat_block(st: np.ndarray, s: int) -> list[int]:
    """Seat s's block of one table's state as Python ints (plain arithmetic: a compiled call from
    Python would compile)."""
    base = E.S_SEAT_BASE + s * E.SEAT_FIELDS
    return st[base : base + E.SEAT_FIELDS].tolist()


def seat_outcome_fields(st: np.ndarray, s: int) -> tuple[int, int, int]:
    """Seat s's (hands this round, insurance state, whether it plays): what every episode's summary
    reads, without a ``View`` and a dict of the whole block."""
    block = _seat_block(st, s)
    return block[E.SEAT_NUM_HANDS], block[E.SEAT_INS], block[E.SEAT_ACTIVE]


def _slot(index: int, doc: str) -> Any:
    """A read-write property over one slot of ``View.st`` (of every table of a batch)."""

    def get(self: View) -> Any:
        st = self.st
        # one table's slot as a Python int (an env's step reads several: a numpy scalar and its
        # comparisons cost several times more), a batch's as a column
        return st.item(index) if st.ndim == 1 else st[:, index]

    def put(self: View, value: Any) -> None:
        self.st[..., index] = value

    return property(get, put, doc=doc)


class View:
    """Named slots of a table's state for Python code: ``View(st).phase``, ``View(st).agent = 2``.

    ``st`` is one table's state (a property reads a Python int) or a batch's, one row a table (a
    property reads, and writes, a column)."""

    __slots__ = ("st",)

    def __init__(self, st: np.ndarray) -> None:
        self.st = st

    phase = _slot(E.S_PHASE, "The round's phase (engine.P_*).")
    acting_seat = _slot(E.S_SEAT, "The seat that acts now.")
    current_row = _slot(E.S_CUR, "The acting seat's current hand: its row in hands.")
    hole_hidden = _slot(E.S_HOLE_HIDDEN, "The dealer's hole card is face down.")
    shoe_pos = _slot(E.S_SHOE_POS, "Cards dealt from the shoe.")
    shoe_len = _slot(E.S_SHOE_LEN, "Cards in the shoe.")
    cut = _slot(E.S_CUT, "The cut card's position in the shoe (0: a shuffle every round).")
    rounds = _slot(E.S_ROUNDS, "Rounds dealt.")
    mid_shuffle = _slot(E.S_MID_SHUFFLE, "The shoe ran out during this round and was reshuffled.")
    reward_mode = _slot(E.S_REWARD_MODE, "The reward paid (engine.REWARD_*).")
    shoe_episode = _slot(E.S_SHOE_EPISODE, "1: an env's episode is a shoe, with a bet before each round.")
    betting = _slot(E.S_BETTING, "1 while the agent's bet for the next round is due.")
    bet_level = _slot(E.S_BET_LEVEL, "The agent's bet this round: its index in the env's bets.")
    agent = _slot(E.S_AGENT, "The env's agent's seat.")
    count_mode = _slot(E.S_COUNT_MODE, "The count the env's observation carries (engine.COUNT_*).")
    obs_extra = _slot(E.S_OBS_EXTRA, "Where a shoe episode's extra observation components start (0: none).")

    @property
    def cards_left(self) -> np.ndarray:
        """Cards left in the shoe per code, indexed by code 1..13 (entry 0 unused): a view."""
        return self.st[..., E.S_COUNTS : E.S_COUNTS + 14]

    def unseen_by_value(self) -> np.ndarray:
        """int[..., 10]: the cards no player has seen by value A, 2..9, ten-value (the shoe's rest and a
        face-down hole card), of one table or of every table of a batch."""
        st = np.atleast_2d(self.st)
        left = np.atleast_2d(self.cards_left)[:, 1:]  # codes 1..13: A, 2..9, then the ten-value ranks
        unseen = np.concatenate([left[:, :9], left[:, 9:].sum(axis=1, keepdims=True)], axis=1)
        hidden = np.flatnonzero(st[:, E.S_HOLE_HIDDEN])
        unseen[hidden, np.minimum(st[hidden, E.S_DEALER + 1], 10) - 1] += 1
        return unseen if self.st.ndim > 1 else unseen[0]

    @property
    def rng(self) -> np.ndarray:
        """The card generator's four words: a view."""
        return self.st[..., E.S_RNG : E.S_RNG + 4]

    def dealer(self) -> tuple[list[int], int, int]:
        """The dealer's card codes (hole card included), hard total and aces, read at once (every
        episode's summary reads them)."""
        st = self.st
        return (
            st[E.S_DEALER : E.S_DEALER + st.item(E.S_DEALER_N)].tolist(),
            st.item(E.S_DEALER_HARD),
            st.item(E.S_DEALER_ACES),
        )

    def seat(self, s: int) -> dict[str, int]:
        """Seat s's block: its ``hands`` (count), current ``row``, ``insurance`` state, ``natural``,
        ``active`` (it plays this round) and ``policy``."""
        block = _seat_block(self.st, s)
        return {
            "hands": block[E.SEAT_NUM_HANDS],
            "row": block[E.SEAT_CUR],
            "insurance": block[E.SEAT_INS],
            "natural": block[E.SEAT_NATURAL],
            "active": block[E.SEAT_ACTIVE],
            "policy": block[E.SEAT_POLICY],
        }

    def seat_active(self, s: int) -> bool:
        """Whether seat s plays this round (one slot: a shoe env reads it on every settled step)."""
        return bool(self.st.item(E.S_SEAT_BASE + s * E.SEAT_FIELDS + E.SEAT_ACTIVE))

    def set_active(self, s: int, active: Any) -> None:
        """Seat s plays the coming round (False: it sits out)."""
        self.st[..., E.S_SEAT_BASE + s * E.SEAT_FIELDS + E.SEAT_ACTIVE] = active

    def stack(self, codes: list[int], force_shuffle: bool = False) -> None:
        """The next cards to deal, in order (none: the shoe's own); ``force_shuffle``: a new shoe first."""
        self.st[E.S_STACK_POS] = 0
        self.st[E.S_STACK_LEN] = len(codes)
        if codes:  # (an empty slice assignment costs an env's reset more than the rest of it)
            self.st[E.S_STACK : E.S_STACK + len(codes)] = codes
        if force_shuffle:
            self.st[E.S_FORCE_SHUFFLE] = 1
