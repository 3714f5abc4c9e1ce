"""The count-table learner's compiled half (``blackjack_env.agents.count_table``): its count buckets, the
layout of its statistics, and the kernel that plays a chunk of rounds of the shoe game and rolls out every
other legal answer at each of the learner's decisions on a copy of the table (paired rollouts)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from blackjack_env import count_policy as CP
from blackjack_env import engine as E
from blackjack_env import slots
from blackjack_env._jit import njit
from blackjack_env.counting import VALUE_WEIGHTS, CountingSystem
from blackjack_env.rules import Rules
from blackjack_env.strategy import N_PLAY, N_ROWS, PAIR_BASE, table_cell, table_decision, table_play
from blackjack_env.table import EVERY_SEAT, play_until, seed_generator, start_chunk

from .chunk_agent import T_DECISIONS, T_ROUNDS, T_SUM

#: Hi-Lo's tags' per-card standard deviation: the unit of the bucket widths.
_HILO_SD = math.sqrt(10.0 / 13.0)
#: A balanced count's buckets are half a unit wide in shoes of at most this many decks: there a true
#: count strays far enough that half a count holds as many decisions as a whole one does at 6 decks.
FINE_DECKS = 2
# statistics per entry: summed weight, weighted return, weighted squared return
W, WR, WRR = 0, 1, 2
# chunk totals: the chunk learners' (rounds, summed learner-seat results, learner decisions), then
# the rolled-out answers
T_ROLLOUTS = T_DECISIONS + 1
#: The pairs (a, c), a < c, of play actions whose paired differences v_a - v_c are kept per cell.
PAIRS = tuple(itertools.combinations(range(N_PLAY), 2))
N_PAIRS = len(PAIRS)
PAIR_FIRST = np.array([a for a, _ in PAIRS], np.int64)
PAIR_SECOND = np.array([c for _, c in PAIRS], np.int64)
PAIR_ID = np.full((N_PLAY, N_PLAY), -1, np.int64)
for _i, (_a, _c) in enumerate(PAIRS):
    PAIR_ID[_a, _c] = _i
#: A far answer is rolled out at one decision in FAR_EVERY (a near one at every decision).
FAR_EVERY = 8
#: The learner's cells: the strategy table's rows (a hand's first decision, or any decision where the
#: later ones are not kept apart), then, where they are, a hard or soft total's row again for its hands
#: of three or more cards (row N_ROWS + r for table row r < PAIR_BASE: a pair has two cards).
N_CELL_ROWS = N_ROWS + PAIR_BASE


@dataclass(frozen=True)
class BucketSpec:
    """Count buckets: bucket i (0 < i < n - 1) holds counts in [lo + i w, lo + (i + 1) w); the
    first and last also hold everything below and above."""

    lo: float
    width: float
    n: int
    #: Buckets per unit of the count (one Hi-Lo true count's worth, ``width x per_unit``): 2 where the
    #: shoe's count is kept in half units (``FINE_DECKS``); the fits state their prior per unit.
    per_unit: int = 1

    def edge(self, i: int) -> float:
        """The lower edge of bucket i (i >= 1), computed as the kernel computes it."""
        return self.lo + i * self.width

    def array(self) -> np.ndarray:
        return np.array([self.lo, self.width, float(self.n)])


def tag_sd(system: CountingSystem) -> float:
    """The standard deviation of the system's tag over one card of a full deck."""
    tags = np.asarray(system.tags)
    w = VALUE_WEIGHTS / VALUE_WEIGHTS.sum()
    mean = float(w @ tags)
    return math.sqrt(max(float(w @ (tags * tags)) - mean * mean, 0.0))


def bucket_spec(system: CountingSystem, rules: Rules, fine: bool | None = None) -> BucketSpec:
    """The bucket rule of the count-table learner's docstring, for this system, deck count and
    penetration; a balanced count in a shoe of at most ``FINE_DECKS`` decks is kept in half units
    (``fine``: None, by that rule; True or False, half or whole units whatever the shoe, as a run saved
    before the rule kept whole ones)."""
    cards = 52 * rules.decks
    seen = rules.penetration * cards
    sd = tag_sd(system)
    # the running count's spread after the cut card's worth of cards, drawn without replacement
    sd_running = sd * math.sqrt(seen * (cards - seen) / (cards - 1))
    if system.balanced:
        per_unit = (rules.decks <= FINE_DECKS) if fine is None else fine
        unit = sd / _HILO_SD
        width = unit / (2 if per_unit else 1)
        spread = sd_running * 52.0 / max(cards - seen, 1.0)  # the true count's, at the cut card
        half = max(2, math.ceil(2.0 * spread / width))
        return BucketSpec(-half * width, width, 2 * half, 2 if per_unit else 1)
    width = sd / _HILO_SD * rules.decks * (1.0 - rules.penetration / 2.0)
    start = system.initial_running_count(rules.decks)
    drift = seen * system.deck_sum() / 52.0  # where the running count ends on average
    low = min(start, start + drift) - 2.0 * sd_running
    high = max(start, start + drift) + 2.0 * sd_running
    below = math.ceil((start - low) / width)
    n = max(4, below + math.ceil((high - start) / width))
    return BucketSpec(start - below * width, width, n)


@njit(cache=True, _nrt=False, inline="always")
def _bucket(spec, count):
    """The count's bucket, consistent with a ramp comparing the count to ``lo + i * width``."""
    lo = spec[0]
    width = spec[1]
    n = int(spec[2])
    b = math.floor((count - lo) / width)
    if b >= 1 and b < n and count < lo + b * width:
        b -= 1
    elif b + 1 < n and b >= 0 and count >= lo + (b + 1) * width:
        b += 1
    return min(max(b, 0), n - 1)


@njit(cache=True, _nrt=False, inline="always")
def _copy(dst, src):
    """dst[:] = src without numba's runtime (a slice assignment may need a temporary)."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=True, _nrt=False, inline="always")
def _cell(st, hands, later_apart):
    """(learner's row, column, split legal) of the current decision: the table's cell, a hand of three
    or more cards in its own row where ``later_apart`` (``N_CELL_ROWS``)."""
    row, col, split_legal = table_cell(st, hands)
    if later_apart and row < PAIR_BASE and hands[slots.current_row(st), E.H_N] > 2:
        row += N_ROWS
    return row, col, split_legal


@njit(cache=True, _nrt=False, forceinline=True)
def _decision(ranking, insurance, st, hands):
    """The greedy policy's action in one bucket (``ranking``: the learner's rows, ``_cell``)."""
    if slots.phase(st) != E.P_PLAY:  # insurance, or a round to settle: no cell is read
        return table_decision(ranking, insurance, st, hands)
    row, col, split_legal = _cell(st, hands, ranking.shape[0] > N_ROWS)
    return table_play(ranking, st, hands, row, col, split_legal)


@njit(cache=True, _nrt=False)
def _rollout(seat_of_value, action, real, scratch, learner, chunk):
    """The acting seat's round result if it answered ``action`` now and the frozen greedy policy
    played on: the round finished on a copy of the table (``scratch``; ``real``, the real one, left
    untouched). The copy keeps the shoe's random stream, so every action of a decision, and the
    real play after it, meets the same unseen cards (common random numbers). ``real`` and
    ``scratch``: (Table, Policies) each, the policies' own generators copied."""
    params, spec, ranking, ins_take, _ = learner
    table0, policies0 = real
    table, policies = scratch
    st, hands = table.st, table.hands
    _copy(st, table0.st)
    _copy(table.shoe, table0.shoe)
    _copy(table.res, table0.res)
    for i in range(hands.shape[0]):
        _copy(hands[i], table0.hands[i])
    _copy(policies.prngs[0], policies0.prngs[0])
    stop = EVERY_SEAT if chunk.seat < 0 else chunk.seat
    play_until(table, policies, action, stop, chunk.at_table)
    while slots.phase(st) != E.P_OVER:
        b = _bucket(spec, CP.true_count(params, st))
        a = _decision(ranking[b], ins_take[b], st, hands)  # STAND settles a round to settle
        play_until(table, policies, a, stop, chunk.at_table)
    return table.res[seat_of_value * E.RES_SIZE + E.RES_REWARD]


@njit(cache=True, _nrt=False, inline="always")
def _add(stats_row, x):
    stats_row[W] += 1.0
    stats_row[WR] += x
    stats_row[WRR] += x * x


@njit(cache=True, _nrt=False)
def learn_chunk_kernel(table, policies, chunk, learner, out, work):
    """Play ``chunk.rounds`` rounds of a fresh shoe, the learner in ``chunk.seat`` (-1: every seat)
    greedy in the frozen ``learner`` (params, spec, ranking, ins_take, near); at each of its
    decisions every other legal answer is rolled out on a copy of the table (:func:`_rollout`,
    ``work``'s scratch table). ``out``: (stats, ins_stats, pre_stats, totals). Adds to the (zeroed)
    stats, per (bucket, cell (``_cell``: a hand of three or more cards in its own row where stats has
    ``N_CELL_ROWS`` rows), pair of legal actions a < c) the paired difference v_a - v_c (the
    real play is the greedy answer's value); to ins_stats per (bucket, natural) taking insurance's
    minus not; to pre_stats per bucket before the deal the round's result; and to totals. An answer
    the policy finds far from its best in this bucket and cell (``near`` false) is rolled out only
    at one decision in FAR_EVERY (at random), which keeps its pairs an unbiased sample of the
    cell's. ``policies``: the other seats' table policy (its generator seeded here)."""
    params, spec, ranking, ins_take, near = learner
    stats, ins_stats, pre_stats, totals = out
    prng, trace, values, depth, scratch = work
    st, hands, res, mask = table.st, table.hands, table.res, table.mask
    seats, seat, at_table = chunk.seats, chunk.seat, chunk.at_table
    real = (table, policies)
    start_chunk(table, seats, chunk.words, 0)  # the other seats: the table policy given
    seed_generator(prng, chunk.words, 1)
    seed_generator(policies.prngs[0], chunk.words, 2)
    stop = EVERY_SEAT if seat < 0 else seat
    later_apart = stats.shape[1] > N_ROWS
    for _ in range(chunk.rounds):
        due = E.shuffle_due(st)
        b0 = _bucket(spec, params[CP.PC_INITIAL] if due else CP.true_count(params, st))
        for s in range(seats):
            depth[s] = 0
        play_until(table, policies, -1, stop, at_table)
        while slots.phase(st) != E.P_OVER:
            if slots.phase(st) == E.P_SETTLE:  # nothing to decide: STAND settles the round
                play_until(table, policies, E.STAND, stop, at_table)
                continue
            s = E.acting_seat(st, at_table)
            d = depth[s]
            b = _bucket(spec, CP.true_count(params, st))
            best = _decision(ranking[b], ins_take[b], st, hands)
            trace[s, d, 0] = b
            trace[s, d, 3] = best
            measured = 0
            if slots.phase(st) == E.P_INSURANCE:
                trace[s, d, 1] = -1
                trace[s, d, 2] = slots.natural(st)
                other = E.NO_INSURANCE if best == E.INSURANCE else E.INSURANCE
                values[s, d, 0] = _rollout(s, other, real, scratch, learner, chunk)
                totals[T_ROLLOUTS] += 1
            else:
                E.legal_mask(st, hands, mask)
                row, col, _ = _cell(st, hands, later_apart)
                trace[s, d, 1] = row
                trace[s, d, 2] = col
                for a in range(N_PLAY):
                    if mask[a] and (near[b, row, col, best, a] or E.uniform_int(prng, 0, FAR_EVERY) == 0):
                        measured |= 1 << a
                measured |= 1 << best
                for a in range(N_PLAY):
                    if measured >> a & 1 and a != best:
                        values[s, d, a] = _rollout(s, a, real, scratch, learner, chunk)
                        totals[T_ROLLOUTS] += 1
            trace[s, d, 4] = measured  # the answers valued at this decision
            depth[s] = d + 1
            totals[T_DECISIONS] += 1
            play_until(table, policies, best, stop, at_table)
        for s in range(seats):
            if seat >= 0 and s != seat:
                continue
            reward = res[s * E.RES_SIZE + E.RES_REWARD]
            totals[T_SUM] += reward
            _add(pre_stats[b0], reward)
            for d in range(depth[s]):
                b, row, col, best, measured = (
                    trace[s, d, 0],
                    trace[s, d, 1],
                    trace[s, d, 2],
                    trace[s, d, 3],
                    trace[s, d, 4],
                )
                if row < 0:  # insurance: taking it minus not
                    _add(
                        ins_stats[b, col], reward - values[s, d, 0] if best == E.INSURANCE else values[s, d, 0] - reward
                    )
                    continue
                values[s, d, best] = reward
                for i in range(N_PAIRS):
                    a, c = PAIR_FIRST[i], PAIR_SECOND[i]
                    if measured >> a & 1 and measured >> c & 1:
                        _add(stats[b, row, col, i], values[s, d, a] - values[s, d, c])
        totals[T_ROUNDS] += 1
