"""Compiled batch simulation: many rounds per call with no Python in the loop.

The kernels play whole rounds with the engine's own functions (``start_round``, ``step_round``,
``write_obs``, ``legal_mask``), choosing actions with a strategy table (``table_action``) or
uniformly among the legal ones. Work is split into fixed chunks, each seeded by
``SeedSequence(seed).spawn``, so a seed gives the same result on one core or many, locally
or on Ray.

Paired runs (common random numbers): in every round the baseline plays the very cards the
policy was dealt. With a finite shoe the policy's cards are left in deal order in the shoe and
replayed (extra cards the baseline needs are drawn from the rest of the shoe); with an
infinite deck the card generator is rewound. The shoe then advances along the baseline's
play. In the rare round where the shoe runs out mid-round the two are not paired.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from . import engine as E
from .rules import MAX_HANDS, Rules
from .strategy import N_PLAY, N_ROWS, N_UP, StrategyTable, table_decision

POLICY_TABLE, POLICY_RANDOM = 0, 1

#: Rounds per chunk: the unit of seeding and of parallel work. Changing it changes results.
CHUNK_ROUNDS = 1 << 20

# per-policy statistics (counts are rounds in which the thing happened)
(
    ST_SUM,
    ST_SUMSQ,
    ST_WIN,
    ST_PUSH,
    ST_LOSS,
    ST_BLACKJACK,
    ST_BUST,
    ST_SURRENDER,
    ST_DOUBLE,
    ST_SPLIT,
    ST_INSURANCE,
) = range(11)
N_STATS = 11
OUTCOMES = ("win", "push", "loss", "blackjack", "bust", "surrender", "double", "split", "insurance")
# chunk output: [rounds, policy stats, baseline stats, diff sum, diff sum of squares, paired rounds]
OUT_ROUNDS = 0
OUT_A = 1
OUT_B = OUT_A + N_STATS
OUT_DIFF_SUM = OUT_B + N_STATS
OUT_DIFF_SUMSQ = OUT_DIFF_SUM + 1
OUT_PAIRED = OUT_DIFF_SUMSQ + 1
OUT_SIZE = OUT_PAIRED + 1


@njit(cache=True, _nrt=False)
def _choose(kind, actions, insurance, st, hands, mask, prng):
    if kind == POLICY_TABLE:
        return table_decision(actions, insurance, st, hands)
    E.legal_mask(st, hands, mask)
    n_legal = 0
    for a in range(E.N_ACTIONS):
        n_legal += mask[a]
    pick = E.uniform_int(prng, 0, n_legal)
    for a in range(E.N_ACTIONS):
        if mask[a]:
            if pick == 0:
                return a
            pick -= 1
    return E.STAND


@njit(cache=True, _nrt=False)
def play_round(st, hands, shoe, rv, res, mask, kind, actions, insurance, prng):
    """Deal and play one round with a table or random policy; returns its net result."""
    E.start_round(st, hands, shoe, res)
    reward = 0.0
    while st[E.S_PHASE] != E.P_OVER:
        action = _choose(kind, actions, insurance, st, hands, mask, prng)
        reward = E.step_round(st, hands, shoe, rv, res, action)
    return reward


@njit(cache=True, _nrt=False)
def _record(out, base, st, hands, reward):
    out[base + ST_SUM] += reward
    out[base + ST_SUMSQ] += reward * reward
    if reward > 0:
        out[base + ST_WIN] += 1
    elif reward == 0:
        out[base + ST_PUSH] += 1
    else:
        out[base + ST_LOSS] += 1
    n_hands = st[E.S_NUM_HANDS]
    if st[E.S_NATURAL] and n_hands == 1:
        out[base + ST_BLACKJACK] += 1
    if n_hands > 1:
        out[base + ST_SPLIT] += 1
    if st[E.S_INS] == E.INS_TAKEN or st[E.S_INS] == E.INS_EVEN_MONEY:
        out[base + ST_INSURANCE] += 1
    bust = surrendered = doubled = False
    for h in range(n_hands):
        status = hands[h, E.H_STATUS]
        bust |= status == E.HS_BUST
        surrendered |= status == E.HS_SURRENDERED
        doubled |= hands[h, E.H_DOUBLED] != 0
    out[base + ST_BUST] += bust
    out[base + ST_SURRENDER] += surrendered
    out[base + ST_DOUBLE] += doubled


@njit(cache=True, nogil=True, _nrt=False)
def simulate_chunk(
    rv, kind_a, actions_a, insurance_a, kind_b, actions_b, insurance_b, paired, words, n_rounds, work, out
):
    """Play n_rounds from a fresh shoe; accumulate statistics into out (float64[OUT_SIZE]).

    words: int64[12] generator words (cards, policy randomness, baseline randomness);
    work: the table's arrays (st, hands, shoe, res, mask, rngs), allocated by the caller."""
    st, hands, shoe, res, mask, rngs = work
    decks = int(rv[E.R_DECKS])
    n_cards = 52 * decks
    st[:] = 0
    hands[:, :] = 0
    for i in range(n_cards):
        shoe[i] = 1 + i % 13  # new_shoe's order
    E.load_rules(st, rv)
    st[E.S_SHOE_LEN] = n_cards
    st[E.S_SHOE_POS] = n_cards
    prng_a = rngs[0]
    prng_b = rngs[1]
    saved_rng = rngs[2]
    for k in range(4):  # element copies: slice copies would need numba's allocator
        st[E.S_RNG + k] = words[k]
        prng_a[k] = words[4 + k]
        prng_b[k] = words[8 + k]
    for _ in range(n_rounds):
        for k in range(4):
            saved_rng[k] = st[E.S_RNG + k]
        reward_a = play_round(st, hands, shoe, rv, res, mask, kind_a, actions_a, insurance_a, prng_a)
        _record(out, OUT_A, st, hands, reward_a)
        out[OUT_ROUNDS] += 1
        if not paired:
            continue
        replay = st[E.S_MID_SHUFFLE] == 0
        if decks == 0:
            for k in range(4):
                st[E.S_RNG + k] = saved_rng[k]
        elif replay:
            # put the policy's cards back, in deal order, for the baseline to replay
            end = st[E.S_SHOE_POS]
            start = st[E.S_ROUND_START]
            for i in range(start, end):
                st[E.S_COUNTS + shoe[i]] += 1
            st[E.S_SHOE_POS] = start
            st[E.S_FIXED_END] = end
        reward_b = play_round(st, hands, shoe, rv, res, mask, kind_b, actions_b, insurance_b, prng_b)
        st[E.S_FIXED_END] = 0
        _record(out, OUT_B, st, hands, reward_b)
        if replay:
            diff = reward_a - reward_b
            out[OUT_DIFF_SUM] += diff
            out[OUT_DIFF_SUMSQ] += diff * diff
            out[OUT_PAIRED] += 1


# ============================================================================= Python layer
@dataclass(frozen=True)
class Policy:
    """A policy the kernels can run: a strategy table, or uniform random legal play."""

    kind: int
    table: StrategyTable | None = None
    name: str = "policy"

    @classmethod
    def random(cls) -> Policy:
        return cls(POLICY_RANDOM, None, "random")

    @classmethod
    def from_table(cls, table: StrategyTable) -> Policy:
        return cls(POLICY_TABLE, table, table.name)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self.table is None:
            return np.zeros((N_ROWS, N_UP, N_PLAY), np.int64), np.zeros(2, np.bool_)
        return self.table.actions, self.table.insurance


def chunk_sizes(rounds: int, chunk_rounds: int = CHUNK_ROUNDS) -> list[int]:
    """The fixed split of a run into chunks (all full but the last)."""
    full, rest = divmod(rounds, chunk_rounds)
    return [chunk_rounds] * full + ([rest] if rest else [])


def chunk_words(seed: int, n_chunks: int) -> list[np.ndarray]:
    """Generator words for each chunk, from SeedSequence(seed).spawn (independent streams)."""
    return [E.seed_words(child, 3) for child in np.random.SeedSequence(seed).spawn(n_chunks)]


def run_chunk(
    rules_array: np.ndarray, policy: Policy, baseline: Policy | None, words: np.ndarray, rounds: int
) -> np.ndarray:
    """One chunk's statistics (callable in a thread, a process or a Ray task)."""
    out = np.zeros(OUT_SIZE, np.float64)
    work = (
        np.zeros(E.ST_SIZE, np.int64),
        np.zeros((MAX_HANDS, E.HAND_FIELDS), E.HAND_DTYPE),
        E.new_shoe(int(rules_array[E.R_DECKS])),
        np.zeros(E.RES_SIZE, np.float64),
        np.zeros(E.N_ACTIONS, np.bool_),
        np.zeros((3, 4), np.int64),
    )
    actions_a, insurance_a = policy.arrays()
    other = baseline if baseline is not None else policy
    actions_b, insurance_b = other.arrays()
    simulate_chunk(
        rules_array,
        policy.kind,
        actions_a,
        insurance_a,
        other.kind,
        actions_b,
        insurance_b,
        baseline is not None,
        words,
        rounds,
        work,
        out,
    )
    return out


@dataclass
class SimulationResult:
    """Summed chunk statistics, with the figures the evaluate command reports."""

    totals: np.ndarray = field(default_factory=lambda: np.zeros(OUT_SIZE, np.float64))
    paired: bool = False

    def add(self, chunk: np.ndarray) -> None:
        self.totals += chunk

    @property
    def rounds(self) -> int:
        return int(self.totals[OUT_ROUNDS])

    def ev(self, base: int = OUT_A) -> float:
        return float(self.totals[base + ST_SUM] / max(self.rounds, 1))

    def stderr(self, base: int = OUT_A) -> float:
        return _stderr(self.totals[base + ST_SUM], self.totals[base + ST_SUMSQ], self.rounds)

    def rates(self, base: int = OUT_A) -> dict[str, float]:
        n = max(self.rounds, 1)
        return {name: float(self.totals[base + ST_WIN + i] / n) for i, name in enumerate(OUTCOMES)}

    def diff(self) -> tuple[float, float, int]:
        """Mean paired difference (policy - baseline), its standard error and the paired rounds."""
        n = int(self.totals[OUT_PAIRED])
        mean = float(self.totals[OUT_DIFF_SUM] / max(n, 1))
        return mean, _stderr(self.totals[OUT_DIFF_SUM], self.totals[OUT_DIFF_SUMSQ], n), n


def _stderr(total: float, total_sq: float, n: int) -> float:
    if n < 2:
        return math.inf
    mean = total / n
    variance = max(total_sq / n - mean * mean, 0.0) * n / (n - 1)
    return math.sqrt(variance / n)


def iter_chunks(
    rules: Rules,
    policy: Policy,
    rounds: int,
    seed: int,
    baseline: Policy | None = None,
    chunk_rounds: int = CHUNK_ROUNDS,
) -> Iterator[tuple[Callable[..., np.ndarray], tuple[Any, ...]]]:
    """(function, arguments) of every chunk of a run, in order, for any executor."""
    sizes = chunk_sizes(rounds, chunk_rounds)
    rules_array = rules.to_array()
    for words, size in zip(chunk_words(seed, len(sizes)), sizes, strict=True):
        yield run_chunk, (rules_array, policy, baseline, words, size)
