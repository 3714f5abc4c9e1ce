"""Gymnasium vector envs that step N tables in one compiled call.

``gymnasium.make_vec("blackjack_env/Blackjack-v0", num_envs=N, vectorization_mode="vector_entry_point")``
returns :class:`BlackjackVectorEnv`, and ``"blackjack_env/BlackjackShoe-v0"``
:class:`BlackjackShoeVectorEnv`. Each table runs the single env's compiled transition
(``table.env_advance``); table i seeded with ``seed + i`` plays exactly what the single env
seeded with ``seed + i`` plays. Finished episodes are reset on the next step (Gymnasium's default
next-step autoreset: that step ignores the table's action and returns the new episode's first
observation with reward 0).

Gymnasium's own ``vectorization_mode="sync"`` and ``"async"`` step single envs instead; their
``info["action_mask"]`` is the same bool[N, n_actions] batch (with Gymnasium's ``_action_mask``
flags), a finished table's row STAND alone in every mode, but their ``action_space`` is a plain
``MultiDiscrete`` whose ``sample()`` ignores legality. :func:`sample_legal` draws a legal action
per table from the batch mask in all three modes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import engine as E
from . import table as T
from ._jit import first_call_notice, njit
from .env_kit import (
    COUNT_MODES,
    OBS_NAMES,
    REWARD_MODES,
    check_options,
    count_names,
    load_stack,
    observation_nvec,
    seed_table,
    table_policy,
)
from .rules import Rules
from .shoe_env import DEFAULT_BETS, SHOE_OBS_NAMES, shoe_nvec, shoe_options
from .slots import View


@njit(cache=True, _nrt=False)
def _start_tables(tables, policies, which, bets, at_table):
    """Start an episode at every table in ``which``: a round dealt, or a shoe's first bet due.
    ``tables`` and ``policies`` may be plain tuples (``table.named``)."""
    tables, policies = T.named(tables, policies)
    for i in range(which.shape[0]):
        if which[i]:
            _start(T.table_at(tables, i), T.policies_at(policies, i), bets, at_table)


@njit(cache=True, _nrt=False, forceinline=True)
def _start(table, policies, bets, at_table):
    if T.shoe_episode(table.st):
        T.begin_shoe(table.st)
        T.write_agent_view(table.st, table.hands, table.obs, table.mask)
    else:
        T.env_advance(table, policies, -1, bets, at_table)


@njit(cache=True, _nrt=False)
def _step_tables(tables, policies, actions, out, bets, at_table):
    """Step every table (or start its next episode, after a finished one); ``out``: (rewards,
    terminated, autoreset). Returns the first table whose action is illegal, or -1. Nothing is
    changed when an action is illegal. ``tables`` and ``policies`` may be plain tuples (``table.named``)."""
    tables, policies = T.named(tables, policies)
    rewards, terminated, autoreset = out
    mask = tables.mask
    n = mask.shape[0]
    n_actions = mask.shape[1]
    for i in range(n):
        a = actions[i]
        if not autoreset[i] and (a < 0 or a >= n_actions or not mask[i, a]):
            return i
    for i in range(n):
        table = T.table_at(tables, i)
        if autoreset[i]:
            _start(table, T.policies_at(policies, i), bets, at_table)
            rewards[i] = 0.0
            terminated[i] = False
            autoreset[i] = False
        else:
            rewards[i] = T.env_advance(table, T.policies_at(policies, i), actions[i], bets, at_table)
            done = T.episode_over(table.st)
            terminated[i] = done
            autoreset[i] = done
            if done:  # a finished table's mask: STAND alone (its next step, the autoreset, ignores it)
                mask[i, E.STAND] = True
    return -1


def _uniform_legal(legal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row of a bool mask (..., n_actions), an id drawn uniformly among its True entries (0
    in a row with none): a uniform key per legal id, -1 for the others, and the largest wins."""
    return np.where(legal, rng.random(legal.shape), -1.0).argmax(axis=-1)


def sample_legal(mask: Any, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action for every table of a batch, drawn from its mask.

    ``mask`` is the batch mask, bool (or 0/1) of shape (N, n_actions): ``info["action_mask"]`` of
    ``gymnasium.make_vec`` of either env in any ``vectorization_mode`` (``"sync"``, ``"async"``,
    ``"vector_entry_point"``), or the native vector env's ``action_masks()``. A single env's mask
    (n_actions,) gives one action. Returns int64 of shape ``mask.shape[:-1]``: row i's action drawn
    uniformly among row i's legal ids with ``rng`` (N * n_actions uniforms per call, so a seeded
    ``rng`` gives the same actions on the same masks). A finished table's row holds STAND alone
    and gets it; its step, the autoreset, ignores it.

    Raises ``ValueError`` for a row with no legal action (the envs report none once reset) or a
    mask of another shape.
    """
    legal = np.asarray(mask)
    if legal.ndim not in (1, 2) or legal.shape[-1] == 0:
        raise ValueError(f"mask must have shape (N, n_actions) or (n_actions,), got shape {legal.shape}")
    legal = legal.astype(np.bool_, copy=False)
    empty = np.flatnonzero(~legal.any(axis=-1))
    if len(empty):
        where = "the mask" if legal.ndim == 1 else f"row {empty[0]} of the mask"
        raise ValueError(f"{where} has no legal action (no episode running: call reset() first)")
    return _uniform_legal(legal, rng).astype(np.int64)


class LegalActionBatch(spaces.MultiDiscrete):
    """The batched action space whose plain ``sample()`` draws a legal action at every table.

    As in the single env (:class:`blackjack_env.env.LegalActions`), a sample with no mask draws
    uniformly among the actions legal now, per table (:func:`sample_legal` with the space's
    ``np_random``); a table whose episode just ended (its next step is the autoreset, which
    ignores the action) has STAND alone in its mask, and gets it; before the first reset every
    table gets STAND. An explicit ``mask`` or ``probability`` behaves exactly as in
    ``MultiDiscrete``.
    """

    def __init__(self, live_mask: np.ndarray, seed: int | None = None) -> None:
        super().__init__(np.full(live_mask.shape[0], live_mask.shape[1], np.int64), seed=seed)
        self._live_mask = live_mask

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        actions = _uniform_legal(self._live_mask, self.np_random).astype(self.dtype)
        actions[~self._live_mask.any(axis=1)] = E.STAND
        return actions


#: Every key of the vector envs' ``info``: (when, what), as ``env.INFO_KEYS``.
VECTOR_INFO_KEYS = {
    "action_mask": (
        "always",
        "bool[N, n_actions], every table's legal actions; a finished table's row holds STAND alone (its next step "
        "is the autoreset)",
    ),
}


class BlackjackVectorEnv(VectorEnv):
    """N blackjack tables stepped together in one compiled call.

    ## Description
    ``gymnasium.make_vec("blackjack_env/Blackjack-v0", num_envs=N, vectorization_mode="vector_entry_point")``
    returns this env (``"blackjack_env/BlackjackShoe-v0"``: :class:`BlackjackShoeVectorEnv`). Every table
    plays the game of :class:`blackjack_env.BlackjackEnv` (:class:`blackjack_env.BlackjackShoeEnv`) with
    the single env's compiled transition; the whole batch is one call, with no Python per table. Table i
    seeded with ``seed + i`` plays exactly what the single env seeded with ``seed + i`` plays.

    ## Action Space
    ``MultiDiscrete([7] * N)`` (``7 + len(bets)`` per table for shoes): an action id per table, with the
    single env's ids. ``action_masks()`` returns bool[N, n_actions]; ``info["action_mask"]`` holds the same
    after every reset and step. A table whose episode just ended has STAND alone in its mask: its next
    step is the autoreset, which ignores the action, so sampling code such as
    ``rng.choice(np.flatnonzero(mask[i]))``, :func:`sample_legal` or a masked policy never meets an empty
    mask (as in Gymnasium's ``"sync"`` and ``"async"`` modes over the single env).
    ``action_space.sample()`` draws a legal action at every table. An illegal action at any table raises
    ``ValueError`` and changes no table.

    ## Observation Space
    int64 of shape (N, k): row i is table i's observation, with the single env's components
    (``observation_names``). The space is Gymnasium's batch of the single env's ``MultiDiscrete(nvec)``
    (``single_observation_space``): a ``Box`` from 0 to ``nvec - 1``.

    ## Starting State
    Every table as the single env's. ``reset(seed=s)`` seeds table i with ``s + i`` (or takes a list of
    N seeds); ``reset(options={"reset_mask": mask})`` starts new episodes only at the tables in ``mask``.

    ## Rewards
    float64[N]: each table's reward as in the single env.

    ## Episode End
    Terminations are bool[N] (never truncated). A finished table is reset on its next step (Gymnasium's
    next-step autoreset: that step ignores the table's action and returns the new episode's first
    observation with reward 0).

    ## Arguments
    ``num_envs`` (the tables), then the single env's: ``rules``, ``count_obs``, ``reward``, ``seats``,
    ``seat``, ``others`` (and ``bets`` for shoes). ``render_mode`` must be None: the vector env does not
    render.

    ## Version History
    * v0: initial version.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}
    single_observation_space: spaces.MultiDiscrete
    single_action_space: spaces.Discrete

    def __init__(
        self,
        num_envs: int = 1,
        rules: Rules | str | Mapping[str, Any] | None = None,
        count_obs: str = "none",
        render_mode: str | None = None,
        reward: str = "sampled",
        seats: int = 1,
        seat: int = 0,
        others: Any = "basic",
    ) -> None:
        self._setup(num_envs, Rules.coerce(rules), count_obs, render_mode, reward, seats, seat, others, ())

    def _setup(
        self,
        num_envs: int,
        rules: Rules,
        count_obs: str,
        render_mode: str | None,
        reward: str,
        seats: int,
        seat: int,
        others: Any,
        bets: tuple[float, ...],
    ) -> None:
        """Everything both vector envs hold; ``bets`` (non-empty) makes every episode a shoe."""
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a whole number >= 1, got {num_envs!r}")
        if render_mode is not None:
            raise ValueError("the vector env does not render; use the single env with render_mode='ansi'")
        check_options(rules, count_obs, reward, seats, seat)
        self.rules = rules
        self.num_envs = n = int(num_envs)
        self.count_obs = count_obs
        self.reward = reward
        self.seats = int(seats)
        self.seat = int(seat)
        self.render_mode = None
        self._count_mode = COUNT_MODES[count_obs]
        nvec = shoe_nvec(rules, count_obs, len(bets)) if bets else observation_nvec(rules, count_obs)
        self.observation_names = (*OBS_NAMES, *count_names(count_obs), *(SHOE_OBS_NAMES if bets else ()))
        self.single_observation_space = spaces.MultiDiscrete(nvec)
        self.single_action_space = spaces.Discrete(E.N_ACTIONS + len(bets))
        self.observation_space = batch_space(self.single_observation_space, n)
        self._rv = rules.to_array()
        self._st = np.zeros((n, E.ST_SIZE), np.int64)
        self._hands = np.zeros((n, self.seats * E.MAX_HANDS, E.HAND_FIELDS), E.HAND_DTYPE)
        self._shoe = np.tile(E.new_shoe(rules.decks), (n, 1))
        for i in range(n):
            E.set_seats(self._st[i], self.seats)
            E.load_rules(self._st[i], self._rv)
        view = View(self._st)
        view.reward_mode = REWARD_MODES[reward]
        view.shoe_episode = int(bool(bets))
        self._res = np.zeros((n, self.seats * E.RES_SIZE), np.float64)
        self._obs = np.zeros((n, len(nvec)), np.int64)
        self._mask = np.zeros((n, E.N_ACTIONS + len(bets)), np.bool_)
        self.action_space = LegalActionBatch(self._mask)
        self._rewards = np.zeros(n, np.float64)
        self._terminated = np.zeros(n, np.bool_)
        self._autoreset = np.zeros(n, np.bool_)
        kind, table = table_policy(rules, others, self.seats)
        self._prngs = np.zeros((n, 1, 4), np.int64)
        # plain tuples: numba types them faster than named ones on every call (table.named)
        self._dealer = E.new_dealer_cache(reward == "expected")  # shared by the tables, as the rules are
        self._tables = tuple(
            T.Table(self._st, self._hands, self._shoe, self._rv, self._res, self._obs, self._mask, self._dealer)
        )
        kinds, actions, insurance = T.driver_policies(kind, table)
        self._policies = tuple(T.Policies(kinds, actions, insurance, self._prngs, None))
        self._bets = np.array(bets or (1.0,), np.float64)
        view.agent = self.seat
        view.count_mode = self._count_mode
        view.obs_extra = len(observation_nvec(rules, count_obs)) if bets else 0
        self._seeded = False

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new episode at every table (or at those in ``options["reset_mask"]``)."""
        seeds = self._seed_list(seed)
        which = np.ones(self.num_envs, np.bool_)
        if options and "reset_mask" in options:
            which = np.asarray(options["reset_mask"], np.bool_)
            if which.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must be bool[{self.num_envs}], got shape {which.shape}")
        if seeds is not None or not self._seeded:
            for i in range(self.num_envs):
                if which[i]:
                    rng, _ = seeding.np_random(None if seeds is None else seeds[i])  # as BlackjackEnv.reset
                    seed_table(self._st[i], self._shoe[i], self._prngs[i], rng.integers(0, 2**63))
            self._seeded = True
        with first_call_notice(_start_tables, "the vector env's kernels"):
            _start_tables(self._tables, self._policies, which, self._bets, E.table_kind(self.seats))
        self._autoreset[which] = False
        return self._obs.copy(), {"action_mask": self._mask.copy()}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._seeded:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions, dtype=np.int64).reshape(-1)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {actions.shape}")
        with first_call_notice(_step_tables, "the vector env's kernels"):
            out = (self._rewards, self._terminated, self._autoreset)
            bad = _step_tables(self._tables, self._policies, actions, out, self._bets, E.table_kind(self.seats))
        if bad >= 0:
            legal = ", ".join(str(a) for a in np.flatnonzero(self._mask[bad]))
            raise ValueError(f"illegal action {int(actions[bad])} at table {bad}; legal actions there: {legal}")
        info: dict[str, Any] = {"action_mask": self._mask.copy()}
        truncated = np.zeros(self.num_envs, np.bool_)
        return self._obs.copy(), self._rewards.copy(), self._terminated.copy(), truncated, info

    def stack_cards(self, table: int, codes: list[int]) -> None:
        """Table ``table``'s next round is dealt ``codes`` (engine card codes, in the deal's order)
        first, as ``reset(options={"cards": ...})`` stacks a single env's: for exploring starts."""
        load_stack(self._st[table], self.rules, codes)

    def unseen_cards(self) -> np.ndarray:
        """int[N, 10]: each table's cards not seen yet by value A, 2..9, ten-value (the shoe's rest and a
        hole card still face down), for analysis (filing rounds by the exact count, as the simulator
        does); the agent sees what ``count_obs`` shows, not this."""
        return View(self._st).unseen_by_value()

    def action_masks(self) -> np.ndarray:
        """Legal actions of every table, bool[N, n_actions]."""
        return self._mask.copy()

    def _seed_list(self, seed: int | Sequence[int | None] | None) -> list[int | None] | None:
        if seed is None:
            return None
        if isinstance(seed, (int, np.integer)):
            return [int(seed) + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"seed must be an int or a list of {self.num_envs} seeds, got {len(seeds)}")
        return seeds


class BlackjackShoeVectorEnv(BlackjackVectorEnv):
    """N shoe tables stepped together; see :class:`blackjack_env.BlackjackShoeEnv` for the game and
    its arguments. Actions are ``7 + len(bets)`` wide, and so are the masks."""

    def __init__(
        self,
        num_envs: int = 1,
        rules: Rules | str | Mapping[str, Any] | None = None,
        bets: Sequence[float] = DEFAULT_BETS,
        seats: int = 1,
        seat: int = 0,
        others: Any = "basic",
        count_obs: str = "hilo",
        reward: str = "sampled",
        render_mode: str | None = None,
    ) -> None:
        rules, bet_sizes = shoe_options(rules, bets, seats)
        self._setup(num_envs, rules, count_obs, render_mode, reward, seats, seat, others, bet_sizes)


__all__ = [
    "VECTOR_INFO_KEYS",
    "BlackjackShoeVectorEnv",
    "BlackjackVectorEnv",
    "LegalActionBatch",
    "sample_legal",
]
