"""Dictionary observations that carry the legal-action mask (RLlib, TorchRL, CleanRL conventions).

The envs speak Stable-Baselines3's convention: a ``MultiDiscrete`` observation and
``env.action_masks()``. Libraries that read the mask from the observation want a ``Dict``
instead: RLlib's action-masking modules ``{"observations": ..., "action_mask": ...}``, TorchRL's
``ActionMask`` transform an ``"action_mask"`` entry of bools. :class:`DictObservation` (one env)
and :class:`DictObservationVector` (the vector envs) give that, with configurable key names, the
mask's dtype and the observation's encoding, and keep ``action_masks()`` working.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv, VectorObservationWrapper
from gymnasium.vector.utils import batch_space

ENCODINGS = ("multidiscrete", "one_hot")


class _DictCodec:
    """The Dict observation's space and its encoding of (observation, mask): one place for the
    single and the vector wrappers."""

    def __init__(
        self, space: spaces.Space, n_actions: int, obs_key: str, mask_key: str, mask_dtype: Any, encoding: str
    ) -> None:
        if not isinstance(space, spaces.MultiDiscrete):
            raise ValueError(f"DictObservation wraps the project's envs (a MultiDiscrete observation), got {space}")
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {', '.join(ENCODINGS)}, got {encoding!r}")
        if not (isinstance(obs_key, str) and isinstance(mask_key, str) and obs_key and mask_key != obs_key):
            raise ValueError(f"obs_key and mask_key must be two different names, got {obs_key!r} and {mask_key!r}")
        self.nvec = np.asarray(space.nvec, np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.nvec)[:-1]])
        self.keys = (obs_key, mask_key)
        self.mask_dtype = np.dtype(mask_dtype)
        self.encoding = encoding
        if encoding == "one_hot":
            obs_space: spaces.Space = spaces.Box(0.0, 1.0, (int(self.nvec.sum()),), np.float32)
        else:
            obs_space = space
        mask_space = spaces.Box(0, 1, (n_actions,), self.mask_dtype)
        self.space = spaces.Dict({obs_key: obs_space, mask_key: mask_space})

    def encode(self, obs: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
        """``obs`` (or a batch of them) with its mask, as the Dict."""
        if self.encoding == "one_hot":
            batch = obs.reshape(-1, len(self.nvec))
            hot = np.zeros((len(batch), int(self.nvec.sum())), np.float32)
            hot[np.arange(len(batch))[:, None], self.offsets + batch] = 1.0
            obs = hot.reshape(*obs.shape[:-1], -1)
        return {self.keys[0]: obs, self.keys[1]: np.asarray(mask).astype(self.mask_dtype)}


class DictObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Any of the project's single envs with a ``Dict`` observation holding the mask.

    ``DictObservation(env, obs_key="observations", mask_key="action_mask", mask_dtype=np.float32,
    encoding="multidiscrete")``: the defaults are RLlib's action-masking convention (a float mask,
    1 for legal); TorchRL's ``ActionMask`` wants ``mask_dtype=bool``. ``encoding="one_hot"``
    turns the ``MultiDiscrete`` observation into a flat float32 one-hot vector (what
    Stable-Baselines3's ``MlpPolicy`` does inside, for libraries that expect a ``Box``). The
    mask is the env's ``action_masks()`` after each reset and step (STAND alone once the episode
    is over), which the wrapper still offers.
    """

    def __init__(
        self,
        env: gym.Env,
        obs_key: str = "observations",
        mask_key: str = "action_mask",
        mask_dtype: Any = np.float32,
        encoding: str = "multidiscrete",
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, obs_key=obs_key, mask_key=mask_key, mask_dtype=mask_dtype, encoding=encoding
        )
        gym.ObservationWrapper.__init__(self, env)
        # the package's envs: MultiDiscrete observations, Discrete actions, action_masks()
        n_actions = int(env.action_space.n)  # type: ignore[attr-defined]
        self._codec = _DictCodec(env.observation_space, n_actions, obs_key, mask_key, mask_dtype, encoding)
        self.observation_space = self._codec.space

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return self._codec.encode(observation, self.action_masks())

    def action_masks(self) -> np.ndarray:
        """Legal actions now (sb3-contrib's MaskablePPO hook, kept)."""
        return self.env.unwrapped.action_masks()  # type: ignore[attr-defined]  # the package's envs have it


class DictObservationVector(VectorObservationWrapper):
    """:class:`DictObservation` for the vector envs (``gymnasium.make_vec``, any vectorization mode):
    batched entries; a finished table's mask is STAND alone (its next step is the autoreset, which
    ignores it)."""

    def __init__(
        self,
        env: VectorEnv,
        obs_key: str = "observations",
        mask_key: str = "action_mask",
        mask_dtype: Any = np.float32,
        encoding: str = "multidiscrete",
    ) -> None:
        super().__init__(env)
        n_actions = int(env.single_action_space.n)  # type: ignore[attr-defined]  # the package's: Discrete
        self._codec = _DictCodec(env.single_observation_space, n_actions, obs_key, mask_key, mask_dtype, encoding)
        self.single_observation_space = self._codec.space
        self.observation_space = batch_space(self._codec.space, env.num_envs)

    def observations(self, observations: np.ndarray) -> dict[str, np.ndarray]:
        return self._codec.encode(observations, self.action_masks())

    def action_masks(self) -> np.ndarray:
        vector: Any = self.env.unwrapped
        if hasattr(vector, "action_masks"):  # the package's own vector env
            return np.asarray(vector.action_masks())
        # Gymnasium's sync or async vector env of single envs: each env's mask (a finished one's is STAND alone)
        return np.stack(vector.call("action_masks"))


__all__ = ["ENCODINGS", "DictObservation", "DictObservationVector"]
