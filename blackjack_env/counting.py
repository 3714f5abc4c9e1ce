"""Card-counting systems: a tag per card value, balanced or not, and what follows from the tags.

A system's running count is the sum of the tags of the cards seen; a balanced system's true
count is the running count per unseen deck (unseen cards / 52), a float, never rounded; an
unbalanced one (KO) plays on its running count, started at its published initial value. The
betting and insurance correlations of a system are the weighted Pearson correlations of its tags
with the effects of removal (ten-value cards weigh 4: four ranks of the thirteen).

Built-in tags as published (Blackjack Apprenticeship's "Card counting systems", the same figures
as qfit.com's; KO's initial running count: (decks - 1) x -4, howtocountcards.org).

A :class:`CountingStrategy` is a system with a bet ramp, index plays and an optional exit rule, as
a JSON file (schema in the counting guide and :meth:`CountingStrategy.from_dict`); the simulator plays it
in compiled code (``blackjack_env.count_policy``). Built in: ``hilo-i18-fab4``, Hi-Lo with
Schlesinger's Illustrious 18 ("Attacking the Shoe", Blackjack Forum, 1986) and the Fab 4
surrenders as printed by several sources that agree, at a flat bet unless a ramp is given
(:func:`spread_ramp`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .engine import per_unseen_deck
from .slots import hilo_state
from .strategy import row_of_label, up_of_label

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
        if not self.balanced and abs(deck_sum) <= 1e-9:
            raise ValueError(
                f"counting system {self.name!r} is declared unbalanced but its tags sum to 0 a deck "
                "(balanced: true plays it on the true count)"
            )

    @classmethod
    def from_mapping(cls, name: str, tags: Mapping[str, float], balanced: bool) -> CountingSystem:
        """From tags keyed by card value ('A', '2', ..., '10'), as the JSON strategies give them."""
        missing = [v for v in VALUES if v not in tags]
        if missing:
            raise ValueError(f"counting system {name!r}: tags lack the values {', '.join(missing)}")
        return cls(name, tuple(float(tags[v]) for v in VALUES), balanced)

    @property
    def count_name(self) -> str:
        """What its strategies play on: an unbalanced system keeps its running count."""
        return "true count" if self.balanced else "running count"

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
        return float(per_unseen_deck(running, unseen))

    def correlation(self, effects: ArrayLike) -> float:
        """Weighted Pearson correlation of the tags with per-value effects (A, 2..10)."""
        return weighted_correlation(self.tags, effects)

    def insurance_correlation(self) -> float:
        """IC: the correlation of the tags with the insurance bet's own (exact) tags."""
        return weighted_correlation(self.tags, INSURANCE_TAGS)


def weighted_correlation(a: ArrayLike, b: ArrayLike) -> float:
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


def hilo_count(st: np.ndarray) -> tuple[int, int]:
    """(Hi-Lo running count of every card seen since the shuffle, cards unseen) of a table's state:
    the shoe's cards and a hidden hole card are unseen (the shoe env, the pictures, the terminal
    game). The count is the engine's own (``engine.unseen_tags``, as the observation's)."""
    running, unseen = hilo_state(st)
    return int(running), int(unseen)


# ============================================================================= counting strategies
ACTIONS = ("S", "H", "D", "P", "R")
WHEN = ("at_or_above", "below")
#: Which of a cell's hands an entry plays: every hand of the cell, its hands of two cards (the
#: hand's first decision: a split hand's too), or its hands of three or more cards (after a hit).
CARDS = ("any", "two", "three_or_more")
_CARDS_SHORT = {"two": "2 cards", "three_or_more": "3+ cards"}
#: How a chart marks an entry narrowed by its cards, after its play and index ("S≥-2 (3+)").
CARDS_MARK = {"any": "", "two": " (2)", "three_or_more": " (3+)"}


def hand_label(hand: str, cards: str = "any") -> str:
    """An entry's hand as a table names it: "hard 16", or "hard 16, 3+ cards" for a narrowed one."""
    return hand if cards == "any" else f"{hand}, {_CARDS_SHORT[cards]}"


#: The question an entry's action answers (see blackjack_env.count_policy): R, P, D, and S/H.
QUESTION_OF_ACTION = {"R": 0, "P": 1, "D": 2, "S": 3, "H": 3}
ENTRY_KEYS = {"hand", "up", "index", "action", "when", "cards"}
_ENTRY_EXTRA_KEYS = {"gain_per_100", "source", "note"}  # carried along (the index generator's output)
_STRATEGY_KEYS = {"system", "ramp", "indices", "exit_below", "name", "about", "source"}
#: The most (true count, bet) pairs a ramp may have (the compiled form's room for them).
MAX_RAMP_PAIRS = 32


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where} must be a finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class IndexEntry:
    """One index play: in ``hand`` against ``up``, answer the question of ``action`` "yes" when the
    true count is at or above (or below) ``index``; or the insurance entry (hand "insurance").
    ``cards`` (``CARDS``) narrows a stand/hit entry to the cell's two-card hands or to its hands of
    three or more cards (16 v 10 stands at a lower count on three cards than on two: the small card
    drawn is gone from the shoe); a cell may have one entry for each."""

    hand: str
    up: str
    index: float
    action: str
    when: str = "at_or_above"
    row: int = -1
    col: int = -1
    cards: str = "any"

    @property
    def question_id(self) -> int:
        """0 surrender, 1 split, 2 double, 3 stand/hit (an H entry is stored as "stand" negated)."""
        return QUESTION_OF_ACTION[self.action]

    @property
    def stand_form(self) -> tuple[str, str]:
        """(action, when) with an H entry turned into the S entry it equals (hit iff not stand)."""
        if self.action != "H":
            return self.action, self.when
        return "S", "below" if self.when == "at_or_above" else "at_or_above"

    def to_dict(self) -> dict[str, Any]:
        if self.hand == "insurance":
            return {"hand": "insurance", "index": self.index, "when": self.when}
        out = {"hand": self.hand, "up": self.up, "index": self.index, "action": self.action, "when": self.when}
        if self.cards != "any":
            out["cards"] = self.cards
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str) -> IndexEntry:
        """Parse and check one entry; ``where`` names it in errors ("indices[3]")."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{where} must be an object with hand, up, index, action, got {data!r}")
        unknown = sorted(set(data) - ENTRY_KEYS - _ENTRY_EXTRA_KEYS)
        if unknown:
            raise ValueError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(sorted(ENTRY_KEYS))}")
        hand = data.get("hand")
        if not isinstance(hand, str):
            raise ValueError(f"{where}.hand must be 'hard N', 'soft N', 'pair V' or 'insurance', got {hand!r}")
        when = data.get("when", "at_or_above")
        if when not in WHEN:
            raise ValueError(f"{where}.when must be one of {', '.join(WHEN)}, got {when!r}")
        if "index" not in data:
            raise ValueError(f"{where}: missing key 'index'")
        index = _number(data["index"], f"{where}.index")
        cards = data.get("cards", "any")
        if cards not in CARDS:
            raise ValueError(f"{where}.cards must be one of {', '.join(CARDS)}, got {cards!r}")
        if hand == "insurance":
            if cards != "any":
                raise ValueError(f"{where}.cards: insurance is one question per round, not per hand; leave cards out")
            if data.get("up", "A") != "A":
                raise ValueError(f"{where}.up: insurance is offered against an ace only, got {data['up']!r}")
            return cls("insurance", "A", index, "I", when)
        parts = hand.split()
        section = {"hard": "hard", "soft": "soft", "pair": "pairs"}.get(parts[0]) if len(parts) == 2 else None
        valid = {
            "hard": [str(t) for t in range(4, 22)],
            "soft": [str(t) for t in range(12, 22)],
            "pairs": ["A", *[str(v) for v in range(2, 11)]],
        }
        if section is None or parts[1] not in valid[section]:
            raise ValueError(
                f"{where}.hand must be 'hard 4'..'hard 21', 'soft 12'..'soft 21', 'pair A'..'pair 10' "
                f"or 'insurance', got {hand!r}"
            )
        up = data.get("up")
        if up not in ("A", *[str(v) for v in range(2, 11)]):
            raise ValueError(f"{where}.up must be '2'..'10' or 'A', got {up!r}")
        action = data.get("action")
        if action not in ACTIONS:
            raise ValueError(f"{where}.action must be one of {', '.join(ACTIONS)}, got {action!r}")
        if action == "P" and section != "pairs":
            raise ValueError(f"{where}: a split entry (P) needs a pair hand ('pair V'), got {hand!r}")
        if section == "pairs" and action not in ("P", "R"):
            raise ValueError(
                f"{where}: a pair's cell answers only split (P) and surrender (R); once a pair is not "
                f"split it plays as its total, so give {action} for that total's hand instead"
            )
        if cards != "any" and (section == "pairs" or action not in ("S", "H")):
            raise ValueError(
                f"{where}.cards: only a stand/hit entry (S or H) of a hard or soft hand is narrowed by its "
                f"cards (a hand of three cards can only stand or hit), got {action} for {hand!r}"
            )
        return cls(hand, up, index, action, when, row_of_label(section, parts[1]), up_of_label(up) - 1, cards)


def _on_cards(cards: str, *entries: IndexEntry) -> str:
    """The hands two clashing entries share, where one of them is narrowed to them."""
    return "" if all(e.cards == "any" for e in entries) else f", on {cards.replace('_', ' ')} cards"


def _ramp(data: Any, where: str = "ramp") -> tuple[tuple[float, float], ...]:
    if not isinstance(data, list) or not data:
        raise ValueError(f"{where} must be a non-empty list of [true_count, bet] pairs, got {data!r}")
    if len(data) > MAX_RAMP_PAIRS:
        raise ValueError(f"{where} has {len(data)} pairs; at most {MAX_RAMP_PAIRS} are allowed")
    pairs: list[tuple[float, float]] = []
    for i, pair in enumerate(data):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"{where}[{i}] must be a [true_count, bet] pair, got {pair!r}")
        count = _number(pair[0], f"{where}[{i}] true count")
        bet = _number(pair[1], f"{where}[{i}] bet")
        if bet < 0:
            raise ValueError(f"{where}[{i}] bet must be >= 0 (0 sits the round out), got {pair[1]!r}")
        if pairs and count <= pairs[-1][0]:
            raise ValueError(f"{where}: true counts must increase, got {pairs[-1][0]:g} then {count:g} at [{i}]")
        pairs.append((count, bet))
    if all(bet == 0 for _, bet in pairs):
        raise ValueError(f"{where}: every bet is 0, so the strategy never plays")
    return tuple(pairs)


@dataclass(frozen=True)
class CountingStrategy:
    """A counting system, a bet ramp, index plays and an optional exit rule (the counting guide shows the format)."""

    system: CountingSystem
    ramp: tuple[tuple[float, float], ...] = ((0.0, 1.0),)
    indices: tuple[IndexEntry, ...] = ()
    exit_below: float | None = None
    name: str = "counting"

    def __post_init__(self) -> None:
        seen: dict[tuple[int, int, int, str] | str, IndexEntry] = {}
        for entry in self.indices:
            narrowed = ("two", "three_or_more") if entry.cards == "any" else (entry.cards,)
            for cards in narrowed if entry.hand != "insurance" else ("any",):  # "any": both kinds of hand
                key: tuple[int, int, int, str] | str = (
                    "insurance" if entry.hand == "insurance" else (entry.row, entry.col, entry.question_id, cards)
                )
                if key in seen:
                    raise ValueError(
                        f"indices: two entries answer the same question ({entry.hand} v {entry.up}, "
                        f"{entry.action} and {seen[key].action}{_on_cards(cards, entry, seen[key])})"
                    )
                seen[key] = entry

    @property
    def sits_out(self) -> bool:
        """Whether it ever sits a round out (a 0 bet or an exit rule): that needs other seats."""
        return self.exit_below is not None or any(bet == 0 for _, bet in self.ramp)

    def with_ramp(self, ramp: Sequence[tuple[float, float]]) -> CountingStrategy:
        return replace(self, ramp=_ramp([list(p) for p in ramp]))

    def to_dict(self) -> dict[str, Any]:
        system = (
            self.system.name
            if SYSTEMS.get(self.system.name) == self.system
            else {
                "name": self.system.name,
                "tags": dict(zip(VALUES, self.system.tags, strict=True)),
                "balanced": self.system.balanced,
            }
        )
        out: dict[str, Any] = {
            "name": self.name,
            "system": system,
            "ramp": [list(p) for p in self.ramp],
            "indices": [e.to_dict() for e in self.indices],
        }
        if self.exit_below is not None:
            out["exit_below"] = self.exit_below
        return out

    @classmethod
    def from_dict(cls, data: Any, name: str = "counting") -> CountingStrategy:
        """Parse and check a strategy: {"system": NAME | {"tags": {...}, "balanced": bool},
        "ramp": [[tc, bet], ...], "indices": [...], "exit_below": tc}; errors name the key."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a counting strategy is a JSON object, got {type(data).__name__}")
        unknown = sorted(set(data) - _STRATEGY_KEYS)
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r}; allowed: system, ramp, indices, exit_below, name")
        if "system" not in data:
            raise ValueError('missing key \'system\' (a built-in name or {"tags": {...}, "balanced": bool})')
        system_of = parse_system(data["system"])
        indices = data.get("indices", [])
        if not isinstance(indices, list):
            raise ValueError(f"indices must be a list of index entries, got {indices!r}")
        entries = tuple(IndexEntry.from_dict(e, f"indices[{i}]") for i, e in enumerate(indices))
        exit_below = data.get("exit_below")
        return cls(
            system=system_of,
            ramp=_ramp(data.get("ramp", [[0, 1]])),
            indices=entries,
            exit_below=None if exit_below is None else _number(exit_below, "exit_below"),
            name=str(data.get("name", name)),
        )

    @classmethod
    def load(cls, path: str | Path) -> CountingStrategy:
        """Read a strategy file; every problem is a ValueError naming the file and the key."""
        path = Path(path)
        data = _read_json(path, f"counting strategy {str(path)!r}")
        try:
            return cls.from_dict(data, name=path.stem)
        except ValueError as error:
            raise ValueError(f"counting strategy {str(path)!r}: {error}") from None


def parse_system(spec: Any) -> CountingSystem:
    """A system from its strategy-file form: a built-in name, or {"tags": {...}, "balanced": bool}
    (and a "name"), every tag checked."""
    if isinstance(spec, str):
        return system(spec)
    if isinstance(spec, Mapping) and set(spec) <= {"tags", "balanced", "name"} and "tags" in spec:
        tags = spec["tags"]
        if not isinstance(tags, Mapping):
            raise ValueError(f"system.tags must map the values A, 2..10 to tags, got {tags!r}")
        balanced = spec.get("balanced", True)
        if not isinstance(balanced, bool):
            raise ValueError(f"system.balanced must be true or false, got {balanced!r}")
        for value, tag in tags.items():
            if value not in VALUES:
                raise ValueError(f"system.tags: unknown card value {value!r}; values are {', '.join(VALUES)}")
            _number(tag, f"system.tags[{value!r}]")
        return CountingSystem.from_mapping(str(spec.get("name", "custom")), tags, balanced)
    raise ValueError(f'system must be a built-in name ({", ".join(SYSTEMS)}) or {{"tags": ..., "balanced": ...}}')


def _read_json(path: Path, what: str) -> Any:
    """A JSON file's content, or a ValueError beginning with ``what`` (the file as the user named it)."""
    try:
        return json.loads(path.read_text())
    except OSError as error:
        raise ValueError(f"{what}: cannot read it ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{what}: not JSON ({error})") from None


def load_system(spec: str | Path | CountingSystem, flag: str = "") -> CountingSystem:
    """A counting system as a user names one: a :class:`CountingSystem` as it is, a built-in name, or the path
    of a JSON file (a ``.json`` name or any existing file) holding a system (``{"tags": {"A": ..., "10": ...},
    "balanced": bool}``, named by its ``"name"`` or else the file's stem) or a counting strategy (its system is
    taken). Every problem is one ``ValueError`` line naming the file, led by ``flag`` (``--system``) where given."""
    if isinstance(spec, CountingSystem):
        return spec
    lead = f"{flag}: " if flag else ""
    path = Path(spec)
    spec = str(spec)
    if spec in SYSTEMS or not (path.suffix == ".json" or path.is_file()):
        try:
            return system(spec)
        except ValueError as error:
            raise ValueError(
                f"{lead}{error}; or give the path of a JSON file holding a system's tags and balanced (or a strategy)"
            ) from None
    data = _read_json(path, f"{lead}counting system file {spec}")
    if isinstance(data, Mapping) and "system" in data:  # a counting strategy: its system
        data = data["system"]
    try:
        return parse_system({"name": path.stem, **data} if isinstance(data, Mapping) else data)
    except ValueError as error:
        raise ValueError(f"{lead}counting system file {spec}: {error}") from None


def parse_spread(spread: str) -> tuple[float, float]:
    """--spread "MIN-MAX" (e.g. "1-8") as (MIN, MAX), or a ValueError saying what it must be."""
    try:
        low, high = (float(part) for part in spread.split("-"))
    except ValueError:
        raise ValueError(f"--spread must be MIN-MAX such as 1-8, got {spread!r}") from None
    if not 0 < low <= high or not math.isfinite(high):
        raise ValueError(f"--spread must be MIN-MAX with 0 < MIN <= MAX, got {spread!r}")
    return low, high


def spread_ramp(spread: str) -> tuple[tuple[float, float], ...]:
    """The usual ramp for a spread "MIN-MAX" (e.g. "1-8"): the minimum up to a true count below +2,
    then a quarter of the spread more per count, the maximum from +5 on (1-8: 1, 2, 4, 6, 8 at
    +1, +2, +3, +4, +5), bets rounded to whole minimums."""
    low, high = parse_spread(spread)
    ratio = high / low
    pairs: list[tuple[float, float]] = [(1.0, low)]
    for count in (2, 3, 4, 5):
        bet = low * max(1.0, min(ratio, math.floor(ratio / 4 * (count - 1) + 0.5)))  # halves round up
        if count == 5:
            bet = high
        if bet != pairs[-1][1]:
            pairs.append((float(count), bet))
    return tuple(pairs)


#: The Illustrious 18 (Schlesinger 1986) as hand, up, index, play; played at or above the index.
ILLUSTRIOUS_18 = (
    ("insurance", "A", 3, "I"),
    ("hard 16", "10", 0, "S"),
    ("hard 15", "10", 4, "S"),
    ("pair 10", "5", 5, "P"),
    ("pair 10", "6", 4, "P"),
    ("hard 10", "10", 4, "D"),
    ("hard 12", "3", 2, "S"),
    ("hard 12", "2", 3, "S"),
    ("hard 11", "A", 1, "D"),
    ("hard 9", "2", 1, "D"),
    ("hard 10", "A", 4, "D"),
    ("hard 9", "7", 3, "D"),
    ("hard 16", "9", 5, "S"),
    ("hard 13", "2", -1, "S"),
    ("hard 12", "4", 0, "S"),
    ("hard 12", "5", -2, "S"),
    ("hard 12", "6", -1, "S"),
    ("hard 13", "3", -2, "S"),
)
#: The Fab 4 late surrenders; 15 v A is +1 where the dealer hits soft 17, +2 where it stands.
FAB_4 = (("hard 14", "10", 3, "R"), ("hard 15", "10", 0, "R"), ("hard 15", "9", 2, "R"))
FAB_4_15_VS_ACE = {True: 1, False: 2}

#: Built-in strategies: Hi-Lo with its famous index plays, and every built-in system with none (a
#: count for the bet alone).
BUILT_IN_STRATEGIES = ("hilo-i18-fab4", *SYSTEMS)


def built_in_strategy(name: str, hit_soft_17: bool) -> CountingStrategy:
    """A built-in counting strategy at a flat bet (the Fab 4's 15 v A index follows the soft-17 rule)."""
    if name in SYSTEMS:
        return CountingStrategy(SYSTEMS[name], name=name)
    if name != "hilo-i18-fab4":
        raise ValueError(f"unknown built-in counting strategy {name!r}; built in: {', '.join(BUILT_IN_STRATEGIES)}")
    plays = [*ILLUSTRIOUS_18, *FAB_4, ("hard 15", "A", FAB_4_15_VS_ACE[hit_soft_17], "R")]
    entries = tuple(
        IndexEntry.from_dict(
            {"hand": hand, "index": index}
            if hand == "insurance"
            else {"hand": hand, "up": up, "index": index, "action": action},
            name,
        )
        for hand, up, index, action in plays
    )
    return CountingStrategy(system("hilo"), indices=entries, name=name)


__all__ = [
    "BUILT_IN_STRATEGIES",
    "SYSTEMS",
    "VALUES",
    "CountingStrategy",
    "CountingSystem",
    "IndexEntry",
    "built_in_strategy",
    "load_system",
    "parse_spread",
    "parse_system",
    "spread_ramp",
    "system",
]
