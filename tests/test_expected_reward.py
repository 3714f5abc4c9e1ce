"""The ``reward="expected"`` option: the round's result averaged over the dealer's unseen cards.

Checked exactly against the solver and against a small independent dealer recursion, and
statistically against the dealt results on identical cards over random rule sets.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from rule_sets import random_rules

import blackjack_env  # noqa: F401  (registers the env)
from blackjack_env import Action, BlackjackEnv, Phase, Rules
from blackjack_env import engine as E
from blackjack_env.solver._analysis import hand_evs
from blackjack_env.vector import BlackjackVectorEnv

VALUE = {"A": 1, "10": 10, "K": 10}


def card_value(name: str) -> int:
    return VALUE.get(name) or int(name)


def stand_after_deal(rules: Rules, player: list[str], up: str) -> float:
    """Deal player cards around the up card (the hole card and the rest random), decline any
    insurance and stand (re-dealing with another seed when the peek shows a blackjack)."""
    for seed in range(100):
        env = BlackjackEnv(rules, reward="expected")
        env.reset(seed=seed, options={"cards": [player[0], up, player[1]]})
        if env.phase == Phase.INSURANCE:
            env.step(Action.NO_INSURANCE)
        if env.phase == Phase.PLAY:
            _, reward, done, _, _ = env.step(Action.STAND)
            assert done
            return reward
    raise AssertionError("the dealer showed a blackjack in every seeded deal")


@pytest.mark.parametrize("preset", ["ultimatebet", "single-deck", "infinite-deck", "european"])
@pytest.mark.parametrize("player,up", [(["10", "7"], "2"), (["9", "9"], "6"), (["A", "7"], "10"), (["10", "8"], "A")])
def test_standing_pays_the_solvers_stand_ev(preset: str, player: list[str], up: str) -> None:
    """Given the player's cards and the up card, the reward is the exact EV of standing (after a
    peek that found no blackjack, the hole card is known not to make one)."""
    rules = Rules.preset(preset)
    reward = stand_after_deal(rules, player, up)
    exact = hand_evs(rules, [card_value(c) for c in player], card_value(up))["stand"]
    assert reward == pytest.approx(exact, rel=1e-9, abs=1e-12)


def card_name(value: int) -> str:
    return "A" if value == 1 else str(value)


@pytest.mark.parametrize("case", range(12))
def test_standing_pays_the_solvers_stand_ev_under_random_rules(case: int) -> None:
    """Random rules (every field, any shoe) and a random two-card hand and up card: the expected
    reward of standing is the solver's exact stand EV to 1e-9 (both are exact: only float rounding
    separates them). A model error in either (a finite shoe treated as infinite, the wrong soft-17
    rule, a blackjack frame) moves it by far more."""
    rng = np.random.default_rng(500 + case)
    rules = random_rules(rng)
    while True:
        player = sorted(int(v) for v in rng.integers(1, 11, 2))
        if player != [1, 10]:  # a natural is settled, not stood
            break
    up = int(rng.integers(1, 11))
    reward = stand_after_deal(rules, [card_name(v) for v in player], card_name(up))
    assert reward == pytest.approx(hand_evs(rules, player, up)["stand"], rel=1e-9, abs=1e-12), rules


@cache
def infinite_dealer(up: int, hit_soft_17: bool) -> dict[str, float]:
    """Dealer outcome probabilities for an infinite deck, no peek (an independent recursion)."""
    out: dict[str, float] = {}

    def walk(hard: int, aces: int, n: int, p: float) -> None:
        total = hard + 10 if aces and hard + 10 <= 21 else hard
        if n == 2 and total == 21:
            out["bj"] = out.get("bj", 0.0) + p
            return
        soft = aces and hard + 10 <= 21
        if n >= 2 and (total > 17 or (total == 17 and not (hit_soft_17 and soft))):
            key = "bust" if total > 21 else str(total)
            out[key] = out.get(key, 0.0) + p
            return
        for value in range(1, 11):
            walk(hard + value, aces + (value == 1), n + 1, p * (4 if value == 10 else 1) / 13)

    walk(up, up == 1, 1, 1.0)
    return out


def no_hole_card(**changes) -> Rules:
    """Infinite deck, S17, no hole card (what infinite_dealer(up, False) models)."""
    return Rules(decks=0, peek=False, hit_soft_17=False, **changes)


def test_obo_doubled_21_against_a_ten_without_hole_card() -> None:
    """No hole card, OBO: a doubled 21 loses one unit to a dealer blackjack and pushes a 21."""
    dealer = infinite_dealer(10, False)
    for obo, bj_loss in ((True, -1.0), (False, -2.0)):
        env = BlackjackEnv(no_hole_card(obo=obo), reward="expected")
        env.reset(seed=1, options={"cards": ["5", "10", "6", "K"]})
        _, reward, done, _, info = env.step(Action.DOUBLE)
        assert done and info["hands"][0]["total"] == 21
        expected = dealer["bj"] * bj_loss + (1 - dealer["bj"] - dealer["21"]) * 2.0
        assert reward == pytest.approx(expected, rel=1e-12)


def test_late_surrender_without_peek_and_insurance_without_hole_card() -> None:
    """Late surrender with no peek loses the whole bet to a blackjack; insurance pays 2:1 on it."""
    p_bj = infinite_dealer(10, False)["bj"]
    env = BlackjackEnv(no_hole_card(surrender="late"), reward="expected")
    env.reset(seed=2, options={"cards": ["10", "10", "6"]})
    _, reward, done, _, _ = env.step(Action.SURRENDER)
    assert done and reward == pytest.approx(-0.5 - 0.5 * p_bj, rel=1e-12)

    ace = infinite_dealer(1, False)
    env = BlackjackEnv(no_hole_card(), reward="expected")
    env.reset(seed=3, options={"cards": ["10", "A", "9"]})
    env.step(Action.INSURANCE)
    _, reward, done, _, _ = env.step(Action.STAND)
    stand = ace["bust"] + ace["17"] + ace["18"] - ace["20"] - ace["21"] - ace["bj"]
    assert done and reward == pytest.approx(stand + ace["bj"] - 0.5 * (1 - ace["bj"]), rel=1e-12)


def test_even_money_and_a_dealer_blackjack_shown_by_the_peek_pay_as_dealt() -> None:
    """What the player has seen decides the result: nothing is left to average."""
    env = BlackjackEnv("ultimatebet", reward="expected")
    env.reset(seed=4, options={"cards": ["A", "A", "K"]})
    _, reward, done, _, _ = env.step(Action.INSURANCE)  # even money
    assert done and reward == 1.0
    env.reset(seed=4, options={"cards": ["9", "A", "7", "K"]})
    env.step(Action.NO_INSURANCE)
    assert env.phase == Phase.SETTLE  # the peek found the blackjack
    _, reward, done, _, info = env.step(Action.STAND)
    assert done and reward == -1.0 == info["result"]


@pytest.mark.parametrize("case", range(6))
def test_expected_rewards_average_to_the_dealt_ones_on_identical_cards(case: int) -> None:
    """Both modes see the same cards and masks; the expected rewards' mean equals the dealt
    results' mean (tower property), with a much smaller variance.

    Paired on identical cards, so the difference's spread is the dealer's outcome given the
    player's cards alone (about 0.9 a round): over 20,000+ rounds of random play it resolves ~3% of
    a bet, within 4 standard errors (a false alarm once in ~16,000 runs, 6 cases). This is a check
    of the plumbing under random rules and play; how the expected reward is computed is held
    exactly to the solver above (1e-9)."""
    rng = np.random.default_rng(100 + case)
    rules = random_rules(rng, penetrations=(0.0, 0.75))
    n = 512
    envs = {mode: BlackjackVectorEnv(n, rules=rules, reward=mode) for mode in ("sampled", "expected")}
    _, info = envs["sampled"].reset(seed=case)
    _, info_expected = envs["expected"].reset(seed=case)
    dealt, expected = [], []
    for _ in range(300):
        np.testing.assert_array_equal(info["action_mask"], info_expected["action_mask"])
        actions = np.argmax(rng.random(info["action_mask"].shape) * info["action_mask"], axis=1)
        _, r_dealt, done, _, info = envs["sampled"].step(actions)
        _, r_expected, done_expected, _, info_expected = envs["expected"].step(actions)
        np.testing.assert_array_equal(done, done_expected)
        dealt.extend(r_dealt[done])
        expected.extend(r_expected[done])
    diff = np.array(expected) - np.array(dealt)
    stderr = diff.std() / np.sqrt(len(diff))
    assert len(diff) > 20_000
    assert abs(diff.mean()) < 4 * stderr, f"{rules}: mean difference {diff.mean():.5f} +- {stderr:.5f}"
    assert np.var(expected) < 0.8 * np.var(dealt)


def test_bad_reward_option_is_named() -> None:
    with pytest.raises(ValueError, match="reward must be one of sampled, expected"):
        BlackjackEnv(reward="mean")
    with pytest.raises(ValueError, match="reward must be one of"):
        BlackjackVectorEnv(2, reward="exact")


@pytest.mark.parametrize("rows", [2, E.DEALER_CACHE_ROWS])
@pytest.mark.parametrize("case", range(3))
def test_the_dealer_cache_changes_no_reward(case: int, rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The expected reward's dealer-outcome cache, full size or two rows (nearly every lookup a clash
    that must be told apart by its key), pays to the bit what walking the dealer's outcomes every round
    pays, on identical cards and play under random rules (an infinite deck and no hole card among them)."""
    rng = np.random.default_rng(300 + case)
    rules = random_rules(rng, penetrations=(0.0, 0.75))
    paid = {}
    for cache_rows in (0, rows):
        monkeypatch.setattr(E, "new_dealer_cache", lambda expected, n=cache_rows: np.full((n, E.DEALER_ROW), -1.0))
        env = BlackjackVectorEnv(256, rules=rules, reward="expected")
        _, info = env.reset(seed=case)
        actions_rng = np.random.default_rng(case)
        rewards = []
        for _ in range(200):
            actions = np.argmax(actions_rng.random(info["action_mask"].shape) * info["action_mask"], axis=1)
            _, reward, _, _, info = env.step(actions)
            rewards.append(reward)
        paid[cache_rows] = np.array(rewards)
        if cache_rows:
            assert (env._dealer[:, 0] >= 0).any()  # the cache was filled and read
    np.testing.assert_array_equal(paid[0], paid[rows])
