"""Shared helpers for the engine and env tests: play a scripted round on stacked cards."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from blackjack_env import Action, BlackjackEnv, Rules

# Short action names for scripted rounds.
S = Action.STAND
H = Action.HIT
D = Action.DOUBLE
P = Action.SPLIT
R = Action.SURRENDER
I = Action.INSURANCE  # noqa: E741
N = Action.NO_INSURANCE

RulesLike = Rules | str | Mapping[str, Any] | None


def legal(mask: np.ndarray) -> frozenset[Action]:
    """The legal actions of a bool[7] mask, as a set of Action members."""
    return frozenset(Action(int(a)) for a in np.flatnonzero(mask))


def table_cards(summary: Mapping[str, Any]) -> Counter[str]:
    """Every card on the table (all hands and the dealer, hole card included) by rank name."""
    cards: Counter[str] = Counter()
    for hand in summary["hands"]:
        cards.update(hand["cards"])
    cards.update(summary["dealer"]["cards"])
    return cards


@dataclass
class Round:
    """What happened in one scripted round."""

    env: BlackjackEnv
    reward: float
    masks: list[frozenset[Action]]  # the legal actions before each step
    observations: list[np.ndarray]  # the observation before each step
    rewards: list[float] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def results(self) -> list[float]:
        return [hand["result"] for hand in self.info["hands"]]

    @property
    def hand_cards(self) -> list[list[str]]:
        return [hand["cards"] for hand in self.info["hands"]]

    @property
    def dealer_cards(self) -> list[str]:
        return self.info["dealer"]["cards"]


def play_round(
    rules: RulesLike,
    cards: Sequence[str],
    actions: Sequence[int],
    *,
    seed: int = 0,
    exact_cards: bool = True,
) -> Round:
    """Deal ``cards`` (stacked, in deal order) and play ``actions``; the last action must end the round.

    Checks on the way: the mask from ``action_masks()`` equals ``info["action_mask"]``, every
    action is legal, the reward is 0 until the final step, and (``exact_cards``) the cards on the
    table at the end are exactly the stacked ones, so no random card slipped into the scenario.
    """
    env = BlackjackEnv(rules=rules)
    obs, info = env.reset(seed=seed, options={"cards": list(cards)})
    masks: list[frozenset[Action]] = []
    observations: list[np.ndarray] = []
    rewards: list[float] = []
    terminated = False
    for i, action in enumerate(actions):
        assert not terminated, f"the round ended before action {i} ({Action(action).name})"
        assert np.array_equal(env.action_masks(), info["action_mask"])
        masks.append(legal(info["action_mask"]))
        observations.append(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        assert truncated is False
        rewards.append(reward)
        if not terminated:
            assert reward == 0.0, f"reward {reward} before the final step"
    assert terminated, f"the round is still live after {len(actions)} actions; legal now: {legal(env.action_masks())}"
    assert not env.action_masks().any(), "a finished round must have no legal actions"
    summary = env.unwrapped.round_summary()
    assert summary["result"] == rewards[-1]
    assert sum(h["result"] for h in summary["hands"]) + summary["insurance"] == rewards[-1]
    if exact_cards:
        assert table_cards(summary) == Counter(cards), (
            f"cards on the table {sorted(table_cards(summary).elements())} differ from the stacked {sorted(cards)}"
        )
    return Round(env=env, reward=rewards[-1], masks=masks, observations=observations, rewards=rewards, info=info)


def trace_random_rounds(rule_sets: Sequence[Mapping[str, Any]], rounds: int) -> list[Any]:
    """Random legal play (seeded) under each rule set: every round's hands, dealer and reward.

    Used to hold the compiled engine and its ``NUMBA_DISABLE_JIT=1`` plain-Python run to the
    same results."""
    out: list[Any] = []
    for i, fields in enumerate(rule_sets):
        env = BlackjackEnv(rules=Rules().replace(**fields), count_obs="none" if fields.get("decks") == 0 else "hilo")
        rng = np.random.default_rng(i)
        for k in range(rounds):
            obs, info = env.reset(seed=1000 + i if k == 0 else None)
            terminated = False
            reward = 0.0
            while not terminated:
                action = int(rng.choice(np.flatnonzero(info["action_mask"])))
                obs, reward, terminated, _, info = env.step(action)
            out.append([info["hands"], info["dealer"], info["insurance"], reward, obs.tolist()])
    return out
