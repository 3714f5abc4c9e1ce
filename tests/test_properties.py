"""Property tests over random rule sets and random legal play, env checkers, a MaskablePPO smoke run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import oracle_results, table_cards, trace_random_rounds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rule_sets import rules_strategy

import blackjack_env
from blackjack_env import Action, BlackjackEnv, Phase, Rules
from blackjack_env.cards import RANK_NAMES

ROUNDS = 12  # rounds per example
SPLIT = int(Action.SPLIT)
MAX_STEPS = 120  # no round may take more steps than this

RULES = rules_strategy()
# A stacked start for the first round: a pair (aces, 8s or unlike tens), any up and hole card,
# then cards rich in the pair's rank, so that deep (re)splits happen.
STACKS = st.sampled_from([("A", "A"), ("8", "8"), ("K", "Q")]).flatmap(
    lambda pair: st.builds(
        lambda up, hole, rest: [pair[0], up, pair[1], hole, *rest],
        st.sampled_from(RANK_NAMES),
        st.sampled_from(RANK_NAMES),
        st.lists(st.sampled_from([pair[0], pair[0], pair[1], "2", "3", "10"]), max_size=16),
    )
)
PROPERTY_SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def reward_bounds(rules: Rules) -> tuple[float, float]:
    """The most a round can lose and win: every hand doubled (DAS) or only the unsplit hand
    doubled, plus a lost insurance; a natural pays blackjack_pays; a won insurance pays 1."""
    hands = 2 * rules.split_to if rules.double_after_split else max(2, rules.split_to)
    return -hands - 0.5, max(float(hands), rules.blackjack_pays, 1.0)


def possible_reward(reward: float, rules: Rules) -> bool:
    """Every settlement is a multiple of 0.5, except a natural (blackjack_pays, minus 0.5 insured)."""
    return (2 * reward).is_integer() or any(
        abs(reward - x) < 1e-9 for x in (rules.blackjack_pays, rules.blackjack_pays - 0.5)
    )


def _total(cards: list[str]) -> tuple[int, bool]:
    """Best total and softness of a list of rank names."""
    hard = sum(1 if c == "A" else min(10, int(c)) if c.isdigit() else 10 for c in cards)
    soft = "A" in cards and hard + 10 <= 21
    return (hard + 10 if soft else hard), soft


def check_settlement(rules: Rules, summary: dict[str, Any]) -> None:
    """An independent reading of the rules for a settled round: how each hand may look, how the
    dealer must have drawn, and what every bet pays."""
    hands = summary["hands"]
    dealer = summary["dealer"]["cards"]
    dealer_total, _ = _total(dealer)
    assert summary["dealer"]["total"] == dealer_total
    dealer_bj = len(dealer) == 2 and dealer_total == 21
    natural = len(hands) == 1 and len(hands[0]["cards"]) == 2 and _total(hands[0]["cards"])[0] == 21
    state = summary["insurance_state"]
    if state == "even money":
        assert natural and [h["result"] for h in hands] == [1.0] and summary["insurance"] == 0.0
        assert hands[0]["status"] == "stood", hands[0]
        return
    # how each hand may look
    for hand in hands:
        total = _total(hand["cards"])[0]
        assert hand["total"] == total
        # settled means settled: a round ended by a natural or a dealer blackjack leaves the hand
        # "stood" too, never "playing" or "waiting" (test_scenarios.py::test_settled_hands_are_not_playing)
        assert hand["status"] in ("stood", "bust", "surrendered"), hand
        assert (hand["status"] == "bust") is (total > 21)
        assert hand["bet"] == (2.0 if hand["doubled"] else 1.0)
        if hand["doubled"]:
            assert len(hand["cards"]) == 3 and (rules.double_after_split or not hand["split"])
        if hand["split"]:
            assert len(hands) > 1 and len(hand["cards"]) >= 2
            if hand["cards"][0] == "A" and not rules.hit_split_aces:
                assert len(hand["cards"]) == 2
        if hand["status"] == "surrendered":
            assert len(hands) == 1 and len(hand["cards"]) == 2 and rules.surrender != "none"
    # how the dealer drew
    live = not natural and any(h["status"] == "stood" for h in hands)
    surrendered = any(h["status"] == "surrendered" for h in hands)
    if live and not dealer_bj:
        for k in range(2, len(dealer) + 1):
            total, soft = _total(dealer[:k])
            stands = total > 17 or (total == 17 and not (soft and rules.hit_soft_17))
            assert stands is (k == len(dealer)), f"dealer {dealer} under hit_soft_17={rules.hit_soft_17}"
    elif rules.peek:
        assert len(dealer) == 2
    else:
        # no hole card: the second card is drawn only where a result depends on it: a live
        # hand, or a natural, an insurance bet or a late surrender that a blackjack under an A or 10 changes
        late_no_peek = surrendered and rules.surrender == "late"
        blackjack_possible = _total(dealer[:1])[0] in (10, 11)
        depends = live or (blackjack_possible and (natural or state == "taken" or late_no_peek))
        assert len(dealer) == (2 if depends else 1), (dealer, hands, state)
    # what every bet pays
    expected = oracle_results(rules, hands, dealer_total, dealer_bj, natural)
    assert [h["result"] for h in hands] == pytest.approx(expected), (hands, dealer)
    insurance = {"taken": 1.0 if dealer_bj else -0.5}.get(state, 0.0)
    assert summary["insurance"] == insurance


class ShoeLedger:
    """Card conservation: cards left in the shoe + discards since the shuffle + cards on the table
    = the full shoe, where a reshuffle (before a round, or mid-round when the shoe runs dry)
    empties the discards."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.full = 52 * rules.decks
        self.discards: Counter[str] = Counter()

    def dealt(self, env: BlackjackEnv) -> Counter[str]:
        return +Counter({rank: 4 * self.rules.decks - n for rank, n in env.shoe_counts.items()})

    def start_round(self, env: BlackjackEnv, dealt_before: int, fresh: bool) -> None:
        cut = int(self.rules.penetration * self.full)
        if fresh or self.rules.penetration == 0 or dealt_before >= cut:
            self.discards = Counter()
        self.check(env)

    def check(self, env: BlackjackEnv) -> None:
        dealt = self.dealt(env)
        table = table_cards(env.round_summary())
        if dealt != self.discards + table:
            # only legal when the shoe ran dry this round: the discards went back into it
            assert sum(self.discards.values()) + sum(table.values()) > self.full, (dealt, self.discards, table)
            assert dealt == table
            self.discards = Counter()

    def end_round(self, env: BlackjackEnv) -> None:
        self.check(env)
        self.discards += table_cards(env.round_summary())


def check_count_observation(env: BlackjackEnv, obs: np.ndarray) -> None:
    """What a card counter sees: the unseen cards per value (the shoe plus a hidden hole card),
    or the Hi-Lo true count of the seen ones (rounded, clipped to [-10, 10], plus 10)."""
    if env.count_obs == "none":
        assert len(obs) == 12
        return
    unseen = np.zeros(11, np.int64)
    for rank, n in env.shoe_counts.items():
        unseen[min(10, RANK_NAMES.index(rank) + 1)] += n
    summary = env.round_summary()
    if env.rules.peek and env.phase != Phase.OVER:
        hole = summary["dealer"]["cards"][1]
        unseen[min(10, RANK_NAMES.index(hole) + 1)] += 1
    if env.count_obs == "composition":
        assert obs[12:].tolist() == unseen[1:].tolist()
        return
    decks = env.rules.decks
    seen = {v: (16 if v == 10 else 4) * decks - unseen[v] for v in range(1, 11)}
    running = sum(seen[v] for v in range(2, 7)) - seen[1] - seen[10]
    true_count = running * 52 / max(int(unseen.sum()), 1)
    assert obs[12:].tolist() == [max(-10, min(10, int(np.floor(true_count + 0.5)))) + 10]


def play_random_round(
    env: BlackjackEnv, rng: np.random.Generator, obs: np.ndarray, info: dict[str, Any], ledger: ShoeLedger | None
) -> tuple[float, dict[str, Any], list[Any]]:
    """Random legal actions until the round ends, checking the invariants at every step."""
    trace: list[Any] = [obs.tolist()]
    for _ in range(MAX_STEPS):
        assert env.observation_space.contains(obs)
        check_count_observation(env, obs)
        mask = info["action_mask"]
        assert np.array_equal(mask, env.action_masks())
        assert mask.any(), "a live round must have a legal action"
        # split often, so that deep splits happen
        split = mask[SPLIT] and rng.random() < 0.8
        action = SPLIT if split else int(rng.choice(np.flatnonzero(mask)))
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((action, obs.tolist(), reward))
        assert truncated is False
        if ledger is not None:
            ledger.check(env)
        if terminated:
            assert np.flatnonzero(info["action_mask"]).tolist() == [Action.STAND]
            assert env.observation_space.contains(obs)
            check_count_observation(env, obs)
            return reward, info, trace
        assert reward == 0.0
    raise AssertionError(f"the round did not end within {MAX_STEPS} steps")


@PROPERTY_SETTINGS
@given(
    rules=RULES, seed=st.integers(0, 2**32 - 1), stack=STACKS, count=st.sampled_from(["none", "composition", "hilo"])
)
def test_random_rules_random_play(rules: Rules, seed: int, stack: list[str], count: str) -> None:
    """No crash, a legal action in every live state, rewards within range and consistent with
    the per-hand results, cards conserved at every step."""
    if rules.infinite:
        count = "none"
    else:
        stack = [c for i, c in enumerate(stack) if stack[: i + 1].count(c) <= 4 * rules.decks]
    env = BlackjackEnv(rules=rules, count_obs=count)
    rng = np.random.default_rng(seed)
    low, high = reward_bounds(rules)
    ledger = None if rules.infinite else ShoeLedger(rules)
    for i in range(ROUNDS):
        dealt_before = 0 if rules.infinite else 52 * rules.decks - sum(env.shoe_counts.values())
        obs, info = env.reset(seed=seed if i == 0 else None, options={"cards": stack} if i == 0 else None)
        if ledger is not None:
            ledger.start_round(env, dealt_before, fresh=i == 0)
        reward, info, _ = play_random_round(env, rng, obs, info, ledger)
        assert low <= reward <= high, (reward, low, high)
        assert possible_reward(reward, rules), reward
        assert reward == pytest.approx(sum(h["result"] for h in info["hands"]) + info["insurance"])
        assert reward == info["result"]
        assert 1 <= len(info["hands"]) <= rules.split_to
        check_settlement(rules, info)
        for hand in info["hands"]:
            assert hand["bet"] in (1.0, 2.0)
            assert abs(hand["result"]) <= max(hand["bet"], rules.blackjack_pays)
        if ledger is not None:
            ledger.end_round(env)


def _rounds(env: BlackjackEnv, seed: int, rounds: int, policy_seed: int, stack: list[str] | None = None) -> list[Any]:
    rng = np.random.default_rng(policy_seed)
    out = []
    for i in range(rounds):
        options = {"cards": stack} if i == 0 and stack else None
        obs, info = env.reset(seed=seed if i == 0 else None, options=options)
        reward, info, trace = play_random_round(env, rng, obs, info, None)
        out.append((trace, info["hands"], info["dealer"], reward))
    return out


@PROPERTY_SETTINGS
@given(rules=RULES, seed=st.integers(0, 2**32 - 1), stack=st.one_of(st.none(), STACKS))
def test_same_seed_same_rounds(rules: Rules, seed: int, stack: list[str] | None) -> None:
    """Two fresh envs with one seed, one policy (and the same stacked cards) play identical rounds."""
    if stack and not rules.infinite:
        stack = [c for i, c in enumerate(stack) if stack[: i + 1].count(c) <= 4 * rules.decks]
    first = _rounds(BlackjackEnv(rules=rules), seed, 5, 1, stack)
    assert first == _rounds(BlackjackEnv(rules=rules), seed, 5, 1, stack)
    if stack:
        _, hands, dealer, _ = first[0]
        assert hands[0]["cards"][0] == stack[0] and dealer["cards"][0] == stack[1]


@settings(max_examples=40, deadline=None)
@given(rules=RULES, seed=st.integers(0, 2**32 - 1), other=st.integers(0, 2**32 - 1))
def test_same_seed_same_round_on_a_reused_env(rules: Rules, seed: int, other: int) -> None:
    """reset(seed=s) deals the same cards whatever the env played before (Gymnasium's contract)."""
    fresh = _rounds(BlackjackEnv(rules=rules), seed, 3, 1)
    env = BlackjackEnv(rules=rules)
    _rounds(env, other, 4, 2)  # play something else first, leaving the shoe half dealt
    assert _rounds(env, seed, 3, 1) == fresh
    assert _rounds(env, seed, 3, 1) == fresh


# --------------------------------------------------------------------------- env checkers

CHECKED_PRESETS = ["ultimatebet", "face-up-no-hole-card", "european", "single-deck", "infinite-deck"]


@pytest.mark.parametrize(
    ("preset", "count_obs"),
    [(p, "none") for p in CHECKED_PRESETS] + [("ultimatebet", "composition"), ("single-deck", "hilo")],
)
def test_gymnasium_check_env(preset: str, count_obs: str) -> None:
    from gymnasium.utils.env_checker import check_env

    env = gym.make(blackjack_env.ENV_ID, rules=preset, count_obs=count_obs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)
    env.close()


@pytest.mark.parametrize("preset", CHECKED_PRESETS)
def test_sb3_check_env(preset: str) -> None:
    from stable_baselines3.common.env_checker import check_env

    env = BlackjackEnv(rules=preset)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, warn=True)


def test_sample_after_a_finished_round_is_stand() -> None:
    """Known limit of Gymnasium's check_env: it samples its action before resetting with seed 123,
    so after a finished round sample() can only guess the next round's opening; it returns STAND,
    legal unless the next deal opens with the insurance question (as seed 123 does for 10 or 20
    decks, never for 0-8 decks, which test_both_checkers_pass_for_random_rules covers)."""
    env = BlackjackEnv(rules=Rules(decks=10))
    env.reset(seed=123, options={"cards": ["9", "6", "9", "10"]})
    assert env.step(Action.STAND)[2]
    assert env.action_space.sample() == Action.STAND
    obs, _ = env.reset(seed=123)
    assert obs[0] == Phase.INSURANCE  # the deal that check_env would then step with STAND


@settings(max_examples=30, deadline=None)
@given(rules=RULES)
def test_both_checkers_pass_for_random_rules(rules: Rules) -> None:
    """The checkers step whatever the seeded deal asks (an insurance question, a natural, a
    dealer blackjack): they must pass under any rule set, not just the presets."""
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(blackjack_env.ENV_ID, rules=rules)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)
        sb3_check_env(BlackjackEnv(rules=rules), warn=True)
    env.close()


def test_action_space_sample_is_legal() -> None:
    """Generic tools sample unmasked actions; the env's sample() draws among the legal ones."""
    env = BlackjackEnv(rules="ultimatebet")
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(2000):
        terminated = False
        while not terminated:
            action = int(env.action_space.sample())
            assert env.action_masks()[action]
            _, _, terminated, _, _ = env.step(action)
        env.reset()
    masked = [int(env.action_space.sample(mask=np.array([0, 0, 0, 1, 0, 0, 0], np.int8))) for _ in range(5)]
    assert masked == [3] * 5


# --------------------------------------------------------------------------- MaskablePPO


def test_maskable_ppo_smoke(tmp_path: Path) -> None:
    """MaskablePPO("MlpPolicy", env) trains on the env as is (masks through action_masks())."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.logger import configure

    env = gym.make(blackjack_env.ENV_ID, rules="ultimatebet")
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, n_epochs=2, seed=0, device="cpu", verbose=0)
    model.set_logger(configure(str(tmp_path), []))
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048

    vec_env = model.get_env()
    assert vec_env is not None
    obs = vec_env.reset()
    episodes = 0
    rewards = []
    while episodes < 30:
        masks = get_action_masks(vec_env)
        action, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert masks[0][int(action[0])], "the trained policy chose an illegal action"
        obs, reward, done, _ = vec_env.step(action)
        if done[0]:
            episodes += 1
            rewards.append(float(reward[0]))
    assert all(-8.5 <= r <= 6.0 for r in rewards)


@pytest.mark.parametrize("name", sorted(RANK_NAMES))
def test_every_rank_can_be_stacked(name: str) -> None:
    env = BlackjackEnv(rules=Rules(decks=1))
    cards = [name, "2", name, "3"]
    env.reset(seed=0, options={"cards": cards})
    summary = env.round_summary()
    assert summary["hands"][0]["cards"] == [name, name]
    assert summary["dealer"]["cards"] == ["2", "3"]
    assert env.shoe_counts[name] == 4 - cards.count(name)
    assert sum(env.shoe_counts.values()) == 48


# --------------------------------------------------------------------------- one engine, two modes

DIFFERENTIAL_RULES: list[dict[str, Any]] = [
    {},
    {"peek": False, "obo": False, "surrender": "late", "hit_soft_17": False},
    {"decks": 1, "penetration": 0.9, "split_to": 8, "resplit_aces": True, "hit_split_aces": True},
    {"decks": 0, "surrender": "early", "double_on": "9-11", "blackjack_pays": 1.2},
    {"decks": 2, "penetration": 0.6, "surrender": "early", "surrender_vs_ace_ten": False, "even_money": False},
]


def test_plain_python_mode_plays_the_same_rounds() -> None:
    """NUMBA_DISABLE_JIT=1 runs the very same engine code as plain Python: same cards, same
    decisions, same results as the compiled run."""
    compiled = trace_random_rounds(DIFFERENTIAL_RULES, 150)
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); from conftest import trace_random_rounds; "
        "from blackjack_env import engine; "
        f"print(json.dumps([type(engine.draw).__name__, trace_random_rounds({DIFFERENTIAL_RULES!r}, 150)]))"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(Path(__file__).parent)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    kind, plain = json.loads(done.stdout)
    assert kind == "function", "the engine was still compiled"
    assert plain == json.loads(json.dumps(compiled))


def _two_card_hands() -> list[tuple[str, str, list[str]]]:
    """(section, total, cards) of a non-pair two-card hand for every hard 5-19 and soft 13-20 row."""
    hands = []
    for total in range(5, 20):
        low = max(2, total - 10)
        low, high = (low - 1, total - low + 1) if 2 * low == total else (low, total - low)
        hands.append(("hard", str(total), [str(low), str(high)]))
    hands += [("soft", str(total), ["A", str(total - 11)]) for total in range(13, 21)]
    return hands


@settings(max_examples=15, deadline=None)
@given(rules=rules_strategy(penetration=False))
def test_the_ppo_agents_masks_are_the_engines(rules: Rules) -> None:
    """The PPO agent tabulates its play from masks it builds per chart cell; over random rules they
    hold what the env offers on a dealt hand of that cell (both read engine.may_double and
    engine.may_surrender_vs; this holds the agent's reading of the Rules values to the engine's)."""
    from blackjack_env.agents.ppo import cell_observations
    from blackjack_env.strategy import row_of_label

    _, masks, _ = cell_observations(rules)
    env = BlackjackEnv(rules=rules, count_obs="none")
    checked = 0
    for section, key, cards in _two_card_hands():
        for up in ["A", *(str(v) for v in range(2, 11))]:
            _, info = env.reset(seed=0, options={"cards": [cards[0], up, cards[1], "5"]})
            if env.phase == Phase.INSURANCE:
                _, _, _, _, info = env.step(Action.NO_INSURANCE)
            if env.phase != Phase.PLAY:
                continue
            expected = masks[row_of_label(section, key), 0 if up == "A" else int(up) - 1]
            for action in (Action.DOUBLE, Action.SURRENDER):
                assert info["action_mask"][action] == expected[action], (section, key, up, action.name)
            checked += 1
    assert checked >= 200  # 23 hands x 10 up cards, less the rounds a peeked blackjack or a natural ends
