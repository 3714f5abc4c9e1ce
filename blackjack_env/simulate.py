"""Compiled batch simulation: many rounds per call with no Python in the loop.

The kernels play whole rounds with the engine's own functions through the table driver
(``table.play_until``), choosing actions with a strategy table (``table_decision``) or uniformly
among the legal ones. The evaluated policy sits in one seat of a table (:class:`Table`); the other
seats play their own policy (basic strategy, as the runner sets them) in the same kernel, and a
shoe with a cut card carries on from round to round. Work is split into fixed chunks, each seeded by
``SeedSequence(seed).spawn``, so a seed gives the same result on one core or many, locally
or on Ray.

Paired runs (common random numbers): several policies play every round on the very same cards.
With a finite shoe the first policy's cards are left in deal order in the shoe and replayed to
the next (extra cards one needs are drawn from the rest of the shoe and replayed to those
after it); with an infinite deck the card generator is rewound. The shoe then advances along
the last policy's play. In the rare round where the shoe runs out mid-round, the policies after
that point are not paired for that round.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from . import engine as E
from .rules import Rules
from .strategy import N_PLAY, N_ROWS, N_UP, StrategyTable
from .table import POLICY_RANDOM, POLICY_TABLE, play_until

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
    ST_PLAYED,  # rounds in which the policy had a bet
    ST_BET,  # the sum of its bets (table-minimum units)
) = range(13)
N_STATS = 13
OUTCOMES = ("win", "push", "loss", "blackjack", "bust", "surrender", "double", "split", "insurance")
# chunk output: [rounds, stats of policy 0, 1, ..., then per policy p >= 1 its difference from
# policy 0 on paired rounds: sum, sum of squares, paired rounds]
OUT_ROUNDS = 0
OUT_STATS = 1
N_DIFF = 3


def out_size(n_policies: int) -> int:
    return OUT_STATS + n_policies * N_STATS + (n_policies - 1) * N_DIFF


@njit(cache=True, _nrt=False, forceinline=True)
def _record(out, base, st, hands, seat, bet, reward):
    """Add one round of the policy in ``seat`` with its bet and net result."""
    out[base + ST_PLAYED] += 1
    out[base + ST_BET] += bet
    out[base + ST_SUM] += reward
    out[base + ST_SUMSQ] += reward * reward
    if reward > 0:
        out[base + ST_WIN] += 1
    elif reward == 0:
        out[base + ST_PUSH] += 1
    else:
        out[base + ST_LOSS] += 1
    n_hands = st[E.seat_slot(seat, E.SEAT_NUM_HANDS)]
    if st[E.seat_slot(seat, E.SEAT_NATURAL)] and n_hands == 1:
        out[base + ST_BLACKJACK] += 1
    if n_hands > 1:
        out[base + ST_SPLIT] += 1
    insurance = st[E.seat_slot(seat, E.SEAT_INS)]
    if insurance == E.INS_TAKEN or insurance == E.INS_EVEN_MONEY:
        out[base + ST_INSURANCE] += 1
    bust = surrendered = doubled = False
    for h in range(seat * E.MAX_HANDS, seat * E.MAX_HANDS + n_hands):
        status = hands[h, E.H_STATUS]
        bust |= status == E.HS_BUST
        surrendered |= status == E.HS_SURRENDERED
        doubled |= hands[h, E.H_DOUBLED] != 0
    out[base + ST_BUST] += bust
    out[base + ST_SURRENDER] += surrendered
    out[base + ST_DOUBLE] += doubled


@njit(cache=True, nogil=True, _nrt=False)
def simulate_chunk(rv, kinds, actions, insurance, words, n_rounds, seats, seat, work, out):
    """Play n_rounds from a fresh shoe with every policy on the same cards; accumulate into out.

    kinds int64[P + 1], actions int64[P + 1, 38, 10, 5], insurance bool[P + 1, 2]: the policies
    evaluated in ``seat`` of a table of ``seats``, then the policy of the other seats;
    words: int64[4 (P + 1)] generator words (cards, then each evaluated policy's own randomness);
    work: the table's arrays (st, hands, shoe, res, mask, rngs[P + 2, 4]), allocated by the caller;
    out: float64[out_size(P)]."""
    st, hands, shoe, res, mask, rngs = work
    n_policies = kinds.shape[0] - 1
    diff_base = OUT_STATS + n_policies * N_STATS
    decks = int(rv[E.R_DECKS])
    n_cards = 52 * decks
    st[:] = 0
    hands[:, :] = 0
    for i in range(n_cards):
        shoe[i] = 1 + i % 13  # new_shoe's order
    E.set_seats(st, seats)
    E.load_rules(st, rv)
    st[E.S_SHOE_LEN] = n_cards
    st[E.S_SHOE_POS] = n_cards
    for s in range(E.MAX_SEATS):
        st[E.seat_slot(s, E.SEAT_POLICY)] = n_policies  # the other seats' policy
    reward_slot = seat * E.RES_SIZE + E.RES_REWARD
    saved_rng = rngs[n_policies + 1]
    for k in range(4):  # element copies: slice copies would need numba's allocator
        st[E.S_RNG + k] = words[k]
        for p in range(n_policies):
            rngs[p, k] = words[4 * (p + 1) + k]
    for _ in range(n_rounds):
        for k in range(4):
            saved_rng[k] = st[E.S_RNG + k]
        first = 0.0
        replay = True  # the cards dealt so far this round are still in deal order in the shoe
        start = 0
        replay_end = 0
        for p in range(n_policies):
            if p > 0 and decks == 0:
                for k in range(4):
                    st[E.S_RNG + k] = saved_rng[k]
            elif p > 0 and replay:
                # put the cards back, in deal order, for this policy to replay
                for i in range(start, st[E.S_SHOE_POS]):
                    st[E.S_COUNTS + shoe[i]] += 1
                st[E.S_SHOE_POS] = start
                st[E.S_FIXED_END] = replay_end
            st[E.seat_slot(seat, E.SEAT_POLICY)] = p
            play_until(st, hands, shoe, rv, res, -1, -1, kinds, actions, insurance, mask, rngs)
            reward = res[reward_slot]
            st[E.S_FIXED_END] = 0
            _record(out, OUT_STATS + p * N_STATS, st, hands, seat, 1.0, reward)
            if p == 0:
                first = reward
                start = st[E.S_ROUND_START]
            elif replay:
                base = diff_base + (p - 1) * N_DIFF
                out[base] += first - reward
                out[base + 1] += (first - reward) * (first - reward)
                out[base + 2] += 1
            if st[E.S_MID_SHUFFLE]:
                replay = False
            replay_end = max(replay_end, st[E.S_SHOE_POS])
        out[OUT_ROUNDS] += 1


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


def chunk_words(seed: int, n_chunks: int, n_policies: int = 2) -> list[np.ndarray]:
    """Generator words for each chunk, from SeedSequence(seed).spawn (independent streams):
    the cards' first, then one generator per policy."""
    n_generators = 1 + max(n_policies, 2)
    return [E.seed_words(child, n_generators) for child in np.random.SeedSequence(seed).spawn(n_chunks)]


@dataclass(frozen=True)
class Table:
    """Where the evaluated policies sit: ``seat`` of ``seats`` boxes, the other boxes played by
    ``others`` (basic strategy for the rules, as the runner builds it; needed when seats > 1)."""

    seats: int = 1
    seat: int = 0
    others: Policy | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.seats <= E.MAX_SEATS:
            raise ValueError(f"seats must be 1..{E.MAX_SEATS}, got {self.seats}")
        if not 0 <= self.seat < self.seats:
            raise ValueError(f"seat must be 0..{self.seats - 1} (seat 0 is dealt first), got {self.seat}")
        if self.seats > 1 and self.others is None:
            raise ValueError("a table of several seats needs the policy of the other seats")


def run_chunk(
    rules_array: np.ndarray, policies: Sequence[Policy], words: np.ndarray, table: Table, rounds: int
) -> np.ndarray:
    """One chunk's statistics (callable in a thread, a process or a Ray task)."""
    n = len(policies)
    out = np.zeros(out_size(n), np.float64)
    work = (
        np.zeros(E.ST_SIZE, np.int64),
        E.new_hands(table.seats),
        E.new_shoe(int(rules_array[E.R_DECKS])),
        E.new_res(table.seats),
        np.zeros(E.N_ACTIONS, np.bool_),
        np.zeros((n + 2, 4), np.int64),
    )
    seated = [*policies, table.others or policies[0]]
    arrays = [policy.arrays() for policy in seated]
    kinds = np.array([policy.kind for policy in seated], np.int64)
    actions = np.ascontiguousarray(np.stack([a for a, _ in arrays]))
    insurance = np.ascontiguousarray(np.stack([i for _, i in arrays]))
    simulate_chunk(rules_array, kinds, actions, insurance, words, rounds, table.seats, table.seat, work, out)
    return out


@dataclass
class SimulationResult:
    """Summed chunk statistics of policies 0..P-1 played on the same cards."""

    n_policies: int = 1
    totals: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.totals is None:
            self.totals = np.zeros(out_size(self.n_policies), np.float64)

    def add(self, chunk: np.ndarray) -> None:
        self.totals += chunk

    @property
    def rounds(self) -> int:
        return int(self.totals[OUT_ROUNDS])

    def _stats(self, policy: int) -> np.ndarray:
        base = OUT_STATS + policy * N_STATS
        return self.totals[base : base + N_STATS]

    def ev(self, policy: int = 0) -> float:
        return float(self._stats(policy)[ST_SUM] / max(self.rounds, 1))

    def stderr(self, policy: int = 0) -> float:
        stats = self._stats(policy)
        return _stderr(stats[ST_SUM], stats[ST_SUMSQ], self.rounds)

    def rounds_played(self, policy: int = 0) -> int:
        """Rounds in which the policy had a bet."""
        return int(self._stats(policy)[ST_PLAYED])

    def avg_bet(self, policy: int = 0) -> float:
        """The policy's mean bet per round it played (table-minimum units)."""
        stats = self._stats(policy)
        return float(stats[ST_BET] / max(stats[ST_PLAYED], 1))

    def ev_per_unit_bet(self, policy: int = 0) -> float:
        """The policy's result per unit bet (its total result over its total bets)."""
        stats = self._stats(policy)
        return float(stats[ST_SUM] / stats[ST_BET]) if stats[ST_BET] > 0 else 0.0

    def rates(self, policy: int = 0) -> dict[str, float]:
        n = max(self.rounds, 1)
        stats = self._stats(policy)
        return {name: float(stats[ST_WIN + i] / n) for i, name in enumerate(OUTCOMES)}

    def diff(self, policy: int = 1) -> tuple[float, float, int]:
        """Mean paired difference (policy 0 - `policy`), its standard error and the paired rounds."""
        base = OUT_STATS + self.n_policies * N_STATS + (policy - 1) * N_DIFF
        total, total_sq, n = self.totals[base : base + N_DIFF]
        return float(total / max(n, 1)), _stderr(total, total_sq, int(n)), int(n)


def _stderr(total: float, total_sq: float, n: int) -> float:
    if n < 2:
        return math.inf
    mean = total / n
    variance = max(total_sq / n - mean * mean, 0.0) * n / (n - 1)
    return math.sqrt(variance / n)


def iter_chunks(
    rules: Rules,
    policies: Sequence[Policy],
    rounds: int,
    seed: int,
    chunk_rounds: int = CHUNK_ROUNDS,
    table: Table | None = None,
) -> Iterator[tuple[Callable[..., np.ndarray], tuple[Any, ...]]]:
    """(function, arguments) of every chunk of a run, in order, for any executor (the rounds
    are the last argument)."""
    table = table or Table()
    sizes = chunk_sizes(rounds, chunk_rounds)
    rules_array = rules.to_array()
    policies = tuple(policies)
    for words, size in zip(chunk_words(seed, len(sizes), len(policies)), sizes, strict=True):
        yield run_chunk, (rules_array, policies, words, table, size)
