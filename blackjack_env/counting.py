"""Card-counting systems: a tag per card value, balanced or not, and what follows from the tags.

A system's running count is the sum of the tags of the cards seen; a balanced system's true
count is the running count per unseen deck (unseen cards / 52), a float, never rounded; an
unbalanced one (KO) plays on its running count, started at its published initial value. The
betting and insurance correlations of a system are the weighted Pearson correlations of its tags
with the effects of removal (ten-value cards weigh 4: four ranks of the thirteen).

Built-in tags as published (Blackjack Apprenticeship's "Card counting systems", the same figures
as qfit.com's; KO's initial running count: (decks - 1) x -4, howtocountcards.org). This module is
the first piece of the counting work (issue 13): the effects of removal themselves, index
generation and counting strategies are still to come.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: Card values in the order of the tag tuples: ace first (value 1), then 2..10.
VALUES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10")
#: How many ranks have each value (ten-value cards: 10, J, Q, K).
VALUE_WEIGHTS = np.array([1.0] * 9 + [4.0])
#: Tags that predict the insurance bet exactly: its effects of removal are +4 for every non-ten, -9
#: for a ten (removing a non-ten raises the share of tens; insurance pays above 1/3).
INSURANCE_TAGS = (4.0,) * 9 + (-9.0,)


@dataclass(frozen=True)
class CountingSystem:
    """A counting system: ``tags`` per value A, 2, ..., 10 and whether they sum to 0 over a deck."""

    name: str
    tags: tuple[float, ...]
    balanced: bool

    def __post_init__(self) -> None:
        if len(self.tags) != len(VALUES):
            raise ValueError(f"counting system {self.name!r}: tags needs one per value A, 2..10, got {len(self.tags)}")
        deck_sum = self.deck_sum()
        if self.balanced and abs(deck_sum) > 1e-9:
            raise ValueError(
                f"counting system {self.name!r} is declared balanced but its tags sum to {deck_sum:g} a deck"
            )

    @classmethod
    def from_mapping(cls, name: str, tags: Mapping[str, float], balanced: bool) -> CountingSystem:
        """From tags keyed by card value ('A', '2', ..., '10'), as the JSON strategies give them."""
        missing = [v for v in VALUES if v not in tags]
        if missing:
            raise ValueError(f"counting system {name!r}: tags lack the values {', '.join(missing)}")
        return cls(name, tuple(float(tags[v]) for v in VALUES), balanced)

    def deck_sum(self) -> float:
        """The tags of one whole deck added up (4 cards of each value, 16 tens): 0 when balanced."""
        return 4.0 * float(np.dot(VALUE_WEIGHTS, self.tags))

    def initial_running_count(self, decks: int) -> float:
        """0 for a balanced system; an unbalanced one starts where its published key counts assume
        (KO: (decks - 1) x -4, i.e. minus the shoe's surplus of tags beyond one deck)."""
        if self.balanced:
            return 0.0
        return -self.deck_sum() * (decks - 1)

    def running_count(self, seen: Sequence[int], decks: int) -> float:
        """The running count after ``seen[v]`` cards of each value v (A, 2..10) have been seen."""
        return self.initial_running_count(decks) + float(np.dot(self.tags, seen))

    def true_count(self, seen: Sequence[int], decks: int) -> float:
        """A balanced system's running count per unseen deck; an unbalanced one's running count."""
        running = self.running_count(seen, decks)
        if not self.balanced:
            return running
        unseen = 52 * decks - int(np.sum(seen))
        return running * 52.0 / max(unseen, 1)

    def correlation(self, effects: Sequence[float]) -> float:
        """Weighted Pearson correlation of the tags with per-value effects (A, 2..10)."""
        return weighted_correlation(self.tags, effects)

    def insurance_correlation(self) -> float:
        """IC: the correlation of the tags with the insurance bet's own (exact) tags."""
        return weighted_correlation(self.tags, INSURANCE_TAGS)


def weighted_correlation(a: Sequence[float], b: Sequence[float]) -> float:
    """Pearson correlation over the ten card values, each weighted by how many ranks it has."""
    x = np.asarray(a, float)
    y = np.asarray(b, float)
    if x.shape != (10,) or y.shape != (10,):
        raise ValueError(f"need one value per card value A, 2..10, got {x.shape} and {y.shape}")
    w = VALUE_WEIGHTS / VALUE_WEIGHTS.sum()
    dx = x - w @ x
    dy = y - w @ y
    return float(w @ (dx * dy) / np.sqrt((w @ (dx * dx)) * (w @ (dy * dy))))


def _system(name: str, tags: tuple[float, ...], balanced: bool = True) -> CountingSystem:
    return CountingSystem(name, tags, balanced)


#: The built-in systems, by name (tags A, 2..10 as published; see the module docstring).
SYSTEMS: dict[str, CountingSystem] = {
    s.name: s
    for s in (
        _system("hilo", (-1, 1, 1, 1, 1, 1, 0, 0, 0, -1)),
        _system("ko", (-1, 1, 1, 1, 1, 1, 1, 0, 0, -1), balanced=False),
        _system("hiopt1", (0, 0, 1, 1, 1, 1, 0, 0, 0, -1)),
        _system("hiopt2", (0, 1, 1, 2, 2, 1, 1, 0, 0, -2)),
        _system("omega2", (0, 1, 1, 2, 2, 2, 1, 0, -1, -2)),
        _system("zen", (-1, 1, 1, 2, 2, 2, 1, 0, 0, -2)),
        _system("halves", (-1, 0.5, 1, 1, 1.5, 1, 0.5, 0, -0.5, -1)),
    )
}


def system(name: str) -> CountingSystem:
    """A built-in system by name, or a ValueError naming the known ones."""
    try:
        return SYSTEMS[name]
    except KeyError:
        raise ValueError(f"unknown counting system {name!r}; built in: {', '.join(SYSTEMS)}") from None
