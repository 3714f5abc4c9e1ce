"""Rules: validation of every field, presets against their rule texts, replace, settings, coerce."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from blackjack_env import DEFAULT_PRESET, PRESETS, Rules
from blackjack_env.rules import MAX_HANDS, field_names, parse_setting

# --------------------------------------------------------------------------- validation

# (field, bad value, words the message must contain besides the field name: what is allowed)
BAD_VALUES: list[tuple[str, Any, tuple[str, ...]]] = [
    ("decks", -1, (">= 1", "infinite")),
    ("decks", 2.5, (">= 1", "infinite")),
    ("decks", "6", (">= 1",)),
    ("decks", True, (">= 1",)),
    ("decks", -math.inf, (">= 1",)),
    ("hit_soft_17", 2, ("true or false",)),
    ("hit_soft_17", "yes", ("true or false",)),
    ("hit_soft_17", None, ("true or false",)),
    ("blackjack_pays", -0.5, ("between 0 and 10",)),
    ("blackjack_pays", 11, ("between 0 and 10",)),
    ("blackjack_pays", math.nan, ("between 0 and 10",)),
    ("blackjack_pays", "3:2", ("1.5",)),
    ("blackjack_pays", True, ("1.5",)),
    ("double_on", "8-11", ("any", "9-11", "10-11")),
    ("double_on", 10, ("any", "9-11", "10-11")),
    ("double_after_split", "no", ("true or false",)),
    ("split_to", 0, ("1", str(MAX_HANDS))),
    ("split_to", MAX_HANDS + 1, ("1", str(MAX_HANDS))),
    ("split_to", 2.0, (str(MAX_HANDS),)),
    ("split_to", False, (str(MAX_HANDS),)),
    ("split_by_value", 3, ("true or false",)),
    ("resplit_aces", -1, ("true or false",)),
    ("hit_split_aces", 1.0, ("true or false",)),
    ("surrender", "sometimes", ("none", "late", "early")),
    ("surrender", True, ("none", "late", "early")),
    ("surrender_vs_ace_ten", "true", ("true or false",)),
    ("peek", 0.5, ("true or false",)),
    ("obo", [], ("true or false",)),
    ("insurance", 2, ("true or false",)),
    ("even_money", "1", ("true or false",)),
    ("penetration", 1.0, ("[0, 1)",)),
    ("penetration", -0.1, ("[0, 1)",)),
    ("penetration", "0.5", ("[0, 1)",)),
    ("penetration", True, ("[0, 1)",)),
]


def test_bad_values_cover_every_field() -> None:
    assert {name for name, _, _ in BAD_VALUES} == set(field_names())


@pytest.mark.parametrize(("name", "value", "allowed"), BAD_VALUES, ids=[f"{n}={v!r}" for n, v, _ in BAD_VALUES])
def test_bad_value_raises_naming_field_value_and_allowed(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    with pytest.raises(ValueError) as caught:
        Rules(**{name: value})
    message = str(caught.value)
    assert repr(name) in message or name in message
    # the value itself appears (floats may be shown normalised: -0.5, 11.0)
    shown = {repr(value), str(value)}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        shown |= {repr(float(value)), str(float(value))}
    assert any(text in message for text in shown), f"{message!r} does not show the value {value!r}"
    for word in allowed:
        assert word in message, f"{message!r} does not say {word!r} is allowed"


@pytest.mark.parametrize("name", ["decks", "split_to", "double_on", "peek"])
def test_replace_validates_too(name: str) -> None:
    bad = {"decks": -2, "split_to": 99, "double_on": "7-11", "peek": "maybe"}[name]
    with pytest.raises(ValueError, match=name):
        Rules().replace(**{name: bad})


def test_good_values_are_normalised() -> None:
    rules = Rules(decks=math.inf, blackjack_pays=3 / 2, double_on=" 9-11 ", surrender="LATE", hit_soft_17=0, peek=1)
    assert rules.decks == 0 and rules.infinite
    assert rules.double_on == "9-11"
    assert rules.surrender == "late"
    assert rules.hit_soft_17 is False and rules.peek is True
    assert isinstance(rules.blackjack_pays, float) and rules.blackjack_pays == 1.5
    assert Rules(blackjack_pays=1).blackjack_pays == 1.0
    assert Rules(split_to=MAX_HANDS).split_to == MAX_HANDS
    assert Rules(penetration=0.75).penetration == 0.75


def test_defaults_are_the_first_rule_text() -> None:
    """rules-sources/000 (UltimateBet): 6 decks shuffled every hand, DAS, H17, split aces one card,
    split up to 3 hands, insurance 2:1, blackjack 3:2, late surrender, even money offered."""
    rules = Rules()
    assert rules == Rules.preset(DEFAULT_PRESET) == Rules.preset("ultimatebet")
    assert rules.to_dict() == {
        "decks": 6,
        "hit_soft_17": True,
        "blackjack_pays": 1.5,
        "double_on": "any",
        "double_after_split": True,
        "split_to": 3,
        "split_by_value": True,
        "resplit_aces": False,
        "hit_split_aces": False,
        "surrender": "late",
        "surrender_vs_ace_ten": True,
        "peek": True,
        "obo": True,
        "insurance": True,
        "even_money": True,
        "penetration": 0.0,
    }


def test_rules_are_frozen_and_hashable() -> None:
    rules = Rules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.decks = 2  # type: ignore[misc]
    assert hash(rules) == hash(Rules())
    assert len({Rules(), Rules(), Rules(decks=2)}) == 2


# --------------------------------------------------------------------------- presets

# The fields each rule text states (or implies), by the preset named for its game. Fields the text
# leaves open (decks in texts 2, 3 and 5; split limits in texts 2, 3 and 5; ...) follow the
# preset descriptions in rules.py.
RULE_TEXT_PRESETS: dict[str, dict[str, Any]] = {
    # 000 UltimateBet: "6 deck shoe", "All cards are shuffled before each hand", "Double down after
    # splits are allowed", "Dealer must hit on Soft 17", "Splitting Aces deals one card down",
    # "Player may split up to 3 hands", "Insurance Pays 2 to 1", "Blackjack pays 3 to 2",
    # "Late surrender", even money offered; the dealer deals a second (hole) card at once: peek.
    "ultimatebet": {
        "decks": 6,
        "penetration": 0.0,
        "double_after_split": True,
        "hit_soft_17": True,
        "hit_split_aces": False,
        "resplit_aces": False,
        "split_to": 3,
        "insurance": True,
        "blackjack_pays": 1.5,
        "surrender": "late",
        "surrender_vs_ace_ten": True,
        "even_money": True,
        "peek": True,
        "double_on": "any",
    },
    # 001: "each player receives two cards and the dealer receives one card" (no hole card), the
    # dealer draws to hard 17 (hits soft 17), split aces one card, surrender on any two cards
    # "except when the dealer has an Ace or a face card", insurance, blackjack 3:2.
    "face-up-no-hole-card": {
        "peek": False,
        "hit_soft_17": True,
        "hit_split_aces": False,
        "resplit_aces": False,
        "surrender_vs_ace_ten": False,
        "insurance": True,
        "blackjack_pays": 1.5,
        "double_on": "any",
    },
    # 002: dealer "must stand on all totals of 17 or more" (S17), split equal point values
    # ("a King and a Queen"), split aces one card, double on the first two cards, insurance,
    # blackjack 3:2, no surrender mentioned.
    "online-s17": {
        "hit_soft_17": False,
        "split_by_value": True,
        "hit_split_aces": False,
        "resplit_aces": False,
        "double_on": "any",
        "insurance": True,
        "blackjack_pays": 1.5,
        "surrender": "none",
        "peek": True,
    },
    # 003: "up to six decks", "Dealer must stand on hard 17 and hit soft 17", "Cards can be split up
    # to four times" (four splits = five hands; the text is ambiguous, the preset reads it so),
    # "only one card on split Aces", "Players may Double Down after they Split", insurance 2:1,
    # dealer "one card up and one card down" (peek), no surrender mentioned.
    "six-deck-h17-split-4x": {
        "decks": 6,
        "hit_soft_17": True,
        "split_to": 5,
        "hit_split_aces": False,
        "resplit_aces": False,
        "double_after_split": True,
        "double_on": "any",
        "insurance": True,
        "blackjack_pays": 1.5,
        "surrender": "none",
        "peek": True,
    },
    # 004: the dealer's first card open, the second hidden and checked after insurance (peek),
    # draws "until bust or 17 points or more" (S17), decisions Hit/Stand/Double/Split only (no
    # surrender), blackjack 3:2, insurance 2:1.
    "hole-card-s17": {
        "peek": True,
        "hit_soft_17": False,
        "surrender": "none",
        "double_on": "any",
        "insurance": True,
        "blackjack_pays": 1.5,
    },
}


@pytest.mark.parametrize("name", sorted(RULE_TEXT_PRESETS))
def test_rule_text_preset_matches_its_text(name: str) -> None:
    rules = Rules.preset(name)
    assert {key: getattr(rules, key) for key in RULE_TEXT_PRESETS[name]} == RULE_TEXT_PRESETS[name]
    assert PRESETS[name].rules == rules
    assert "rule text" in PRESETS[name].source


def test_one_preset_per_rule_text() -> None:
    sources = sorted(p.source for p in PRESETS.values() if p.source.startswith("rule text"))
    assert len(sources) == 5
    assert [s.split("(")[1] for s in sources] == [f"rules-sources/00{i})" for i in range(5)]


COMMON_PRESETS: list[tuple[str, dict[str, Any]]] = [
    # each dict is what the preset's description in rules.py promises
    (
        "vegas-strip",
        {"decks": 4, "hit_soft_17": False, "double_after_split": True, "split_to": 4, "surrender": "none"},
    ),
    (
        "vegas-strip-6d",
        {"decks": 6, "hit_soft_17": False, "double_after_split": True, "split_to": 4, "surrender": "late"},
    ),
    (
        "downtown-h17",
        {"decks": 2, "hit_soft_17": True, "double_after_split": True, "split_to": 4, "surrender": "none"},
    ),
    (
        "atlantic-city",
        {"decks": 8, "hit_soft_17": False, "double_after_split": True, "split_to": 4, "surrender": "late"},
    ),
    (
        "european",
        {
            "decks": 6,
            "hit_soft_17": False,
            "double_on": "9-11",
            "double_after_split": True,
            "split_to": 2,
            "peek": False,
            "obo": False,
        },
    ),
    (
        "single-deck",
        {"decks": 1, "hit_soft_17": True, "double_after_split": False, "split_to": 4, "surrender": "none"},
    ),
    ("single-deck-6to5", {"decks": 1, "blackjack_pays": 1.2, "double_after_split": False, "split_to": 4}),
    ("infinite-deck", {"decks": 0, "hit_soft_17": False, "double_after_split": True, "split_to": 4}),
]


@pytest.mark.parametrize(("name", "fields"), COMMON_PRESETS)
def test_common_casino_presets(name: str, fields: dict[str, Any]) -> None:
    rules = Rules.preset(name)
    assert {key: getattr(rules, key) for key in fields} == fields


def test_every_preset_is_checked() -> None:
    assert set(RULE_TEXT_PRESETS) | {name for name, _ in COMMON_PRESETS} == set(PRESETS)


@pytest.mark.parametrize("spelling", ["Vegas_Strip", " vegas-strip ", "VEGAS-STRIP"])
def test_preset_names_are_forgiving(spelling: str) -> None:
    assert Rules.preset(spelling) == PRESETS["vegas-strip"].rules


def test_unknown_preset_lists_the_names() -> None:
    with pytest.raises(ValueError, match="unknown rules preset 'mars'") as caught:
        Rules.preset("mars")
    for name in PRESETS:
        assert name in str(caught.value)


# --------------------------------------------------------------------------- replace and settings


def test_replace_returns_a_changed_copy() -> None:
    base = Rules()
    changed = base.replace(decks=2, hit_soft_17=False)
    assert (changed.decks, changed.hit_soft_17) == (2, False)
    assert (base.decks, base.hit_soft_17) == (6, True)
    assert changed.replace(decks=6, hit_soft_17=True) == base


def test_replace_unknown_field() -> None:
    with pytest.raises(ValueError, match="unknown rules field 'deck'") as caught:
        Rules().replace(deck=2)
    assert "decks" in str(caught.value)


@pytest.mark.parametrize(
    ("setting", "field", "value"),
    [
        ("hit_soft_17=true", "hit_soft_17", True),
        ("hit_soft_17=False", "hit_soft_17", False),
        ("peek=yes", "peek", True),
        ("peek=NO", "peek", False),
        ("obo=1", "obo", True),
        ("obo=0", "obo", False),
        ("decks=inf", "decks", 0),
        ("decks=8", "decks", 8),
        ("decks = 2", "decks", 2),
        ("blackjack_pays=6:5", "blackjack_pays", 1.2),
        ("blackjack_pays=3:2", "blackjack_pays", 1.5),
        ("blackjack_pays=1.2", "blackjack_pays", 1.2),
        ("split_to=4", "split_to", 4),
        ("double_on=10-11", "double_on", "10-11"),
        ("surrender=early", "surrender", "early"),
        ("penetration=0.75", "penetration", 0.75),
        ("hit-soft-17=no", "hit_soft_17", False),
    ],
)
def test_parse_setting(setting: str, field: str, value: Any) -> None:
    key, parsed = parse_setting(setting)
    assert key == field
    assert parsed == pytest.approx(value) if isinstance(value, float) else parsed == value
    rules = Rules().with_settings([setting])
    assert getattr(rules, field) == pytest.approx(value) if isinstance(value, float) else getattr(rules, field) == value


def test_with_settings_applies_in_order() -> None:
    rules = Rules.preset("vegas-strip").with_settings(["decks=2", "decks=inf", "surrender=late", "even_money=no"])
    assert (rules.decks, rules.surrender, rules.even_money) == (0, "late", False)
    assert Rules().with_settings([]) == Rules()


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ("decks", ("key=value",)),
        ("colour=red", ("unknown rules field 'colour'", "decks")),
        ("peek=maybe", ("peek", "maybe", "true/false/yes/no/1/0")),
        ("decks=six", ("decks", "six", "inf")),
        ("split_to=2.5", ("split_to", "2.5", "whole number")),
        ("blackjack_pays=3:0", ("blackjack_pays", "3:0", "3:2")),
        ("blackjack_pays=lots", ("blackjack_pays", "lots", "number")),
        ("penetration=1.5", ("penetration", "1.5", "[0, 1)")),
        ("double_on=12", ("double_on", "12", "9-11")),
        ("decks=-3", ("decks", "-3")),
    ],
)
def test_bad_setting_messages(setting: str, words: tuple[str, ...]) -> None:
    with pytest.raises(ValueError) as caught:
        Rules().with_settings([setting])
    for word in words:
        assert word in str(caught.value), f"{caught.value} lacks {word!r}"


# --------------------------------------------------------------------------- coerce and dicts


def test_coerce_accepts_preset_dict_rules_and_none() -> None:
    rules = Rules(decks=2)
    assert Rules.coerce(rules) is rules
    assert Rules.coerce("european") == PRESETS["european"].rules
    assert Rules.coerce({"decks": 2}) == rules
    assert Rules.coerce({"decks": "inf", "peek": "no", "blackjack_pays": "6:5"}) == Rules(
        decks=0, peek=False, blackjack_pays=1.2
    )
    assert Rules.coerce(None) == Rules()


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ({"decks": 2, "hit_soft17": True}, "unknown rules field 'hit_soft17'"),
        ({"split_to": 0}, "split_to"),
        ("no-such-game", "unknown rules preset"),
        (42, "rules must be a Rules, a preset name or a dict"),
    ],
)
def test_coerce_errors(value: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Rules.coerce(value)


def test_to_dict_round_trips_for_every_preset() -> None:
    for preset in PRESETS.values():
        assert Rules.from_dict(preset.rules.to_dict()) == preset.rules
        assert Rules.from_dict({k: str(v) for k, v in preset.rules.to_dict().items()}) == preset.rules


@pytest.mark.parametrize(
    ("rules", "text"),
    [
        (Rules(), "6D H17 DAS SP3 LS BJ 3:2"),
        (Rules.preset("european"), "6D S17 D9-11 DAS SP2 ENHC BJ 3:2"),
        (Rules(decks=0, blackjack_pays=1.2, surrender="none", penetration=0.5), "infinite deck"),
    ],
)
def test_describe(rules: Rules, text: str) -> None:
    assert rules.describe().startswith(text)


def test_describe_mentions_every_non_default_option() -> None:
    text = Rules(
        resplit_aces=True, hit_split_aces=True, surrender="early", surrender_vs_ace_ten=False, penetration=0.5
    ).describe()
    for word in ("RSA", "HSA", "ES", "(not vs A/10)", "pen 0.5"):
        assert word in text
