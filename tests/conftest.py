"""Shared helpers for the engine and env tests: play a scripted round on stacked cards."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

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

try:  # the dev extra's; the core install's own tests (test_core_install.py) run without it
    from hypothesis import settings
except ImportError:
    pass
else:
    # Property tests draw the same examples on every run (a failure is reproduced by rerunning), with no
    # example database carried between runs; `pytest --hypothesis-profile=explore` draws new ones each run.
    settings.register_profile("deterministic", derandomize=True, database=None)
    settings.register_profile("explore", derandomize=False)
    settings.load_profile("deterministic")


@pytest.fixture(autouse=True)
def _seed_torch() -> None:
    """torch's global generator starts every test from one seed, whatever ran before in this worker
    (pytest-randomly reseeds `random` and numpy's global generator, not torch's); a test that draws
    from torch still seeds it itself, where it draws."""
    torch = sys.modules.get("torch")  # never imported here only for this: most tests do not use torch
    if torch is not None:
        torch.manual_seed(0)


@pytest.fixture(scope="session", autouse=True)
def _fresh_solver_cache(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Path]:
    """The whole session reads and writes the solver's disk cache in a fresh temporary folder, never
    the user's (~/.cache), so no result computed by other code, or in another run, can make a test
    pass. One folder for every xdist worker of the run (the parent of a worker's temp dir): the
    workers share what they solve, and files are written atomically. Tests of the cache itself
    point it at their own folders."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if hasattr(request.config, "workerinput") else base
    folder = root / "solver-cache"
    folder.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BLACKJACK_ENV_CACHE", str(folder))
        yield folder


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
    assert legal(env.action_masks()) == {Action.STAND}, "a finished round's mask is STAND alone"
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


def step_vector_beside_singles(envs: Any, singles: Sequence[Any], info: dict[str, Any], steps: int, seed: int) -> int:
    """Step a vector env and its single twins (table i = single i) with the same random legal
    actions, checking observations, rewards, terminations and masks agree at every step, through
    the vector env's next-step autoreset; returns the episodes finished."""
    rng = np.random.default_rng(seed)
    finished = np.zeros(len(singles), bool)
    episodes = 0
    for _ in range(steps):
        actions = np.argmax(rng.random(info["action_mask"].shape) * info["action_mask"], axis=1)
        obs, rewards, terminated, truncated, info = envs.step(actions)
        assert not truncated.any()
        for i, env in enumerate(singles):
            if finished[i]:  # next-step autoreset: the vector env started a new episode
                expected_obs, single_info = env.reset()
                expected = (0.0, False)
            else:
                expected_obs, reward, done, _, single_info = env.step(actions[i])
                expected = (reward, done)
            np.testing.assert_array_equal(obs[i], expected_obs)
            assert (rewards[i], terminated[i]) == expected
            if terminated[i]:  # a finished table's mask holds STAND alone, in the single env as in the vector one
                assert np.flatnonzero(info["action_mask"][i]).tolist() == [Action.STAND]
            np.testing.assert_array_equal(info["action_mask"][i], single_info["action_mask"])
        finished = terminated
        episodes += int(terminated.sum())
    return episodes


def oracle_results(
    rules: Rules, hands: Sequence[dict[str, Any]], dealer_total: int, dealer_bj: bool, natural: bool
) -> list[float]:
    """What every settled hand of one seat pays (per unit bet), by an independent reading of the
    rules: the test oracle the engine's settlement is held to."""
    surrendered = any(hand["status"] == "surrendered" for hand in hands)
    expected = []
    for hand in hands:
        total = hand["total"]
        if hand["status"] == "surrendered":
            result = -1.0 if dealer_bj and not rules.peek and rules.surrender == "late" else -0.5
        elif natural:
            result = 0.0 if dealer_bj else rules.blackjack_pays
        elif dealer_bj or hand["status"] == "bust":
            result = -hand["bet"]
        else:
            result = hand["bet"] * ((dealer_total > 21 or total > dealer_total) - (total < dealer_total <= 21))
        expected.append(result)
    if dealer_bj and not rules.peek and rules.obo and not natural and not surrendered and hands:
        expected = [-1.0] + [0.0] * (len(hands) - 1)
    return expected
