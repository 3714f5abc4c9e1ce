"""The rules of one blackjack game: a frozen, validated dataclass with named presets.

Every other part of the project (engine, env, solver, simulator, CLIs) takes a :class:`Rules`.
Field names are a public contract: the CLIs (``--set key=value``), reports and JSON output use them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Most hands a player may hold after splitting (the engine's fixed table size).
MAX_HANDS = 8

DOUBLE_ON_CHOICES = ("any", "9-11", "10-11")
SURRENDER_CHOICES = ("none", "late", "early")

_TRUE_WORDS = {"true", "yes", "1", "on", "y", "t"}
_FALSE_WORDS = {"false", "no", "0", "off", "n", "f"}


@dataclass(frozen=True)
class Rules:
    """One casino blackjack game.

    Money is counted in units of the initial bet. The defaults are the game of the first rule
    text (UltimateBet: 6 decks shuffled every hand, H17, DAS, split to 3 hands, split aces get one
    card, late surrender, insurance and even money, blackjack pays 3:2).

    Attributes:
        decks: number of 52-card decks in the shoe, or 0 for an infinite deck.
        hit_soft_17: the dealer hits soft 17 (H17); False: stands on all 17s (S17).
        blackjack_pays: payout of a player blackjack per unit bet (1.5 = 3:2, 1.2 = 6:5).
        double_on: two-card totals a player may double on: "any", "9-11" or "10-11"
            (restricted doubling counts the hand's best total, so soft hands never qualify).
        double_after_split: doubling is allowed on hands made by splitting (DAS).
        split_to: most hands a player may hold after splitting (1 = no splitting).
        split_by_value: unlike ten-value cards (e.g. K,Q) form a pair that may be split.
        resplit_aces: a split ace that draws another ace may be split again.
        hit_split_aces: split aces may be played on; False: they get one card each.
        surrender: "none", "late" (after the dealer checks for blackjack) or "early"
            (before the check; in no-hole-card games: kept even if the dealer makes blackjack).
        surrender_vs_ace_ten: surrender is allowed against an ace or ten-value up card.
        peek: the dealer checks the hole card for blackjack under an ace or ten; False:
            European no hole card, the dealer's second card comes after the players act.
        obo: no-hole-card games only: a dealer blackjack takes only the original bet;
            False: it takes doubles and splits too.
        insurance: insurance (half the bet, pays 2:1) is offered when the dealer shows an ace.
        even_money: even money is offered to a player blackjack against an ace.
        penetration: fraction of the shoe dealt before a reshuffle at the cut card;
            0 shuffles before every round.
    """

    decks: int = 6
    hit_soft_17: bool = True
    blackjack_pays: float = 1.5
    double_on: str = "any"
    double_after_split: bool = True
    split_to: int = 3
    split_by_value: bool = True
    resplit_aces: bool = False
    hit_split_aces: bool = False
    surrender: str = "late"
    surrender_vs_ace_ten: bool = True
    peek: bool = True
    obo: bool = True
    insurance: bool = True
    even_money: bool = True
    penetration: float = 0.0

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            checked = _FIELD_CHECKS[field.name](field.name, value)
            if checked is not value:
                object.__setattr__(self, field.name, checked)

    # ----------------------------------------------------------------- construction
    @classmethod
    def preset(cls, name: str) -> Rules:
        """The named preset (see :data:`PRESETS`); raises ValueError listing the names."""
        key = name.strip().lower().replace("_", "-")
        if key not in PRESETS:
            raise ValueError(f"unknown rules preset {name!r}; choose one of: {', '.join(PRESETS)}")
        return PRESETS[key].rules

    def replace(self, **changes: Any) -> Rules:
        """A copy with some fields changed (validated like the constructor)."""
        unknown = set(changes) - set(field_names())
        if unknown:
            raise ValueError(_unknown_field_message(sorted(unknown)[0]))
        return dataclasses.replace(self, **changes)

    def with_settings(self, settings: Iterable[str]) -> Rules:
        """A copy with ``key=value`` strings applied in order (the CLIs' repeated ``--set``)."""
        changes: dict[str, Any] = {}
        for item in settings:
            key, value = parse_setting(item)
            changes[key] = value
        return self.replace(**changes) if changes else self

    @classmethod
    def from_dict(cls, fields: Mapping[str, Any]) -> Rules:
        """Rules from a mapping of field names (values may be strings, as in JSON or a CLI)."""
        unknown = set(fields) - set(field_names())
        if unknown:
            raise ValueError(_unknown_field_message(sorted(unknown)[0]))
        return cls(**{key: _coerce(key, value) for key, value in fields.items()})

    @classmethod
    def coerce(cls, rules: Rules | str | Mapping[str, Any] | None) -> Rules:
        """Accept a Rules, a preset name, a dict of fields or None (the default game)."""
        if rules is None:
            return cls()
        if isinstance(rules, Rules):
            return rules
        if isinstance(rules, str):
            return cls.preset(rules)
        if isinstance(rules, Mapping):
            return cls.from_dict(rules)
        raise ValueError(f"rules must be a Rules, a preset name or a dict of fields, not {type(rules).__name__}")

    def to_dict(self) -> dict[str, Any]:
        """All fields as plain JSON-ready values."""
        return dataclasses.asdict(self)

    # ----------------------------------------------------------------- derived facts
    @property
    def infinite(self) -> bool:
        """True for an infinite deck (decks == 0)."""
        return self.decks == 0

    @property
    def surrender_code(self) -> int:
        return SURRENDER_CHOICES.index(self.surrender)

    @property
    def double_code(self) -> int:
        return DOUBLE_ON_CHOICES.index(self.double_on)

    def describe(self) -> str:
        """A one-line summary in the usual shorthand (e.g. ``6D H17 DAS LS 3:2``)."""
        parts = ["infinite deck" if self.infinite else f"{self.decks}D"]
        parts.append("H17" if self.hit_soft_17 else "S17")
        if self.double_on != "any":
            parts.append(f"D{self.double_on}")
        if self.double_after_split and self.split_to > 1:
            parts.append("DAS")
        parts.append(f"SP{self.split_to}" if self.split_to > 1 else "no split")
        if self.resplit_aces:
            parts.append("RSA")
        if self.hit_split_aces:
            parts.append("HSA")
        if self.surrender != "none":
            parts.append("LS" if self.surrender == "late" else "ES")
            if not self.surrender_vs_ace_ten:
                parts.append("(not vs A/10)")
        if not self.peek:
            parts.append("ENHC" + (" OBO" if self.obo else ""))
        parts.append(_payout_text(self.blackjack_pays))
        if self.penetration:
            parts.append(f"pen {self.penetration:g}")
        return " ".join(parts)

    def to_array(self) -> np.ndarray:
        """The rules as the float64 vector the compiled engine reads (see engine.R_* indices)."""
        return np.array(
            [
                float(self.decks),
                float(self.hit_soft_17),
                float(self.blackjack_pays),
                float(self.double_code),
                float(self.double_after_split),
                float(self.split_to),
                float(self.split_by_value),
                float(self.resplit_aces),
                float(self.hit_split_aces),
                float(self.surrender_code),
                float(self.surrender_vs_ace_ten),
                float(self.peek),
                float(self.obo),
                float(self.insurance),
                float(self.even_money),
                float(self.penetration),
            ],
            dtype=np.float64,
        )


# --------------------------------------------------------------------- validation
def _check_bool(name: str, value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise ValueError(f"rules field {name!r} must be true or false, got {value!r}")


def _check_decks(name: str, value: Any) -> int:
    if isinstance(value, float) and math.isinf(value) and value > 0:
        return 0
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(
            f"rules field {name!r} must be a whole number of decks >= 1, or 0 (or 'inf') for an "
            f"infinite deck, got {value!r}"
        )
    if value < 0:
        raise ValueError(f"rules field {name!r} must be >= 1, or 0 for an infinite deck, got {value}")
    return int(value)


def _check_payout(name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"rules field {name!r} must be a number such as 1.5 (3:2) or 1.2 (6:5), got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and 0 <= value <= 10):
        raise ValueError(f"rules field {name!r} must be between 0 and 10 (1.5 = 3:2), got {value}")
    return value


def _choice_check(choices: tuple[str, ...]) -> Callable[[str, Any], str]:
    def check(name: str, value: Any) -> str:
        if isinstance(value, str) and value.strip().lower() in choices:
            return value.strip().lower()
        raise ValueError(f"rules field {name!r} must be one of {', '.join(choices)}; got {value!r}")

    return check


def _check_split_to(name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"rules field {name!r} must be a whole number of hands 1..{MAX_HANDS}, got {value!r}")
    if not 1 <= value <= MAX_HANDS:
        raise ValueError(f"rules field {name!r} must be between 1 (no splitting) and {MAX_HANDS} hands, got {value}")
    return int(value)


def _check_penetration(name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"rules field {name!r} must be a fraction in [0, 1), got {value!r}")
    value = float(value)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"rules field {name!r} must be in [0, 1) (0 = shuffle every round), got {value}")
    return value


_FIELD_CHECKS = {
    "decks": _check_decks,
    "hit_soft_17": _check_bool,
    "blackjack_pays": _check_payout,
    "double_on": _choice_check(DOUBLE_ON_CHOICES),
    "double_after_split": _check_bool,
    "split_to": _check_split_to,
    "split_by_value": _check_bool,
    "resplit_aces": _check_bool,
    "hit_split_aces": _check_bool,
    "surrender": _choice_check(SURRENDER_CHOICES),
    "surrender_vs_ace_ten": _check_bool,
    "peek": _check_bool,
    "obo": _check_bool,
    "insurance": _check_bool,
    "even_money": _check_bool,
    "penetration": _check_penetration,
}


_BOOL_VALUES = "true or false"  # as text (--set, JSON strings) also _TRUE_WORDS / _FALSE_WORDS
#: What each field accepts, as its validator checks it (the rules page's "allowed values").
FIELD_VALUES = {
    "decks": "a whole number >= 1, or 0 (``inf``) for an infinite deck",
    "hit_soft_17": _BOOL_VALUES,
    "blackjack_pays": "a number from 0 to 10 (``--set`` also takes a ratio such as ``3:2``)",
    "double_on": ", ".join(f"``{choice}``" for choice in DOUBLE_ON_CHOICES),
    "double_after_split": _BOOL_VALUES,
    "split_to": f"a whole number of hands from 1 (no splitting) to {MAX_HANDS}",
    "split_by_value": _BOOL_VALUES,
    "resplit_aces": _BOOL_VALUES,
    "hit_split_aces": _BOOL_VALUES,
    "surrender": ", ".join(f"``{choice}``" for choice in SURRENDER_CHOICES),
    "surrender_vs_ace_ten": _BOOL_VALUES,
    "peek": _BOOL_VALUES,
    "obo": _BOOL_VALUES,
    "insurance": _BOOL_VALUES,
    "even_money": _BOOL_VALUES,
    "penetration": "a fraction from 0 up to (not including) 1; 0 shuffles before every round",
}


def field_names() -> tuple[str, ...]:
    """The Rules field names, in declaration order."""
    return tuple(field.name for field in dataclasses.fields(Rules))


def _unknown_field_message(key: str) -> str:
    return f"unknown rules field {key!r}; fields are: {', '.join(field_names())}"


def _coerce(key: str, value: Any) -> Any:
    """Turn a string from a CLI or config into the field's type (non-strings pass through)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    kind = dataclasses.fields(Rules)[field_names().index(key)].type
    if kind == "bool":
        low = text.lower()
        if low in _TRUE_WORDS:
            return True
        if low in _FALSE_WORDS:
            return False
        raise ValueError(f"rules field {key!r} must be true/false/yes/no/1/0, got {value!r}")
    if kind == "int":
        if key == "decks" and text.lower() in {"inf", "infinite", "infinity"}:
            return 0
        try:
            return int(text)
        except ValueError:
            allowed = "a whole number (or 'inf')" if key == "decks" else "a whole number"
            raise ValueError(f"rules field {key!r} must be {allowed}, got {value!r}") from None
    if kind == "float":
        if key == "blackjack_pays" and ":" in text:
            num, _, den = text.partition(":")
            try:
                return float(num) / float(den)
            except (ValueError, ZeroDivisionError):
                raise ValueError(f"rules field {key!r} must be a number or a ratio like 3:2, got {value!r}") from None
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"rules field {key!r} must be a number, got {value!r}") from None
    return text


def parse_setting(item: str) -> tuple[str, Any]:
    """Parse one ``key=value`` string into a field name and a typed value."""
    if "=" not in item:
        raise ValueError(
            f"setting {item!r} must look like key=value (e.g. decks=8); fields are: {', '.join(field_names())}"
        )
    key, _, value = item.partition("=")
    key = key.strip().replace("-", "_")
    if key not in field_names():
        raise ValueError(_unknown_field_message(key))
    return key, _coerce(key, value)


def _payout_text(pays: float) -> str:
    for num, den in ((3, 2), (6, 5), (7, 5), (2, 1), (1, 1)):
        if abs(pays - num / den) < 1e-9:
            return f"BJ {num}:{den}"
    return f"BJ pays {pays:g}"


# --------------------------------------------------------------------- presets
@dataclass(frozen=True)
class Preset:
    """A named game, with where it comes from."""

    rules: Rules
    description: str
    source: str


PRESETS: dict[str, Preset] = {
    "ultimatebet": Preset(
        Rules(),
        "UltimateBet online blackjack: 6 decks shuffled every hand, H17, DAS, split to 3 hands, "
        "split aces one card, late surrender, insurance and even money, 3:2",
        "rule text 1 (rules-sources/000)",
    ),
    "face-up-no-hole-card": Preset(
        Rules(peek=False, obo=False, split_to=2, surrender="early", surrender_vs_ace_ten=False, even_money=False),
        "All cards face up, the dealer takes one card and draws the second after the players "
        "act (no hole card), H17, surrender on any two cards except against an ace or ten, "
        "split aces one card; decks unstated (6 assumed)",
        "rule text 2 (rules-sources/001)",
    ),
    "online-s17": Preset(
        Rules(hit_soft_17=False, split_to=2, surrender="none", even_money=False),
        "Online game with BET/RE-BET/DEAL controls: S17, split equal point values (e.g. K,Q), "
        "split aces one card, double on any two cards, insurance; decks unstated (6 assumed)",
        "rule text 3 (rules-sources/002)",
    ),
    "six-deck-h17-split-4x": Preset(
        Rules(split_to=5, surrender="none", even_money=False),
        "Up to six decks, H17, pairs split up to four times (five hands), split aces one card, "
        "DAS, double for less (played as a full double), insurance",
        "rule text 4 (rules-sources/003)",
    ),
    "hole-card-s17": Preset(
        Rules(hit_soft_17=False, split_to=2, surrender="none", even_money=False),
        "Dealer takes an open and a hidden card and checks for blackjack, S17, hit/stand/double/"
        "split only (no surrender), insurance before the check; decks unstated (6 assumed)",
        "rule text 5 (rules-sources/004)",
    ),
    "vegas-strip": Preset(
        Rules(decks=4, hit_soft_17=False, split_to=4, surrender="none"),
        "Las Vegas Strip: 4 decks, S17, DAS, split to 4 hands, no surrender",
        "common casino game",
    ),
    "vegas-strip-6d": Preset(
        Rules(decks=6, hit_soft_17=False, split_to=4, surrender="late"),
        "Las Vegas Strip shoe: 6 decks, S17, DAS, split to 4 hands, late surrender",
        "common casino game",
    ),
    "downtown-h17": Preset(
        Rules(decks=2, hit_soft_17=True, split_to=4, surrender="none"),
        "Downtown Las Vegas: 2 decks, H17, DAS, split to 4 hands, no surrender",
        "common casino game",
    ),
    "atlantic-city": Preset(
        Rules(decks=8, hit_soft_17=False, split_to=4, surrender="late"),
        "Atlantic City: 8 decks, S17, DAS, split to 4 hands, late surrender",
        "common casino game",
    ),
    "european": Preset(
        Rules(
            decks=6,
            hit_soft_17=False,
            double_on="9-11",
            split_to=2,
            surrender="none",
            peek=False,
            obo=False,
            even_money=False,
        ),
        "European no hole card: 6 decks, S17, double on 9-11, DAS, no resplits, dealer blackjack "
        "takes doubles and splits too",
        "common casino game",
    ),
    "single-deck": Preset(
        Rules(decks=1, hit_soft_17=True, double_after_split=False, split_to=4, surrender="none"),
        "Single deck: H17, no DAS, split to 4 hands, no surrender, 3:2",
        "common casino game",
    ),
    "single-deck-6to5": Preset(
        Rules(decks=1, hit_soft_17=True, blackjack_pays=1.2, double_after_split=False, split_to=4, surrender="none"),
        "Single deck paying 6:5 on blackjack: H17, no DAS, split to 4 hands",
        "common casino game",
    ),
    "infinite-deck": Preset(
        Rules(decks=0, hit_soft_17=False, split_to=4, surrender="none"),
        "Infinite deck (continuous shuffler limit), S17, DAS, split to 4 hands",
        "analysis baseline",
    ),
}

DEFAULT_PRESET = "ultimatebet"


__all__ = [
    "DEFAULT_PRESET",
    "DOUBLE_ON_CHOICES",
    "FIELD_VALUES",
    "MAX_HANDS",
    "PRESETS",
    "SURRENDER_CHOICES",
    "Preset",
    "Rules",
    "field_names",
    "parse_setting",
]
