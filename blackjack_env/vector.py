"""A Gymnasium vector env that steps N tables in one compiled call.

``gymnasium.make_vec("blackjack_env/Blackjack-v0", num_envs=N, vectorization_mode="vector_entry_point")``
returns :class:`BlackjackVectorEnv`. Each table runs the single env's engine code; table i seeded
with ``seed + i`` deals exactly what ``BlackjackEnv`` seeded with ``seed + i`` deals. Finished
rounds are reset on the next step (Gymnasium's default next-step autoreset: that step ignores
the table's action and returns the new round's first observation with reward 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numba import njit

from . import engine as E
from .env import COUNT_MODES, REWARD_MODES, Action, check_options, observation_nvec
from .rules import MAX_HANDS, Rules


@njit(cache=True, _nrt=False)
def _reset_tables(st, hands, shoe, res, obs, mask, count_mode, which):
    for i in range(st.shape[0]):
        if which[i]:
            E.env_reset(st[i], hands[i], shoe[i], res[i], obs[i], mask[i], count_mode)


@njit(cache=True, _nrt=False)
def _step_tables(st, hands, shoe, rv, res, obs, mask, count_mode, actions, rewards, terminated, autoreset):
    """Step every table (or reset it, after a finished round); returns the first table whose
    action is illegal, or -1. Nothing is changed when an action is illegal."""
    n = st.shape[0]
    for i in range(n):
        a = actions[i]
        if not autoreset[i] and (a < 0 or a >= E.N_ACTIONS or not mask[i, a]):
            return i
    for i in range(n):
        if autoreset[i]:
            E.env_reset(st[i], hands[i], shoe[i], res[i], obs[i], mask[i], count_mode)
            rewards[i] = 0.0
            terminated[i] = False
            autoreset[i] = False
        else:
            rewards[i] = E.env_step(st[i], hands[i], shoe[i], rv, res[i], obs[i], mask[i], count_mode, actions[i])
            done = st[i, E.S_PHASE] == E.P_OVER
            terminated[i] = done
            autoreset[i] = done
    return -1


class LegalActionBatch(spaces.MultiDiscrete):
    """The batched ``Discrete(7)`` whose plain ``sample()`` draws a legal action at every table.

    As in the single env (:class:`blackjack_env.env.LegalActions`), a sample with no mask draws
    uniformly among the actions legal now, per table; a table whose round just ended (its next
    step is the autoreset, which ignores the action) gets STAND. An explicit ``mask`` or
    ``probability`` behaves exactly as in ``MultiDiscrete``.
    """

    def __init__(self, live_mask: np.ndarray, seed: int | None = None) -> None:
        super().__init__(np.full(live_mask.shape[0], E.N_ACTIONS, np.int64), seed=seed)
        self._live_mask = live_mask

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        # a uniform key per legal action, -1 for illegal ones: the largest is a uniform legal choice
        keys = np.where(self._live_mask, self.np_random.random(self._live_mask.shape), -1.0)
        actions = keys.argmax(axis=1).astype(self.dtype)
        actions[~self._live_mask.any(axis=1)] = E.STAND
        return actions


class BlackjackVectorEnv(VectorEnv):
    """N blackjack tables stepped together; see :class:`blackjack_env.BlackjackEnv` for the game.

    ``action_masks()`` returns bool[N, 7]; ``info["action_mask"]`` holds the same after every
    reset and step. ``action_space.sample()`` draws a legal action at every table. Rewards are
    float64[N], terminations bool[N] (never truncated).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        rules: Rules | str | Mapping[str, Any] | None = None,
        count_obs: str = "none",
        render_mode: str | None = None,
        reward: str = "sampled",
    ) -> None:
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a whole number >= 1, got {num_envs!r}")
        if render_mode is not None:
            raise ValueError("the vector env does not render; use the single env with render_mode='ansi'")
        self.rules = Rules.coerce(rules)
        check_options(self.rules, count_obs, reward)
        self.num_envs = int(num_envs)
        self.count_obs = count_obs
        self.reward = reward
        self.render_mode = None
        self._count_mode = COUNT_MODES[count_obs]
        self.single_action_space = spaces.Discrete(E.N_ACTIONS)
        self.single_observation_space = spaces.MultiDiscrete(observation_nvec(self.rules, count_obs))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        n = self.num_envs
        self._rv = self.rules.to_array()
        self._st = np.zeros((n, E.ST_SIZE), np.int64)
        self._hands = np.zeros((n, MAX_HANDS, E.HAND_FIELDS), E.HAND_DTYPE)
        self._shoe = np.tile(E.new_shoe(self.rules.decks), (n, 1))
        for i in range(n):
            E.load_rules(self._st[i], self._rv)
        self._st[:, E.S_REWARD_MODE] = REWARD_MODES[reward]
        self._res = np.zeros((n, E.RES_SIZE), np.float64)
        self._obs = np.zeros((n, len(self.single_observation_space.nvec)), np.int64)
        self._mask = np.zeros((n, E.N_ACTIONS), np.bool_)
        self.action_space = LegalActionBatch(self._mask)
        self._rewards = np.zeros(n, np.float64)
        self._terminated = np.zeros(n, np.bool_)
        self._autoreset = np.zeros(n, np.bool_)
        self._seeded = False

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        """Deal a new round at every table (or at those in ``options["reset_mask"]``)."""
        seeds = self._seed_list(seed)
        which = np.ones(self.num_envs, np.bool_)
        if options and "reset_mask" in options:
            which = np.asarray(options["reset_mask"], np.bool_)
            if which.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must be bool[{self.num_envs}], got shape {which.shape}")
        if seeds is not None or not self._seeded:
            for i in range(self.num_envs):
                if which[i]:
                    self._seed_table(i, None if seeds is None else seeds[i])
            self._seeded = True
        _reset_tables(self._st, self._hands, self._shoe, self._res, self._obs, self._mask, self._count_mode, which)
        self._autoreset[which] = False
        return self._obs.copy(), {"action_mask": self._mask.copy()}

    def step(self, actions):
        if not self._seeded:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions, dtype=np.int64).reshape(-1)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {actions.shape}")
        bad = _step_tables(
            self._st,
            self._hands,
            self._shoe,
            self._rv,
            self._res,
            self._obs,
            self._mask,
            self._count_mode,
            actions,
            self._rewards,
            self._terminated,
            self._autoreset,
        )
        if bad >= 0:
            legal = ", ".join(f"{int(a)} {a.name}" for a in Action if self._mask[bad, a])
            raise ValueError(f"illegal action {int(actions[bad])} at table {bad}; legal actions there: {legal}")
        info: dict[str, Any] = {"action_mask": self._mask.copy()}
        truncated = np.zeros(self.num_envs, np.bool_)
        return self._obs.copy(), self._rewards.copy(), self._terminated.copy(), truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of every table, bool[N, 7]."""
        return self._mask.copy()

    def _seed_list(self, seed: int | list[int | None] | None) -> list[int | None] | None:
        if seed is None:
            return None
        if isinstance(seed, (int, np.integer)):
            return [int(seed) + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"seed must be an int or a list of {self.num_envs} seeds, got {len(seeds)}")
        return seeds

    def _seed_table(self, i: int, seed: int | None) -> None:
        """Seed table i exactly as BlackjackEnv.reset(seed=seed) seeds its engine."""
        rng, _ = seeding.np_random(seed)
        E.seed_table(self._st[i], self._shoe[i], np.random.SeedSequence(rng.integers(0, 2**63)))
