"""The count-table learner: strategy-table cells, insurance and the round's value, per count bucket.

It learns the shoe game (a shoe dealt to the cut card at a table of ``seats``, the learner in one
seat or in every seat) from nothing: no basic strategy and no index table is given to it. What it
learns, per count bucket of a counting system (``count_policy``'s running or true count, taken as
the counting strategies take it):

* per (bucket, strategy-table cell) the difference in value of every pair of play actions, the
  count taken at the decision;
* per (bucket, holding a natural) the value of taking insurance (or even money) over not;
* the round's value per unit bet before the deal, the count taken before the round's first card.

Estimator: paired rollouts (Monte Carlo policy iteration with common random numbers). The seats
play greedily in the policy of the statistics so far; at each of the learner's decisions the
compiled engine copies the table and finishes the round once for every other legal answer, the
frozen policy playing on (:func:`_rollout`). The copy keeps the shoe's random stream, so every
answer meets the same unseen cards as the real play after the decision: the differences v_a - v_c
between two answers of one decision carry none of the noise the answers share (the dealer's
draws, the other hands), and every legal answer is measured at every decision with no exploration
and no importance weights. Epsilon-greedy Monte Carlo control (the learner before this one)
measured a non-greedy answer at about one decision in 40, unpaired: two minutes of this estimator
on one core exported a better Hi-Lo table than 30 minutes of that one on two. A rollout
costs part of a round, and an answer the policy finds far from the best (``NEAR``) is rolled out at one decision in
``FAR_EVERY``. Statistics are sums per entry (count, summed and squared differences): a chunk of
rounds plays with the policy frozen and returns its own sums, which are then added, so chunks
seeded by their index merge exactly in chunk order, a resumed run equals an uninterrupted one, and
a chunk could be played anywhere (another process, a Ray task) from the same inputs. Since a
value depends on the policy playing on after the decision, which starts from nothing, older
chunks weigh less as the run grows (``FORGET``).

The policy (:meth:`CountTableAgent.policy`): per pair and cell the paired differences' bucket
means are fitted by weighted least squares as a line in the count (:func:`fit_curves`; a prior
keeps a barely measured slope near 0). A deviation's gain moves smoothly with the count, so the
line pools every bucket's data into two parameters: a rare bucket plays from the line its
neighbours fit. The cell's questions are then answered in the counting format's order
(:func:`greedy_answers`: stand or hit, double, split, surrender), each against the answer the
others give, and the export reads its indices from the same lines (where they cross 0), so what
the learner plays by is what it exports, up to the export's significance test.

Count buckets, by a stated rule (:func:`bucket_spec`): a balanced system's bucket width is its
tags' per-card standard deviation over Hi-Lo's (Hi-Lo: one whole true count, floored as the
simulator's true-count table), an unbalanced system's the same times the unseen decks at half the
penetration (its running count moves that much for one true count's worth); the buckets span two
standard deviations of the count at the cut card either side of where it starts, the tails pooled.

The export (:meth:`CountTableAgent.to_strategy`) is a counting strategy: the system, the ramp that
maximises the learned EV (each bucket bets the allowed bet with the highest bet x learned value per
unit bet: the largest where it is positive, the smallest where negative; a bucket with fewer than
``MIN_BUCKET_ROUNDS`` rounds bets as the bucket below it, the lowest the smallest bet above 0),
and the learned deviations as index entries (see :func:`fit_question`). The simulator plays it
exactly as ``blackjack-evaluate`` does.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from blackjack_env import count_policy as CP
from blackjack_env import engine as E
from blackjack_env._jit import njit
from blackjack_env.counting import VALUE_WEIGHTS, CountingStrategy, CountingSystem, IndexEntry, parse_system
from blackjack_env.rules import Rules
from blackjack_env.solver import solve
from blackjack_env.strategy import (
    N_PLAY,
    N_ROWS,
    N_UP,
    PAIR_BASE,
    StrategyTable,
    row_label,
    table_cell,
    table_decision,
    up_label,
)
from blackjack_env.table import EVERY_SEAT, POLICY_TABLE, play_until

from .tabular import MAX_DECISIONS

STATS_FILE = "count_table.npz"
STRATEGY_FILE = "counting-strategy.json"
KIND = "count-table"
#: The degree of the polynomial in the count that each action's value difference is fitted with.
DEGREE = 1
#: The prior standard deviation of a fitted curve's slope (and higher coefficients) per bucket width.
PRIOR_SD = 0.05
#: Greedy rounds a bucket needs before its learned value sets its bet (else the smallest bet).
MIN_BUCKET_ROUNDS = 1000
#: Standard errors by which a learned deviation's fitted gain over basic strategy's answer must be
#: positive to be exported (see CountTableAgent.deviations: one test per question).
Z_EXPORT = 2.0
#: The least variance a paired difference is assumed to have (a few equal differences are not
#: taken as certain; insurance's, the smallest that matters, is about 0.4).
VAR_FLOOR = 0.25
#: Hi-Lo's tags' per-card standard deviation: the unit of the bucket widths.
_HILO_SD = math.sqrt(10.0 / 13.0)
# statistics per entry: summed weight, weighted return, weighted squared return
W, WR, WRR = 0, 1, 2
# chunk totals: rounds, summed learner-seat results, learner decisions, rolled-out answers
T_ROUNDS, T_SUM, T_DECISIONS, T_ROLLOUTS = 0, 1, 2, 3
#: The pairs (a, c), a < c, of play actions whose paired differences v_a - v_c are kept per cell.
PAIRS = tuple(itertools.combinations(range(N_PLAY), 2))
N_PAIRS = len(PAIRS)
PAIR_FIRST = np.array([a for a, _ in PAIRS], np.int64)
PAIR_SECOND = np.array([c for _, c in PAIRS], np.int64)
PAIR_ID = np.full((N_PLAY, N_PLAY), -1, np.int64)
for _i, (_a, _c) in enumerate(PAIRS):
    PAIR_ID[_a, _c] = _i
#: Before merging chunk 2^k (k >= 1) the statistics so far are scaled by this: the values of a
#: decision depend on the policy that plays on after it, which is poor in the first chunks (it
#: starts from nothing), so older chunks weigh less: a chunk's weight halves each time the run
#: doubles (the last half of a run weighs 1, the quarter before 1/2, ...: about 78% of the
#: plain average's effective rounds, while the first 16 chunks of a 512-chunk run weigh 1/32).
FORGET = 0.5
#: An answer whose fitted value in a bucket and cell is more than NEAR below the greedy answer's is
#: far: no count in reach makes it best (a strong deviation gains about 0.01-0.03 per true count).
NEAR = 0.15
#: A far answer is rolled out at one decision in FAR_EVERY (a near one at every decision).
FAR_EVERY = 8
#: What agent.json says the statistics are (a run of another estimator is refused on load).
ESTIMATOR = "paired-rollouts"


@dataclass(frozen=True)
class BucketSpec:
    """Count buckets: bucket i (0 < i < n - 1) holds counts in [lo + i w, lo + (i + 1) w); the
    first and last also hold everything below and above."""

    lo: float
    width: float
    n: int

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


def bucket_spec(system: CountingSystem, rules: Rules) -> BucketSpec:
    """The bucket rule of the module docstring, for this system, deck count and penetration."""
    cards = 52 * rules.decks
    seen = rules.penetration * cards
    sd = tag_sd(system)
    # the running count's spread after the cut card's worth of cards, drawn without replacement
    sd_running = sd * math.sqrt(seen * (cards - seen) / (cards - 1))
    if system.balanced:
        width = sd / _HILO_SD
        spread = sd_running * 52.0 / max(cards - seen, 1.0)  # the true count's, at the cut card
        half = max(2, math.ceil(2.0 * spread / width))
        return BucketSpec(-half * width, width, 2 * half)
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


@njit(cache=True, _nrt=False)
def _rollout(seat_of_value, action, real, scratch, mask, game, policy, at_table):
    """The acting seat's round result if it answered ``action`` now and the frozen greedy policy
    played on: the round finished on a copy of the table (``*0``: the real one, left untouched).
    The copy keeps the shoe's random stream, so every action of a decision, and the real play
    after it, meets the same unseen cards (common random numbers). ``real`` and ``scratch``: the
    tables (st, hands, shoe, res, prngs)."""
    rv, params, spec, stop, kinds, actions, insurance = game
    ranking, ins_take, _ = policy
    st0, hands0, shoe0, res0, prngs0 = real
    st, hands, shoe, res, prngs = scratch
    _copy(st, st0)
    _copy(shoe, shoe0)
    _copy(res, res0)
    for i in range(hands0.shape[0]):
        _copy(hands[i], hands0[i])
    _copy(prngs[0], prngs0[0])
    play_until(st, hands, shoe, rv, res, action, stop, kinds, actions, insurance, mask, prngs, None, at_table)
    while st[E.S_PHASE] != E.P_OVER:
        b = _bucket(spec, CP.true_count(params, st))
        a = table_decision(ranking[b], ins_take[b], st, hands)  # STAND settles a round to settle
        play_until(st, hands, shoe, rv, res, a, stop, kinds, actions, insurance, mask, prngs, None, at_table)
    return res[seat_of_value * E.RES_SIZE + E.RES_REWARD]


@njit(cache=True, _nrt=False, inline="always")
def _add(stats_row, x):
    stats_row[W] += 1.0
    stats_row[WR] += x
    stats_row[WRR] += x * x


@njit(cache=True, _nrt=False)
def _learn_chunk(rv, params, spec, ranking, ins_take, near, stats, ins_stats, pre_stats, totals, words, n_rounds,
                 seats, seat, kinds, actions, insurance, work, at_table):  # fmt: skip
    """Play ``n_rounds`` rounds of a fresh shoe, the learner in ``seat`` (-1: every seat) greedy in
    the frozen ``ranking``/``ins_take``; at each of its decisions every other legal answer is
    rolled out on a copy of the table (:func:`_rollout`). Adds to the (zeroed) stats, per (bucket,
    cell, pair of legal actions a < c) the paired difference v_a - v_c (the real play is the
    greedy answer's value); to ins_stats per (bucket, natural) taking insurance's minus not; to
    pre_stats per bucket before the deal the round's result; and to totals. An answer the policy
    finds far from its best in this bucket and cell (``near`` false) is rolled out only at one
    decision in FAR_EVERY (at random), which keeps its pairs an unbiased sample of the cell's."""
    st, hands, shoe, res, mask, prngs, prng, trace, values, depth, scratch = work
    real = (st, hands, shoe, res, prngs)
    st[:] = 0
    hands[:, :] = 0
    E.set_seats(st, seats)
    E.load_rules(st, rv)
    E.fresh_shoe(st, shoe, int(rv[E.R_DECKS]), words)
    for k in range(4):
        prng[k] = words[4 + k]
        prngs[0, k] = words[8 + k]
    for s in range(E.MAX_SEATS):
        st[E.seat_slot(s, E.SEAT_POLICY)] = 0  # the other seats: the table policy given
    stop = EVERY_SEAT if seat < 0 else seat
    game = (rv, params, spec, stop, kinds, actions, insurance)
    policy = (ranking, ins_take, near)
    for _ in range(n_rounds):
        due = E.shuffle_due(st)
        b0 = _bucket(spec, params[CP.PC_INITIAL] if due else CP.true_count(params, st))
        for s in range(seats):
            depth[s] = 0
        play_until(st, hands, shoe, rv, res, -1, stop, kinds, actions, insurance, mask, prngs, None, at_table)
        while st[E.S_PHASE] != E.P_OVER:
            if st[E.S_PHASE] == E.P_SETTLE:  # nothing to decide: STAND settles the round
                play_until(
                    st, hands, shoe, rv, res, E.STAND, stop, kinds, actions, insurance, mask, prngs, None, at_table
                )
                continue
            s = E.acting_seat(st, at_table)
            d = depth[s]
            b = _bucket(spec, CP.true_count(params, st))
            best = table_decision(ranking[b], ins_take[b], st, hands)
            trace[s, d, 0] = b
            trace[s, d, 3] = best
            measured = 0
            if st[E.S_PHASE] == E.P_INSURANCE:
                trace[s, d, 1] = -1
                trace[s, d, 2] = st[E.S_NATURAL]
                other = E.NO_INSURANCE if best == E.INSURANCE else E.INSURANCE
                values[s, d, 0] = _rollout(s, other, real, scratch, mask, game, policy, at_table)
                totals[T_ROLLOUTS] += 1
            else:
                E.legal_mask(st, hands, mask)
                row, col, _ = table_cell(st, hands)
                trace[s, d, 1] = row
                trace[s, d, 2] = col
                for a in range(N_PLAY):
                    if mask[a] and (near[b, row, col, best, a] or E.uniform_int(prng, 0, FAR_EVERY) == 0):
                        measured |= 1 << a
                measured |= 1 << best
                for a in range(N_PLAY):
                    if measured >> a & 1 and a != best:
                        values[s, d, a] = _rollout(s, a, real, scratch, mask, game, policy, at_table)
                        totals[T_ROLLOUTS] += 1
            trace[s, d, 4] = measured  # the answers valued at this decision
            depth[s] = d + 1
            totals[T_DECISIONS] += 1
            play_until(st, hands, shoe, rv, res, best, stop, kinds, actions, insurance, mask, prngs, None, at_table)
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


def chunk_words(seed: int, index: int) -> np.ndarray:
    """The seed words of a run's chunk ``index`` (its shoe and exploration streams): a chunk is
    fixed by (seed, index) alone, so chunks can be played in any order, anywhere."""
    return E.seed_words(np.random.SeedSequence([seed, index]), 3)


def _means(stats: np.ndarray) -> np.ndarray:
    """Weighted means of a statistics array (0 where there is no weight)."""
    w = stats[..., W]
    return np.divide(stats[..., WR], w, out=np.zeros_like(w), where=w > 0)


def _stderrs(stats: np.ndarray) -> np.ndarray:
    """Standard errors of the weighted means (the summed weight taken as the sample size; inf
    below two; the variance at least VAR_FLOOR, so a few equal returns are not taken as certain)."""
    w = stats[..., W]
    mean = _means(stats)
    second = np.divide(stats[..., WRR], w, out=np.zeros_like(w), where=w > 0)
    var = np.maximum(second - mean * mean, VAR_FLOOR)
    return np.where(w >= 2, np.sqrt(var / np.maximum(w - 1, 1)), np.inf)


@dataclass(frozen=True)
class CurveFit:
    """Weighted least-squares fits of per-bucket estimates on a polynomial of the bucket's count,
    one per trailing index: ``beta`` (..., p), ``cov`` (..., p, p), ``design`` (buckets, p)."""

    beta: np.ndarray
    cov: np.ndarray
    design: np.ndarray

    def values(self) -> np.ndarray:
        """The fitted curve at every bucket's count (buckets first)."""
        return np.einsum("bp,...p->b...", self.design, self.beta)

    def functional(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The fitted sum over buckets of ``weights`` x curve (weights: buckets first, broadcast
        against the fits), and its variance."""
        c = np.einsum("bp,b...->...p", self.design, weights)
        return np.einsum("...p,...p->...", c, self.beta), np.einsum("...p,...pq,...q->...", c, self.cov, c)


def bucket_counts(spec: BucketSpec) -> np.ndarray:
    """The count each bucket stands for in the fits: its middle, in bucket widths."""
    return (spec.lo + (np.arange(spec.n) + 0.5) * spec.width) / spec.width


def fit_curves(y: np.ndarray, var: np.ndarray, spec: BucketSpec, degree: int = DEGREE) -> CurveFit:
    """Fit ``y`` (buckets first; ``var`` its variances, inf where a bucket has no data) by weighted
    least squares on a polynomial of the bucket's count, independently for every trailing index.

    Why: a deviation's gain changes smoothly with the count (insurance's exactly linearly in the
    tens' share), so a curve pools every bucket's data into 2-3 parameters instead of one noisy mean
    per bucket. The two tail buckets are left out (the counts they hold are unknown; the curve is
    read there at their middle). Each coefficient but the intercept has a normal prior of mean 0
    and standard deviation PRIOR_SD (per bucket width to its power): with a few returns in a few
    buckets the curve stays near the cell's count-free mean instead of extrapolating noise (a
    line through three noisy points would double 20 v 3), while a slope the data show (about 0.01
    to 0.03 per true count for the strong deviations) is barely pulled. The parameters'
    covariance is scaled up by the reduced chi-square where that exceeds 1, so a curve the data
    refuse widens its own errors. Without any data: a flat 0 with an infinite variance."""
    x = bucket_counts(spec)
    design = np.stack([x**k for k in range(degree + 1)], axis=-1)
    p = degree + 1
    w = np.where(np.isfinite(var) & np.isfinite(y), 1.0 / np.maximum(var, 1e-300), 0.0)
    w[0] = w[-1] = 0.0
    yw = np.where(w > 0, y, 0.0) * w
    prior = np.diag([0.0] + [PRIOR_SD**-2] * degree)
    normal = np.einsum("bp,bq,b...->...pq", design, design, w) + prior
    points = (w > 0).sum(axis=0)
    ok = points >= 1
    cov = np.linalg.inv(np.where(ok[..., None, None], normal, np.eye(p)))
    beta = np.einsum("...pq,...q->...p", cov, np.einsum("bp,b...->...p", design, yw))
    residual = np.where(w > 0, y - np.einsum("bp,...p->b...", design, beta), 0.0)
    chi2 = (w * residual * residual).sum(axis=0) / np.maximum(points - p, 1)
    cov = cov * np.maximum(chi2, 1.0)[..., None, None]
    beta = np.where(ok[..., None], beta, 0.0)
    cov = np.where(ok[..., None, None], cov, np.inf)
    return CurveFit(beta, cov, design)


def _pair_column(a: int, c: int) -> tuple[int, float]:
    """The statistics column of actions (a, c) and the sign that makes it v_a - v_c."""
    return (PAIR_ID[a, c], 1.0) if a < c else (PAIR_ID[c, a], -1.0)


def pair_curves(stats: np.ndarray, spec: BucketSpec) -> CurveFit:
    """The fitted curve in the count of every pair's paired difference v_a - v_c (a < c), per cell
    (:func:`fit_curves` of the per-bucket means and their standard errors).

    The differences are measured on the same cards (the rollouts), so each curve's error is the
    difference's own, far below that of two independently sampled action values; and a pair is
    measured only where both actions were legal, so doubling is weighed against hitting on the
    first decisions alone while a cell's stand-or-hit question pools all its decisions, as the
    counting format asks them."""
    return fit_curves(_means(stats), _stderrs(stats) ** 2, spec)


def _difference(values: np.ndarray, a: int, other: np.ndarray) -> np.ndarray:
    """v_a - v_other per entry (``values``: [..., pairs]; ``other``: an action per entry)."""
    out = np.zeros(other.shape)
    for c in range(N_PLAY):
        if c != a:
            column, sign = _pair_column(a, c)
            out = np.where(other == c, sign * values[..., column], out)
    return out


def greedy_answers(values: np.ndarray) -> dict[str, np.ndarray]:
    """The casino's questions answered from fitted pair differences (``values``: [..., pairs]), as
    a counting strategy asks them: stand or hit; double over that; split over the answer so far;
    surrender over the answer so far. Each "yes" (bool) and each "no" alternative (an action).
    A tie stands (and answers no to the rest), so the policy of nothing learned stands on every
    hand: hitting is then first valued as one card and a stand, far closer to its worth than
    after hitting on to 21 or a bust, so the first chunks, played before the policy has improved
    a few times, bias the values less (a 2e6-round run exported 83 wrong entries when a tie hit)."""
    stand = _difference(values, E.STAND, np.full(values.shape[:-1], E.HIT)) >= 0
    base = np.where(stand, E.STAND, E.HIT)
    double = _difference(values, E.DOUBLE, base) > 0
    after_double = np.where(double, E.DOUBLE, base)
    split = _difference(values, E.SPLIT, after_double) > 0
    after_split = np.where(split, E.SPLIT, after_double)
    surrender = _difference(values, E.SURRENDER, after_split) > 0
    return {
        "S": stand, "D": double, "P": split, "R": surrender,
        "S_no": np.full(base.shape, E.HIT), "D_no": base, "P_no": after_double, "R_no": after_split,
    }  # fmt: skip


def ranking_of(answers: dict[str, np.ndarray]) -> np.ndarray:
    """The preference order of the five play actions per entry (first legal one is played): the
    actions answered "yes" in the casino's order, then stand or hit, then the rest."""
    score = np.empty((*answers["S"].shape, N_PLAY))
    score[..., E.SURRENDER] = np.where(answers["R"], 0, 10)
    score[..., E.SPLIT] = np.where(answers["P"], 1, 11)
    score[..., E.DOUBLE] = np.where(answers["D"], 2, 12)
    score[..., E.STAND] = np.where(answers["S"], 3, 4)
    score[..., E.HIT] = np.where(answers["S"], 4, 3)
    return np.argsort(score, axis=-1, kind="stable").astype(np.int64)


def parse_bets(text: str) -> tuple[float, ...]:
    """--bets "1,2,4,8": increasing, >= 0 (0 sits a round out), the largest > 0."""
    try:
        bets = tuple(float(b) for b in text.split(","))
    except ValueError:
        raise ValueError(f"--bets must be increasing numbers such as 1,2,4,8, got {text!r}") from None
    if any(not math.isfinite(b) or b < 0 for b in bets):
        raise ValueError(f"--bets must be >= 0 (0 sits a round out), got {text!r}")
    if any(b2 <= b1 for b1, b2 in itertools.pairwise(bets)):
        raise ValueError(f"--bets must increase, such as 1,2,4,8, got {text!r}")
    if bets[-1] <= 0:
        raise ValueError(f"--bets needs a bet above 0, got {text!r}")
    return bets


def spread_bets(text: str) -> tuple[float, ...]:
    """--spread "1-8" as bets: the minimum, then doubling up to the maximum (1-8: 1, 2, 4, 8)."""
    parts = text.split("-")
    try:
        low, high = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"--spread must be MIN-MAX such as 1-8, got {text!r}") from None
    if not 0 < low <= high or not math.isfinite(high):
        raise ValueError(f"--spread must be MIN-MAX with 0 < MIN <= MAX, got {text!r}")
    bets = [low]
    while bets[-1] * 2 < high:
        bets.append(bets[-1] * 2)
    if bets[-1] != high:
        bets.append(high)
    return tuple(bets)


@dataclass
class Deviation:
    """A learned index entry with the gain it was learned with (EV per 100 rounds over basic
    strategy's answer, and its standard error)."""

    entry: IndexEntry
    gain_per_100: float
    stderr_per_100: float


def fit_question(
    curve: CurveFit, mix: np.ndarray, freq: np.ndarray, basic_yes: bool, spec: BucketSpec
) -> tuple[int, str, float, float] | None:
    """The single-threshold answer to one question read off fitted curves of the gain of "yes"
    over "no": per bucket b the gain of one decision is sum_m mix[b, m] x curve_m(b) (``curve``:
    fits with one trailing axis m; a cell's question has m = 1, insurance one curve per holding a
    natural or not, mixed by how often each is asked), ``freq`` the question's decisions per round
    per bucket. Of "yes" at or above bucket k or below it (k = 1..n-1), the one whose fitted gain
    per round over basic strategy's fixed answer is largest, returned as (k, when, gain, stderr)
    when that gain is Z_EXPORT standard errors above 0; else None.

    Why Z_EXPORT can be 2: every threshold is read off the same curve of 2-3 parameters, so the
    choice of threshold is not a multiple comparison (the scan only finds where the curve crosses
    0); the test is one per question, and a wrongly exported entry costs about its own small
    error, while a real one dropped costs its whole gain."""
    n = spec.n
    k = np.arange(1, n)
    at = np.arange(n)[None, :] >= k[:, None]  # (thresholds, buckets): "yes" at or above bucket k
    yes = np.concatenate([at, ~at])
    differ = yes != basic_yes
    usable = differ.any(axis=1) & ~differ.all(axis=1)
    weights = np.where(differ, np.where(yes, 1.0, -1.0), 0.0) * freq[None, :]
    c = np.einsum("bp,tb,bm->tmp", curve.design, weights, mix)
    gains = np.einsum("tmp,mp->t", c, curve.beta)
    variances = np.einsum("tmp,mpq,tmq->t", c, curve.cov, c)
    gains = np.where(usable & np.isfinite(variances), gains, -np.inf)
    best = int(np.argmax(gains))
    gain, err = float(gains[best]), math.sqrt(max(float(variances[best]), 0.0))
    if not gain > Z_EXPORT * err:
        return None
    return int(k[best % (n - 1)]), ("at_or_above" if best < n - 1 else "below"), gain, err


# the questions of a cell in the casino's order: (question letter, action code)
_QUESTIONS = (("R", E.SURRENDER), ("P", E.SPLIT), ("D", E.DOUBLE), ("S", E.STAND))


def check_table(
    rules: Rules, bets: Sequence[float], seats: int, seat: int, epsilon: float | None, chunk_rounds: int
) -> None:
    """What a shoe-game learner refuses (one line each): no cut card, a bad table or seat, a bet of 0
    with nobody else at the table, epsilon (where one explores) outside (0, 1), an empty chunk."""
    if rules.infinite or rules.penetration <= 0:
        raise ValueError(
            "the shoe game needs a shoe dealt to a cut card; these rules shuffle every round "
            "(set penetration, e.g. --set penetration=0.75)"
        )
    E.check_seats(seats, "--seats")
    if not -1 <= seat < seats:
        raise ValueError(f"--seat must be 0..{seats - 1} or all, got {seat}")
    if bets[0] == 0 and (seats < 2 or seat < 0):
        raise ValueError(
            "a bet of 0 sits a round out, which needs other players at the table: "
            "use --seats >= 2 with one --seat (with --seat all nobody else plays)"
        )
    if epsilon is not None and not 0.0 < epsilon < 1.0:
        raise ValueError(f"--epsilon must be in (0, 1), got {epsilon}")
    if chunk_rounds < 1:
        raise ValueError(f"chunk_rounds must be >= 1, got {chunk_rounds}")


class CountTableAgent:
    """The count-table learner (module docstring) for ``rules`` (a shoe with a cut card).

    Args:
        rules: the game.
        system: the counting system (a built-in name or a CountingSystem).
        bets: the allowed bets, increasing (0 sits a round out: needs seats >= 2).
        seats, seat: the table, and the learner's seat (-1: every seat, one shared policy).
        seed: fixes every card of the run.
        chunk_rounds: rounds per seeded chunk (its policy is frozen; checkpoints fall between chunks).
    """

    kind = KIND

    def __init__(
        self,
        rules: Rules | str | Mapping[str, Any],
        system: CountingSystem,
        bets: Sequence[float] = (1.0,),
        seats: int = 1,
        seat: int = 0,
        seed: int = 0,
        chunk_rounds: int = 1 << 16,
    ) -> None:
        self.rules = Rules.coerce(rules)
        self.bets = tuple(float(b) for b in bets)
        check_table(self.rules, self.bets, seats, seat, None, chunk_rounds)
        self.system = system
        self.seats, self.seat = int(seats), int(seat)
        self.seed = int(seed)
        self.chunk_rounds = int(chunk_rounds)
        self.spec = bucket_spec(system, self.rules)
        n = self.spec.n
        self.stats = np.zeros((n, N_ROWS, N_UP, N_PAIRS, 3))
        self.ins_stats = np.zeros((n, 2, 3))
        self.pre_stats = np.zeros((n, 3))
        self.rounds = 0
        self.chunks = 0
        self.decisions = 0
        self.rollouts = 0
        self.params = CP.policy_params(CountingStrategy(system, name=system.name), self.rules)
        self._basic: StrategyTable | None = None

    # ----------------------------------------------------------------- learning
    def _work(self) -> tuple[Any, ...]:
        n = max(self.seats, 1)

        def table() -> tuple[np.ndarray, ...]:
            return (
                np.zeros(E.ST_SIZE, np.int64),
                E.new_hands(self.seats),
                E.new_shoe(self.rules.decks),
                E.new_res(self.seats),
                np.zeros((1, 4), np.int64),
            )

        st, hands, shoe, res, prngs = table()
        return (
            st,
            hands,
            shoe,
            res,
            np.zeros(E.N_ACTIONS, np.bool_),
            prngs,
            np.zeros(4, np.int64),
            np.zeros((n, MAX_DECISIONS, 5), np.int64),
            np.zeros((n, MAX_DECISIONS, N_PLAY), np.float64),
            np.zeros(n, np.int64),
            table(),
        )

    def policy(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The greedy policy of the statistics so far, per bucket: the play actions' preference order
        per cell (greedy_answers of the fitted pair curves), whether to take insurance, and which
        answers are near enough to the greedy one to roll out at every decision (NEAR)."""
        values = pair_curves(self.stats, self.spec).values()
        ranking = ranking_of(greedy_answers(values))
        take = pair_curves(self.ins_stats[..., None, :], self.spec).values()[..., 0] > 0
        near = np.ones((*ranking.shape, N_PLAY), np.bool_)  # [..., the greedy answer, another]
        measured = self.stats[..., W].sum(axis=0) > 0  # [rows, cols, pairs]
        for best in range(N_PLAY):
            for a in range(N_PLAY):
                if a != best:
                    column, sign = _pair_column(best, a)
                    far = (sign * values[..., column] > NEAR) & measured[None, ..., column]
                    near[..., best, a] = ~far
        return ranking, np.ascontiguousarray(take), near

    def chunk_inputs(self, index: int) -> tuple[np.ndarray, ...]:
        """What chunk ``index`` plays with: its seed words and the frozen greedy policy."""
        return (chunk_words(self.seed, index), *self.policy())

    def play_chunk(self, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        """One chunk's statistics (stats, ins_stats, pre_stats, totals) from its inputs."""
        words, ranking, take, near = inputs
        out = (np.zeros_like(self.stats), np.zeros_like(self.ins_stats), np.zeros_like(self.pre_stats), np.zeros(4))
        others = self.basic_table()
        _learn_chunk(
            self.rules.to_array(),
            self.params,
            self.spec.array(),
            ranking,
            take,
            near,
            *out,
            words,
            self.chunk_rounds,
            self.seats,
            self.seat,
            np.array([POLICY_TABLE], np.int64),
            others.actions[None].copy(),
            others.insurance[None].copy(),
            self._work(),
            E.table_kind(self.seats),
        )
        return out

    def merge(self, chunk: tuple[np.ndarray, ...]) -> tuple[int, float]:
        """Add a chunk's statistics (in chunk order); returns its (rounds, mean learner result)."""
        stats, ins_stats, pre_stats, totals = chunk
        if self.chunks >= 2 and self.chunks & (self.chunks - 1) == 0:
            for kept in (self.stats, self.ins_stats, self.pre_stats):
                kept *= FORGET
        self.stats += stats
        self.ins_stats += ins_stats
        self.pre_stats += pre_stats
        self.rounds += int(totals[T_ROUNDS])
        self.decisions += int(totals[T_DECISIONS])
        self.rollouts += int(totals[T_ROLLOUTS])
        self.chunks += 1
        seats = self.seats if self.seat < 0 else 1
        return int(totals[T_ROUNDS]), float(totals[T_SUM] / max(totals[T_ROUNDS] * seats, 1))

    def learn_chunk(self) -> tuple[int, float]:
        """Play and merge the next chunk."""
        return self.merge(self.play_chunk(self.chunk_inputs(self.chunks)))

    # ----------------------------------------------------------------- export
    def basic_table(self) -> StrategyTable:
        """The rules' basic strategy: the other seats' play, and the counting format's answer to
        a question without an entry (never the learner's own starting point)."""
        if self._basic is None:
            self._basic = solve(self.rules).table
        return self._basic

    def round_values(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per bucket: the learned value per unit bet of the greedy policy's round, its standard
        error, and the greedy rounds behind it."""
        return _means(self.pre_stats), _stderrs(self.pre_stats), self.pre_stats[:, W]

    def bucket_bets(self) -> list[float]:
        """The EV-maximising bet per bucket (module docstring)."""
        values, _, weight = self.round_values()
        out: list[float] = []
        for v, n in zip(values, weight, strict=True):
            if n < MIN_BUCKET_ROUNDS:  # too few rounds to tell: the bet of the bucket below it
                out.append(out[-1] if out else self.bets[0] if self.bets[0] > 0 else self.bets[1])
            else:
                out.append(max(self.bets, key=lambda b, v=v: (b * v, -b)))  # type: ignore[misc]  # v bound per loop
        return out

    def ramp(self) -> list[tuple[float, float]]:
        """The bets as a counting ramp: a pair at each bucket edge where the bet changes."""
        bets = self.bucket_bets()
        pairs = [(self.spec.lo, bets[0])]
        for i in range(1, self.spec.n):
            if bets[i] != pairs[-1][1]:
                pairs.append((self.spec.edge(i), bets[i]))
        return pairs

    def deviations(self) -> list[Deviation]:
        """The learned count-dependent answers that beat basic strategy's (fit_question), by cell.

        A question (surrender, split, double, stand: the casino's order) weighs its action against
        "no", the answer the learner gives the remaining questions in the same bucket (stand or
        hit; double or that; ...: greedy_answers), so per bucket its gain is one fitted pair curve
        of paired differences, with that curve's own error."""
        basic = self.basic_table()
        rounds = max(self.rounds * (self.seats if self.seat < 0 else 1), 1)
        curves = pair_curves(self.stats, self.spec)
        answers = greedy_answers(curves.values())
        weights = self.stats[..., W]
        found: list[Deviation] = []
        for row in range(N_ROWS):
            pair = row >= PAIR_BASE
            for col in range(N_UP):
                if weights[:, row, col].sum() == 0:
                    continue
                allowed = {E.STAND, E.HIT, E.DOUBLE} | ({E.SPLIT} if pair else set())
                allowed |= {E.SURRENDER} if self.rules.surrender == "late" else set()
                order = [int(a) for a in basic.actions[row, col]]
                for letter, action in _QUESTIONS:
                    if action not in allowed:
                        continue
                    basic_yes = next(a for a in order if a in allowed) == action
                    allowed.discard(action)
                    if pair and letter not in ("R", "P"):
                        continue  # a pair's cell answers only split and surrender
                    fit = self._question(curves, answers[letter + "_no"][:, row, col], row, col, action, basic_yes)
                    if fit is None:
                        continue
                    k, when, gain, err = fit
                    section, key = row_label(row)
                    hand = {"hard": "hard", "soft": "soft", "pairs": "pair"}[section] + " " + key
                    entry = IndexEntry.from_dict(
                        {
                            "hand": hand,
                            "up": up_label(col + 1),
                            "index": self.spec.edge(k),
                            "action": letter,
                            "when": when,
                        },
                        "learned",
                    )
                    found.append(Deviation(entry, 100 * gain / rounds, 100 * err / rounds))
        ins = self._insurance_deviation(rounds)
        return ([ins] if ins else []) + found

    def _question(
        self, curves: CurveFit, alternative: np.ndarray, row: int, col: int, action: int, basic_yes: bool
    ) -> tuple[int, str, float, float] | None:
        """fit_question for ``action`` in a cell against the per-bucket ``alternative``: the pair
        curves (action, m) for each alternative m, mixed by where m is the answer, weighed by how
        often the pair was measured (the question's decisions; fit_question's gain is then per
        run, the caller divides by the rounds)."""
        others = [m for m in range(N_PLAY) if m != action and np.any(alternative == m)]
        columns = [_pair_column(action, m) for m in others]
        if not others or all(self.stats[:, row, col, c, W].sum() == 0 for c, _ in columns):
            return None
        beta = np.stack([sign * curves.beta[row, col, c] for c, sign in columns])
        cov = np.stack([curves.cov[row, col, c] for c, _ in columns])
        mix = np.stack([(alternative == m).astype(float) for m in others], axis=-1)
        freq = np.asarray(sum(mix[:, i] * self.stats[:, row, col, c, W] for i, (c, _) in enumerate(columns)))
        return fit_question(CurveFit(beta, cov, curves.design), mix, freq, basic_yes, self.spec)

    def _insurance_deviation(self, rounds: int) -> Deviation | None:
        """Insurance (and even money) by one entry: the gain of taking it, pooled over holding a
        natural or not by how often each was asked."""
        curves = pair_curves(self.ins_stats[..., None, :], self.spec)  # per natural: take - not
        gain = CurveFit(curves.beta[:, 0], curves.cov[:, 0], curves.design)
        asked = self.ins_stats[..., W]  # [bucket, natural]
        share = np.divide(asked, asked.sum(axis=1, keepdims=True), out=np.zeros_like(asked), where=asked > 0)
        basic_yes = bool(self.basic_table().insurance[0])
        fit = fit_question(gain, share, asked.sum(axis=1), basic_yes, self.spec)
        if fit is None:
            return None
        k, when, gain_k, err = fit
        entry = IndexEntry.from_dict({"hand": "insurance", "index": self.spec.edge(k), "when": when}, "learned")
        return Deviation(entry, 100 * gain_k / rounds, 100 * err / rounds)

    def to_strategy(self, name: str = "learned") -> CountingStrategy:
        """The learned counting strategy (ramp and deviations)."""
        return CountingStrategy(
            self.system, ramp=tuple(self.ramp()), indices=tuple(d.entry for d in self.deviations()), name=name
        )

    def to_table(self) -> StrategyTable:
        """Not a table: refused in one line naming what plays this agent (``load_agent`` callers
        that expect a table agent meet this instead of an AttributeError)."""
        raise ValueError(
            "a count-table learner plays by the count, not from one strategy table: use "
            "agent.to_strategy() (a CountingStrategy; blackjack_env.simulate.Policy.from_counting plays it) "
            "or blackjack-evaluate --policy RUN_DIR (its counting-strategy.json)"
        )

    def strategy_dict(self, name: str = "learned") -> dict[str, Any]:
        """The counting JSON, each entry with its learned gain, and how it was learned ("about")."""
        deviations = self.deviations()
        strategy = CountingStrategy(
            self.system, ramp=tuple(self.ramp()), indices=tuple(d.entry for d in deviations), name=name
        )
        data = strategy.to_dict()
        for item, d in zip(data["indices"], deviations, strict=True):
            item["gain_per_100"] = round(d.gain_per_100, 6)
            item["source"] = "learned"
        data["about"] = (
            f"count-table learner: {self.rounds} rounds, {self.system.name} buckets of width "
            f"{self.spec.width:g} from {self.spec.lo:g}; ramp = the allowed bet maximising bet x learned "
            "round value per bucket; entries = where the fitted line of a question's paired difference "
            "(every legal answer rolled out on the same cards) crosses 0, "
            f"kept when their fitted gain over basic strategy's answer is {Z_EXPORT:g} standard errors "
            "above 0 (gain_per_100 as learned)"
        )
        return data

    # ----------------------------------------------------------------- files
    def save(self, path: str | Path) -> None:
        """agent.json, the counting strategy (STRATEGY_FILE) and the statistics (atomically)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        manifest = {
            "kind": KIND,
            "rules": self.rules.to_dict(),
            "system": CountingStrategy(self.system).to_dict()["system"],
            "bets": list(self.bets),
            "seats": self.seats,
            "seat": self.seat,
            "seed": self.seed,
            "chunk_rounds": self.chunk_rounds,
            "estimator": ESTIMATOR,
            "strategy": STRATEGY_FILE,
        }
        tmp = path / (STATS_FILE + ".tmp.npz")
        np.savez_compressed(
            tmp,
            stats=self.stats,
            ins_stats=self.ins_stats,
            pre_stats=self.pre_stats,
            counters=np.array([self.rounds, self.chunks, self.decisions, self.rollouts], np.int64),
        )
        tmp.replace(path / STATS_FILE)
        _write_json(path / STRATEGY_FILE, self.strategy_dict())
        _write_json(path / "agent.json", manifest)

    @classmethod
    def load(cls, path: str | Path) -> CountTableAgent:
        manifest = json.loads((Path(path) / "agent.json").read_text())
        if manifest.get("estimator") != ESTIMATOR:
            raise ValueError(
                f"{path} holds statistics of an earlier count-table learner (Monte Carlo with exploration); "
                f"this version learns from {ESTIMATOR} and cannot continue or export it: train it again"
            )
        agent = cls(
            Rules.from_dict(manifest["rules"]),
            parse_system(manifest["system"]),
            bets=manifest["bets"],
            seats=manifest["seats"],
            seat=manifest["seat"],
            seed=manifest["seed"],
            chunk_rounds=manifest["chunk_rounds"],
        )
        with np.load(Path(path) / STATS_FILE) as data:
            agent.stats[:] = data["stats"]
            agent.ins_stats[:] = data["ins_stats"]
            agent.pre_stats[:] = data["pre_stats"]
            agent.rounds, agent.chunks, agent.decisions, agent.rollouts = (int(x) for x in data["counters"])
        return agent


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)
