"""Stable-Baselines3 ``VecEnv`` over the compiled vector env: N tables stepped in one call.

SB3's ``DummyVecEnv`` steps N Python envs one after another; :class:`BlackjackSB3VecEnv` hands the
whole batch to the compiled vector env (:mod:`blackjack_env.vector`) in one call, so a learner can
use hundreds or thousands of tables. Any SB3 algorithm takes it (one that ignores the masks meets
``ValueError`` at its first illegal action, as on the single env); sb3-contrib's MaskablePPO reads
``action_masks()`` from it as from ``DummyVecEnv`` (``blackjack-train --algo ppo``'s setup)::

    from sb3_contrib import MaskablePPO

    from blackjack_env.sb3 import make_sb3_vec_env

    env = make_sb3_vec_env("blackjack_env/Blackjack-v0", n_envs=4096, seed=0, reward="expected")
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=16, batch_size=4096, n_epochs=2, gamma=1.0, gae_lambda=1.0, ent_coef=0.04,
        policy_kwargs={"net_arch": [128, 128]}, seed=0,
    )
    model.learn(20_000_000)  # about 0.01 pp from basic strategy (blackjack-train --algo ppo's defaults)

Table i seeded ``seed + i`` plays exactly what SB3's ``make_vec_env`` of single envs (env i seeded
``seed + i``) plays on the same actions, so learning is the same run on either, only faster here.

Importing this module needs stable-baselines3 (the ``train`` extra); ``import blackjack_env``
does not import it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

try:
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as error:  # pragma: no cover - exercised without the extra
    raise ImportError("blackjack_env.sb3 needs stable-baselines3: pip install 'blackjack-env[train]'") from error

from . import engine as E
from .vector import BlackjackShoeVectorEnv, BlackjackVectorEnv

#: The env ids this module vectorises, and the compiled vector env of each.
VECTOR_ENVS: dict[str, type[BlackjackVectorEnv]] = {
    "blackjack_env/Blackjack-v0": BlackjackVectorEnv,
    "blackjack_env/BlackjackShoe-v0": BlackjackShoeVectorEnv,
}
#: What ends the learner's episode: the one round of Blackjack-v0; for BlackjackShoe-v0 the shoe
#: (the env's own episode) or each settled round (the shoe goes on; ``agents.shoe_ppo.RoundEpisodes``).
EPISODES = ("round", "shoe")


class BlackjackSB3VecEnv(VecEnv):
    """SB3's ``VecEnv`` API over one compiled :class:`~blackjack_env.vector.BlackjackVectorEnv`.

    The N "envs" of SB3 are the vector env's N tables. Differences from the Gymnasium vector env,
    all to match SB3's ``DummyVecEnv`` of single envs:

    * same-step autoreset: a step that ends a table's episode returns the new episode's first
      observation, the last one in ``infos[i]["terminal_observation"]`` (with
      ``"TimeLimit.truncated": False``; the game is never truncated); the other tables' infos are
      empty (their masks come from ``action_masks()``);
    * rewards are float32, ``dones`` one bool per table;
    * with ``monitor`` (the default) a finished episode's info holds ``"episode"`` (its return
      ``r``, length ``l`` and time ``t``), as SB3's ``Monitor`` on each env writes it, so SB3 logs
      ``rollout/ep_rew_mean``; ``env_is_wrapped(Monitor)`` then answers True. (Monitoring here and
      not in a ``VecMonitor`` keeps the env picklable for checkpoints and costs no wrapper.)
    * ``seed(s)`` (SB3 algorithms call it with their ``seed``) seeds table i with ``s + i`` at the
      next ``reset()``.

    Args:
        venv: the compiled vector env (``BlackjackVectorEnv`` or ``BlackjackShoeVectorEnv``).
        episode: what ends an episode (:data:`EPISODES`): None, the env's own (a round of
            Blackjack-v0, a shoe of BlackjackShoe-v0); ``"round"`` on a shoe: every settled round
            ends the learner's episode and the next one continues the same shoe (a fresh shoe only
            after the cut card's round), so a decision earns its round's result and nothing after it.
        monitor: record each finished episode's return and length in its info (above).
    """

    def __init__(self, venv: BlackjackVectorEnv, episode: str | None = None, monitor: bool = True) -> None:
        if not isinstance(venv, BlackjackVectorEnv):
            raise TypeError(f"venv must be a BlackjackVectorEnv or BlackjackShoeVectorEnv, got {type(venv).__name__}")
        shoe = isinstance(venv, BlackjackShoeVectorEnv)
        own = "shoe" if shoe else "round"
        episode = own if episode is None else episode
        if episode not in EPISODES or (episode == "shoe" and not shoe):
            allowed = "'round' or 'shoe'" if shoe else "'round' (Blackjack-v0's episode is one round)"
            raise ValueError(f"episode must be {allowed}, got {episode!r}")
        self.venv = venv
        self.episode = episode
        self._round_episodes = shoe and episode == "round"
        self._actions = np.zeros(venv.num_envs, np.int64)
        self._obs: np.ndarray | None = None
        self.monitor = bool(monitor)
        self._returns = np.zeros(venv.num_envs, np.float64)  # summed in step order, as Monitor sums
        self._lengths = np.zeros(venv.num_envs, np.int64)
        self._t_start = time.time()
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    # ------------------------------------------------------------------ stepping
    def reset(self) -> np.ndarray:
        """Start an episode at every table (seeded by the last ``seed()``, if any)."""
        if any(self._options):
            raise ValueError(
                "BlackjackSB3VecEnv takes no reset options (its tables share one compiled env); got "
                f"{next(o for o in self._options if o)!r}"
            )
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        obs, info = self.venv.reset(seed=seeds)
        self.reset_infos = [{"action_mask": row} for row in info["action_mask"]]
        self._reset_seeds()
        self._reset_options()
        self._returns[:] = 0.0
        self._lengths[:] = 0
        self._obs = obs
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(-1)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """One compiled call for every table, then one more that starts new episodes where they ended."""
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        obs, rewards, terminated, truncated, _ = self.venv.step(self._actions)
        ended = terminated | truncated
        dones = ended | (obs[:, E.O_PHASE] == E.P_BET) if self._round_episodes else ended
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        finished = np.flatnonzero(dones)
        for i in finished:
            infos[i] = {"terminal_observation": obs[i], "TimeLimit.truncated": bool(truncated[i] and not terminated[i])}
        if self.monitor:
            self._returns += rewards
            self._lengths += 1
            now = round(time.time() - self._t_start, 6)
            for i in finished:
                infos[i]["episode"] = {"r": round(float(self._returns[i]), 6), "l": int(self._lengths[i]), "t": now}
            self._returns[finished] = 0.0
            self._lengths[finished] = 0
        if ended.any():
            obs, _ = self.venv.reset(options={"reset_mask": ended})  # the same tables' streams, not reseeded
        self._obs = obs
        return obs, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """Legal actions of every table, bool[N, n_actions] (never an empty row)."""
        return self.venv.action_masks()

    def close(self) -> None:
        self.venv.close()

    # ------------------------------------------------------------------ the per-env API
    def _indices(self, indices: int | Iterable[int] | None) -> list[int]:
        chosen = list(self._get_indices(indices))
        bad = [i for i in chosen if not 0 <= int(i) < self.num_envs]
        if bad:
            raise IndexError(f"env indices must be in 0..{self.num_envs - 1}, got {bad}")
        return [int(i) for i in chosen]

    def get_attr(self, attr_name: str, indices: int | Iterable[int] | None = None) -> list[Any]:
        """An attribute per table. The tables share one env, so each gets the same value, except
        ``action_masks`` (a callable per table, returning its row) and the spaces (the single
        table's, ``single_observation_space`` and ``single_action_space``)."""
        chosen = self._indices(indices)
        if attr_name == "action_masks":
            return [_TableMask(self, i) for i in chosen]
        if attr_name in ("observation_space", "action_space"):
            return [getattr(self.venv, "single_" + attr_name)] * len(chosen)
        value = getattr(self.venv, attr_name)  # AttributeError: has_attr() says False
        return [value] * len(chosen)

    def set_attr(self, attr_name: str, value: Any, indices: int | Iterable[int] | None = None) -> None:
        """Set an attribute of the shared env: only for every table at once."""
        if sorted(set(self._indices(indices))) != list(range(self.num_envs)):
            raise ValueError(
                f"set_attr({attr_name!r}) must set every table (indices=None): the {self.num_envs} tables share one env"
            )
        setattr(self.venv, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: int | Iterable[int] | None = None, **method_kwargs: Any
    ) -> list[Any]:
        """A method per table: ``action_masks`` (each table's legal actions, as MaskablePPO's
        ``get_action_masks`` asks). The tables are rows of one compiled env, not objects, so no
        other method can be called on one of them alone."""
        if method_name != "action_masks" or method_args or method_kwargs:
            raise AttributeError(
                f"env_method({method_name!r}) is not available: the tables of BlackjackSB3VecEnv are rows of one "
                "compiled env; per table only action_masks() (no arguments) can be called"
            )
        masks = self.venv.action_masks()
        return list(masks) if indices is None else [masks[i] for i in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: int | Iterable[int] | None = None) -> list[bool]:
        """No Gymnasium wrapper sits on a table; ``Monitor`` alone answers True when ``monitor`` is
        on, as its infos are Monitor's (SB3's ``evaluate_policy`` asks)."""
        wrapped = self.monitor and isinstance(wrapper_class, type) and issubclass(Monitor, wrapper_class)
        return [wrapped] * len(self._indices(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        raise NotImplementedError("the compiled vector env does not render; render a single env (render_mode='ansi')")


class _TableMask:
    """``get_attr("action_masks")[i]``: table i's legal actions when called (picklable, unlike a lambda)."""

    def __init__(self, env: BlackjackSB3VecEnv, index: int) -> None:
        self.env, self.index = env, index

    def __call__(self) -> np.ndarray:
        return self.env.venv.action_masks()[self.index]


def make_sb3_vec_env(
    env_id: str = "blackjack_env/Blackjack-v0",
    n_envs: int = 256,
    seed: int | None = None,
    episode: str | None = None,
    monitor: bool = True,
    **env_kwargs: Any,
) -> BlackjackSB3VecEnv:
    """The SB3 VecEnv of ``n_envs`` tables of ``env_id`` (seeded ``seed + i``, as SB3's
    ``make_vec_env``), monitored unless ``monitor`` is False (episode returns in
    ``infos[i]["episode"]``, SB3's ``rollout/ep_rew_mean``).

    ``env_kwargs`` are the env's arguments (``rules``, ``reward``, ``count_obs``, ``bets``,
    ``seats``, ...); ``episode`` as in :class:`BlackjackSB3VecEnv`.
    """
    if env_id not in VECTOR_ENVS:
        raise ValueError(f"env_id must be one of {', '.join(VECTOR_ENVS)}, got {env_id!r}")
    env = BlackjackSB3VecEnv(VECTOR_ENVS[env_id](n_envs, **env_kwargs), episode=episode, monitor=monitor)
    if seed is not None:
        env.seed(seed)
    return env


__all__ = ["EPISODES", "VECTOR_ENVS", "BlackjackSB3VecEnv", "make_sb3_vec_env"]
