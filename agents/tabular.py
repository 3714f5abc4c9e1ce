"""Tabular Monte Carlo control on the compiled engine, over exactly the strategy table's cells.

The state is the cell a :class:`~blackjack_env.strategy.StrategyTable` reads (hand row from
total, softness and a splittable pair; dealer up card) plus the insurance question (holding a
natural or not). Learning in those cells means the greedy policy *is* a strategy table: the
simulator runs it exactly, and the solver prices it exactly.

Algorithm: off-policy every-visit Monte Carlo control with a greedy target. Each round is played
epsilon-greedily with the legal-action mask; the round's result is credited to the decisions from
the last exploratory one onward (every later decision was greedy, so those returns sample the
greedy policy's action values; earlier ones are cut, as in Sutton & Barto's off-policy MC control).
Action values are running means. Untried legal actions are tried first (optimism), so every legal
action of a visited cell gets a value.

Rounds are played inside one numba kernel, with the engine's own ``start_round`` / ``step_round``,
in chunks seeded by ``SeedSequence([seed, chunk])``: a run is fixed by its seed and chunk size,
and resuming from a checkpoint at a chunk boundary continues exactly where it stopped.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from blackjack_env import engine as E
from blackjack_env import slots
from blackjack_env._jit import njit
from blackjack_env.env_kit import REWARD_MODES, check_options
from blackjack_env.rules import Rules
from blackjack_env.strategy import (
    N_PLAY,
    N_ROWS,
    N_UP,
    PLAY_ACTIONS,
    StrategyTable,
    hand_row,
    table_action,
    table_cell,
)
from blackjack_env.table import POLICY_RANDOM, Chunk, new_table, play_until, seed_generator, start_chunk, table_policies

from .base import check_batch, read_manifest, write_manifest

Q_FILE = "q.npz"
MAX_DECISIONS = 64  # decisions one round can need (8 hands, each a few hits) with room to spare
#: SeedSequence key of explore()'s generator (chunks use keys 0, 1, 2, ...).
EXTERNAL_STREAM = 1 << 62


@njit(cache=True, _nrt=False)
def _epsilon_greedy(prng, epsilon, best, mask, n_actions):
    """The behaviour policy: ``best``, or with chance epsilon a uniformly random legal action.

    Returns (action, chance the behaviour policy gives ``best``)."""
    n_legal = 0
    for a in range(n_actions):
        n_legal += mask[a]
    action = best
    if E.next_u32(prng, 0) < epsilon * 4294967296.0:
        action = E.uniform_legal(prng, 0, mask, n_actions)
    return action, 1.0 - epsilon + epsilon / n_legal


@njit(cache=True, _nrt=False)
def _greedy(q, c, mask, n_actions):
    """The legal action of highest value; an untried legal action (weight 0) first."""
    best = -1
    for a in range(n_actions):
        if not mask[a]:
            continue
        if c[a] == 0:
            return a
        if best < 0 or q[a] > q[best]:
            best = a
    return best


@njit(cache=True, _nrt=False, inline="always")
def _decide(q, c, q_ins, c_ins, row, col, mask, ins_mask, prng, epsilon, trace, prob, depth):
    """The behaviour policy's action at one decision, written to trace/prob[depth]: a play cell
    (row, col), or the insurance question (col -1, row = holding a natural).

    Returns (action, whether it left the greedy choice)."""
    if col < 0:
        best = _greedy(q_ins[row], c_ins[row], ins_mask, 2)
        choice, p_best = _epsilon_greedy(prng, epsilon, best, ins_mask, 2)
        action = E.INSURANCE if choice == 1 else E.NO_INSURANCE
        trace[depth, 0] = -1
        trace[depth, 1] = row
        trace[depth, 2] = choice
    else:
        best = _greedy(q[row, col], c[row, col], mask, N_PLAY)
        action, p_best = _epsilon_greedy(prng, epsilon, best, mask, N_PLAY)
        choice = action
        trace[depth, 0] = row
        trace[depth, 1] = col
        trace[depth, 2] = action
    prob[depth] = p_best
    return action, choice != best


@njit(cache=True, _nrt=False, inline="always")
def _credit(q, c, q_ins, c_ins, trace, prob, depth, cut, reward):
    """Credit a round's result to its decisions from the last exploratory one (``cut``) on."""
    # weighted importance sampling, newest decision first: a decision's weight is
    # 1 / (behaviour's chance) of every greedy choice made after it
    weight = 1.0
    for d in range(depth - 1, cut - 1, -1):
        row = trace[d, 0]
        a = trace[d, 2]
        if row < 0:
            cell = trace[d, 1]
            c_ins[cell, a] += weight
            q_ins[cell, a] += weight / c_ins[cell, a] * (reward - q_ins[cell, a])
        else:
            col = trace[d, 1]
            c[row, col, a] += weight
            q[row, col, a] += weight / c[row, col, a] * (reward - q[row, col, a])
        weight /= prob[d]


@njit(cache=True, _nrt=False)
def _external_decision(q, c, q_ins, c_ins, obs, mask, ins_mask, prng, epsilon, trace, prob, depth):
    """``_decide`` for an observation of a round played elsewhere (its cell read as a strategy
    table reads an observation); returns (action, explored)."""
    if obs[E.O_PHASE] == E.P_INSURANCE:
        return _decide(q, c, q_ins, c_ins, obs[E.O_NATURAL], -1, mask, ins_mask, prng, epsilon, trace, prob, depth)
    row = hand_row(obs[E.O_TOTAL], obs[E.O_SOFT], obs[E.O_PAIR], obs[E.O_CAN_SPLIT])
    col = obs[E.O_UP] - 1
    return _decide(q, c, q_ins, c_ins, row, col, mask, ins_mask, prng, epsilon, trace, prob, depth)


@njit(cache=True, _nrt=False)
def _external_credit(q, c, q_ins, c_ins, trace, prob, depth, cut, reward):
    _credit(q, c, q_ins, c_ins, trace, prob, depth, cut, reward)


@njit(cache=True, _nrt=False)
def _mc_chunk(table, policies, chunk, learner, reward_mode, work):
    """Play a lone seat's rounds from a fresh shoe until ``chunk.rounds`` env steps are done,
    updating the weighted means of ``learner`` (q, c, q_ins, c_ins, epsilon): q/c (play cells) and
    q_ins/c_ins (insurance). The table driver stops at every step of the seat (``policies``, never
    consulted, fill its place).

    Returns (steps, rounds, sum of round results) of the chunk."""
    q, c, q_ins, c_ins, epsilon = learner
    prng, trace, prob, ins_mask = work
    st, hands, mask = table.st, table.hands, table.mask
    start_chunk(table, 1, chunk.words, 0)
    slots.set_reward_mode(st, reward_mode)
    seed_generator(prng, chunk.words, 1)
    steps = 0
    rounds = 0
    total = 0.0
    while steps < chunk.rounds:
        play_until(table, policies, -1, 0, None)  # a lone seat
        depth = 0
        cut = 0  # the last decision off the greedy policy: earlier ones get no credit
        stepped = False
        while slots.phase(st) != E.P_OVER:
            phase = slots.phase(st)
            action = E.STAND
            if phase == E.P_INSURANCE or phase == E.P_PLAY:
                row = slots.natural(st)
                col = -1  # the insurance question: row is "holding a natural"
                if phase == E.P_PLAY:
                    E.legal_mask(st, hands, mask)
                    row, col, _ = table_cell(st, hands)
                action, explored = _decide(
                    q, c, q_ins, c_ins, row, col, mask, ins_mask, prng, epsilon, trace, prob, depth
                )
                if explored:
                    cut = depth
                depth += 1
            play_until(table, policies, action, 0, None)
            stepped = True
            steps += 1
        reward = table.res[E.RES_REWARD] if stepped else 0.0
        rounds += 1
        total += reward
        _credit(q, c, q_ins, c_ins, trace, prob, depth, cut, reward)
    return steps, rounds, total


@njit(cache=True)
def _act_batch(actions, insurance, obs, masks, out):
    for i in range(obs.shape[0]):
        out[i] = table_action(actions, insurance, obs[i], masks[i])


class TabularAgent:
    """Monte Carlo control over the strategy table's cells; plays its greedy table.

    Args:
        rules: the game it learns (a Rules, preset name or dict of fields).
        epsilon: chance of a uniformly random legal action at each decision while learning.
        seed: fixes every card and every exploration draw of the run.
        chunk_steps: env steps per seeded chunk (part of the seed's meaning; checkpoints fall
            on chunk boundaries).
        reward: "sampled" (the dealt results) or "expected" (each round's result averaged over
            the dealer's unseen cards: the same values to learn, far less noise; see BlackjackEnv).
    """

    kind = "tabular"

    def __init__(
        self,
        rules: Rules | str | Mapping[str, Any] | None = None,
        epsilon: float = 0.1,
        seed: int = 0,
        chunk_steps: int = 1 << 18,
        reward: str = "sampled",
    ) -> None:
        if not 0.0 < epsilon < 1.0:
            raise ValueError(f"epsilon must be in (0, 1), got {epsilon}")
        if chunk_steps < 1:
            raise ValueError(f"chunk_steps must be >= 1, got {chunk_steps}")
        self.rules = Rules.coerce(rules)
        check_options(self.rules, "none", reward)
        self.reward = reward
        self.epsilon = float(epsilon)
        self.seed = int(seed)
        self.chunk_steps = int(chunk_steps)
        self.q = np.zeros((N_ROWS, N_UP, N_PLAY), np.float64)
        self.c = np.zeros((N_ROWS, N_UP, N_PLAY), np.float64)  # summed sample weights
        self.q_ins = np.zeros((2, 2), np.float64)  # [natural?, (decline, take)]
        self.c_ins = np.zeros((2, 2), np.float64)
        self.steps = 0
        self.rounds = 0
        self.chunks = 0
        self._table = new_table(self.rules.to_array())
        self._policies = table_policies(POLICY_RANDOM, None)
        self._work = (
            np.zeros(4, np.int64),
            np.zeros((MAX_DECISIONS, 3), np.int64),
            np.zeros(MAX_DECISIONS, np.float64),
            np.ones(2, np.bool_),  # both insurance answers are always legal
        )
        # explore() / finish_round(): the current round's decisions and the exploration generator
        self._round = (np.zeros((MAX_DECISIONS, 3), np.int64), np.zeros(MAX_DECISIONS, np.float64))
        self._depth = self._cut = 0
        self._prng = E.seed_words(np.random.SeedSequence([self.seed, EXTERNAL_STREAM]), 1)

    # ----------------------------------------------------------------- learning
    def learn_chunk(self) -> tuple[int, float]:
        """Play one seeded chunk; returns (rounds played, mean result of the behaviour policy)."""
        words = E.seed_words(np.random.SeedSequence([self.seed, self.chunks]), 2)
        chunk = Chunk(words, self.chunk_steps, 1, 0, None)
        learner = (self.q, self.c, self.q_ins, self.c_ins, self.epsilon)
        steps, rounds, total = _mc_chunk(
            self._table, self._policies, chunk, learner, REWARD_MODES[self.reward], self._work
        )
        self.steps += int(steps)
        self.rounds += int(rounds)
        self.chunks += 1
        return int(rounds), float(total / max(rounds, 1))

    # ----------------------------------------------------------------- rounds played elsewhere
    def explore(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The learner's behaviour action for one decision of a round played outside its kernel
        (a seat of the PettingZoo table, any Blackjack-v0 loop): epsilon-greedy over the legal
        actions, untried ones first, exactly as in :meth:`learn_chunk`. The decision is remembered
        until :meth:`finish_round` credits the round's result to it."""
        if self._depth >= MAX_DECISIONS:
            raise ValueError(
                f"a round has at most {MAX_DECISIONS} decisions; call finish_round(reward) after each round"
            )
        obs = np.ascontiguousarray(obs, np.int64)
        legal = np.zeros(E.N_ACTIONS, np.bool_)
        legal[: min(len(mask), E.N_ACTIONS)] = np.asarray(mask, np.bool_)[: E.N_ACTIONS]
        trace, prob = self._round
        action, explored = _external_decision(
            self.q, self.c, self.q_ins, self.c_ins, obs, legal, self._work[-1], self._prng, self.epsilon,
            trace, prob, self._depth,
        )  # fmt: skip
        if explored:
            self._cut = self._depth
        self._depth += 1
        return int(action)

    def finish_round(self, reward: float) -> None:
        """Credit a round played with :meth:`explore` (its result, as the env paid it) with the
        compiled update of :meth:`learn_chunk`; ``rounds`` and ``steps`` (its decisions) count it.

        The exploration generator (seeded by ``seed``) is not part of a saved agent: a loop that
        saves and reloads explores on from a fresh generator."""
        trace, prob = self._round
        _external_credit(self.q, self.c, self.q_ins, self.c_ins, trace, prob, self._depth, self._cut, float(reward))
        self.rounds += 1
        self.steps += self._depth
        self._depth = self._cut = 0

    # ----------------------------------------------------------------- playing
    def to_table(self) -> StrategyTable:
        """The greedy table: each cell's actions by learnt value, untried ones last."""
        value = np.where(self.c > 0, self.q, -np.inf)
        # stable sort on -value keeps the fixed action order among ties (and untried actions)
        order = np.argsort(-value, axis=2, kind="stable")
        actions = np.asarray(PLAY_ACTIONS, np.int64)[order]
        insurance = np.array(
            [self.c_ins[i, 1] > 0 and self.c_ins[i, 0] > 0 and self.q_ins[i, 1] > self.q_ins[i, 0] for i in range(2)]
        )
        return StrategyTable(actions, insurance, name=f"tabular MC ({self.steps} steps)")

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return self.to_table().act(obs, mask)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = check_batch(obs, masks)
        table = self.to_table()
        out = np.empty(obs.shape[0], np.int64)
        _act_batch(table.actions, table.insurance, obs, masks, out)
        return out

    # ----------------------------------------------------------------- files
    def save(self, path: str | Path) -> None:
        """agent.json + strategy.json + q.npz (values, counts and the run position)."""
        path = write_manifest(
            path,
            self.kind,
            self.rules,
            self.to_table(),
            epsilon=self.epsilon,
            seed=self.seed,
            chunk_steps=self.chunk_steps,
            reward=self.reward,
        )
        tmp = path / (Q_FILE + ".tmp.npz")
        np.savez(
            tmp,
            q=self.q,
            c=self.c,
            q_ins=self.q_ins,
            c_ins=self.c_ins,
            counters=np.array([self.steps, self.rounds, self.chunks], np.int64),
        )
        tmp.replace(path / Q_FILE)

    @classmethod
    def load(cls, path: str | Path) -> TabularAgent:
        manifest = read_manifest(path)
        agent = cls(
            Rules.from_dict(manifest["rules"]),
            epsilon=manifest["epsilon"],
            seed=manifest["seed"],
            chunk_steps=manifest["chunk_steps"],
            reward=manifest.get("reward", "sampled"),
        )
        with np.load(Path(path) / Q_FILE) as data:
            agent.q[:] = data["q"]
            agent.c[:] = data["c"]
            agent.q_ins[:] = data["q_ins"]
            agent.c_ins[:] = data["c_ins"]
            agent.steps, agent.rounds, agent.chunks = (int(x) for x in data["counters"])
        return agent
