"""Compiled batch simulation: many rounds per call with no Python in the loop.

The kernels play whole rounds with the engine's own functions through the table driver
(``table.play_until``), choosing actions with a strategy table (``table_decision``), uniformly
among the legal ones, or by a counting strategy (``count_policy``: its bet ramp before each round,
its index plays, its exit rule, and the rounds' statistics by true count). One kernel source is
compiled twice: ``simulate_chunk`` with the counting code pruned out (tables and random play run as
fast as before counting existed), ``simulate_counting_chunk`` with it. The evaluated policy sits in
one seat of a table (:class:`Table`); the other
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
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import count_policy as CP
from . import engine as E
from . import linear_policy as LP
from . import slots
from . import table as T
from ._jit import njit
from .counting import CountingStrategy
from .rules import Rules
from .strategy import N_PLAY, N_ROWS, N_UP, StrategyTable
from .table import POLICY_COUNT, POLICY_LINEAR, POLICY_RANDOM, POLICY_TABLE, play_until, seed_generator, start_chunk

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
# policy 0 on paired rounds: sum, sum of squares, paired rounds; then the shoes begun; then per
# policy its rounds by true count (counting policies only, see TC_*)]
OUT_ROUNDS = 0
OUT_STATS = 1
N_DIFF = 3
#: Whole true counts (floored) kept apart; the tails are pooled into the end buckets.
TC_LOW, TC_HIGH, N_TC = CP.TC_LOW, CP.TC_HIGH, CP.N_TC
# per true-count bucket: rounds, rounds sat out, bets, result per unit bet and its square (played rounds)
TB_ROUNDS, TB_SAT_OUT, TB_BET, TB_UNIT, TB_UNIT_SQ = range(5)
N_TB = 5


@njit(cache=True, _nrt=False)
def _diff_base(n_policies: int) -> int:
    return OUT_STATS + n_policies * N_STATS


@njit(cache=True, _nrt=False)
def _shoes_slot(n_policies: int) -> int:
    return _diff_base(n_policies) + (n_policies - 1) * N_DIFF


@njit(cache=True, _nrt=False)
def _tc_base(n_policies: int, policy: int) -> int:
    return _shoes_slot(n_policies) + 1 + policy * N_TC * N_TB


def out_size(n_policies: int) -> int:
    return _tc_base(n_policies, n_policies)


@njit(cache=True, _nrt=False, forceinline=True)
def _record(out, base, st, hands, seat, reward, at_table):
    """Add one round of the policy in ``seat`` with its net result (its bet is the caller's);
    a lone seat's scalars are read where it acted, a table's seat from its block."""
    out[base + ST_SUM] += reward
    out[base + ST_SUMSQ] += reward * reward
    if reward > 0:
        out[base + ST_WIN] += 1
    elif reward == 0:
        out[base + ST_PUSH] += 1
    else:
        out[base + ST_LOSS] += 1
    if at_table is None:
        n_hands, natural, insurance = slots.acting_hands(st), slots.natural(st), slots.insurance(st)
    else:
        n_hands = slots.seat_hands(st, seat)
        natural = slots.seat_natural(st, seat)
        insurance = slots.seat_insurance(st, seat)
    if natural and n_hands == 1:
        out[base + ST_BLACKJACK] += 1
    if n_hands > 1:
        out[base + ST_SPLIT] += 1
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


@njit(cache=True, _nrt=False, forceinline=True)
def _round_counts(params, st, n_policies, due, counts):
    """Every counting policy's true count before the coming round's first card (a shoe due for
    shuffling is unseen: the system's initial count, 0 when balanced)."""
    for p in range(n_policies):
        prm = params[p]
        if prm[CP.PC_RAMP_N] == 0.0:
            continue
        if due:
            counts[p] = prm[CP.PC_INITIAL]  # (a balanced system's is 0)
        else:
            counts[p] = CP.true_count(prm, st)


@njit(cache=True, _nrt=False, forceinline=True)
def _count_bet(params, policy, count, shoe_id, exited, tc_base):
    """A counting policy's bet for the coming round (of shoe ``shoe_id``) from its true count, its
    exit rule, and the round's true-count bucket."""
    if count < params[CP.PC_EXIT_BELOW]:
        exited[policy] = shoe_id
    bucket = CP.tc_bucket(count)
    bet = 0.0 if exited[policy] == shoe_id else CP.round_bet(params, count, bucket)
    return bet, tc_base + bucket * N_TB


@njit(cache=True, _nrt=False, forceinline=True)
def _start_chunk(table, policies, exited, words, seats, n_policies):
    """A chunk's table (``table.start_chunk``: every other seat plays the table's policy), each
    evaluated policy's own generator, no exits yet."""
    start_chunk(table, seats, words, n_policies)  # n_policies: the other seats' policy
    for p in range(n_policies):
        exited[p] = -1
        seed_generator(policies.prngs[p], words, p + 1)


@njit(cache=True, _nrt=False, forceinline=True)
def _replay(st, shoe, infinite, saved_rng, start, replay_end):
    """Deal the next policy the round's cards again: an infinite deck's generator state back, or
    the cards dealt since ``start`` put back in deal order (dealt again up to ``replay_end``)."""
    if infinite:
        slots.restore_rng(st, saved_rng)
    else:
        slots.put_back(st, shoe, start, replay_end)


@njit(cache=True, _nrt=False, forceinline=True)
def _record_bucket(out, bucket, bet, unit):
    """A counting policy's round in its true-count bucket: its bet and unit result, or a round sat out."""
    out[bucket + TB_ROUNDS] += 1
    if bet > 0.0:
        out[bucket + TB_BET] += bet
        out[bucket + TB_UNIT] += unit
        out[bucket + TB_UNIT_SQ] += unit * unit
    else:
        out[bucket + TB_SAT_OUT] += 1


@njit(cache=True, _nrt=False, forceinline=True)
def _record_pair(out, base, diff):
    """One paired round: the first policy's result minus this policy's, on the same cards."""
    out[base] += diff
    out[base + 1] += diff * diff
    out[base + 2] += 1


@njit(cache=True, nogil=True, _nrt=False)
def simulate_chunk(table, policies, chunk, work, out):
    """The kernel for tables and random play: ``_play_chunk`` with the counting code compiled out
    (``policies.counting`` is None)."""
    _play_chunk(table, policies, chunk, work, out, policies.counting)


@njit(cache=True, nogil=True, _nrt=False)
def simulate_counting_chunk(table, policies, chunk, work, out):
    """The kernel when a counting strategy plays (bets by its count, index plays): the same source,
    ``policies.counting`` the policies' compiled counting strategies."""
    _play_chunk(table, policies, chunk, work, out, policies.counting)


@njit(cache=True, nogil=True, _nrt=False, forceinline=True)
def _play_chunk(table, policies, chunk, work, out, counting):
    """Play ``chunk.rounds`` from a fresh shoe with every policy on the same cards; accumulate into out.

    policies: the P policies evaluated in ``chunk.seat`` of a table of ``chunk.seats``, then the
    policy of the other seats (flat bets of 1): kinds int64[P + 1], actions int64[P + 1, 38, 10, 5],
    insurance bool[P + 1, 2], prngs int64[P + 2, 4] (each policy's generator, then scratch);
    counting (``policies.counting`` as an argument, so that numba prunes it): None (compiled out),
    or float64[P + 1, N], the counting policies' count, ramp and indices (``count_policy``): such a
    policy bets by its ramp and may sit a round out (bet 0); chunk.words: int64[4 (P + 1)] generator
    words (cards, then each evaluated policy's own randomness); work: per policy the shoe it left
    (exit rule) and its true count before the round; out: float64[out_size(P)]."""
    st, shoe, res, rv = table.st, table.shoe, table.res, table.rv
    exited, counts = work
    seat = chunk.seat
    n_rounds = chunk.rounds
    n_policies = policies.kinds.shape[0] - 1
    diff_base = OUT_STATS + n_policies * N_STATS
    infinite = int(rv[E.R_DECKS]) == 0
    _start_chunk(table, policies, exited, chunk.words, chunk.seats, n_policies)
    reward_slot = seat * E.RES_SIZE + E.RES_REWARD
    saved_rng = policies.prngs[n_policies + 1]
    for _ in range(n_rounds):
        due = E.shuffle_due(st)
        shoe_id = slots.shuffles(st) + due  # once a round: the first policy's deal does the shuffle
        if counting is not None:
            _round_counts(counting, st, n_policies, due, counts)
        slots.save_rng(st, saved_rng)
        first = 0.0
        replay = True  # the cards dealt so far this round are still in deal order in the shoe
        start = 0
        replay_end = 0
        for p in range(n_policies):
            if p > 0 and (infinite or replay):
                _replay(st, shoe, infinite, saved_rng, start, replay_end)
            slots.set_seat_policy(st, seat, p)
            bet = 1.0
            bucket = -1
            if counting is not None and counting[p, CP.PC_RAMP_N] != 0.0:  # a counting strategy (all have a ramp)
                bet, bucket = _count_bet(counting[p], p, counts[p], shoe_id, exited, _tc_base(n_policies, p))
                if (
                    policies.kinds[p] == POLICY_LINEAR
                ):  # a composition model bets by its own value (filed by Hi-Lo's count)
                    bet = LP.linear_bet(counting[p], st, due)
                if bet == 0.0:
                    slots.set_seat_active(st, seat, 0)
            play_until(table, policies, -1, -1, chunk.at_table)
            slots.set_fixed_end(st, 0)
            reward = 0.0
            unit = 0.0
            if bet > 0.0:
                unit = res[reward_slot]
                reward = bet * unit
                stats = OUT_STATS + p * N_STATS
                _record(out, stats, st, table.hands, seat, reward, chunk.at_table)
                if counting is not None:  # (else every policy bets 1 every round: added up after the loop)
                    out[stats + ST_PLAYED] += 1
                    out[stats + ST_BET] += bet
            if bucket >= 0:  # the round's true-count bucket, in one place after the round
                _record_bucket(out, bucket, bet, unit)
            if counting is not None:
                slots.set_seat_active(st, seat, 1)  # (cheaper than a branch on whether it sat out)
            if p == 0:
                first = reward
                start = slots.round_start(st)
            elif replay:
                _record_pair(out, diff_base + (p - 1) * N_DIFF, first - reward)
            if slots.mid_shuffle(st):
                replay = False
            replay_end = max(replay_end, slots.cards_dealt(st))
        out[OUT_ROUNDS] += 1
    if counting is None:
        for p in range(n_policies):
            out[OUT_STATS + p * N_STATS + ST_PLAYED] += n_rounds
            out[OUT_STATS + p * N_STATS + ST_BET] += n_rounds
    out[_shoes_slot(n_policies)] += slots.shuffles(st)  # st was cleared: the shoes begun in this chunk


# ============================================================================= Python layer
@dataclass(frozen=True)
class Policy:
    """A policy the kernels can run: a strategy table, uniform random legal play, or a counting
    strategy (its count, ramp, indices and exit rule compiled to ``params`` for the rules, over
    the rules' basic strategy ``table``)."""

    kind: int
    table: StrategyTable | None = None
    name: str = "policy"
    counting: CountingStrategy | None = None
    params: np.ndarray | None = field(default=None, compare=False)
    linear: LP.LinearModel | None = field(default=None, compare=False)

    @classmethod
    def random(cls) -> Policy:
        return cls(POLICY_RANDOM, None, "random")

    @classmethod
    def from_table(cls, table: StrategyTable) -> Policy:
        return cls(POLICY_TABLE, table, table.name)

    @classmethod
    def from_counting(cls, strategy: CountingStrategy, rules: Rules, basic: StrategyTable) -> Policy:
        """A counting strategy for these rules; questions without an index are answered by
        ``basic`` (the rules' basic strategy). It needs a shoe with a cut card."""
        if rules.infinite:
            raise ValueError(f"counting strategy {strategy.name!r} needs a finite shoe, not an infinite deck")
        if rules.penetration <= 0:
            raise ValueError(
                f"counting strategy {strategy.name!r} needs a shoe dealt to a cut card; "
                "the rules shuffle every round (set penetration, e.g. --set penetration=0.75)"
            )
        return cls(POLICY_COUNT, basic, strategy.name, strategy, CP.policy_params(strategy, rules))

    @classmethod
    def from_linear(cls, model: LP.LinearModel, rules: Rules, basic: StrategyTable) -> Policy:
        """A composition model (``linear_policy``) for these rules: it plays and bets by its weights
        (``basic``, the rules' basic strategy, is carried only as the policy's table). It needs a
        shoe with a cut card."""
        if rules.infinite or rules.penetration <= 0:
            raise ValueError(
                f"composition model {model.name!r} needs a shoe dealt to a cut card "
                "(set penetration, e.g. --set penetration=0.75)"
            )
        return cls(POLICY_LINEAR, basic, model.name, None, model.params(rules), linear=model)

    @property
    def compiled_count(self) -> bool:
        """Whether it needs the counting kernel (a counting strategy or a composition model)."""
        return self.counting is not None or self.kind == POLICY_LINEAR

    @property
    def sits_out(self) -> bool:
        """Whether it ever sits a round out (a 0 bet or an exit rule): that needs other seats."""
        if self.linear is not None:
            return self.linear.sits_out
        return self.counting is not None and self.counting.sits_out

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self.table is None:
            return np.zeros((N_ROWS, N_UP, N_PLAY), np.int64), np.zeros(2, np.bool_)
        return self.table.actions, self.table.insurance

    def count_params(self) -> np.ndarray:
        """The compiled counting strategy (zeros for the other kinds, which never read it)."""
        return self.params if self.params is not None else np.zeros(CP.N_PARAMS)


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
        E.check_seats(self.seats)
        E.check_seat(self.seat, self.seats)
        if self.seats > 1 and self.others is None:
            raise ValueError("a table of several seats needs the policy of the other seats")


def run_chunk(
    rules_array: np.ndarray, policies: Sequence[Policy], words: np.ndarray, table: Table, rounds: int
) -> np.ndarray:
    """One chunk's statistics (callable in a thread, a process or a Ray task)."""
    n = len(policies)
    out = np.zeros(out_size(n), np.float64)
    arrays = T.new_table(rules_array, table.seats)
    work = (np.zeros(n + 1, np.int64), np.zeros(n + 1, np.float64))
    seated = [*policies, table.others or policies[0]]
    tables = [policy.arrays() for policy in seated]
    rows = [policy.count_params() for policy in seated]
    params = np.zeros((len(rows), max(len(row) for row in rows)))  # a composition model's row is longer
    for i, row in enumerate(rows):
        params[i, : len(row)] = row
    counted = simulate_counting_chunk if any(p.compiled_count for p in seated) else simulate_chunk
    compiled = T.Policies(
        np.array([policy.kind for policy in seated], np.int64),
        np.ascontiguousarray(np.stack([a for a, _ in tables])),
        np.ascontiguousarray(np.stack([i for _, i in tables])),
        np.zeros((n + 2, 4), np.int64),
        params if counted is simulate_counting_chunk else None,
    )
    chunk = T.Chunk(words, rounds, table.seats, table.seat, E.table_kind(table.seats))
    counted(arrays, compiled, chunk, work, out)
    return out


@dataclass
class SimulationResult:
    """Summed chunk statistics of policies 0..P-1 played on the same cards."""

    n_policies: int = 1
    #: None: zeros of the size n_policies needs (filled in by __post_init__, so never None after it)
    totals: np.ndarray = None  # type: ignore[assignment]

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

    def sd(self, policy: int = 0) -> float:
        """The standard deviation of the policy's result per round (table-minimum units)."""
        stats = self._stats(policy)
        n = max(self.rounds, 1)
        mean = stats[ST_SUM] / n
        return math.sqrt(max(stats[ST_SUMSQ] / n - mean * mean, 0.0))

    @property
    def shoes(self) -> int:
        """Shoes begun (shuffles), the first of every chunk included."""
        return int(self.totals[_shoes_slot(self.n_policies)])

    def by_true_count(self, policy: int = 0) -> list[dict[str, Any]] | None:
        """Per whole true count (floored; below TC_LOW and above TC_HIGH pooled into the end
        buckets) the share of rounds, the average bet and the EV per unit bet with its 95% CI;
        None for a policy that does not count."""
        base = _tc_base(self.n_policies, policy)
        buckets = self.totals[base : base + N_TC * N_TB].reshape(N_TC, N_TB)
        if buckets[:, TB_ROUNDS].sum() == 0:
            return None
        out = []
        for i, b in enumerate(buckets):
            count = TC_LOW + i
            played = int(b[TB_ROUNDS] - b[TB_SAT_OUT])
            ev = float(b[TB_UNIT] / played) if played else math.nan
            stderr = _stderr(b[TB_UNIT], b[TB_UNIT_SQ], played) if played else math.nan
            out.append(
                {
                    "true_count": count,
                    "label": f"<= {count}" if i == 0 else f">= {count}" if i == N_TC - 1 else str(count),
                    "share": float(b[TB_ROUNDS] / max(self.rounds, 1)),
                    "rounds": int(b[TB_ROUNDS]),
                    "rounds_played": played,
                    "avg_bet": float(b[TB_BET] / played) if played else 0.0,
                    "ev_per_unit_bet": ev,
                    "ci95": interval(ev, stderr),
                }
            )
        return out

    def diff(self, policy: int = 1) -> tuple[float, float, int]:
        """Mean paired difference (policy 0 - `policy`), its standard error and the paired rounds."""
        base = _diff_base(self.n_policies) + (policy - 1) * N_DIFF
        total, total_sq, n = self.totals[base : base + N_DIFF]
        return float(total / max(n, 1)), _stderr(total, total_sq, int(n)), int(n)


#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054


def interval(mean: float, stderr: float) -> list[float]:
    """The 95% confidence interval of a simulated mean."""
    return [mean - Z95 * stderr, mean + Z95 * stderr]


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
    for policy in policies:
        if policy.sits_out and table.seats < 2:
            what = "composition model" if policy.linear is not None else "counting strategy"
            raise ValueError(
                f"{what} {policy.name!r} sits rounds out (a 0 bet in its ramp or bets, or exit_below), "
                "which needs other seats at the table: use seats >= 2"
            )
    sizes = chunk_sizes(rounds, chunk_rounds)
    rules_array = rules.to_array()
    policies = tuple(policies)
    for words, size in zip(chunk_words(seed, len(sizes), len(policies)), sizes, strict=True):
        yield run_chunk, (rules_array, policies, words, table, size)


__all__ = [
    "CHUNK_ROUNDS",
    "OUTCOMES",
    "Policy",
    "SimulationResult",
    "Table",
    "chunk_sizes",
    "chunk_words",
    "interval",
    "iter_chunks",
    "run_chunk",
]
