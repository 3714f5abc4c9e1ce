"""MaskablePPO on ``BlackjackShoe-v0``: it bets and plays from the count in its observation.

The network sees the shoe env's observation (the hand, the up card, the count: Hi-Lo's true count
or the unseen composition, the bet level and the shoe's depth) and chooses every action the env
offers, the bet before each round included. A shoe is one Gymnasium episode, but the learner
sees each *round* as an episode (:class:`RoundEpisodes`): a round's decisions earn that round's
result and nothing after it. With the shoe as the episode and gamma 1, every decision's return
would also carry the results of all later rounds of the shoe (about 40 in six decks), whose noise
is far larger than anything one bet or one play changes; the count in the observation already
carries what the rest of the shoe means to a decision.

Unlike the one-round PPO agent, this one cannot be tabulated (its play depends on the count), so
the compiled simulator cannot run it: it is evaluated by playing the vector env
(``blackjack_env.evaluate.shoe_agents``, which ``blackjack-evaluate --policy RUN_DIR`` runs), and
``to_table()`` says so in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, SupportsFloat, cast

import gymnasium as gym
import numpy as np

from blackjack_env import SHOE_ENV_ID
from blackjack_env.rules import Rules
from blackjack_env.strategy import StrategyTable

from .base import read_manifest, write_manifest
from .ppo import MODEL_FILE, PPOAgent

KIND = "ppo-shoe"


class RoundEpisodes(gym.Wrapper):
    """The learner's view of a shoe: each settled round ends an episode, and the following
    ``reset()`` continues the same shoe (a fresh shoe only once the cut card's round is over).

    The settling step's observation is already the next round's bet (or the shoe's end); it is
    handed out by that ``reset()``. ``action_masks()`` is the shoe env's."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self._next: tuple[Any, dict[str, Any]] | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if self._next is not None and seed is None and options is None:
            obs, info = self._next
            self._next = None
            return obs, info
        self._next = None
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if "round_result" in info and not (terminated or truncated):
            self._next = (obs, {"action_mask": info["action_mask"]})
            terminated = True
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()  # type: ignore[attr-defined]  # the shoe env's


def make_shoe_vec_env(rules: Rules, n_envs: int, seed: int, shoe: Mapping[str, Any], reward: str = "sampled") -> Any:
    """The compiled SB3 VecEnv of ``n_envs`` shoe tables seen round by round (``blackjack_env.sb3``
    with ``episode="round"``, as :class:`RoundEpisodes` over single envs; table i seeded seed + i)."""
    from blackjack_env.sb3 import make_sb3_vec_env  # optional dependency: stable-baselines3 (the train extra)

    return make_sb3_vec_env(SHOE_ENV_ID, n_envs=n_envs, seed=seed, episode="round", rules=rules, reward=reward, **shoe)


class ShoePPOAgent(PPOAgent):
    """A MaskablePPO model of the shoe game.

    Args:
        rules: the game (a shoe with a cut card).
        model: the trained ``sb3_contrib.MaskablePPO``.
        shoe: the shoe env's arguments it was trained with (``bets``, ``seats``, ``seat``,
            ``count_obs``): its observations and actions mean something only in that env.
    """

    kind = KIND

    def __init__(
        self,
        rules: Rules | str | Mapping[str, Any] | None = None,
        model: Any = None,
        shoe: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(rules, model)
        self.shoe = dict(shoe or {})

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Greedy actions of the shoe env (bets included) for obs int[N, k] and masks bool[N, 7 + bets]."""
        obs = np.ascontiguousarray(obs, np.int64)
        masks = np.ascontiguousarray(masks, np.bool_)
        if obs.ndim != 2 or masks.ndim != 2 or obs.shape[0] != masks.shape[0]:
            raise ValueError(f"act_batch needs obs[N, k] and masks[N, actions], got {obs.shape} and {masks.shape}")
        actions, _ = self.model.predict(obs, deterministic=True, action_masks=masks)
        return np.asarray(actions, np.int64)

    def to_table(self) -> StrategyTable:
        raise ValueError(
            "a MaskablePPO agent of the shoe game plays by the count, not from one strategy table: "
            "play it in BlackjackShoe-v0 with agent.act_batch(obs, masks), or with blackjack-evaluate --policy "
            "RUN_DIR (beside basic strategy on the same shoes)"
        )

    def save(self, path: str | Path) -> None:
        """agent.json (rules and the shoe env's arguments) + ppo.zip; no strategy.json."""
        path = write_manifest(path, self.kind, self.rules, None, shoe=self.shoe)
        self.model.save(path / MODEL_FILE)

    @classmethod
    def load(cls, path: str | Path, env: Any = None) -> ShoePPOAgent:
        agent = cast(ShoePPOAgent, super().load(path, env))
        agent.shoe = read_manifest(path)["shoe"]
        return agent

    @classmethod
    def resume(cls, path: str | Path, make_env: Callable[[], Any]) -> ShoePPOAgent:
        agent = cast(ShoePPOAgent, super().resume(path, make_env))
        agent.shoe = read_manifest(path)["shoe"]
        return agent


def shoe_arguments(bets: Sequence[float], seats: int, seat: int, count_obs: str) -> dict[str, Any]:
    """The shoe env's arguments as saved in agent.json (plain Python types)."""
    return {"bets": [float(b) for b in bets], "seats": int(seats), "seat": int(seat), "count_obs": count_obs}
