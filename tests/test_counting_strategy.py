"""Counting strategies, held to their contract: the JSON file and its one-line errors, the bet
ramp, index plays decided on stacked cards at true counts computed here from the cards seen, and
the simulator's properties (flat bet = basic strategy, ramps, KO, sitting out, replay through the
env).

Decisions are checked on real rounds: ``Blackjack-v0`` at a table of one or more seats, the agent
in seat 0, every card stacked. At the agent's first decision every seat's two cards and the up card
are seen (the hole card is not), so the other seats' cards set the count: in one deck, 13 cards seen
with a Hi-Lo running count of +3 is a true count of exactly 3 * 52 / 39 = 4.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import D, H, I, N, P, R, S
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rule_sets import rules_strategy
from test_simulate import random_table

from blackjack_env import Action, BlackjackEnv, BlackjackShoeEnv, Phase, Rules
from blackjack_env import engine as E
from blackjack_env.count_policy import (
    PC_BET_BY_TC,
    count_decision,
    policy_params,
    ramp_bet,
    round_bet,
    tc_bucket,
    true_count,
)
from blackjack_env.counting import (
    SYSTEMS,
    VALUES,
    CountingStrategy,
    CountingSystem,
    built_in_strategy,
    spread_ramp,
    system,
)
from blackjack_env.evaluate.runner import simulate
from blackjack_env.simulate import (
    OUT_STATS,
    ST_BET,
    ST_PLAYED,
    ST_SUM,
    Policy,
    SimulationResult,
    Table,
    chunk_words,
    run_chunk,
)
from blackjack_env.solver import solve
from blackjack_env.strategy import N_ROWS, N_UP, StrategyTable, row_label, row_of_label
from blackjack_env.table import POLICY_COUNT

DATA = Path(__file__).parent / "data"
EXAMPLE = DATA / "counting_strategy_example.json"

#: One deck without surrender, one deck with late surrender, six decks H17 DAS LS; all cut at 75%.
ONE_DECK = Rules(decks=1, surrender="none", penetration=0.75)
ONE_DECK_LS = Rules(decks=1, penetration=0.75)
SIX_DECKS = Rules(penetration=0.75)
HILO = system("hilo")
HILO_TAGS = dict(zip(VALUES, HILO.tags, strict=True))


@functools.cache
def basic(rules: Rules) -> StrategyTable:
    """The rules' basic strategy (the solver caches it on disk; here once per process too)."""
    return solve(rules).table


def hilo(*entries: dict[str, Any], **fields: Any) -> CountingStrategy:
    """A Hi-Lo strategy with these index entries (and any other fields of the file)."""
    return CountingStrategy.from_dict({"system": "hilo", "indices": list(entries), **fields})


def entry(hand: str, up: str, index: float, action: str, when: str = "at_or_above") -> dict[str, Any]:
    """An index entry as the file writes it."""
    return {"hand": hand, "up": up, "index": index, "action": action, "when": when}


def insurance(index: float, when: str = "at_or_above") -> dict[str, Any]:
    """The insurance (and even money) entry as the file writes it."""
    return {"hand": "insurance", "index": index, "when": when}


# ============================================================================ 1. the JSON file
class Dropped:
    """A field value that removes the key (named in the test ids, the same in every xdist worker)."""

    def __repr__(self) -> str:
        return "missing"


DROP = Dropped()
VALID_ENTRY = entry("hard 12", "3", 2, "S")
VALID: dict[str, Any] = {"system": "hilo", "ramp": [[0, 1], [2, 4]], "indices": [entry("hard 16", "10", 0, "S")]}


def with_fields(**changes: Any) -> dict[str, Any]:
    """The valid strategy with some top-level keys changed (DROP removes one)."""
    data = {**VALID, **changes}
    return {k: v for k, v in data.items() if v is not DROP}


def with_entry(second: Any = None, **changes: Any) -> dict[str, Any]:
    """The valid strategy with a second index entry: ``second``, or VALID_ENTRY with changes."""
    if second is None:
        second = {k: v for k, v in {**VALID_ENTRY, **changes}.items() if v is not DROP}
    return with_fields(indices=[*VALID["indices"], second])


def with_tags(changes: dict[str, Any], balanced: Any = True) -> dict[str, Any]:
    """The valid strategy with a custom system: Hi-Lo's tags with some changed (DROP removes one)."""
    tags = {k: v for k, v in {**HILO_TAGS, **changes}.items() if v is not DROP}
    return with_fields(system={"tags": tags, "balanced": balanced})


BAD_FILES = [
    pytest.param(with_fields(system="nope"), r"unknown counting system 'nope'", id="unknown-system"),
    pytest.param(with_fields(system=3), r"^system must be a built-in name", id="system-not-a-name"),
    pytest.param(with_fields(system={"balanced": True}), r"^system must be", id="system-without-tags"),
    pytest.param(
        with_fields(system={"tags": HILO_TAGS, "balanced": True, "colour": 1}), r"^system must be", id="system-key"
    ),
    pytest.param(with_fields(system={"tags": [1] * 10}), r"^system\.tags must map", id="tags-not-a-mapping"),
    pytest.param(with_tags({"7": DROP}), r"system 'custom': tags lack the values 7$", id="tags-lack-a-value"),
    pytest.param(with_tags({"J": -1}), r"^system\.tags: unknown card value 'J'", id="tags-unknown-value"),
    pytest.param(with_tags({"A": "-1"}), r"^system\.tags\['A'\] must be a finite number", id="tag-not-a-number"),
    pytest.param(with_tags({}, balanced="yes"), r"^system\.balanced must be true or false", id="balanced-not-a-bool"),
    pytest.param(with_tags({"7": 1}), r"system 'custom' is declared balanced but its tags sum to 4", id="balanced-lie"),
    pytest.param(with_fields(system=DROP), r"^missing key 'system'", id="missing-system"),
    pytest.param(with_fields(spread="1-8"), r"^unknown key 'spread'", id="unknown-key"),
    pytest.param(with_fields(ramp=[]), r"^ramp must be a non-empty list", id="ramp-empty"),
    pytest.param(with_fields(ramp={"0": 1}), r"^ramp must be a non-empty list", id="ramp-not-a-list"),
    pytest.param(with_fields(ramp=[0, 1]), r"^ramp\[0\] must be a \[true_count, bet\] pair", id="ramp-flat"),
    pytest.param(with_fields(ramp=[[0]]), r"^ramp\[0\] must be a \[true_count, bet\] pair", id="ramp-short-pair"),
    pytest.param(with_fields(ramp=[[0, 1], [1, 2, 3]]), r"^ramp\[1\] must be a \[true_count, bet\]", id="ramp-triple"),
    pytest.param(with_fields(ramp=[["0", 1]]), r"^ramp\[0\] true count must be a finite number", id="ramp-count"),
    pytest.param(with_fields(ramp=[[0, None]]), r"^ramp\[0\] bet must be a finite number", id="ramp-bet"),
    pytest.param(with_fields(ramp=[[0, 1], [1, -2]]), r"^ramp\[1\] bet must be >= 0", id="ramp-negative-bet"),
    pytest.param(with_fields(ramp=[[0, 1], [0, 2]]), r"^ramp: true counts must increase", id="ramp-repeated-count"),
    pytest.param(with_fields(ramp=[[1, 1], [0, 2]]), r"^ramp: true counts must increase", id="ramp-decreasing"),
    pytest.param(with_fields(ramp=[[0, 0], [1, 0]]), r"^ramp: every bet is 0", id="ramp-all-zero"),
    pytest.param(with_fields(ramp=[[i, 1] for i in range(33)]), r"^ramp has 33 pairs", id="ramp-too-long"),
    pytest.param(with_fields(indices=VALID_ENTRY), r"^indices must be a list", id="indices-not-a-list"),
    pytest.param(with_entry("hard 16"), r"^indices\[1\] must be an object", id="entry-not-an-object"),
    pytest.param(with_entry(count=2), r"^indices\[1\]: unknown key 'count'", id="entry-unknown-key"),
    pytest.param(with_entry(hand=DROP), r"^indices\[1\]\.hand must be", id="hand-missing"),
    *(
        pytest.param(with_entry(hand=hand), r"^indices\[1\]\.hand must be 'hard 4'", id=f"hand-{hand}")
        for hand in ("hard 3", "hard 22", "soft 11", "soft 22", "pair J", "pair 1", "16", "Hard 16", "hard16")
    ),
    *(
        pytest.param(with_entry(up=up), r"^indices\[1\]\.up must be '2'\.\.'10' or 'A'", id=f"up-{up}")
        for up in ("1", "11", "J", "a", 10, DROP)
    ),
    *(
        pytest.param(
            with_entry(action=action), r"^indices\[1\]\.action must be one of S, H, D, P, R", id=f"do-{action}"
        )
        for action in ("X", "s", "I", DROP)
    ),
    pytest.param(with_entry(when="above"), r"^indices\[1\]\.when must be one of at_or_above, below", id="when"),
    pytest.param(with_entry(when=None), r"^indices\[1\]\.when must be one of", id="when-null"),
    pytest.param(with_entry(index=DROP), r"^indices\[1\]: missing key 'index'", id="index-missing"),
    *(
        pytest.param(with_entry(index=index), r"^indices\[1\]\.index must be a finite number", id=f"index-{index}")
        for index in ("2", True, None, math.nan, math.inf)
    ),
    pytest.param(with_entry(action="P"), r"^indices\[1\]: a split entry \(P\) needs a pair", id="split-a-non-pair"),
    *(
        pytest.param(with_entry(hand="pair 10", action=a), r"^indices\[1\]: a pair's cell answers only", id=f"pair-{a}")
        for a in ("D", "S", "H")
    ),
    pytest.param(with_entry({"hand": "insurance", "up": "10", "index": 3}), r"^indices\[1\]\.up", id="insure-vs-10"),
    pytest.param(with_entry({"hand": "insurance"}), r"^indices\[1\]: missing key 'index'", id="insurance-index"),
    *(
        pytest.param(
            with_entry(hand="hard 16", up="10", action=action),
            r"^indices: two entries answer the same question \(hard 16 v 10",
            id=f"same-question-S-{action}",
        )
        for action in ("S", "H")
    ),
    pytest.param(
        with_fields(indices=[entry("hard 15", "10", 0, "R"), entry("hard 15", "10", 3, "R", "below")]),
        r"^indices: two entries answer the same question \(hard 15 v 10, R and R\)",
        id="same-question-R-R",
    ),
    pytest.param(
        with_fields(indices=[insurance(3), insurance(2)]), r"^indices: two entries answer", id="two-insurance-entries"
    ),
    pytest.param(with_entry(cards="three"), r"^indices\[1\]\.cards must be one of any, two, three_or_more", id="cards"),
    pytest.param(with_entry(cards=2), r"^indices\[1\]\.cards must be one of", id="cards-number"),
    *(
        pytest.param(
            with_entry(hand=hand, up="10", action=action, cards="three_or_more"),
            r"^indices\[1\]\.cards: only a stand/hit entry \(S or H\) of a hard or soft hand",
            id=f"cards-on-{action}",
        )
        for hand, action in (("hard 11", "D"), ("hard 15", "R"), ("pair 8", "P"))
    ),
    pytest.param(
        with_entry({**insurance(3), "cards": "two"}), r"^indices\[1\]\.cards: insurance is one question", id="ins-cards"
    ),
    *(
        pytest.param(
            with_entry({**entry("hard 16", "10", -2, "S"), "cards": cards}),
            rf"^indices: two entries answer the same question \(hard 16 v 10, S and S, on {label} cards\)",
            id=f"any-and-{cards}",
        )
        for cards, label in (("two", "two"), ("three_or_more", "three or more"))
    ),
    pytest.param(with_fields(exit_below="low"), r"^exit_below must be a finite number", id="exit-below-string"),
    pytest.param(with_fields(exit_below=True), r"^exit_below must be a finite number", id="exit-below-bool"),
]


def one_line_error(data: Any) -> str:
    """The ValueError a strategy file's data raises; its message must be one line."""
    with pytest.raises(ValueError) as raised:
        CountingStrategy.from_dict(data)
    message = str(raised.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(("data", "names_the_key"), BAD_FILES)
def test_a_bad_strategy_is_rejected_in_one_line_naming_the_key(data: dict[str, Any], names_the_key: str) -> None:
    assert re.search(names_the_key, one_line_error(data))


@pytest.mark.parametrize(("data", "names_the_key"), BAD_FILES)
def test_load_names_the_file_before_the_key(tmp_path: Path, data: dict[str, Any], names_the_key: str) -> None:
    path = tmp_path / "strategy.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError) as raised:
        CountingStrategy.load(path)
    prefix = f"counting strategy {str(path)!r}: "
    message = str(raised.value)
    assert "\n" not in message and message.startswith(prefix)
    assert re.search(names_the_key, message.removeprefix(prefix))


@pytest.mark.parametrize(("text", "problem"), [(None, "cannot read it"), ("{'system': 'hilo'}", "not JSON")])
def test_load_names_an_unreadable_file(tmp_path: Path, text: str | None, problem: str) -> None:
    path = tmp_path / "broken.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ValueError, match=f"^counting strategy {re.escape(repr(str(path)))}: {problem}") as raised:
        CountingStrategy.load(path)
    assert "\n" not in str(raised.value)


def test_a_non_object_is_rejected() -> None:
    assert "JSON object" in one_line_error([VALID])


def test_declaring_balanced_tags_unbalanced_is_rejected_naming_balanced() -> None:
    """The flag lies the other way too: Hi-Lo's tags sum to 0 a deck, so they are balanced."""
    assert "balanced" in one_line_error(with_tags({}, balanced=False))


def test_the_example_file_loads_every_field() -> None:
    strategy = CountingStrategy.load(EXAMPLE)
    assert strategy.name == EXAMPLE.stem
    assert strategy.system.tags == (-1, 1, 1, 1, 1, 1, 1, 0, 0, -1) and not strategy.system.balanced
    assert strategy.ramp == ((-2, 0), (0, 1), (1.5, 2), (3, 4))
    assert strategy.exit_below == -3 and strategy.sits_out
    plays = [(e.hand, e.up, e.index, e.action, e.when) for e in strategy.indices]
    assert plays == [
        ("hard 16", "10", 0, "S", "at_or_above"),
        ("hard 12", "4", 0, "H", "below"),
        ("hard 15", "10", -0.5, "R", "at_or_above"),
        ("pair 10", "6", 4, "P", "at_or_above"),
        ("soft 18", "2", 1, "D", "at_or_above"),
        ("insurance", "A", 3, "I", "at_or_above"),
    ]


ROUND_TRIPS = {
    "i18-fab4-h17": built_in_strategy("hilo-i18-fab4", hit_soft_17=True),
    "i18-fab4-s17-ramp": built_in_strategy("hilo-i18-fab4", hit_soft_17=False).with_ramp(spread_ramp("1-12")),
    "example-file": CountingStrategy.load(EXAMPLE),
    "zen-hit-below": CountingStrategy.from_dict(
        {"system": "zen", "ramp": [[-1, 0.5], [2, 3]], "indices": [entry("hard 12", "2", 3.5, "H", "below")]}
    ),
}


@pytest.mark.parametrize("name", ROUND_TRIPS)
def test_to_dict_and_from_dict_round_trip_through_json(name: str) -> None:
    strategy = ROUND_TRIPS[name]
    data = json.loads(json.dumps(strategy.to_dict()))
    assert CountingStrategy.from_dict(data) == strategy
    if strategy.system.name in SYSTEMS:
        assert data["system"] == strategy.system.name  # a built-in system is written by its name


def test_a_named_custom_system_survives_the_round_trip() -> None:
    strategy = CountingStrategy.from_dict({"system": {"tags": HILO_TAGS, "balanced": True, "name": "mine"}})
    assert CountingStrategy.from_dict(strategy.to_dict()).system.name == "mine"


@pytest.mark.parametrize("when", ["at_or_above", "below"])
@pytest.mark.parametrize(("hand", "up"), [("hard 16", "10"), ("soft 18", "A"), ("hard 12", "2")])
def test_a_hit_entry_is_the_stand_entry_with_the_opposite_condition(hand: str, up: str, when: str) -> None:
    opposite = "below" if when == "at_or_above" else "at_or_above"
    as_hit = policy_params(hilo(entry(hand, up, 1.5, "H", when)), SIX_DECKS)
    as_stand = policy_params(hilo(entry(hand, up, 1.5, "S", opposite)), SIX_DECKS)
    np.testing.assert_array_equal(as_hit, as_stand)
    assert not np.array_equal(as_hit, policy_params(hilo(entry(hand, up, 1.5, "S", when)), SIX_DECKS))


# ============================================================================ 2. the ramp
def ramp_params(ramp: Sequence[Sequence[float]]) -> np.ndarray:
    """A flat Hi-Lo strategy with this ramp, compiled (what ramp_bet reads)."""
    return policy_params(hilo(ramp=[list(p) for p in ramp]), SIX_DECKS)


@pytest.mark.parametrize(
    ("count", "bet"),
    [
        (-50.0, 0.5),  # below every pair: the first pair's bet
        (np.nextafter(-1.0, -math.inf), 0.5),
        (-1.0, 0.5),
        (0.999, 0.5),
        (1.0, 1.0),  # exactly at a threshold: that pair's bet
        (1.5, 1.0),
        (np.nextafter(2.0, -math.inf), 1.0),
        (2.0, 2.0),
        (3.99, 2.0),
        (4.0, 8.0),
        (1e9, 8.0),  # above the last pair: the last pair's bet
    ],
)
def test_a_rounds_bet_is_that_of_the_last_pair_at_or_below_the_count(count: float, bet: float) -> None:
    assert ramp_bet(ramp_params([[-1, 0.5], [1, 1], [2, 2], [4, 8]]), count) == bet


def test_the_longest_ramp_is_read_to_its_last_pair() -> None:
    params = ramp_params([[i, i + 1] for i in range(32)])
    assert [ramp_bet(params, float(i)) for i in range(32)] == [float(i + 1) for i in range(32)]
    assert ramp_bet(params, 30.5) == 31.0 and ramp_bet(params, 99.0) == 32.0 and ramp_bet(params, -1.0) == 1.0


def test_a_1_8_spread_bets_1_2_4_6_8_from_plus_1_to_plus_5() -> None:
    ramp = spread_ramp("1-8")
    assert ramp == ((1, 1), (2, 2), (3, 4), (4, 6), (5, 8))
    params = ramp_params(ramp)
    counts = [-3.0, 0.0, 1.0, 1.99, 2.0, 3.0, 4.0, 4.99, 5.0, 12.0]
    assert [ramp_bet(params, c) for c in counts] == [1, 1, 1, 1, 2, 4, 6, 6, 8, 8]


@settings(max_examples=300, deadline=None)
@given(
    thresholds=st.lists(st.one_of(st.integers(-12, 14), st.floats(-12, 14).map(lambda x: round(x, 2))), max_size=8),
    counts=st.lists(st.floats(-40, 40, allow_nan=False), min_size=1, max_size=20),
)
def test_the_simulators_bet_lookup_is_the_ramp_search(thresholds: list[float], counts: list[float]) -> None:
    """Whole-count ramps within the true-count buckets are looked up by bucket; any other ramp is
    searched: the bet is the same either way, at thresholds and between them."""
    steps = sorted(set(float(k) for k in thresholds))
    ramp = [[-20.0, 1.0]] + [[k, float(i + 2)] for i, k in enumerate(steps)]
    params = ramp_params(ramp)
    whole = all(k.is_integer() and -6 < k <= 10 for k in steps)
    assert (params[PC_BET_BY_TC] != 0.0) == whole
    for count in [*counts, *steps, *(np.nextafter(k, -math.inf) for k in steps)]:
        assert round_bet(params, count, tc_bucket(count)) == ramp_bet(params, count)


@pytest.mark.parametrize("spread", ["1-1", "1-2", "1-4", "1-12", "2-10", "1.5-6", "2-5", "5-100"])
def test_a_spread_ramp_honours_its_minimum_and_maximum(spread: str) -> None:
    low, high = (float(x) for x in spread.split("-"))
    ramp = spread_ramp(spread)
    counts = [count for count, _ in ramp]
    bets = [bet for _, bet in ramp]
    assert counts == sorted(set(counts)) and bets == sorted(bets)
    assert bets[0] == low and bets[-1] == high and counts[-1] <= 5
    assert all(bet / low == int(bet / low) for bet in bets[:-1])  # whole minimums up to the maximum
    params = ramp_params(ramp)
    assert ramp_bet(params, -10.0) == ramp_bet(params, 1.99) == low
    assert ramp_bet(params, 5.0) == high


@pytest.mark.parametrize("spread", ["8-1", "0-8", "-1-8", "1-8-9", "", "1", "a-b", "1-inf", "1-nan", "nan-8"])
def test_a_bad_spread_is_rejected(spread: str) -> None:
    with pytest.raises(ValueError, match="--spread must be MIN-MAX"):
        spread_ramp(spread)


# ============================================================================ 3. decisions on stacked cards
def value_of(card: str) -> str:
    """A rank's card value as the tags are keyed (J, Q, K count as 10)."""
    return "10" if card in ("J", "Q", "K") else card


def oracle_count(cards: Sequence[str], decks: int, counting: CountingSystem = HILO) -> float:
    """The contract's count of the cards seen: the running count (from the system's initial value)
    per unseen deck, unseen = 52 x decks less the cards seen, exact; an unbalanced one's running count."""
    tags = dict(zip(VALUES, counting.tags, strict=True))
    running = counting.initial_running_count(decks) + sum(tags[value_of(c)] for c in cards)
    return running * 52.0 / (52 * decks - len(cards)) if counting.balanced else running


def seats_with(running: int, seats: int) -> list[tuple[str, str]]:
    """Two cards for each of ``seats`` other seats whose Hi-Lo tags add up to ``running``: low cards
    up, face cards down, 7-9 for the rest."""
    assert abs(running) <= 2 * seats
    low, high, neutral = itertools.cycle("23456"), itertools.cycle("JQK"), itertools.cycle("897")
    cards = [next(low) if i < running else next(high) if i < -running else next(neutral) for i in range(2 * seats)]
    return list(zip(cards[::2], cards[1::2], strict=True))


def deal(
    rules: Rules,
    hand: tuple[str, str],
    up: str,
    *,
    others: Sequence[tuple[str, str]] = (),
    hole: str = "8",
    draws: Sequence[str] = (),
    steps: Sequence[int] = (),
) -> BlackjackEnv:
    """The agent in seat 0 holds ``hand`` against ``up``, seat i + 1 ``others[i]`` (basic strategy
    plays them, after the agent); ``draws`` are the next cards; ``steps`` the agent's first actions."""
    firsts = [hand[0], *(a for a, _ in others)]
    seconds = [hand[1], *(b for _, b in others)]
    env = BlackjackEnv(rules=rules, seats=1 + len(others), others=basic(rules))
    env.reset(seed=0, options={"cards": [*firsts, up, *seconds, hole, *draws]})
    for action in steps:
        assert env.action_masks()[action], (Action(action).name, env.action_masks())
        env.step(action)
    assert env.phase in (Phase.INSURANCE, Phase.PLAY)
    return env


def cards_seen(env: BlackjackEnv) -> list[str]:
    """Every card on the table that has been seen: all seats' cards and the dealer's up card; the
    dealer's other cards only once the round is over (a hole card is face down while seats act)."""
    summary = env.round_summary()
    hands = [hand for seat in summary.get("seats", [summary]) for hand in seat["hands"]]
    dealer = summary["dealer"]["cards"]
    return [c for hand in hands for c in hand["cards"]] + (dealer if env.phase == Phase.OVER else dealer[:1])


def decide(env: BlackjackEnv, strategy: CountingStrategy, table: StrategyTable | None = None) -> int:
    """The compiled decision at the agent's current decision; it must be legal there."""
    table = table if table is not None else basic(env.rules)
    params = policy_params(strategy, env.rules)
    action = int(count_decision(table.actions, table.insurance, params, env._st, env._hands))
    assert env.action_masks()[action], f"{Action(action).name} is illegal here"
    return action


def first_choice(rules: Rules, section: str, key: str, up: str) -> int:
    """Basic strategy's preferred action in a cell (the preconditions the scenarios rely on)."""
    return int(basic(rules).actions[row_of_label(section, key), (1 if up == "A" else int(up)) - 1, 0])


SURRENDER_15_THEN_STAND_4 = (entry("hard 15", "10", 0, "R"), entry("hard 15", "10", 4, "S"))
DOUBLE_11_V_A = (entry("hard 11", "A", 1, "D"),)
CONTRACT_CASES = [
    # rules, index entries, agent's hand, up card, the other seats' running count and how many seats,
    # draws, the agent's steps before the decision, the count (exact, or its side of a threshold), play
    *(
        pytest.param(ONE_DECK, [entry("hard 16", "10", 0, "S")], ("10", "6"), "10", rc, 1, (), (), side, a, id=name)
        for name, rc, side, a in [
            ("16v10-S0-above", 2, (">", 0.0), S),
            ("16v10-S0-at", 1, 0.0, S),
            ("16v10-S0-below", 0, ("<", 0.0), H),
        ]
    ),
    *(  # late surrender: the R question comes first, and basic surrenders 16 v 10
        pytest.param(ONE_DECK_LS, [entry("hard 16", "10", 0, "S")], ("10", "6"), "10", rc, 1, (), (), side, R, id=name)
        for name, rc, side in [
            ("LS-16v10-above", 2, (">", 0.0)),
            ("LS-16v10-at", 1, 0.0),
            ("LS-16v10-below", 0, ("<", 0.0)),
        ]
    ),
    *(
        pytest.param(ONE_DECK_LS, SURRENDER_15_THEN_STAND_4, ("10", "5"), "10", rc, n, (), (), side, a, id=name)
        for name, rc, n, side, a in [
            ("15v10-R0-S4-at-4", 4, 5, 4.0, R),
            ("15v10-R0-S4-at-0", 1, 1, 0.0, R),
            ("15v10-R0-S4-below-0", 0, 1, ("<", 0.0), H),
        ]
    ),
    *(  # three cards: surrender is not offered, so only the stand entry is asked
        pytest.param(ONE_DECK_LS, SURRENDER_15_THEN_STAND_4, ("10", "2"), "10", rc, 5, ("3",), (H,), side, a, id=name)
        for name, rc, side, a in [
            ("3-card-15v10-above-4", 3, (">", 4.0), S),
            ("3-card-15v10-below-4", 2, ("<", 4.0), H),
        ]
    ),
    *(
        pytest.param(ONE_DECK, [entry("pair 10", "6", 4, "P")], ("10", "10"), "6", rc, 5, (), (), side, a, id=name)
        for name, rc, side, a in [
            ("10,10v6-P4-at", 4, 4.0, P),
            ("10,10v6-P4-above", 5, (">", 4.0), P),
            ("10,10v6-P4-below", 3, ("<", 4.0), S),  # not split: the hard 20 cell stands
        ]
    ),
    *(  # 11 v A, insurance declined first; below the index it hits although basic doubles
        pytest.param(ONE_DECK, DOUBLE_11_V_A, ("6", "5"), "A", rc, 1, (), (N,), side, a, id=name)
        for name, rc, side, a in [("11vA-D1-above", 0, (">", 1.0), D), ("11vA-D1-below", -1, ("<", 1.0), H)]
    ),
    pytest.param(ONE_DECK, DOUBLE_11_V_A, ("5", "2"), "A", 1, 1, ("4",), (N, H), (">", 1.0), H, id="3-card-11vA"),
    *(
        pytest.param(ONE_DECK, [insurance(3)], hand, "A", rc, 5, (), (), side, a, id=name)
        for name, hand, rc, side, a in [
            ("insure-I3-above", ("10", "6"), 4, (">", 3.0), I),
            ("insure-I3-below", ("10", "6"), 3, ("<", 3.0), N),
            ("even-money-I3-above", ("A", "K"), 6, (">", 3.0), I),
            ("even-money-I3-below", ("A", "K"), 5, ("<", 3.0), N),
        ]
    ),
    *(
        pytest.param(ONE_DECK, [entry("hard 12", "4", 0, "H", "below")], ("10", "2"), "4", rc, 1, (), (), side, a, id=n)
        for n, rc, side, a in [
            ("12v4-H-below-0", -2, ("<", 0.0), H),
            ("12v4-H-at-0", -1, 0.0, S),
            ("12v4-H-above", 0, (">", 0.0), S),
        ]
    ),
    *(
        pytest.param(
            ONE_DECK, [entry("hard 13", "2", -1, "S", "below")], ("10", "3"), "2", rc, 2, (), (), side, a, id=n
        )
        for n, rc, side, a in [
            ("13v2-S-below-minus-1", -4, ("<", -1.0), S),
            ("13v2-S-above-minus-1", 0, (">", -1.0), H),
        ]
    ),
    *(  # a three-card 16 with late surrender: surrender is not offered, the stand entry answers
        pytest.param(
            ONE_DECK_LS, [entry("hard 16", "10", 0, "S")], ("10", "2"), "10", rc, 1, ("4",), (H,), side, a, id=n
        )
        for n, rc, side, a in [("3-card-16v10-at", 0, 0.0, S), ("3-card-16v10-below", -1, ("<", 0.0), H)]
    ),
]


def check_side(count: float, side: float | tuple[str, float]) -> None:
    """The scenario's count is where it claims: exactly a value, or strictly above / below one."""
    if isinstance(side, tuple):
        op, threshold = side
        assert count > threshold if op == ">" else count < threshold, (count, side)
    else:
        assert count == side


@pytest.mark.parametrize(
    ("rules", "entries", "hand", "up", "others_rc", "others", "draws", "steps", "count", "play"), CONTRACT_CASES
)
def test_the_contracts_decisions(
    rules: Rules,
    entries: list[dict[str, Any]],
    hand: tuple[str, str],
    up: str,
    others_rc: int,
    others: int,
    draws: tuple[str, ...],
    steps: tuple[int, ...],
    count: float | tuple[str, float],
    play: int,
) -> None:
    env = deal(rules, hand, up, others=seats_with(others_rc, others), draws=draws, steps=steps)
    strategy = hilo(*entries)
    expected_count = oracle_count(cards_seen(env), rules.decks)
    check_side(expected_count, count)
    assert true_count(policy_params(strategy, rules), env._st) == expected_count
    assert decide(env, strategy) == play


def test_the_scenarios_preconditions_on_basic_strategy() -> None:
    """What the scenarios above lean on: basic strategy hits 16 v 10 without surrender and surrenders
    it with; it does not surrender 15 v 10 in one deck; it doubles 11 v A and never insures."""
    assert first_choice(ONE_DECK, "hard", "16", "10") == H
    assert first_choice(ONE_DECK_LS, "hard", "16", "10") == R
    assert first_choice(ONE_DECK_LS, "hard", "15", "10") == H
    assert first_choice(ONE_DECK, "hard", "11", "A") == D
    assert first_choice(ONE_DECK, "pairs", "10", "6") == S
    assert first_choice(ONE_DECK, "hard", "12", "4") == S
    assert first_choice(ONE_DECK, "hard", "13", "2") == S
    assert not basic(ONE_DECK).insurance.any()
    low_count = deal(ONE_DECK, ("6", "5"), "A", others=seats_with(-1, 1), steps=(N,))
    assert decide(low_count, hilo()) == D  # so 11vA-D1-below's hit is the entry's doing


def narrowed(hand: str, up: str, index: float, action: str, cards: str) -> dict[str, Any]:
    """An entry for the cell's hands of two cards or of three or more (``cards``)."""
    return {**entry(hand, up, index, action), "cards": cards}


ALWAYS_STAND_16V10 = {  # entries whose condition holds at any count, by the hands they play
    "any": entry("hard 16", "10", -99, "S"),
    "two": narrowed("hard 16", "10", -99, "S", "two"),
    "three_or_more": narrowed("hard 16", "10", -99, "S", "three_or_more"),
}


@pytest.mark.parametrize("cards", list(ALWAYS_STAND_16V10))
@pytest.mark.parametrize(
    ("hand", "draws", "steps", "three_or_more"),
    [
        pytest.param(("10", "6"), (), (), False, id="two-cards"),
        pytest.param(("10", "3"), ("3",), (H,), True, id="three-cards"),
        pytest.param(("5", "3"), ("2", "6"), (H, H), True, id="four-cards"),
    ],
)
def test_an_entry_narrowed_by_its_cards_plays_only_those_hands(
    cards: str, hand: tuple[str, str], draws: tuple[str, ...], steps: tuple[int, ...], three_or_more: bool
) -> None:
    """16 v 10 in one deck without surrender (basic strategy hits it): an entry that always stands
    stands on the hands its ``cards`` name and leaves the others to basic strategy."""
    env = deal(ONE_DECK, hand, "10", draws=draws, steps=steps)
    assert env.round_summary()["hands"][0]["total"] == 16
    plays_it = cards == "any" or (cards == "three_or_more") == three_or_more
    assert decide(env, hilo(ALWAYS_STAND_16V10[cards])) == (S if plays_it else H)


def test_a_cell_takes_one_entry_for_two_cards_and_another_for_more() -> None:
    """Both narrowed entries of one question in one strategy, each playing its hands, through JSON."""
    data = with_fields(
        indices=[narrowed("hard 16", "10", -99, "S", "two"), narrowed("hard 16", "10", 99, "S", "three_or_more")]
    )
    strategy = CountingStrategy.from_dict(json.loads(json.dumps(CountingStrategy.from_dict(data).to_dict())))
    assert [e.cards for e in strategy.indices] == ["two", "three_or_more"]
    assert decide(deal(ONE_DECK, ("10", "6"), "10"), strategy) == S
    assert decide(deal(ONE_DECK, ("10", "3"), "10", draws=("3",), steps=(H,)), strategy) == H


SWEEP_CELLS = [
    # rules, hand, up card, the entry's (hand, up, action) or "insurance", the play when it says yes,
    # the play when it says no, the agent's steps before the decision
    pytest.param(ONE_DECK, ("10", "6"), "10", ("hard 16", "10", "S"), S, H, (), id="16v10-S"),
    pytest.param(ONE_DECK, ("10", "6"), "10", ("hard 16", "10", "H"), H, S, (), id="16v10-H"),
    pytest.param(ONE_DECK_LS, ("10", "5"), "10", ("hard 15", "10", "R"), R, H, (), id="15v10-R"),
    pytest.param(ONE_DECK, ("10", "K"), "6", ("pair 10", "6", "P"), P, S, (), id="10,Kv6-P"),
    pytest.param(SIX_DECKS, ("6", "5"), "A", ("hard 11", "A", "D"), D, H, (N,), id="11vA-D"),
    pytest.param(SIX_DECKS, ("A", "7"), "2", ("soft 18", "2", "D"), D, S, (), id="soft18v2-D-else-stand"),
    pytest.param(SIX_DECKS, ("8", "8"), "A", ("pair 8", "A", "R"), R, P, (N,), id="8,8vA-R-else-split"),
    pytest.param(SIX_DECKS, ("10", "6"), "A", "insurance", I, N, (), id="insurance"),
    pytest.param(SIX_DECKS, ("A", "Q"), "A", "insurance", I, N, (), id="even-money"),
]


@pytest.mark.parametrize("when", ["at_or_above", "below"])
@pytest.mark.parametrize(("rules", "hand", "up", "cell", "yes", "no", "steps"), SWEEP_CELLS)
def test_an_entry_says_yes_exactly_when_its_condition_holds_at_the_exact_count(
    rules: Rules,
    hand: tuple[str, str],
    up: str,
    cell: tuple[str, str, str] | str,
    yes: int,
    no: int,
    steps: tuple[int, ...],
    when: str,
) -> None:
    """The index swept across the (float, unrounded) true count of the cards seen: at the count
    itself, a hair above it, and a whole count either side."""
    env = deal(rules, hand, up, others=seats_with(4, 2), steps=steps)
    count = oracle_count(cards_seen(env), rules.decks)
    assert count != round(count)  # a fractional count: rounding it would show
    for index in (count - 1, count, float(np.nextafter(count, math.inf)), count + 1):
        strategy = hilo(insurance(index, when) if cell == "insurance" else entry(*cell[:2], index, cell[2], when))
        holds = count >= index if when == "at_or_above" else count < index
        assert decide(env, strategy) == (yes if holds else no), (index, count)


def test_the_hole_card_is_not_counted_while_face_down() -> None:
    """16 v 10 stand at 0 with exactly 0 seen; the hole card (a king) would make it -1 and a hit."""
    env = deal(ONE_DECK, ("10", "6"), "10", others=seats_with(1, 1), hole="K", draws=("9", "9"))
    params = policy_params(hilo(entry("hard 16", "10", 0, "S")), ONE_DECK)
    assert true_count(params, env._st) == oracle_count(cards_seen(env), 1) == 0.0
    assert decide(env, hilo(entry("hard 16", "10", 0, "S"))) == S
    env.step(S)
    assert env.phase == Phase.OVER  # the dealer's K now shows, and the other seat's draws
    seen = cards_seen(env)
    assert "K" in seen and len(seen) > 5
    assert true_count(params, env._st) == oracle_count(seen, 1) < 0


@pytest.mark.parametrize("decks", [1, 2, 6])
@pytest.mark.parametrize("name", [*SYSTEMS, "custom"])
def test_every_systems_count_is_its_tags_over_the_cards_seen(name: str, decks: int) -> None:
    """Balanced systems per unseen deck, KO on its running count from (decks - 1) x -4; hole hidden
    at the decision, every card counted at the end."""
    if name == "custom":
        tags = {"A": -2, "2": 1, "3": 1.5, "4": 2, "5": 2, "6": 1, "7": 0.5, "8": 0, "9": -0.5, "10": -1.25}
        strategy = CountingStrategy.from_dict({"system": {"tags": tags, "balanced": False}})
    else:
        strategy = CountingStrategy.from_dict({"system": name})
    rules = Rules(decks=decks, penetration=0.75)
    params = policy_params(strategy, rules)
    env = deal(rules, ("9", "4"), "6", others=[("A", "2"), ("K", "5"), ("7", "3")], hole="Q", draws=("2", "A", "5"))
    assert true_count(params, env._st) == oracle_count(cards_seen(env), decks, strategy.system)
    while env.phase != Phase.OVER:
        env.step(H if env.action_masks()[H] else S)
    seen = cards_seen(env)
    assert true_count(params, env._st) == oracle_count(seen, decks, strategy.system)
    seen_by_value = [sum(value_of(c) == v for c in seen) for v in VALUES]
    assert true_count(params, env._st) == strategy.system.true_count(seen_by_value, decks)


PAIR_CELL_CASES = [
    # a pair's cell applies while it may be split; not split by an entry, it plays as its total
    pytest.param(ONE_DECK, ("8", "8"), [entry("pair 8", "10", 99, "P")], H, id="8,8-not-split-plays-hard-16"),
    pytest.param(
        ONE_DECK,
        ("8", "8"),
        [entry("pair 8", "10", 99, "P"), entry("hard 16", "10", -99, "S")],
        S,
        id="8,8-not-split-takes-hard-16s-entry",
    ),
    pytest.param(ONE_DECK, ("8", "8"), [entry("hard 16", "10", -99, "S")], P, id="hard-16-entry-leaves-8,8-split"),
    pytest.param(
        ONE_DECK.replace(split_to=1), ("8", "8"), [entry("hard 16", "10", -99, "S")], S, id="no-split-8,8-is-hard-16"
    ),
    pytest.param(ONE_DECK.replace(split_to=1), ("10", "10"), [entry("pair 10", "10", -99, "P")], S, id="no-split-10s"),
    # late surrender: refused a split by an entry, 8,8 v 10 asks hard 16 v 10's surrender question too
    pytest.param(ONE_DECK_LS, ("8", "8"), [entry("pair 8", "10", 99, "P")], R, id="8,8-not-split-surrenders-as-16"),
    pytest.param(
        ONE_DECK_LS,
        ("8", "8"),
        [entry("pair 8", "10", 99, "P"), entry("pair 8", "10", 99, "R")],
        S,  # hard 16 v 10 is Rs in one deck: surrender refused, it stands
        id="8,8-surrender-entry-answers-once",
    ),
]


@pytest.mark.parametrize(("rules", "hand", "entries", "play"), PAIR_CELL_CASES)
def test_a_pairs_cell_applies_while_it_may_be_split(
    rules: Rules, hand: tuple[str, str], entries: list[dict[str, Any]], play: int
) -> None:
    assert first_choice(ONE_DECK, "pairs", "8", "10") == P and first_choice(ONE_DECK, "hard", "16", "10") == H
    assert decide(deal(rules, hand, "10"), hilo(*entries)) == play


def test_an_unlisted_pair_plays_basic_strategy_whatever_its_totals_entries() -> None:
    """One deck, no surrender: basic stands on 7,7 v 10 (its pair cell) but hits hard 14 v 10. No
    entry names pair 7, so 7,7 v 10 plays basic strategy, stand, even where hard 14's entry would
    say hit (stand only at +99 or above)."""
    assert first_choice(ONE_DECK, "pairs", "7", "10") == S and first_choice(ONE_DECK, "hard", "14", "10") == H
    env = deal(ONE_DECK, ("7", "7"), "10")
    assert decide(env, hilo()) == S
    assert decide(env, hilo(entry("hard 14", "10", 99, "S"))) == S


# ============================================================================ 4. the simulator
def counting(strategy: CountingStrategy, rules: Rules = SIX_DECKS) -> Policy:
    """The strategy as the simulator runs it, over the rules' basic strategy."""
    return Policy.from_counting(strategy, rules, basic(rules))


def basic_policy(rules: Rules = SIX_DECKS) -> Policy:
    """Basic strategy as the simulator runs it: the baseline and the other seats."""
    return Policy.from_table(basic(rules))


def run(policy: Policy, rounds: int, seed: int = 1, **kwargs: Any) -> SimulationResult:
    """A seeded run on one worker (six decks unless ``rules=`` says otherwise)."""
    return simulate(kwargs.pop("rules", SIX_DECKS), policy, rounds, seed=seed, workers=1, **kwargs).result


def same_statistics(a: SimulationResult, b: SimulationResult, scale: float = 1.0) -> None:
    """EV, its error and spread (scaled by a flat bet) and every outcome rate, bit for bit."""
    assert (a.rounds, a.rounds_played()) == (b.rounds, b.rounds_played())
    assert (a.ev(), a.sd(), a.stderr()) == (scale * b.ev(), scale * b.sd(), scale * b.stderr())
    assert a.rates() == b.rates()


@pytest.mark.parametrize("ramp", [[[0, 1]], [[-4, 1], [0, 1], [4, 1]]], ids=["one-pair", "three-flat-pairs"])
def test_a_flat_bet_without_indices_is_basic_strategy_bit_for_bit(ramp: list[list[float]]) -> None:
    policy = counting(hilo(ramp=ramp))
    paired = run(policy, 300_000, baseline=basic_policy())
    assert paired.diff() == (0.0, 0.0, 300_000)
    alone = run(policy, 300_000)
    same_statistics(alone, run(basic_policy(), 300_000))
    assert alone.avg_bet() == 1.0


def test_a_flat_bet_of_two_doubles_basic_strategys_results_exactly() -> None:
    basic_result = run(basic_policy(), 200_000)
    two = run(counting(CountingStrategy.from_dict({"system": "omega2", "ramp": [[0, 2]]})), 200_000)
    same_statistics(two, basic_result, scale=2.0)
    assert two.avg_bet() == 2.0


def basic_in_disguise(rules: Rules) -> CountingStrategy:
    """An entry in every cell (pairs: where basic splits or surrenders) that answers its question
    exactly as basic strategy does, at any count: +-1000 indices."""
    table = basic(rules)
    entries = []
    for row in range(N_ROWS):
        section, key = row_label(row)
        for col in range(N_UP):
            first = "SHDPR"[int(table.actions[row, col, 0])]
            if section == "pairs" and first not in "PR":
                continue
            hand = f"{'pair' if section == 'pairs' else section} {key}"
            up = "A" if col == 0 else str(col + 1)
            action, index = ("S", 1000) if first == "H" else (first, -1000)  # never stand, or always yes
            entries.append(entry(hand, up, index, action))
    return hilo(*entries)


def test_entries_that_answer_as_basic_strategy_does_play_basic_strategy_bit_for_bit() -> None:
    """Every hard and soft cell decided by count_decision rather than the table, on the same shoes."""
    policy = counting(basic_in_disguise(SIX_DECKS))
    assert policy.kind == POLICY_COUNT
    result = run(policy, 300_000, seed=2, baseline=basic_policy())
    assert result.diff() == (0.0, 0.0, 300_000)


@pytest.mark.parametrize(
    "inert",
    [
        entry("hard 16", "10", 99, "R"),
        entry("hard 14", "10", 3, "R"),
    ],
    ids=["hard-16-v-10-R", "hard-14-v-10-R"],
)
def test_a_surrender_entry_without_surrender_changes_nothing(inert: dict[str, Any]) -> None:
    """One deck, no surrender: a strategy whose only entry is a surrender plays basic strategy."""
    result = run(counting(hilo(inert), ONE_DECK), 300_000, rules=ONE_DECK, baseline=basic_policy(ONE_DECK))
    assert result.diff()[:2] == (0.0, 0.0)


def test_illustrious_18_and_fab_4_beat_basic_strategy_at_a_flat_bet_on_the_same_shoes() -> None:
    policy = counting(built_in_strategy("hilo-i18-fab4", hit_soft_17=True))
    result = run(policy, 2_000_000, seed=5, baseline=basic_policy())
    gain, stderr, paired = result.diff()
    assert paired == 2_000_000
    assert gain - 1.96 * stderr > 0, (gain, stderr)
    assert result.rates()["insurance"] > 0 and result.avg_bet() == 1.0


def buckets_betting_the_ramp(result: SimulationResult, ramp: Sequence[tuple[float, float]]) -> list[dict[str, Any]]:
    """The result's true-count buckets, checked: shares adding up to 1, and every bucket played at
    the ramp's bet for its whole count (the ramps' thresholds are whole counts)."""
    buckets = result.by_true_count()
    assert buckets is not None
    assert sum(b["share"] for b in buckets) == pytest.approx(1.0, abs=1e-12)
    assert sum(b["rounds"] for b in buckets) == result.rounds
    assert sum(b["rounds_played"] > 0 for b in buckets) >= 12  # most of the 17 buckets are seen
    for bucket in buckets:
        if bucket["rounds_played"]:
            assert bucket["avg_bet"] == ramp_oracle(ramp, bucket["true_count"]), bucket
    return buckets


def test_a_1_8_ramp_bets_by_the_ramp_at_each_rounds_true_count() -> None:
    ramp = spread_ramp("1-8")
    result = run(counting(built_in_strategy("hilo-i18-fab4", True).with_ramp(ramp)), 500_000, seed=6)
    buckets = buckets_betting_the_ramp(result, ramp)
    assert result.rounds_played() == result.rounds and 1.0 < result.avg_bet() < 8.0
    played = sum(b["avg_bet"] * b["rounds_played"] for b in buckets)
    assert result.avg_bet() == pytest.approx(played / result.rounds_played(), rel=1e-12)


@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_ko_bets_its_first_round_at_its_initial_running_count(decks: int) -> None:
    """A fresh shoe: KO's count is (decks - 1) x -4, the bet that of the ramp there (3, not 1 or 5)."""
    initial = -4 * (decks - 1)
    ramp = [[initial - 1, 1], [initial, 3], [initial + 1, 5]]
    rules = Rules(decks=decks, penetration=0.75)
    result = run(counting(CountingStrategy.from_dict({"system": "ko", "ramp": ramp}), rules), 1, rules=rules)
    assert result.avg_bet() == 3.0
    buckets = result.by_true_count()
    assert buckets is not None
    assert [b["true_count"] for b in buckets if b["rounds"]] == [max(initial, -6)]


def test_ko_plays_on_its_running_count() -> None:
    strategy = CountingStrategy.from_dict(
        {"system": "ko", "ramp": [[-100, 1], [1, 2], [3, 4]], "indices": [entry("hard 16", "10", 4, "S")]}
    )
    result = run(counting(strategy), 300_000, seed=7)
    buckets = buckets_betting_the_ramp(result, strategy.ramp)
    assert 1.0 < result.avg_bet() < 4.0
    assert buckets[0]["share"] > 0.2  # every shoe starts at -20: the pooled "<= -6" bucket


@pytest.mark.parametrize(
    ("fields", "seats", "seat"),
    [({"ramp": [[1, 1], [2, 2], [3, 4], [5, 8]]}, 1, 0), ({"ramp": [[0, 0], [1, 1], [3, 4]], "exit_below": -2}, 3, 2)],
    ids=["ramp", "sits-out-at-a-table"],
)
def test_a_strategy_paired_with_itself_plays_every_round_alike(fields: dict[str, Any], seats: int, seat: int) -> None:
    """The baseline replays the first policy's cards: its count, bets and plays must be the same."""
    strategy = CountingStrategy.from_dict({**built_in_strategy("hilo-i18-fab4", True).to_dict(), **fields})
    policy = counting(strategy)
    table = Table(seats, seat, basic_policy()) if seats > 1 else None
    result = run(policy, 300_000, seed=10, baseline=policy, table=table)
    assert result.diff() == (0.0, 0.0, 300_000)
    np.testing.assert_equal(result.by_true_count(0), result.by_true_count(1))  # NaN where nothing was played
    assert (result.avg_bet(0), result.rounds_played(0)) == (result.avg_bet(1), result.rounds_played(1))


SITTING_OUT = {
    "zero-bet": {"ramp": [[0, 0], [1, 1]]},
    "exit-below": {"exit_below": -1},
}


@pytest.mark.parametrize("name", SITTING_OUT)
def test_sitting_out_needs_other_seats(name: str) -> None:
    policy = counting(hilo(**SITTING_OUT[name]))
    with pytest.raises(ValueError, match="needs other seats at the table: use seats >= 2"):
        run(policy, 1000)


def test_a_zero_bet_sits_out_exactly_the_rounds_below_its_threshold() -> None:
    result = run(counting(hilo(**SITTING_OUT["zero-bet"])), 300_000, seed=8, table=Table(2, 0, basic_policy()))
    buckets = result.by_true_count()
    assert buckets is not None and 0 < result.rounds_played() < result.rounds
    assert all(b["rounds_played"] == (b["rounds"] if b["true_count"] >= 1 else 0) for b in buckets)


def test_the_exit_rule_leaves_the_rest_of_the_shoe() -> None:
    """Below -1 it never plays; from -1 up it sits out the rounds after an exit, the count having
    come back up within the same shoe."""
    result = run(counting(hilo(**SITTING_OUT["exit-below"])), 300_000, seed=9, table=Table(2, 1, basic_policy()))
    buckets = result.by_true_count()
    assert buckets is not None and 0 < result.rounds_played() < result.rounds
    assert all(b["rounds_played"] == 0 for b in buckets if b["true_count"] < -1)
    assert sum(b["rounds"] - b["rounds_played"] for b in buckets if b["true_count"] >= -1) > 0


def test_an_exit_holds_for_every_policy_of_a_paired_run() -> None:
    """An exit strategy paired with itself plays the same rounds: the shoe an exit leaves is the
    same shoe for the second policy, also when the exit comes at a shoe's first round (exit below
    +0.5: every fresh shoe starts at 0, below it)."""
    policy = counting(hilo(ramp=[[0, 1]], exit_below=0.5))
    paired = run(policy, 20_000, seed=3, baseline=policy, table=Table(2, 1, basic_policy()))
    assert paired.rounds_played(0) == paired.rounds_played(1)
    assert paired.diff() == (0.0, 0.0, 20_000)


@pytest.mark.parametrize(
    ("rules", "problem"),
    [(Rules(decks=0, penetration=0.0), "needs a finite shoe"), (Rules(penetration=0.0), "dealt to a cut card")],
    ids=["infinite-deck", "no-penetration"],
)
def test_counting_needs_a_shoe_with_a_cut_card(rules: Rules, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Policy.from_counting(hilo(), rules, basic(SIX_DECKS))


REPLAYS = {
    "i18-fab4-1-8-two-decks": (
        Rules(decks=2, penetration=0.75),
        built_in_strategy("hilo-i18-fab4", True).with_ramp(spread_ramp("1-8")),
        (1, 0),
    ),
    "ko-six-decks-seat-2-of-3": (
        SIX_DECKS,
        CountingStrategy.from_dict(
            {
                "system": "ko",
                "ramp": [[-4, 1], [0, 2], [2, 5]],
                "indices": [entry("hard 16", "10", -2, "S"), entry("hard 12", "3", 1, "S"), insurance(3)],
            }
        ),
        (3, 1),
    ),
    "hiopt2-one-deck-seven-seats-shoe-runs-out": (
        Rules(decks=1, penetration=0.9),
        CountingStrategy.from_dict(
            {"system": "hiopt2", "ramp": [[-1, 1], [2, 3]], "indices": [entry("hard 12", "2", 1, "S"), insurance(2)]}
        ),
        (7, 3),
    ),
}


@pytest.mark.parametrize("name", REPLAYS)
def test_the_simulator_bets_and_plays_as_the_env_replayed_on_its_cards(name: str) -> None:
    """The kernel's card stream dealt through Blackjack-v0, the count kept here from each round's
    cards, the bet from the ramp at the count before the round's first card and every decision by
    count_decision: the same results, bets and true-count buckets as the compiled run."""
    rules, strategy, (seats, seat) = REPLAYS[name]
    table = Table(seats, seat, basic_policy(rules))
    rounds = 3000
    words = chunk_words(11, 1, 1)[0]
    result = SimulationResult(1, run_chunk(rules.to_array(), [counting(strategy, rules)], words, table, rounds))
    env = kernel_env(rules, table, words)
    total = bets = 0.0
    reshuffles = 0
    buckets = [0] * 17
    seen: list[str] = []
    for _ in range(rounds):
        if env._st[E.S_SHOE_POS] >= env._st[E.S_CUT]:
            seen = []  # the round starts a fresh shoe
        count = oracle_count(seen, rules.decks, strategy.system)
        bet = ramp_oracle(strategy.ramp, count)
        buckets[min(max(math.floor(count), -6), 10) + 6] += 1
        env.reset()
        while env.phase != Phase.OVER:
            env.step(decide(env, strategy))
        # a shoe that ran out mid-round was reshuffled less the round's cards: those are all it has seen
        seen = cards_seen(env) if env._st[E.S_MID_SHUFFLE] else seen + cards_seen(env)
        reshuffles += bool(env._st[E.S_MID_SHUFFLE])
        total += bet * env.round_summary()["result"]
        bets += bet
    assert result.totals[OUT_STATS + ST_PLAYED] == rounds
    assert result.totals[OUT_STATS + ST_BET] == bets
    assert result.totals[OUT_STATS + ST_SUM] == pytest.approx(total, abs=1e-9)
    by_count = result.by_true_count()
    assert by_count is not None and [b["rounds"] for b in by_count] == buckets
    assert (reshuffles > 0) == (rules.penetration > 0.8)


def ramp_oracle(ramp: Sequence[tuple[float, float]], count: float) -> float:
    """The contract's bet: the last pair whose count is <= the count; the first pair's below them all."""
    return ([bet for at, bet in ramp if at <= count] or [ramp[0][1]])[-1]


def kernel_env(rules: Rules, table: Table, words: np.ndarray) -> BlackjackEnv:
    """Blackjack-v0 set up as the kernel starts a chunk (new shoe order, its card words), the agent
    in the table's seat and the others playing basic strategy, as in tests/test_simulate.py."""
    env = BlackjackEnv(rules, seats=table.seats, seat=table.seat, others=basic(rules))
    env.reset(seed=0)
    env._st[:] = 0
    env._hands[:] = 0
    E.set_seats(env._st, table.seats)
    E.load_rules(env._st, rules.to_array())
    env._st[E.S_AGENT] = table.seat
    env._shoe[:] = E.new_shoe(rules.decks)
    env._st[E.S_SHOE_LEN] = env._st[E.S_SHOE_POS] = len(env._shoe)
    env._st[E.S_RNG : E.S_RNG + 4] = words[:4]
    return env


# ============================================================================ 5. random strategies
HANDS = [f"hard {t}" for t in range(4, 22)] + [f"soft {t}" for t in range(12, 22)]
PAIRS = ["pair A", *(f"pair {v}" for v in range(2, 11))]
UPS = ["A", *(str(v) for v in range(2, 11))]


@st.composite
def random_strategies(draw: st.DrawFn) -> CountingStrategy:
    """A random system, ramp and set of index entries (at most one per question)."""
    entries: dict[tuple[str, str, str], dict[str, Any]] = {}
    for _ in range(draw(st.integers(0, 150))):
        pair = draw(st.booleans())
        hand = draw(st.sampled_from(PAIRS if pair else HANDS))
        action = draw(st.sampled_from("PR" if pair else "SHDR"))
        up = draw(st.sampled_from(UPS))
        index = draw(st.floats(-8, 8, allow_nan=False))
        when = draw(st.sampled_from(["at_or_above", "below"]))
        entries[(hand, up, "S" if action == "H" else action)] = entry(hand, up, index, action, when)
    ins = [insurance(draw(st.floats(-5, 8)), draw(st.sampled_from(["at_or_above", "below"])))]
    counts = sorted(set(draw(st.lists(st.integers(-6, 8), min_size=1, max_size=6))))
    return CountingStrategy.from_dict(
        {
            "system": draw(st.sampled_from(list(SYSTEMS))),
            "ramp": [[c, draw(st.sampled_from([1, 2, 4]))] for c in counts],
            "indices": list(entries.values()) + (ins if draw(st.booleans()) else []),
        }
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=rules_strategy().filter(lambda r: not r.infinite and r.penetration > 0),
    strategy=random_strategies(),
    table=st.tuples(st.integers(1, 3), st.integers(0, 2)).map(lambda t: (t[0], t[1] % t[0])),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_strategies_always_choose_a_legal_action(
    rules: Rules, strategy: CountingStrategy, table: tuple[int, int], seed: int
) -> None:
    """A shoe of BlackjackShoe-v0 (the agent in some seat of up to three, the others playing at
    random) played by count_decision over a random table: every action it picks is legal, and the
    compiled Hi-Lo count is the env's own at every step."""
    seats, seat = table
    env = BlackjackShoeEnv(rules=rules, bets=(1,), seats=seats, seat=seat, others="random")
    basic_stand_in = random_table(np.random.default_rng(seed))  # any preference orders
    hilo_params = policy_params(hilo(), rules)
    _, info = env.reset(seed=seed)
    for _ in range(400):
        assert true_count(hilo_params, env._st) == info["true_count"]
        action = 7 if env._mask[7] else decide(env, strategy, basic_stand_in)
        assert info["action_mask"][action]
        _, _, terminated, _, info = env.step(action)
        if terminated:
            break
