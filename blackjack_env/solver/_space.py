"""The player's hand space: every multiset of card values with a hard total of at most 21.

A finite-shoe analysis must know which cards a hand holds (they are gone from the shoe), but not
their order, so hands are multisets. There are 3,072 of them with two or more cards; the same
arrays serve the infinite deck, where the composition simply stops mattering.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from .. import engine as E
from ..strategy import HARD_MIN, SOFT_BASE, SOFT_MIN

#: Rows of the total-row part of a strategy table in the order their decisions are made: a hit
#: from any of them lands in a row decided earlier (hard 21..12, soft 21..12, hard 11..4).
DECISION_ROWS = (
    [t - HARD_MIN for t in range(21, 11, -1)]
    + [SOFT_BASE + t - SOFT_MIN for t in range(21, 11, -1)]
    + [t - HARD_MIN for t in range(11, 3, -1)]
)


@dataclass(frozen=True)
class HandSpace:
    """Arrays describing every hand (index = hand id); value index 0 is the ace, 9 the ten."""

    counts: np.ndarray  # int64[M, 10] cards of each value
    n_cards: np.ndarray  # int64[M]
    total: np.ndarray  # int64[M] best total
    soft: np.ndarray  # bool[M]
    row: np.ndarray  # int64[M] hard/soft strategy row of the total
    child: np.ndarray  # int64[M, 10] hand after drawing a value, -1 if that busts
    proc: np.ndarray  # int64[M] hand ids grouped by row in DECISION_ROWS order
    cell_start: np.ndarray  # int64[len(DECISION_ROWS) + 1] group bounds in proc
    cell_row: np.ndarray  # int64[len(DECISION_ROWS)]
    by_cards: np.ndarray  # int64[M] hand ids by increasing number of cards
    two_card: dict[tuple[int, ...], int]  # (low value, high value) -> id of that two-card hand

    @property
    def size(self) -> int:
        return len(self.n_cards)


@cache
def hand_space() -> HandSpace:
    """Enumerate all hands once per process (a few milliseconds)."""
    hands: list[tuple[int, ...]] = []

    def extend(value: int, counts: list[int], hard: int, n: int) -> None:
        if value == 10:
            if n >= 2:
                hands.append(tuple(counts))
            return
        k = 0
        while hard + k * (value + 1) <= 21:
            extend(value + 1, [*counts, k], hard + k * (value + 1), n + k)
            k += 1

    extend(0, [], 0, 0)
    counts = np.array(hands, dtype=np.int64)
    values = np.arange(1, 11)
    hard = counts @ values
    n_cards = counts.sum(axis=1)
    soft = (counts[:, 0] > 0) & (hard + 10 <= 21)
    total = np.where(soft, hard + 10, hard)
    row = np.where(soft, SOFT_BASE + total - SOFT_MIN, total - HARD_MIN)
    index = {key: i for i, key in enumerate(hands)}
    child = np.full((len(hands), 10), -1, dtype=np.int64)
    for i, key in enumerate(hands):
        for v in range(10):
            if hard[i] + v + 1 <= 21:
                grown = list(key)
                grown[v] += 1
                child[i, v] = index[tuple(grown)]
    groups = [np.flatnonzero(row == r) for r in DECISION_ROWS]
    cell_start = np.zeros(len(groups) + 1, dtype=np.int64)
    cell_start[1:] = np.cumsum([len(g) for g in groups])
    two_card: dict[tuple[int, ...], int] = {}
    for h in np.flatnonzero(n_cards == 2):
        vals = [v + 1 for v in range(10) for _ in range(counts[h, v])]
        two_card[(vals[0], vals[1])] = int(h)
    return HandSpace(
        counts=counts,
        n_cards=n_cards,
        total=total,
        soft=soft,
        row=row.astype(np.int64),
        child=child,
        proc=np.concatenate(groups).astype(np.int64),
        cell_start=cell_start,
        cell_row=np.array(DECISION_ROWS, dtype=np.int64),
        by_cards=np.argsort(n_cards, kind="stable").astype(np.int64),
        two_card=two_card,
    )


@dataclass(frozen=True)
class DealerSpace:
    """The dealer's unfinished hands (cards drawn after the up card), one block per up card.

    A forward pass over these multisets, in order of size, gives the dealer's final totals with
    one step per distinct multiset instead of one per card order (about ten times fewer)."""

    counts: np.ndarray  # int64[K, 10] cards drawn after the up card (hole card included)
    n_cards: np.ndarray  # int64[K]
    start: np.ndarray  # int64[11]: block of up card u is start[u-1]:start[u] (start[10] = K)
    child: np.ndarray  # int64[K, 10] the unfinished hand after drawing a value, -1 if finished
    outcome: np.ndarray  # int64[K, 10] outcome index (17..21 -> 0..4, 5 bust, 6 blackjack) or -1


@cache
def dealer_space(hit_soft_17: bool) -> DealerSpace:
    """Enumerate the dealer's unfinished hands for every up card once per process."""

    def finished(up: int, drawn: tuple[int, ...]) -> int:
        hard = up + sum((v + 1) * k for v, k in enumerate(drawn))
        aces = (up == 1) + drawn[0]
        total = hard + 10 if aces and hard + 10 <= 21 else hard
        if total > 21:
            return 5
        if not E.dealer_stands(int(hit_soft_17), total, bool(aces and hard + 10 <= 21)):
            return -1
        if sum(drawn) == 1 and total == 21:
            return 6
        return total - 17

    blocks: list[list[tuple[int, ...]]] = []
    for up in range(1, 11):
        level: list[tuple[int, ...]] = [(0,) * 10]
        states: list[tuple[int, ...]] = []
        seen = set(level)
        while level:
            states.extend(level)
            nxt: list[tuple[int, ...]] = []
            for drawn in level:
                for v in range(10):
                    grown = list(drawn)
                    grown[v] += 1
                    key = tuple(grown)
                    if finished(up, key) < 0 and key not in seen:
                        seen.add(key)
                        nxt.append(key)
            level = nxt
        blocks.append(states)
    start = np.zeros(11, np.int64)
    start[1:] = np.cumsum([len(b) for b in blocks])
    flat = [d for b in blocks for d in b]
    index = [{d: start[u] + i for i, d in enumerate(b)} for u, b in enumerate(blocks)]
    child = np.full((len(flat), 10), -1, np.int64)
    outcome = np.full((len(flat), 10), -1, np.int64)
    for u, b in enumerate(blocks):
        for i, drawn in enumerate(b):
            for v in range(10):
                grown = list(drawn)
                grown[v] += 1
                key = tuple(grown)
                end = finished(u + 1, key)
                if end >= 0:
                    outcome[start[u] + i, v] = end
                else:
                    child[start[u] + i, v] = index[u][key]
    counts = np.array(flat, np.int64)
    return DealerSpace(counts=counts, n_cards=counts.sum(axis=1), start=start, child=child, outcome=outcome)
