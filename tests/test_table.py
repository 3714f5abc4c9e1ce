"""A table of 1-7 seats: deal order, order of play, insurance per seat, the dealer's play, sitting out.

Blackjack-v0 with ``seats``/``seat``/``others`` (one round per episode) on stacked cards. Cards are
stacked in deal order: one card to each playing seat from seat 0 up, the dealer's up card, a second
card to each seat in the same order, the hole card (peek games), then every card in the order play
draws it (seat by seat, each seat finishing all its hands; the dealer last). The other seats act
inside the agent's steps, so the scenarios give them predictable policies (``strategy`` below).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import D, H, I, N, P, R, S, legal, oracle_results, step_vector_beside_singles
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rule_sets import rules_strategy

import blackjack_env
from blackjack_env import Action, BlackjackEnv, BlackjackShoeEnv, Phase, Rules
from blackjack_env.cards import RANK_NAMES
from blackjack_env.strategy import N_ROWS, N_UP, PAIR_BASE, StrategyTable, order_of_code

ENV_ID = "blackjack_env/Blackjack-v0"


def strategy(code: str, pairs: str | None = None, insurance: tuple[bool, bool] = (False, False)) -> StrategyTable:
    """A strategy that plays one chart code everywhere (``pairs`` on the pair rows), and the given
    insurance choices (``insurance[1]``: even money holding a blackjack)."""
    actions = np.tile(order_of_code(code), (N_ROWS, N_UP, 1))
    if pairs is not None:
        actions[PAIR_BASE:] = order_of_code(pairs)
    return StrategyTable(actions, np.array(insurance), name=f"always-{code}")


STANDER = strategy("S")  # stands on everything, never insures
HITTER = strategy("H")  # hits until 21 or bust
SPLITTER = strategy("S", pairs="P")  # splits every pair, stands on everything else
SURRENDERER = strategy("Rs")  # surrenders when it may, else stands
INSURER = strategy("S", insurance=(True, True))  # insures (takes even money), then stands

NO_HOLE = {"peek": False, "surrender": "none"}


def table_seats(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Every seat's summary (a table of one seat has no "seats": the agent's summary is its seat's)."""
    return summary.get("seats", [summary])


def seat_cards(summary: dict[str, Any]) -> list[list[list[str]]]:
    """Every seat's hands as lists of card names."""
    return [[hand["cards"] for hand in seat["hands"]] for seat in table_seats(summary)]


def all_cards(summary: dict[str, Any]) -> Counter[str]:
    """Every card on the table: all seats' hands and the dealer's (hole card included)."""
    cards: Counter[str] = Counter(summary["dealer"]["cards"])
    for seat in table_seats(summary):
        for hand in seat["hands"]:
            cards.update(hand["cards"])
    return cards


@dataclass
class TableRound:
    env: BlackjackEnv
    masks: list[frozenset[Action]]  # the agent's legal actions before each step
    observations: list[np.ndarray]  # the agent's observation before each step
    views: list[dict[str, Any]]  # the table as the house sees it before each step
    rewards: list[float]
    info: dict[str, Any]

    @property
    def reward(self) -> float:
        return self.rewards[-1]

    @property
    def results(self) -> list[float]:
        return [seat["result"] for seat in table_seats(self.info)]


def play_table(
    cards: Sequence[str],
    actions: Sequence[int],
    *,
    seats: int,
    seat: int,
    others: Any = STANDER,
    rules: Any = None,
    exact_cards: bool = True,
) -> TableRound:
    """Deal ``cards`` at a table of ``seats`` with the agent in ``seat`` and play ``actions``; the
    last one must end the round. Checks each step's legality, the reward (0 until the last step),
    that the per-seat results add up and (``exact_cards``) that exactly the stacked cards were dealt."""
    env = BlackjackEnv(rules=rules, seats=seats, seat=seat, others=others)
    obs, info = env.reset(seed=0, options={"cards": list(cards)})
    masks, observations, views, rewards = [], [], [], []
    terminated = False
    for i, action in enumerate(actions):
        assert not terminated, f"the round ended before action {i} ({Action(action).name})"
        assert np.array_equal(env.action_masks(), info["action_mask"])
        masks.append(legal(info["action_mask"]))
        observations.append(obs)
        views.append(env.round_summary())
        obs, reward, terminated, truncated, info = env.step(action)
        assert truncated is False
        rewards.append(reward)
        if not terminated:
            assert reward == 0.0
    assert terminated, f"the round is still live after {len(actions)} actions; legal: {legal(env.action_masks())}"
    assert legal(info["action_mask"]) == {Action.STAND}  # a finished round's mask
    assert len(table_seats(info)) == seats
    assert ("seats" in info) is (seats > 1)
    for s in table_seats(info):
        assert s["result"] == pytest.approx(sum(h["result"] for h in s["hands"]) + s["insurance"])
    assert table_seats(info)[seat]["result"] == rewards[-1] == info["result"]
    assert info["hands"] == table_seats(info)[seat]["hands"]
    if exact_cards:
        assert all_cards(info) == Counter(cards), (sorted(all_cards(info).elements()), sorted(cards))
    return TableRound(env, masks, observations, views, rewards, info)


# --------------------------------------------------------------------------- deal order

FIRST = ["2", "3", "4", "5", "6", "7", "8"]
SECOND = ["K", "2", "3", "4", "5", "6", "7"]  # totals 12, 5, 7, 9, 11, 13, 15: no pair, no 21


@pytest.mark.parametrize(
    ("seats", "seat"), [(1, 0), (3, 0), (3, 1), (3, 2), (7, 0), (7, 3), (7, 6)], ids=lambda v: str(v)
)
def test_deal_order(seats: int, seat: int) -> None:
    """One card to each seat from seat 0 up, the up card (9), a second card to each seat, the hole
    card (8): seat s holds FIRST[s], SECOND[s]; the dealer 9,8 = 17 draws nothing; every hand (all
    below 17, standing) loses."""
    cards = [*FIRST[:seats], "9", *SECOND[:seats], "8"]
    game = play_table(cards, [S], seats=seats, seat=seat)
    expected = [[[FIRST[s], SECOND[s]]] for s in range(seats)]
    assert seat_cards(game.views[0]) == expected  # dealt so before the agent's first decision
    assert seat_cards(game.info) == expected
    assert game.info["dealer"]["cards"] == ["9", "8"]
    obs = game.observations[0]
    total = min(10, RANK_NAMES.index(FIRST[seat]) + 1) + min(10, RANK_NAMES.index(SECOND[seat]) + 1)
    assert (obs[0], obs[1], obs[7]) == (Phase.PLAY, total, 9)
    assert game.results == [-1.0] * seats
    assert game.env.shoe_counts["9"] == 24 - cards.count("9")


def test_deal_order_without_a_hole_card() -> None:
    """No hole card: seat 0 2, seat 1 3, seat 2 4, up 10, then K, 2, 3; seat 0 (12) stands, the agent
    (seat 1: 3,2) hits 9 = 14 and stands, seat 2 (7) stands, and only then the dealer's second card
    (7): 10,7 = 17. Every hand loses."""
    cards = ["2", "3", "4", "10", "K", "2", "3", "9", "7"]
    game = play_table(cards, [H, S], seats=3, seat=1, rules=NO_HOLE)
    assert game.views[0]["dealer"]["cards"] == ["10"]  # no second card while the seats play
    assert seat_cards(game.views[1]) == [[["2", "K"]], [["3", "2", "9"]], [["4", "3"]]]
    assert seat_cards(game.info) == [[["2", "K"]], [["3", "2", "9"]], [["4", "3"]]]
    assert game.info["dealer"]["cards"] == ["10", "7"]
    assert game.results == [-1.0, -1.0, -1.0]


# --------------------------------------------------------------------------- order of play


def test_earlier_seat_plays_all_its_split_hands_first() -> None:
    """Seat 0 (splits pairs, else stands) 8,8; seat 1 10,9; the agent (seat 2) 10,6; dealer 6,10.
    Before the agent decides, seat 0 has split and played both hands, each given its second card
    in turn (8,3 then 8,2), and seat 1 has stood. The agent hits 5 = 21; the dealer 16 draws 4 = 20:
    seat 0 -1 -1, seat 1 -1, the agent +1."""
    cards = ["8", "10", "10", "6", "8", "9", "6", "10", "3", "2", "5", "4"]
    game = play_table(cards, [H], seats=3, seat=2, others=SPLITTER)
    assert seat_cards(game.views[0]) == [[["8", "3"], ["8", "2"]], [["10", "9"]], [["10", "6"]]]
    assert game.observations[0][1] == 16
    assert seat_cards(game.info) == [[["8", "3"], ["8", "2"]], [["10", "9"]], [["10", "6", "5"]]]
    assert game.info["dealer"]["cards"] == ["6", "10", "4"]
    assert [h["result"] for h in game.info["seats"][0]["hands"]] == [-1.0, -1.0]
    assert game.results == [-2.0, -1.0, 1.0]
    assert game.reward == 1.0


def test_later_seat_plays_after_the_agents_split_hands() -> None:
    """The agent (seat 0) splits 8,8 against 6; seat 1 (always hits) holds 10,2. The agent's first
    hand gets 3 (stands on 11), the second 9 (stands on 17); only then seat 1 hits 9 = 21, and the
    dealer 6,10 draws K = 26: the agent +1 +1, seat 1 +1."""
    cards = ["8", "10", "6", "8", "2", "10", "3", "9", "9", "K"]
    game = play_table(cards, [P, S, S], seats=2, seat=0, others=HITTER)
    assert game.masks[0] == {S, H, D, P, R}
    assert seat_cards(game.views[1]) == [[["8", "3"], ["8"]], [["10", "2"]]]
    assert seat_cards(game.views[2]) == [[["8", "3"], ["8", "9"]], [["10", "2"]]]
    assert seat_cards(game.info) == [[["8", "3"], ["8", "9"]], [["10", "2", "9"]]]
    assert game.info["dealer"]["cards"] == ["6", "10", "K"]
    assert game.results == [2.0, 1.0]
    assert game.rewards == [0.0, 0.0, 2.0]


def test_basic_strategy_others_act_inside_the_agents_step() -> None:
    """others='basic': seat 0's 6,5 = 11 against 6 doubles (basic strategy) and draws K = 21 before
    the agent (seat 1, 10,7) decides. The agent stands; the dealer 6,10 draws 9 = 25: seat 0 +2
    (doubled), the agent +1."""
    cards = ["6", "10", "6", "5", "7", "10", "K", "9"]
    game = play_table(cards, [S], seats=2, seat=1, others="basic")
    first = game.views[0]["seats"][0]["hands"][0]
    assert (first["cards"], first["doubled"], first["bet"]) == (["6", "5", "K"], True, 2.0)
    assert game.results == [2.0, 1.0]


# --------------------------------------------------------------------------- insurance per seat


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_insurance_is_asked_of_every_seat_in_order(seat: int) -> None:
    """Ace up: every seat is asked in seat order. When the agent's question comes, the seats before
    it have answered (they insure) and the ones after it have not; after the agent declines, all
    have. Hands 17, 15, 13 against A,7 (soft 18, stands under H17): every hand -1, every insurance
    -0.5, the agent's 0."""
    cards = ["10", "9", "8", "A", "7", "6", "5", "7"]
    game = play_table(cards, [N, S], seats=3, seat=seat, others=INSURER)
    assert game.masks == [{I, N}, {S, H, D, R}]
    states = [s["insurance_state"] for s in game.views[0]["seats"]]
    assert states == ["taken"] * seat + ["offered"] * (3 - seat)
    states = [s["insurance_state"] for s in game.views[1]["seats"]]
    assert states == ["taken"] * seat + ["declined"] + ["taken"] * (2 - seat)
    assert [s["insurance"] for s in game.info["seats"]] == [0.0 if s == seat else -0.5 for s in range(3)]
    assert game.results == [-1.0 if s == seat else -1.5 for s in range(3)]


@pytest.mark.parametrize(("answer", "reward"), [(I, 0.0), (N, -1.0)])
def test_insurance_at_a_table_against_a_dealer_blackjack(answer: Action, reward: float) -> None:
    """A,K under the peek: the seats that insured get +1 for it and lose the hand (0 in all); the
    agent (seat 1) then has only STAND to settle: insured 0, not insured -1."""
    cards = ["10", "9", "8", "A", "7", "6", "5", "K"]
    game = play_table(cards, [answer, S], seats=3, seat=1, others=INSURER)
    assert game.masks == [{I, N}, {S}]
    assert game.observations[1][0] == Phase.SETTLE
    assert game.results == [0.0, reward, 0.0]
    assert game.info["dealer"]["cards"] == ["A", "K"]


def test_even_money_is_asked_only_of_the_seat_with_a_blackjack() -> None:
    """insurance=False, even_money=True: seat 0 (A,K) takes even money (+1); the agent (seat 1, 10,7)
    is not asked and plays at once; 17 against A,9 = 20: -1."""
    cards = ["A", "10", "A", "K", "7", "9"]
    game = play_table(cards, [S], seats=2, seat=1, others=INSURER, rules={"insurance": False})
    assert game.masks == [{S, H, D, R}]
    assert [s["insurance_state"] for s in game.views[0]["seats"]] == ["even money", "not offered"]
    assert game.results == [1.0, -1.0]


def test_agent_takes_even_money_and_a_later_seat_still_plays() -> None:
    """The agent (seat 0, A,K) takes even money: +1. Seat 1 (10,7, always hits) then plays: hits 4 =
    21; the dealer A,9 = soft 20 stands: seat 1 +1."""
    cards = ["A", "10", "A", "K", "7", "9", "4"]
    game = play_table(cards, [I], seats=2, seat=0, others=HITTER)
    assert game.masks == [{I, N}]
    assert game.observations[0][11] == 1  # the natural flag: the even-money question
    assert seat_cards(game.info) == [[["A", "K"]], [["10", "7", "4"]]]
    assert game.results == [1.0, 1.0]


@pytest.mark.parametrize(("hole", "action", "reward"), [("K", S, -1.0), ("7", H, 1.0)])
def test_early_surrender_choices_come_from_every_seat_before_the_peek(hole: str, action: Action, reward: float) -> None:
    """Early surrender against an ace: after the insurance questions every seat makes its first
    choice before the dealer checks. Seat 0 (10,6) surrenders first; the agent (seat 1, 10,7) then
    chooses. A,K: the peek shows the blackjack, the agent's STAND loses the bet (-1), seat 0 -0.5.
    A,7: the agent's HIT is carried out after the peek (4: 21) and beats soft 18: +1."""
    cards = ["10", "10", "A", "6", "7", hole, "4"]
    exact = hole == "7"
    game = play_table(
        cards if exact else cards[:-1],
        [N, action],
        seats=2,
        seat=1,
        others=strategy("Rh"),
        rules={"surrender": "early"},
    )
    assert game.masks == [{I, N}, {S, H, D, R}]
    assert game.views[1]["seats"][0]["hands"][0]["status"] == "surrendered"
    assert game.results == [-0.5, reward]
    assert game.info["dealer"]["cards"] == ["A", hole]


# --------------------------------------------------------------------------- the dealer's play


@pytest.mark.parametrize(
    ("others", "action", "dealer", "results"),
    [
        pytest.param(SURRENDERER, H, ["6", "10"], [-0.5, -1.0, -0.5], id="all-bust-or-surrendered"),
        pytest.param(SURRENDERER, S, ["6", "10", "5"], [-0.5, -1.0, -0.5], id="only-the-agent-live"),
        pytest.param(STANDER, H, ["6", "10", "5"], [-1.0, -1.0, -1.0], id="only-the-others-live"),
    ],
)
def test_dealer_draws_only_while_a_hand_at_the_table_is_live(
    others: StrategyTable, action: Action, dealer: list[str], results: list[float]
) -> None:
    """Seats 10,6 / 10,6 (the agent, seat 1) / 9,7 against 6,10. The others surrender (or stand);
    the agent hits K (bust) or stands. With every hand bust or surrendered the dealer keeps 16 and
    the 5 stays in the shoe; with any hand live he draws it (21)."""
    cards = ["10", "10", "9", "6", "6", "6", "7", "10", "K", "5"]
    if action == S:
        cards.remove("K")
    game = play_table(cards, [action], seats=3, seat=1, others=others, exact_cards=False)
    assert game.info["dealer"]["cards"] == dealer
    assert game.results == results
    dealt = Counter(cards)
    if len(dealer) == 2:
        dealt["5"] -= 1
    assert all_cards(game.info) == +dealt
    assert sum(game.env.shoe_counts.values()) == 312 - sum(dealt.values())


def test_no_hole_card_dealer_takes_no_card_when_every_hand_is_bust() -> None:
    """No hole card: seat 0 (always hits) 10,6 hits K; the agent 10,6 hits Q: both bust, so the
    dealer never takes his second card (the 5 stays in the shoe)."""
    cards = ["10", "10", "6", "6", "6", "K", "Q"]
    game = play_table(cards, [H], seats=2, seat=1, others=HITTER, rules=NO_HOLE)
    assert game.info["dealer"]["cards"] == ["6"]
    assert game.results == [-1.0, -1.0]


@pytest.mark.parametrize(("up", "dealer"), [("10", ["10", "7"]), ("6", ["6"])])  # every stacked card is dealt
def test_no_hole_card_dealer_takes_his_second_card_for_a_natural_only_against_a_or_10(
    up: str, dealer: list[str]
) -> None:
    """No hole card: seat 0 A,K (a natural, nothing to play), the agent 10,6 hits Q (bust). Against
    a 10 the natural's result depends on the dealer's second card, so he takes it (7: 17) but draws
    no more, as no hand is live; against a 6 nothing depends on it and he takes none:
    seat 0 +1.5, the agent -1 either way."""
    cards = ["A", "10", up, "K", "6", "Q", *dealer[1:]]
    game = play_table(cards, [H], seats=2, seat=1, others=HITTER, rules=NO_HOLE)
    assert game.info["dealer"]["cards"] == dealer
    assert game.results == [1.5, -1.0]


# --------------------------------------------------------------------------- sitting out


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_a_seat_that_sits_out_gets_no_cards(seat: int) -> None:
    """BlackjackShoe-v0, bets (0, 1): the agent bets 0 and sits the round out. The deal skips its
    box: the two other seats get 10,2 and 9,7, the dealer 8,6 and draws 5 (19). The round is played
    by the others inside that one step: reward 0, and the next bet is due."""
    env = BlackjackShoeEnv(seats=3, seat=seat, bets=(0, 1), others=STANDER)
    cards = ["10", "9", "8", "2", "7", "6", "5", "4", "3", "K", "Q", "J", "9", "8"]
    obs, info = env.reset(seed=0, options={"cards": cards})
    obs, reward, terminated, _, info = env.step(7)
    assert (reward, terminated) == (0.0, False)
    assert obs[0] == 4 and list(np.flatnonzero(info["action_mask"])) == [7, 8]
    others = [s for s in range(3) if s != seat]
    assert info["seats"][seat]["hands"] == [] and not info["seats"][seat]["playing"]
    assert info["seats"][seat]["bet"] == 0.0
    assert [seat_cards(info)[s] for s in others] == [[["10", "2"]], [["9", "7"]]]
    assert info["dealer"]["cards"] == ["8", "6", "5"]
    assert [info["seats"][s]["result"] for s in others] == [-1.0, -1.0]
    assert info["round_result"] == 0.0 and info["cards_dealt"] == 7
    # the next round the agent plays again and is dealt its cards in its box
    obs, reward, terminated, _, info = env.step(8)
    assert info["bet"] == 1.0 and obs[0] in (Phase.INSURANCE, Phase.PLAY, Phase.SETTLE)
    summary = env.round_summary()
    assert seat_cards(summary) == [[["4", "J"]], [["3", "9"]], [["K", "8"]]]
    assert summary["dealer"]["cards"][0] == "Q"


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seats": 0}, r"seats.*1\.\.7.*got 0"),
        ({"seats": 8}, r"seats.*1\.\.7.*got 8"),
        ({"seats": 2.0}, r"seats.*got 2\.0"),
        ({"seats": True}, r"seats.*got True"),
        ({"seats": 3, "seat": 3}, r"seat.*0\.\.2.*got 3"),
        ({"seats": 1, "seat": 1}, r"seat.*got 1"),
        ({"seats": 3, "seat": -1}, r"seat.*got -1"),
        ({"seats": 2, "others": "bogus"}, r"others.*'basic', 'random'.*bogus"),
        ({"others": "bogus"}, r"others.*'basic', 'random'.*bogus"),
        ({"seats": 2, "others": 3}, r"others.*got 3"),
    ],
)
def test_bad_table_arguments(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        gym.make(ENV_ID, **kwargs)
    with pytest.raises(ValueError, match=match):
        gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point", **kwargs)


def test_others_from_a_saved_strategy_table(tmp_path: Any) -> None:
    path = tmp_path / "hitter.json"
    HITTER.save(path)
    cards = ["10", "10", "6", "6", "6", "K", "Q"]
    env = BlackjackEnv(seats=2, seat=1, others=str(path), rules=NO_HOLE)
    env.reset(seed=0, options={"cards": cards})
    assert env.round_summary()["seats"][0]["hands"][0]["cards"] == ["10", "6", "K"]  # it hit
    with pytest.raises(ValueError, match=r"is a directory without a strategy\.json"):
        BlackjackEnv(seats=2, others=str(tmp_path))
    (tmp_path / "broken.json").write_text("{}")
    with pytest.raises(ValueError, match="not a saved strategy table"):
        BlackjackEnv(seats=2, others=str(tmp_path / "broken.json"))


def test_defaults_are_unchanged() -> None:
    env = gym.make(ENV_ID)
    assert (env.unwrapped.seats, env.unwrapped.seat) == (1, 0)
    assert env.action_space.n == 7 and len(env.observation_space.nvec) == 12
    _, info = env.reset(seed=0, options={"cards": ["10", "9", "9", "8"]})
    _, reward, terminated, _, info = env.step(S)
    assert (reward, terminated) == (1.0, True)
    assert "seats" not in info and info["hands"][0]["cards"] == ["10", "9"]


# --------------------------------------------------------------------------- random play at a table

RULES = rules_strategy(penetration=False)


def _total(cards: list[str]) -> tuple[int, bool]:
    hard = sum(min(10, RANK_NAMES.index(c) + 1) for c in cards)
    soft = "A" in cards and hard + 10 <= 21
    return (hard + 10 if soft else hard), soft


def check_table_settlement(rules: Rules, info: dict[str, Any]) -> None:
    """An independent reading of a settled round at a table: the dealer draws while any seat's hand
    must be compared with his total (no hole card: takes his second card when any result depends
    on it, which against a 2-9 only a live hand's does: ), and every seat's bets are paid
    against the one dealer outcome."""
    dealer = info["dealer"]["cards"]
    dealer_total, _ = _total(dealer)
    dealer_bj = len(dealer) == 2 and dealer_total == 21
    live = needs_card = False
    for seat in table_seats(info):
        hands = seat["hands"]
        assert bool(hands) == seat["playing"]
        if not hands or seat["insurance_state"] == "even money":
            continue
        natural = len(hands) == 1 and len(hands[0]["cards"]) == 2 and _total(hands[0]["cards"])[0] == 21
        live |= not natural and any(h["status"] == "stood" for h in hands)
        surrendered = any(h["status"] == "surrendered" for h in hands)
        needs_card |= natural or seat["insurance_state"] == "taken" or (surrendered and rules.surrender == "late")
    needs_card &= dealer[0] in ("A", "10", "J", "Q", "K")  # else no dealer blackjack can change a result
    if live and not dealer_bj:
        for k in range(2, len(dealer) + 1):
            total, soft = _total(dealer[:k])
            stands = total > 17 or (total == 17 and not (soft and rules.hit_soft_17))
            assert stands is (k == len(dealer)), dealer
    elif rules.peek:
        assert len(dealer) == 2, dealer
    else:
        assert len(dealer) == (2 if live or needs_card else 1), (dealer, table_seats(info))
    for seat in table_seats(info):
        hands = seat["hands"]
        if seat["insurance_state"] == "even money":
            assert [h["result"] for h in hands] == [1.0] and seat["result"] == 1.0
            continue
        natural = len(hands) == 1 and len(hands[0]["cards"]) == 2 and _total(hands[0]["cards"])[0] == 21
        surrendered = any(h["status"] == "surrendered" for h in hands)
        for hand in hands:
            total = _total(hand["cards"])[0]
            assert hand["total"] == total and (hand["status"] == "bust") is (total > 21)
        expected = oracle_results(rules, hands, dealer_total, dealer_bj, natural)
        assert [h["result"] for h in hands] == pytest.approx(expected), (seat, dealer)
        insurance = {"taken": 1.0 if dealer_bj else -0.5}.get(seat["insurance_state"], 0.0)
        assert seat["insurance"] == insurance


def random_table_round(env: BlackjackEnv, rng: np.random.Generator, seed: int | None) -> tuple[list[Any], dict]:
    obs, info = env.reset(seed=seed)
    trace: list[Any] = [obs.tolist()]
    for _ in range(200):
        assert env.observation_space.contains(obs)
        mask = info["action_mask"]
        assert mask.any() and np.array_equal(mask, env.action_masks())
        action = int(rng.choice(np.flatnonzero(mask)))
        obs, reward, terminated, truncated, info = env.step(action)
        assert truncated is False
        trace.append((action, obs.tolist(), reward))
        if terminated:
            return trace, info
        assert reward == 0.0
    raise AssertionError("the round did not end")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=RULES,
    seats=st.integers(1, 7),
    data=st.data(),
    others=st.sampled_from(["basic", "random"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_play_at_a_table(rules: Rules, seats: int, data: Any, others: str, seed: int) -> None:
    """Random legal play in any seat of any table under random rules: every seat's result is the
    rules' settlement against the dealer's one outcome, the dealer drew exactly as the table needed,
    the agent's reward is its seat's result, every card dealt is on the table (a fresh shoe each
    round), and a second env with the same seed plays the very same rounds."""
    seat = data.draw(st.integers(0, seats - 1), label="seat")
    traces = []
    for _ in range(2):
        env = BlackjackEnv(rules=rules, seats=seats, seat=seat, others=others)
        rng = np.random.default_rng(seed)
        rounds = []
        for k in range(4):
            trace, info = random_table_round(env, rng, seed if k == 0 else None)
            check_table_settlement(rules, info)
            assert trace[-1][2] == table_seats(info)[seat]["result"] == info["result"]
            if not rules.infinite:
                dealt = 52 * rules.decks - sum(env.shoe_counts.values())
                assert dealt == sum(all_cards(info).values())
            rounds.append((trace, table_seats(env.round_summary()), info["dealer"]))
        traces.append(rounds)
    assert traces[0] == traces[1]


# --------------------------------------------------------------------------- checkers, vector env

TABLE_CONFIGS = [
    {"seats": 3},
    {"seats": 3, "seat": 2, "others": "random"},
    {"seats": 7, "seat": 6, "rules": "european", "count_obs": "hilo"},
    {"seats": 2, "seat": 0, "rules": "face-up-no-hole-card", "others": SPLITTER},
    {"seats": 5, "seat": 2, "rules": "single-deck", "count_obs": "composition", "reward": "expected"},
    {"seats": 4, "seat": 3, "rules": "infinite-deck", "render_mode": "ansi"},
]


@pytest.mark.parametrize("config", TABLE_CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items())[:60])
def test_checkers_pass_at_a_table(config: dict[str, Any]) -> None:
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(ENV_ID, **config)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)
        sb3_check_env(BlackjackEnv(**config), warn=True)
    env.close()


@pytest.mark.parametrize(("seats", "seat"), [(3, 0), (3, 2), (5, 4)])
def test_sample_after_seeding_the_space_is_legal_after_the_seeded_reset(seats: int, seat: int) -> None:
    """check_env seeds the action space, samples, resets with that seed and steps the sample: the
    sample must be legal in the seeded deal whatever the env was doing (here, mid-round)."""
    env = BlackjackEnv(seats=seats, seat=seat)
    for seed in range(40):
        env.reset(seed=1000 + seed)
        env.action_space.seed(seed)
        action = env.action_space.sample()
        _, info = env.reset(seed=seed)
        assert info["action_mask"][action], (seed, action, info["action_mask"])
        env.step(action)


@pytest.mark.parametrize(("seats", "seat", "others"), [(2, 1, "basic"), (3, 0, "random"), (7, 3, "random")])
def test_vector_table_plays_what_single_tables_play(seats: int, seat: int, others: str) -> None:
    n = 4
    kwargs = {"seats": seats, "seat": seat, "others": others, "rules": {"penetration": 0.5}, "count_obs": "hilo"}
    envs = gym.make_vec(ENV_ID, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)
    singles = [gym.make(ENV_ID, **kwargs) for _ in range(n)]
    obs, info = envs.reset(seed=7)
    np.testing.assert_array_equal(obs, [env.reset(seed=7 + i)[0] for i, env in enumerate(singles)])
    assert step_vector_beside_singles(envs, singles, info, 400, seed=1) > 0


@pytest.mark.parametrize("rules", [Rules(surrender="early", penetration=0.7), Rules(peek=False, decks=1)])
@pytest.mark.parametrize("reward", ["sampled", "expected"])
def test_the_lone_seats_own_round_steps_as_a_tables_round_with_one_seat(
    rules: Rules, reward: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blackjack-v0 at one seat runs the lone seat's round (compiled apart); forced onto the table's
    round it plays the same episodes, step for step."""

    def episodes() -> list[Any]:
        env = gym.make(ENV_ID, rules=rules, reward=reward)
        rng = np.random.default_rng(5)
        seen: list[Any] = []
        for episode in range(400):
            obs, info = env.reset(seed=8 if episode == 0 else None)
            done = False
            while not done:
                obs, paid, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
                seen.append((obs.tolist(), paid))
            seen.append(repr(info["hands"]) + repr(info["dealer"]) + repr(info["result"]))
        return seen

    lone = episodes()
    monkeypatch.setattr(blackjack_env.engine, "table_kind", lambda seats: blackjack_env.engine.TABLE)
    assert episodes() == lone


def test_blackjack_env_id_is_registered_with_table_arguments() -> None:
    env = gym.make(blackjack_env.ENV_ID, seats=2, seat=1)
    assert isinstance(env.unwrapped, BlackjackEnv)
    assert (env.unwrapped.seats, env.unwrapped.seat) == (2, 1)
