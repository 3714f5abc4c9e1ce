"""BlackjackShoe-v0: one shoe to the cut card per episode, a bet before every round, at a table.

Stacked cards (``reset(options={"cards": [...]})``) go on top of the freshly shuffled shoe in deal
order, round after round: one card to each playing seat from seat 0 up, the up card, a second card
to each seat, the hole card, then the cards play draws (seat by seat, then the dealer).
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import D, H, I, N, P, R, S, step_vector_beside_singles
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_table import RULES, STANDER, all_cards, check_table_settlement, seat_cards

import blackjack_env
from blackjack_env import BlackjackEnv, BlackjackShoeEnv, Rules
from blackjack_env.cards import RANK_NAMES
from blackjack_env.env import OBS_NAMES
from blackjack_env.rules import DEFAULT_PRESET, MAX_HANDS
from blackjack_env.solver import solve
from blackjack_env.vector import BlackjackShoeVectorEnv

SHOE_ID = "blackjack_env/BlackjackShoe-v0"
BET = 7  # action id 7 + i places bets[i]
HILO_TAG = {
    "A": -1,
    "2": 1,
    "3": 1,
    "4": 1,
    "5": 1,
    "6": 1,
    "7": 0,
    "8": 0,
    "9": 0,
    "10": -1,
    "J": -1,
    "Q": -1,
    "K": -1,
}
HILO_OBS = 12  # the hilo true-count component (after Blackjack-v0's 12)


def hilo(cards: Counter[str] | list[str]) -> int:
    """Hi-Lo running count of some cards."""
    counted = Counter(cards)
    return sum(HILO_TAG[c] * n for c, n in counted.items())


def value(card: str) -> int:
    return min(10, RANK_NAMES.index(card) + 1)


def true_count_obs(running: int, unseen: int) -> int:
    """The observed true count: rounded half up, clipped to [-10, 10], plus 10."""
    return max(-10, min(10, int(np.floor(running * 52 / max(unseen, 1) + 0.5)))) + 10


def reward_bound(rules: Rules) -> float:
    """The most one unit bet can win or lose in a round (every hand doubled, a lost insurance)."""
    hands = 2 * rules.split_to if rules.double_after_split else max(2, rules.split_to)
    return max(hands + 0.5, rules.blackjack_pays)


def run(env: gym.Env, cards: list[str] | None, actions: list[int], seed: int = 0) -> list[tuple]:
    """reset(seed, stacked cards), then every action: [(obs, reward, terminated, info)] per step."""
    obs, info = env.reset(seed=seed, options={"cards": cards} if cards else None)
    steps = [(obs, 0.0, False, info)]
    for i, action in enumerate(actions):
        assert not steps[-1][2], f"the episode ended before action {i}"
        assert info["action_mask"][action], (i, action, np.flatnonzero(info["action_mask"]))
        obs, reward, terminated, truncated, info = env.step(action)
        assert truncated is False
        steps.append((obs, reward, terminated, info))
    return steps


# --------------------------------------------------------------------------- defaults, spaces


def test_defaults_spaces_and_first_observation() -> None:
    env = gym.make(SHOE_ID)
    shoe = env.unwrapped
    assert isinstance(shoe, BlackjackShoeEnv)
    assert shoe.rules == Rules.preset(DEFAULT_PRESET).replace(penetration=0.75)
    assert (shoe.bets, shoe.seats, shoe.seat, shoe.count_obs, shoe.reward) == ((1, 2, 4, 8), 1, 0, "hilo", "sampled")
    assert env.action_space.n == 11
    assert shoe.observation_names == (*OBS_NAMES, "hilo_true_count", "bet_level", "shoe_dealt")
    assert env.observation_space.nvec.tolist() == [5, 22, 2, 11, 2, 2, 2, 11, MAX_HANDS + 1, MAX_HANDS, 2, 2, 21, 5, 53]
    obs, info = env.reset(seed=3)
    assert obs.tolist() == [4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0]  # BET, count 0, no bet yet, nothing dealt
    assert info["action_mask"].tolist() == [False] * 7 + [True] * 4
    assert np.array_equal(shoe.action_masks(), info["action_mask"])
    assert (info["running_count"], info["true_count"], info["cards_dealt"], info["bet"]) == (0, 0.0, 0, 0.0)


@pytest.mark.parametrize(
    ("count_obs", "names"),
    [
        ("none", ()),
        ("composition", tuple(f"unseen_{c}" for c in ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10"])),
    ],
)
def test_observation_names_and_sizes(count_obs: str, names: tuple[str, ...]) -> None:
    env = BlackjackShoeEnv(count_obs=count_obs, bets=(1, 3), rules={"decks": 2, "penetration": 0.5})
    assert env.observation_names == (*OBS_NAMES, *names, "bet_level", "shoe_dealt")
    assert len(env.observation_space.nvec) == len(env.observation_names)
    assert env.observation_space.nvec[-2:].tolist() == [3, 53]
    assert env.action_space.n == 9


# --------------------------------------------------------------------------- bets multiply results

BET_SCENARIOS = [
    # 6,5 = 11 vs 6 (hole 10) doubles, draws 10 = 21; the dealer 16 draws 7 = 23: +2 a unit, bet 4: +8
    pytest.param(["6", "6", "5", "10", "10", "7"], BET + 2, [D], 4.0, [2.0], 0.0, id="double"),
    # 8,8 vs 6,10 split, bet 2: 8,3 doubles to 21 (two units), 8,10 = 18 stands; the dealer draws 10
    # (26): +2 +1 a unit, +6
    pytest.param(["8", "6", "8", "10", "3", "10", "10", "10"], BET + 1, [P, D, S], 2.0, [2.0, 1.0], 0.0, id="split"),
    # 10,9 vs A,7 insured, bet 8: 19 beats soft 18 (+1), insurance -0.5: +0.5 a unit, +4
    pytest.param(["10", "A", "9", "7"], BET + 3, [I, S], 8.0, [1.0], -0.5, id="insurance-lost"),
    # 10,7 vs A,K insured, bet 4: hand -1, insurance +1: 0
    pytest.param(["10", "A", "7", "K"], BET + 2, [I, S], 4.0, [-1.0], 1.0, id="insurance-won"),
    # 10,7 vs A,K not insured, bet 2: -1 a unit, -2
    pytest.param(["10", "A", "7", "K"], BET + 1, [N, S], 2.0, [-1.0], 0.0, id="dealer-blackjack"),
    # 10,6 vs 10,7 surrenders, bet 4: -0.5 a unit, -2
    pytest.param(["10", "10", "6", "7"], BET + 2, [R], 4.0, [-0.5], 0.0, id="surrender"),
    # A,K vs 9,7: a natural (a STAND-only step) pays 1.5, bet 8: +12
    pytest.param(["A", "9", "K", "7"], BET + 3, [S], 8.0, [1.5], 0.0, id="natural"),
    # A,K vs A,7 takes even money, bet 2: +1 a unit, +2
    pytest.param(["A", "A", "K", "7"], BET + 1, [I], 2.0, [1.0], 0.0, id="even-money"),
    # 10,8 vs 10,8, bet 1: push, 0
    pytest.param(["10", "10", "8", "8"], BET, [S], 1.0, [0.0], 0.0, id="push"),
]


@pytest.mark.parametrize(("cards", "bet_id", "actions", "bet", "results", "insurance"), BET_SCENARIOS)
def test_bets_multiply_results(
    cards: list[str], bet_id: int, actions: list[int], bet: float, results: list[float], insurance: float
) -> None:
    """The reward is the agent's bet times the round's result per unit, on the step that settles the
    round (0 on every other step); the next bet is then due."""
    env = gym.make(SHOE_ID)
    steps = run(env, cards, [bet_id, *actions])
    per_unit = sum(results) + insurance
    for obs, reward, terminated, info in steps[1:-1]:
        assert reward == 0.0 and not terminated
        assert info["bet"] == bet and obs[13] == bet_id - BET + 1  # bet_level: 1 + the bet's index
    obs, reward, terminated, info = steps[-1]
    assert reward == pytest.approx(bet * per_unit)
    assert info["round_result"] == pytest.approx(bet * per_unit)
    assert info["result"] == pytest.approx(per_unit)
    assert [h["result"] for h in info["hands"]] == results and info["insurance"] == insurance
    assert info["seats"][0]["bet"] == bet
    assert all_cards(info) == Counter(cards)
    assert not terminated and obs[0] == 4 and obs[13] == 0
    assert np.flatnonzero(info["action_mask"]).tolist() == [7, 8, 9, 10]


def test_bets_multiply_only_the_agents_result_at_a_table() -> None:
    """Seat 0 (stands) 10,10; the agent (seat 1) 6,5 bets 8 and doubles, draws 10 = 21; the dealer
    6,10 draws 7 = 23. Seat 0 +1 at its flat bet of 1; the agent +2 a unit: +16."""
    cards = ["10", "6", "6", "10", "5", "10", "10", "7"]
    steps = run(BlackjackShoeEnv(seats=2, seat=1, others=STANDER), cards, [BET + 3, D])
    _, reward, _, info = steps[-1]
    assert reward == 16.0 and info["round_result"] == 16.0
    assert [(s["bet"], s["result"]) for s in info["seats"]] == [(1.0, 1.0), (8.0, 2.0)]
    assert seat_cards(info) == [[["10", "10"]], [["6", "5", "10"]]]


# --------------------------------------------------------------------------- the count


def test_count_in_info_after_known_cards() -> None:
    """One deck, seat 0 stands, the agent is seat 1. Round 1: seat 0 5,3, the agent K,9, dealer 6
    with the ace in the hole (unseen until the round's end), H17: A,6 hits 2 = soft 19. Round 2:
    4,5 / 2,8 vs 10,7; the agent hits 6 and 5 (21). The running count and true count follow every
    card seen by the table, the observation shows the true count rounded."""
    cards = ["5", "K", "6", "3", "9", "A", "2", "4", "2", "10", "5", "8", "7", "6", "5"]
    env = BlackjackShoeEnv(seats=2, seat=1, others=STANDER, bets=(1,), rules={"decks": 1, "penetration": 0.75})
    steps = run(env, cards, [BET, S, BET, H, H])
    # (running count, unseen cards, cards dealt) after each step: the hole card is unseen until the
    # round is settled, but dealt
    expected = [(0, 52, 0), (2, 47, 6), (2, 45, 7), (4, 40, 13), (5, 39, 14), (6, 37, 15)]
    for (obs, _, _, info), (running, unseen, dealt) in zip(steps, expected, strict=True):
        assert (info["running_count"], info["cards_dealt"]) == (running, dealt)
        assert info["true_count"] == pytest.approx(running * 52 / unseen)
        assert obs[HILO_OBS] == true_count_obs(running, unseen)
        assert obs[14] == min(52, dealt)  # 52nds of a one-deck shoe
    assert [s[1] for s in steps] == [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    settled = [steps[2][3], steps[5][3]]
    assert seat_cards(settled[0]) == [[["5", "3"]], [["K", "9"]]] and settled[0]["dealer"]["cards"] == ["6", "A", "2"]
    assert seat_cards(settled[1]) == [[["4", "5"]], [["2", "8", "6", "5"]]]
    assert hilo(all_cards(settled[0]) + all_cards(settled[1])) == steps[5][3]["running_count"]


def test_composition_counts_the_hole_card_as_unseen() -> None:
    cards = ["5", "K", "6", "3", "9", "A", "2"]
    env = BlackjackShoeEnv(
        seats=2, seat=1, others=STANDER, count_obs="composition", rules={"decks": 1, "penetration": 0.5}
    )
    steps = run(env, cards, [BET, S])
    full = np.array([4] * 9 + [16])
    seen = Counter(value(c) for c in ["5", "K", "6", "3", "9"])
    assert steps[1][0][12:22].tolist() == [int(full[v - 1]) - seen[v] for v in range(1, 11)]  # the ace still unseen
    seen.update([1, 2])  # the hole ace and the dealer's 2, seen at the round's end
    assert steps[2][0][12:22].tolist() == [int(full[v - 1]) - seen[v] for v in range(1, 11)]


def test_hole_card_is_counted_at_the_round_end_even_if_the_dealer_does_not_play() -> None:
    """The agent busts (10,6 hits K) against 6 and a hidden 5; the dealer draws nothing, yet the
    hole card is seen at the round's end: -1 (10) +1 (6) +1 (6) +1 (5) -1 (K) = +1."""
    cards = ["10", "6", "6", "5", "K"]
    steps = run(BlackjackShoeEnv(rules={"decks": 1, "penetration": 0.75}), cards, [BET, H])
    assert steps[1][3]["running_count"] == hilo(["10", "6", "6"])
    assert steps[2][3]["running_count"] == hilo(cards) == 1
    assert steps[2][3]["dealer"]["cards"] == ["6", "5"]
    assert steps[2][3]["true_count"] == pytest.approx(1 * 52 / 47)


# --------------------------------------------------------------------------- the cut card

CUT_ROUNDS = [
    (["K", "10", "8", "7"], [S], 1.0),  # 18 vs 17
    (["Q", "9", "9", "8"], [S], 1.0),  # 19 vs 17
    (["J", "10", "7", "10"], [S], -1.0),  # 17 vs 20
    (["10", "K", "6", "8"], [S], -1.0),  # 16 vs 18
    (["9", "Q", "9", "7"], [S], 1.0),  # 18 vs 17
    (["8", "J", "10", "9"], [S], -1.0),  # 18 vs 19
    (["K", "9", "2", "8", "5"], [H, S], 0.0),  # 12 hits 5 = 17 vs 17: five cards, 24 -> 29
]


@pytest.mark.parametrize(
    ("penetration", "cut", "rounds"),
    [(0.235, 24, 6), (0.24, 24, 6), (0.245, 25, 7), (0.25, 26, 7), (0.27, 28, 7)],
)
def test_cut_card_ends_the_episode_after_the_round_it_came_out_in(penetration: float, cut: int, rounds: int) -> None:
    """Two decks, the cut card at int(penetration * 104): four cards a round for six rounds, then a
    round of five. The episode ends on the step that settles the round during which the cut card
    came out (the round is finished: the agent still hits in it); a round that ends exactly at the
    cut card is the last; a round starting before it is played."""
    assert int(penetration * 52 * 2) == cut
    env = BlackjackShoeEnv(bets=(1,), rules={"decks": 2, "penetration": penetration})
    cards = [c for round_cards, _, _ in CUT_ROUNDS[:rounds] for c in round_cards]
    obs, info = env.reset(seed=5, options={"cards": cards})
    dealt = 0
    for k, (round_cards, actions, result) in enumerate(CUT_ROUNDS[:rounds]):
        obs, reward, terminated, _, info = env.step(BET)
        for action in actions:
            assert not terminated  # mid-round, even after the cut card came out
            obs, reward, terminated, _, info = env.step(action)
        dealt += len(round_cards)
        assert (reward, info["cards_dealt"]) == (result, dealt)
        assert all_cards(info) == Counter(round_cards)
        last = k == rounds - 1
        assert terminated is last, (k, dealt, cut)
        assert (dealt >= cut) is last
        assert (np.flatnonzero(info["action_mask"]).tolist() == [S]) is last  # finished: STAND alone
    with pytest.raises(RuntimeError, match="reset"):
        env.step(BET)
    obs, info = env.reset()  # a fresh shuffle
    assert (info["cards_dealt"], info["running_count"], obs[0]) == (0, 0, 4)
    obs, _, _, _, info = env.step(BET)
    assert info["cards_dealt"] == 4  # the next shoe's first round


def test_cut_card_can_end_the_episode_in_a_round_the_agent_sits_out() -> None:
    """One deck, cut card at int(0.1 * 52) = 5; the agent (seat 1) sits out twice: seat 0 plays 10,8
    vs 10,7 (4 cards: the episode goes on), then 9,9 vs 10,8 (8 cards: the episode ends on that step,
    with reward 0)."""
    cards = ["10", "10", "8", "7", "9", "10", "9", "8"]
    env = BlackjackShoeEnv(seats=2, seat=1, bets=(0, 1), others=STANDER, rules={"decks": 1, "penetration": 0.1})
    steps = run(env, cards, [BET, BET])
    assert [(s[1], s[2], s[3]["cards_dealt"]) for s in steps[1:]] == [(0.0, False, 4), (0.0, True, 8)]
    assert [s[3]["seats"][0]["result"] for s in steps[1:]] == [1.0, 0.0]
    assert steps[2][3]["seats"][1]["hands"] == []


# --------------------------------------------------------------------------- whole shoes at random


def bets_for(seats: int) -> Any:
    sizes = st.lists(st.sampled_from([0.5, 1, 2, 3, 5, 10]), min_size=1, max_size=4, unique=True).map(sorted)
    if seats == 1:
        return sizes.map(tuple)
    return st.tuples(st.booleans(), sizes).map(lambda t: ((0,) if t[0] else ()) + tuple(t[1]))


SHOE_RULES = st.builds(
    lambda rules, decks, penetration: rules.replace(decks=decks, penetration=penetration),
    RULES,
    st.sampled_from([1, 1, 2, 6]),
    st.floats(0.2, 0.9),
)


INFO_KEYS = {"action_mask", "running_count", "true_count", "cards_dealt", "bet"}
SETTLED_KEYS = {"seats", "dealer", "round_result", "hands", "result"}


def play_shoe(env: BlackjackShoeEnv, seed: int, policy_seed: int) -> list[Any]:
    """Random legal play through one whole shoe, checking every step against an independent count
    of the cards seen; returns the episode's trace."""
    rules, bets, seat = env.rules, env.bets, env.seat
    full = 52 * rules.decks
    cut = int(rules.penetration * 52 * rules.decks)
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    seen: Counter[str] = Counter()  # every card of the rounds settled since the shuffle
    level = -1
    ran_dry = False  # this round the shoe ran out and the discards were reshuffled
    trace: list[Any] = [obs.tolist()]
    for _ in range(5000):
        mask = info["action_mask"]
        assert np.array_equal(mask, env.action_masks()) and env.observation_space.contains(obs)
        betting = obs[0] == 4
        if betting:
            assert mask.tolist() == [False] * 7 + [True] * len(bets) and obs[-2] == 0 and info["bet"] == 0.0
        else:
            assert mask[:7].any() and not mask[7:].any() and obs[-2] == level + 1
        action = int(rng.choice(np.flatnonzero(mask)))
        if betting:
            level = action - BET
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((action, obs.tolist(), reward, terminated))
        assert truncated is False
        settled = "seats" in info
        playing = bets[level] > 0
        view = info if settled else env.round_summary()
        table = all_cards(view)
        if sum(seen.values()) + sum(table.values()) > full:
            seen = Counter()  # the shoe ran dry mid-round: every card not on the table was reshuffled
            ran_dry = True
        visible = seen + table
        if not settled and rules.peek:
            visible -= Counter([view["dealer"]["cards"][1]])  # the hole card: dealt, unseen yet
        assert info["cards_dealt"] == sum(seen.values()) + sum(table.values())
        assert info["running_count"] == hilo(visible)
        unseen = full - sum(visible.values())
        assert info["true_count"] == pytest.approx(info["running_count"] * 52 / max(unseen, 1))
        assert obs[-1] == min(52, info["cards_dealt"] * 52 // full)
        if env.count_obs == "hilo":
            assert obs[HILO_OBS] == true_count_obs(info["running_count"], unseen)
        elif env.count_obs == "composition":
            by_value: Counter[int] = Counter()
            for card, n in visible.items():
                by_value[value(card)] += n
            assert obs[12:22].tolist() == [4 * rules.decks * (4 if v == 10 else 1) - by_value[v] for v in range(1, 11)]
        assert info.keys() >= INFO_KEYS and isinstance(info["true_count"], float)
        if not settled:
            assert reward == 0.0 and not terminated and info["bet"] == bets[level]
            hands = view["seats"][seat]["hands"]  # the agent's own view of its current hand
            assert (obs[7], obs[8]) == (value(view["dealer"]["cards"][0]), len(hands))
            assert obs[1] == hands[obs[9]]["total"] <= 21
            continue
        assert info.keys() >= SETTLED_KEYS
        check_table_settlement(rules, info)
        assert [s["bet"] for s in info["seats"]] == [
            (bets[level] if playing else 0.0) if s == seat else 1.0 for s in range(env.seats)
        ]
        assert info["seats"][seat]["playing"] is playing and bool(info["seats"][seat]["hands"]) is playing
        assert reward == info["round_result"] == pytest.approx(bets[level] * info["result"] if playing else 0.0)
        assert abs(reward) <= bets[level] * reward_bound(rules) + 1e-9
        seen = visible
        assert terminated is (info["cards_dealt"] >= cut or ran_dry)  # the cut card came out (or the shoe ran dry)
        ran_dry = False
        if terminated:
            assert np.flatnonzero(info["action_mask"]).tolist() == [S]
            return trace
        assert obs[0] == 4
    raise AssertionError("the shoe did not end")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=SHOE_RULES,
    seats=st.integers(1, 7),
    data=st.data(),
    others=st.sampled_from(["basic", "random"]),
    count_obs=st.sampled_from(["hilo", "composition", "none"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_whole_shoes_conserve_cards_and_count_them(
    rules: Rules, seats: int, data: Any, others: str, count_obs: str, seed: int
) -> None:
    """Random rules, tables, bets and legal play through a whole shoe: cards dealt = every card in
    all seats' hands and the dealer's over the rounds (= info cards_dealt), the running count = the
    Hi-Lo sum of those cards (the hole card only once turned over), the true count and observations
    follow, rewards = the bet times the result and within bounds, the episode ends exactly at the
    cut card; a second env with the same seed and the same play deals the very same shoe."""
    seat = data.draw(st.integers(0, seats - 1), label="seat")
    bets = data.draw(bets_for(seats), label="bets")

    def make() -> BlackjackShoeEnv:
        return BlackjackShoeEnv(rules=rules, bets=bets, seats=seats, seat=seat, others=others, count_obs=count_obs)

    first = play_shoe(make(), seed, seed + 1)
    env = make()
    play_shoe(env, seed + 7, seed)  # a reused env reseeded plays the seeded shoe again
    assert play_shoe(env, seed, seed + 1) == first


def test_same_seed_same_shoe_and_different_seeds_differ() -> None:
    def cards_of(seed: int) -> list[Any]:
        env = BlackjackShoeEnv(seats=3, seat=1, others="random")
        _, info = env.reset(seed=seed)
        rounds = []
        for _ in range(10):
            _, _, _, _, info = env.step(BET)
            while "seats" not in info:
                _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            rounds.append((seat_cards(info), info["dealer"]["cards"]))
        return rounds

    assert cards_of(11) == cards_of(11)
    assert cards_of(11) != cards_of(12)


# --------------------------------------------------------------------------- same game as Blackjack-v0


def test_flat_betting_one_seat_has_the_mean_of_blackjack_v0() -> None:
    """seats=1, bets=(1,): the shoe env's mean reward per round equals Blackjack-v0's at the same
    penetration (basic strategy, 30 000 rounds each, independent seeds): within 4 standard errors."""
    rules = Rules().replace(penetration=0.75)
    table = solve(rules).table
    rounds = 30_000
    shoe_env = BlackjackShoeEnv(rules=rules, bets=(1,))
    obs, info = shoe_env.reset(seed=101)
    shoe_rewards: list[float] = []
    while len(shoe_rewards) < rounds:
        mask = info["action_mask"]
        obs, reward, terminated, _, info = shoe_env.step(BET if mask[BET] else table.act(obs, mask))
        if "seats" in info:
            shoe_rewards.append(reward)
        if terminated:
            obs, info = shoe_env.reset()
    env = BlackjackEnv(rules=rules)
    round_rewards = []
    for k in range(rounds):
        obs, info = env.reset(seed=202 if k == 0 else None)
        terminated = False
        while not terminated:
            obs, reward, terminated, _, info = env.step(table.act(obs, info["action_mask"]))
        round_rewards.append(reward)
    a, b = np.array(shoe_rewards), np.array(round_rewards)
    se = np.sqrt(a.var() / len(a) + b.var() / len(b))
    assert abs(a.mean() - b.mean()) < 4 * se, (a.mean(), b.mean(), se)
    assert 1.0 < a.std() < 1.3 and abs(a.mean() - solve(rules).ev) < 4 * a.std() / np.sqrt(len(a))


@pytest.mark.parametrize(
    ("seats", "seat", "rules"),
    [
        (3, 1, Rules(decks=1, penetration=0.7)),
        (4, 3, Rules(decks=2, penetration=0.7, peek=False, surrender="none")),
        (2, 0, Rules(decks=1, penetration=0.8, surrender="early")),
    ],
    ids=["3-seats", "no-hole-card", "early-surrender"],
)
def test_expected_reward_at_a_table_is_the_dealt_result_on_average(seats: int, seat: int, rules: Rules) -> None:
    """reward='expected' pays the bet times the round's expected result given what the table has
    seen; the cards (and the dealt result, round_result) are unchanged, so over 12 000 rounds the
    mean difference of the two is within 4 standard errors of 0."""
    table = solve(rules).table
    env = BlackjackShoeEnv(rules=rules, seats=seats, seat=seat, bets=(1, 2), reward="expected")
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    pairs = []
    while len(pairs) < 12_000:
        mask = info["action_mask"]
        action = BET + int(rng.integers(2)) if mask[BET] else table.act(obs, mask)
        obs, reward, terminated, _, info = env.step(action)
        if "seats" in info:
            pairs.append((reward, info["round_result"]))
        if terminated:
            obs, info = env.reset()
    expected, dealt = np.array(pairs).T
    diff = expected - dealt
    assert abs(diff.mean()) < 4 * diff.std() / np.sqrt(len(diff))
    assert expected.std() < dealt.std()  # the dealer's draws are averaged out


def test_others_from_a_saved_agent(tmp_path: Path) -> None:
    """others= the path of a saved agent: it plays the other seats (here basic strategy: 6,5
    against 6 doubles)."""
    from blackjack_env.agents import BasicStrategyAgent

    BasicStrategyAgent(Rules().replace(penetration=0.75)).save(tmp_path / "basic")
    env = BlackjackShoeEnv(seats=2, seat=1, others=str(tmp_path / "basic"))
    steps = run(env, ["6", "10", "6", "5", "7", "10", "K", "9"], [BET, S])
    assert steps[-1][3]["seats"][0]["hands"][0]["cards"] == ["6", "5", "K"]
    assert steps[-1][3]["seats"][0]["hands"][0]["doubled"]


def test_others_never_reaches_into_the_agent_layer(tmp_path: Path) -> None:
    """The env takes a strategy table or its file (a saved agent's directory plays its
    strategy.json) without importing blackjack_env.agents; an agent without a table is named."""
    from blackjack_env.agents import RandomAgent

    RandomAgent(Rules().replace(penetration=0.75)).save(tmp_path / "random")
    with pytest.raises(ValueError, match=r"directory without a strategy.json.*others='random'.*load_agent"):
        BlackjackShoeEnv(seats=2, seat=1, others=str(tmp_path / "random"))
    code = (
        "import sys; from blackjack_env import BlackjackShoeEnv, Rules; from blackjack_env.solver import solve; "
        f"solve(Rules()).table.save({str(tmp_path / 'table.json')!r}); "
        f"BlackjackShoeEnv(seats=2, seat=1, others={str(tmp_path / 'table.json')!r}).reset(seed=0); "
        "assert not any(m.startswith('blackjack_env.agents') for m in sys.modules), 'agents imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------- checkers, PPO

SHOE_CONFIGS = [
    {},
    {"seats": 3, "seat": 1, "bets": (0, 1, 2), "others": "random"},
    {"seats": 2, "seat": 0, "bets": (0.5, 1, 2.5), "render_mode": "ansi"},
    {"rules": {"decks": 1, "penetration": 0.6}, "count_obs": "composition", "bets": (1, 5)},
    {"seats": 7, "seat": 6, "count_obs": "none", "reward": "expected"},
    {"seats": 4, "seat": 2, "rules": Rules.preset("european").replace(penetration=0.8), "bets": (1,)},
]


@pytest.mark.parametrize(
    "config", SHOE_CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items())[:50] or "defaults"
)
def test_checkers_pass(config: dict[str, Any]) -> None:
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(SHOE_ID, **config)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)
        sb3_check_env(BlackjackShoeEnv(**config), warn=True)
    env.close()


def test_sample_after_seeding_the_space_is_a_bet() -> None:
    """Every episode opens with a bet, so a freshly seeded space samples a bet id, whatever the env
    is doing now (check_env samples, then resets with the seed and steps the sample); afterwards
    samples follow the live mask again."""
    env = BlackjackShoeEnv(seats=2, seat=1)
    _, info = env.reset(seed=0)
    env.step(BET)
    for seed in range(20):
        env.action_space.seed(seed)
        assert 7 <= env.action_space.sample() <= 10
    _, info = env.reset(seed=1)
    _, _, _, _, info = env.step(env.action_space.sample())
    for _ in range(20):
        assert info["action_mask"][env.action_space.sample()]


def test_maskable_ppo_smoke(tmp_path: Path) -> None:
    """MaskablePPO("MlpPolicy", env) trains on BlackjackShoe-v0 as is and plays legal actions."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.logger import configure

    env = gym.make(SHOE_ID, seats=2, seat=1, bets=(0, 1, 4), rules={"decks": 1, "penetration": 0.7})
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0, device="cpu", verbose=0)
    model.set_logger(configure(str(tmp_path), []))
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    vec_env = model.get_env()
    assert vec_env is not None
    obs = vec_env.reset()
    rewards = []
    for _ in range(300):
        masks = get_action_masks(vec_env)
        action, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert masks[0][int(action[0])], "the trained policy chose an illegal action"
        obs, reward, _done, _ = vec_env.step(action)
        rewards.append(float(reward[0]))
    assert all(abs(r) <= 4 * 6.5 for r in rewards)


# --------------------------------------------------------------------------- vector env


def make_vec(num_envs: int, **kwargs: Any) -> gym.vector.VectorEnv:
    return gym.make_vec(SHOE_ID, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"seats": 1},
        {"seats": 2, "seat": 1, "bets": (0, 1, 2), "others": "basic"},
        {"seats": 3, "seat": 0, "others": "random", "count_obs": "composition"},
        {"seats": 3, "seat": 2, "bets": (0, 1), "others": "random", "reward": "expected"},
    ],
    ids=["1-seat", "2-seats", "3-seats-random", "3-seats-sitting-out"],
)
def test_vector_env_plays_what_single_envs_play(kwargs: dict[str, Any]) -> None:
    """Table i seeded seed + i plays exactly what BlackjackShoe-v0 seeded seed + i plays: obs,
    rewards, terminations and masks, through episode ends (next-step autoreset)."""
    n = 4
    kwargs = {"rules": {"decks": 1, "penetration": 0.6}, **kwargs}
    envs = make_vec(n, **kwargs)
    assert isinstance(envs.unwrapped, BlackjackShoeVectorEnv)
    singles = [gym.make(SHOE_ID, **kwargs) for _ in range(n)]
    obs, info = envs.reset(seed=20)
    n_actions = 7 + len(singles[0].unwrapped.bets)
    assert info["action_mask"].shape == (n, n_actions) == envs.unwrapped.action_masks().shape
    np.testing.assert_array_equal(obs, [env.reset(seed=20 + i)[0] for i, env in enumerate(singles)])
    assert step_vector_beside_singles(envs, singles, info, 1000, seed=3) >= 8


def test_vector_env_illegal_action_changes_nothing() -> None:
    envs = make_vec(3, seats=2)
    _, _info = envs.reset(seed=0)
    before = envs.unwrapped._st.copy(), envs.unwrapped._obs.copy()
    with pytest.raises(ValueError, match=r"illegal action 0 at table 1; legal actions there: 7, 8, 9, 10"):
        envs.step(np.array([7, 0, 7]))
    np.testing.assert_array_equal(envs.unwrapped._st, before[0])
    np.testing.assert_array_equal(envs.unwrapped._obs, before[1])


# --------------------------------------------------------------------------- errors

BAD_ARGUMENTS = [
    ({"bets": ()}, r"bets.*\(\)"),
    ({"bets": []}, r"bets.*\[\]"),
    ({"bets": (2, 1)}, r"bets.*strictly increasing.*\(2, 1\)"),
    ({"bets": (1, 1)}, r"bets.*strictly increasing.*\(1, 1\)"),
    ({"bets": (-1, 1)}, r"bets.*>= 0.*\(-1, 1\)"),
    ({"bets": (0, 1), "seats": 1}, r"bets.*seats >= 2.*\(0, 1\)"),
    ({"bets": "abc"}, r"bets.*'abc'"),
    ({"seats": 0}, r"seats.*1\.\.7.*got 0"),
    ({"seats": 8}, r"seats.*1\.\.7.*got 8"),
    ({"seats": 2, "seat": 2}, r"seat.*0\.\.1.*got 2"),
    ({"seat": 1}, r"seat.*got 1"),
    ({"others": "bogus"}, r"others.*'basic', 'random'.*'bogus'"),
    ({"seats": 3, "others": "bogus"}, r"others.*'basic', 'random'.*'bogus'"),
    ({"rules": {"penetration": 0}}, r"shoe game needs a cut card.*penetration=0"),
    ({"rules": "ultimatebet"}, r"cut card.*penetration=0"),
    ({"rules": "infinite-deck"}, r"cut card.*decks=0"),
    ({"count_obs": "bogus"}, r"count_obs.*hilo.*'bogus'"),
    ({"reward": "bogus"}, r"reward.*sampled.*'bogus'"),
]


@pytest.mark.parametrize(("kwargs", "match"), BAD_ARGUMENTS, ids=[str(k) for k, _ in BAD_ARGUMENTS])
def test_bad_arguments(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        gym.make(SHOE_ID, **kwargs)
    with pytest.raises(ValueError, match=match):
        make_vec(2, **kwargs)


def test_bad_render_mode() -> None:
    with pytest.raises(ValueError, match=r"render_mode.*'bogus'"):
        BlackjackShoeEnv(render_mode="bogus")


@pytest.mark.parametrize(
    ("rules", "cards", "match"),
    [
        ({"decks": 6, "penetration": 0.5}, ["A"] * 25, r"25 x A.*6-deck shoe holds only 24"),
        ({"decks": 1, "penetration": 0.5}, ["K", "2", "K", "K", "K", "K"], r"5 x K.*1-deck shoe holds only 4"),
        ({"decks": 1, "penetration": 0.5}, ["2"] * 53, r"at most 52 stacked cards"),
        ({"decks": 1, "penetration": 0.5}, ["Z"], r"card 'Z' is not a rank"),
    ],
)
def test_bad_stacked_cards(rules: dict[str, Any], cards: list[str], match: str) -> None:
    env = BlackjackShoeEnv(rules=rules)
    with pytest.raises(ValueError, match=match):
        env.reset(seed=0, options={"cards": cards})


def stand_policy(mask: np.ndarray) -> int:
    """Bet the smallest, decline insurance, stand (or settle)."""
    if mask[BET]:
        return BET
    return N if mask[N] else S


def test_a_whole_deck_can_be_stacked() -> None:
    """All 52 cards of a one-deck shoe stacked: standing on everything, every round deals player, up
    card, player, hole card, then the dealer's draws, exactly in the stacked order."""
    deck = [rank for rank in RANK_NAMES for _ in range(4)]
    cards = [str(c) for c in np.random.default_rng(0).permutation(deck)]
    env = BlackjackShoeEnv(rules={"decks": 1, "penetration": 0.75}, bets=(1,), count_obs="none")
    _, info = env.reset(seed=0, options={"cards": cards})
    dealt: list[str] = []
    terminated = False
    while not terminated:
        _, _, terminated, _, info = env.step(stand_policy(info["action_mask"]))
        if "seats" in info:
            hand, dealer = info["hands"][0]["cards"], info["dealer"]["cards"]
            assert len(hand) == 2
            dealt += [hand[0], dealer[0], hand[1], *dealer[1:]]
            assert info["cards_dealt"] == len(dealt)
    assert len(dealt) >= int(0.75 * 52)
    assert dealt == cards[: len(dealt)]


def illegal_cases() -> list[Any]:
    return [
        pytest.param(
            [],
            0,
            r"illegal action 0 \(STAND\) now; legal actions: 7 BET 1, 8 BET 2, 9 BET 4, 10 BET 8",
            id="play-at-bet",
        ),
        pytest.param([], 11, r"illegal action 11 \(not an action id\)", id="out-of-range"),
        pytest.param(
            [BET], BET + 1, r"illegal action 8 \(BET 2\) now; legal actions: 0 STAND, 1 HIT", id="bet-mid-round"
        ),
        pytest.param([BET], P, r"illegal action 3 \(SPLIT\)", id="split-without-a-pair"),
    ]


@pytest.mark.parametrize(("before", "action", "match"), illegal_cases())
def test_illegal_action_raises_and_changes_nothing(before: list[int], action: int, match: str) -> None:
    cards = ["10", "9", "7", "8", "5", "4"]
    env, twin = BlackjackShoeEnv(seats=2, seat=1, others=STANDER), BlackjackShoeEnv(seats=2, seat=1, others=STANDER)
    for e in (env, twin):
        run(e, cards, before)
    obs_before, mask_before = env._obs.copy(), env.action_masks()
    state = env._st.copy(), env._hands.copy(), env._shoe.copy(), env._res.copy()
    with pytest.raises(ValueError, match=match):
        env.step(action)
    np.testing.assert_array_equal(env._obs, obs_before)
    np.testing.assert_array_equal(env.action_masks(), mask_before)
    for now, then in zip((env._st, env._hands, env._shoe, env._res), state, strict=True):
        np.testing.assert_array_equal(now, then)
    legal_action = int(np.flatnonzero(mask_before)[-1])
    a, b = env.step(legal_action), twin.step(legal_action)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1:4] == b[1:4] and a[4]["running_count"] == b[4]["running_count"]


def test_stacked_cards_then_the_seeded_shoe_continues() -> None:
    """The stacked cards come first; after them the seeded shoe deals the same cards each time."""

    def first_rounds(cards: list[str] | None, seed: int) -> list[Any]:
        env = BlackjackShoeEnv(bets=(1,))
        _, info = env.reset(seed=seed, options={"cards": cards})
        rounds = []
        while len(rounds) < 4:
            _, _, _, _, info = env.step(stand_policy(info["action_mask"]))
            if "seats" in info:
                rounds.append((seat_cards(info), info["dealer"]["cards"]))
        return rounds

    stacked = first_rounds(["10", "9", "8", "8"], 9)
    assert stacked[0] == ([[["10", "8"]]], ["9", "8"])
    assert stacked == first_rounds(["10", "9", "8", "8"], 9)
    assert stacked[1:] != first_rounds(["10", "9", "8", "8"], 10)[1:]


def test_render_ansi_shows_the_shoe() -> None:
    env = gym.make(SHOE_ID, render_mode="ansi", rules={"decks": 1, "penetration": 0.5})
    env.reset(seed=0, options={"cards": ["10", "9", "8", "7"]})
    env.step(BET + 1)
    text = env.render()
    assert "Shoe: 4 of 52 cards dealt" in text and "Hi-Lo running count -1" in text
    assert "BET" not in text.split("Legal:")[-1]


def test_registered_ids() -> None:
    assert blackjack_env.SHOE_ENV_ID == SHOE_ID
    assert isinstance(gym.make(SHOE_ID).unwrapped, BlackjackShoeEnv)
    envs = make_vec(2, bets=(1, 2))
    assert isinstance(envs.unwrapped, BlackjackShoeVectorEnv)
    assert envs.single_action_space.n == 9 and envs.unwrapped.observation_names[-2:] == ("bet_level", "shoe_dealt")
