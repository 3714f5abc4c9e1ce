"""The ceiling: what a player who knew the shoe's exact composition before every round would win.

    from blackjack_env.solver import ceiling
    result = ceiling(Rules(split_to=4, penetration=0.75), samples=600, seed=0, bets=(1, 8))
    result.gain, result.gain_ci95          # flat-bet gain per round over basic strategy
    result.estimate(result.basic)          # any per-shoe column's stratified mean and 95% CI
    result.to_json()                       # the contract of ``blackjack-strategy --ceiling --json``

Method. The compiled simulator plays shoes to the cut card at the table (every seat basic
strategy) and records the unseen composition at the start of one round in every ``stride``
rounds (``stride`` is longer than any shoe, so no two recorded rounds share a shoe; every round of
every shoe is equally likely to be recorded, so the recorded rounds' mean is the game's per-round
mean). The analysed shoes are drawn from these recorded rounds, stratified (two-phase sampling):

* phase 1, a pool of ``POOL_PER_SAMPLE`` recorded rounds per sample, each priced by a cheap
  predictor of its gain (``gain_proxy``: the linear effects-of-removal prediction of every chart
  decision's margin, the decisions it flips and insurance's positive part, weighted by how often
  each arises); the pool is cut into ``strata`` strata at quantiles of the predictor (halving
  shares: 1/2, 1/4, ... of the rounds, the last the top 1/2^(k-1)), each stratum's weight its share
  of the pool;
* phase 2, the first ``n_h`` pool rounds of each stratum are analysed exactly, ``n_h`` by Neyman
  allocation with the predictor's root-mean-square in the stratum standing in for the gain's SD
  (the gain is ~0 for most shoes and lives in the few with extreme counts). The allocation does
  not look at any exact value, so every stratified mean (``sum_h W_h mean_h``) is unbiased; its
  variance is ``sum_h W_h^2 s_h^2 / n_h`` plus the pool's own ``sum_h W_h (mean_h - mean)^2 / M``.

With fewer than ``MIN_PER_STRATUM * 2`` samples per stratum the run is plain sampling: the first
``samples`` recorded rounds, one stratum. Shoes are analysed interleaved over the strata (every
stratum's first two first), so an interrupted run's finished shoes are still a stratified sample;
a stratum left with fewer than two finished shoes is merged into its neighbour. For each analysed
shoe the solver computes exactly, on one model (one dealer-outcome memo) of that composition:
* ``basic``: the EV of the full shoe's basic strategy played on that shoe;
* ``best``: the EV of the best total-dependent strategy for that shoe (the solver re-optimises
  every cell and the insurance choice, starting from basic strategy); the perfect player plays
  the better of the two, so the gain ``best - basic`` is never negative;
* ``insurance``: the insurance bet's EV per unit insured given an ace shows, 3 T / (n - 1) - 1
  (the hole card is exchangeable with every unseen card, so the player's own cards average out);
* in a game without splits, E[X^2] of a round under the table the perfect player plays (exact,
  ``moments``: the perfect bettor's SD; a split round's has no value in the solver's split model);
* on every ``in_round_every``-th sample, the composition-dependent EV (each hand its own best
  action given its own cards, no insurance) beside the best table without insurance: what the
  round's own cards add (``in_round_gain``). Other seats' cards seen during the round are not used.

The ceiling includes the composition at the round's start and the best total-dependent strategy
for it, not the cards dealt during the round. The sampled shoes follow basic strategy's play at
the seat (a perfect player's different play would consume slightly different cards).
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import engine as E
from .._jit import njit
from ..counting import CountingStrategy
from ..parallel import Workers
from ..rules import Rules
from ..simulate import Z95, interval
from ..strategy import StrategyTable
from ..table import POLICY_TABLE, play_until
from ._analysis import Model, analyse, composition_ev

#: The solver's custom-shoe limit (see ``_analysis._checked_shoe``).
MIN_TENS = 8
#: Percentiles of the round-start EV reported in ``round_ev``.
PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
#: Histogram edges of the round-start EV (per round, units of the initial bet): 0.5% bins.
HIST_EDGES = np.round(np.arange(-0.06, 0.0601, 0.005), 6)
# columns of one shoe's values
V_BASIC, V_BEST, V_INSURANCE, V_COMPOSITION, V_BEST_NO_INS, V_CELLS, V_SECOND = range(7)
N_VALUES = 7
#: Rounds the sampling run plays at least: basic strategy's simulated EV beside the exact mean
#: (a 95% CI of about +-0.23 per 100 rounds).
SIM_ROUNDS = 1_000_000
#: Recorded rounds (phase 1) per analysed shoe of a stratified run; at most ``MAX_POOL`` in all.
POOL_PER_SAMPLE = 100
MAX_POOL = 400_000
#: Strata of a stratified run, at most (fewer where samples are few: see ``n_strata``).
STRATA = 8
#: Samples each stratum gets at least (two: its variance needs them).
MIN_PER_STRATUM = 2
#: The longest a running ceiling goes without writing its finished shoes to the cache.
SAVE_SECONDS = 30.0


# ============================================================================= sampling
@njit(cache=True, nogil=True, _nrt=False)
def record_chunk(
    rv, kinds, actions, insurance, words, n_rounds, stride, seats, seat, work, comps, rewards, sums, at_table
):
    """Play ``n_rounds`` from a fresh shoe, every seat by policy 0 (a strategy table), and record
    the unseen composition per value (A, 2..10) before rounds stride - 1, 2 stride - 1, ... (a
    shoe due for shuffling is full; the first sample is a shoe or more past the fresh start), with
    the seat's result of that round, until ``comps`` is full; sums: [result, result squared,
    rounds, shoes begun] over every round played."""
    st, hands, shoe, res, mask, rngs = work
    decks = int(rv[E.R_DECKS])
    st[:] = 0
    hands[:, :] = 0
    E.set_seats(st, seats)
    E.load_rules(st, rv)
    E.fresh_shoe(st, shoe, decks, words)  # where every seeded shoe starts (the simulator's too)
    for s in range(E.MAX_SEATS):
        st[E.seat_slot(s, E.SEAT_POLICY)] = 0
    for k in range(4):
        rngs[0, k] = words[4 + k]
    reward_slot = seat * E.RES_SIZE + E.RES_REWARD
    sample = 0
    for r in range(n_rounds):
        record = (r + 1) % stride == 0 and sample < comps.shape[0]
        if record:
            due = E.shuffle_due(st)
            for v in range(10):
                comps[sample, v] = 0.0
            for code in range(1, 14):
                value = min(code, 10) - 1
                comps[sample, value] += 4 * decks if due else st[E.S_COUNTS + code]
        play_until(st, hands, shoe, rv, res, -1, -1, kinds, actions, insurance, mask, rngs, None, at_table)
        reward = res[reward_slot]
        sums[0] += reward
        sums[1] += reward * reward
        sums[2] += 1
        if record:
            rewards[sample] = reward
            sample += 1
    sums[3] += st[E.S_SHUFFLES]


def sample_stride(rules: Rules, seats: int) -> int:
    """Rounds between samples: more than any shoe lasts (a round takes at least 2 cards per seat
    and 2 for the dealer), so every sample comes from its own shoe."""
    cut = int(rules.penetration * 52 * rules.decks)
    return max(101, cut // (2 * seats + 2) + 2)


@dataclass
class Recording:
    """Sampled round-start compositions and the simulated results of the game that dealt them."""

    shoes: np.ndarray  # float[N, 10] unseen cards per value (A, 2..10)
    rewards: np.ndarray  # float[N] the seat's result in each sampled round (basic strategy)
    sums: np.ndarray  # [result, result^2, rounds, shoes begun] over every round played
    stride: int

    @property
    def sim_ev(self) -> float:
        return float(self.sums[0] / self.sums[2])

    @property
    def sim_stderr(self) -> float:
        n = self.sums[2]
        mean = self.sums[0] / n
        return math.sqrt(max(self.sums[1] / n - mean * mean, 0.0) / (n - 1))

    @property
    def second_moment(self) -> float:
        """E[result^2] of a flat-bet round (basic strategy), for the perfect bettor's SD."""
        return float(self.sums[1] / self.sums[2])


def record_shoes(
    rules: Rules,
    basic: StrategyTable,
    samples: int,
    seed: int,
    seats: int = 1,
    seat: int = 0,
    min_rounds: int | None = None,
) -> Recording:
    """Play the game (every seat ``basic``) and sample ``samples`` round-start shoes (see module);
    the game is played on to ``min_rounds`` rounds at least for its simulated EV (about a second)."""
    stride = sample_stride(rules, seats)
    words = E.seed_words(np.random.SeedSequence(seed), 2)
    work = (
        np.zeros(E.ST_SIZE, np.int64),
        E.new_hands(seats),
        E.new_shoe(rules.decks),
        E.new_res(seats),
        np.zeros(E.N_ACTIONS, np.bool_),
        np.zeros((1, 4), np.int64),
    )
    comps = np.zeros((samples, 10))
    rewards = np.zeros(samples)
    sums = np.zeros(4)
    kinds = np.array([POLICY_TABLE], np.int64)
    actions = np.ascontiguousarray(basic.actions[None])
    insurance = np.ascontiguousarray(basic.insurance[None])
    n_rounds = max(samples * stride, SIM_ROUNDS if min_rounds is None else min_rounds)
    record_chunk(
        rules.to_array(), kinds, actions, insurance, words, n_rounds, stride, seats, seat, work, comps, rewards, sums,
        E.table_kind(seats),
    )  # fmt: skip
    return Recording(comps, rewards, sums, stride)


# ============================================================================= stratification
def gain_proxy(rules: Rules, shoes: np.ndarray) -> np.ndarray:
    """A cheap predictor of each shoe's gain (per round; only its ranking and scale matter): every
    chart decision's margin off the top moved by its effects of removal for the shoe's removed
    cards (``effects_of_removal``: linear in the composition), the margins that turn negative (the
    decision flips) weighted by how often the decision arises, plus insurance's positive part
    against an ace. About a microsecond a shoe; computed for every pool round."""
    from ..counting import VALUES
    from .removal import effects_of_removal

    removal = effects_of_removal(rules)
    full = np.array([4.0 * rules.decks] * 9 + [16.0 * rules.decks])
    removed = full[None, :] - shoes
    if removal.decisions:
        eor = np.array([[d.eor[v] for v in VALUES] for d in removal.decisions])  # [cells, A..10]
        margin = np.array([d.margin for d in removal.decisions])
        frequency = np.array([d.frequency for d in removal.decisions])
        moved = margin[None, :] + removed @ eor.T  # percent of the initial bet
        out = np.maximum(-moved, 0.0) @ frequency / 100.0
    else:
        out = np.zeros(len(shoes))
    n = shoes.sum(axis=1)
    if rules.insurance:
        insurance = 3.0 * shoes[:, 9] / np.maximum(n - 1.0, 1.0) - 1.0
        out += shoes[:, 0] / n * 0.5 * np.maximum(insurance, 0.0)
    return out


def n_strata(samples: int, strata: int = STRATA) -> int:
    """Strata for a run of ``samples`` shoes: ``strata``, fewer so each gets 4 samples on average,
    one (plain sampling) for a handful of samples."""
    return max(1, min(int(strata), samples // (2 * MIN_PER_STRATUM)))


@dataclass
class Design:
    """Which pool rounds are analysed, in what order, and what each stratum weighs.

    pool: the phase-1 rounds (M); chosen: pool index of each analysed shoe, in analysis order;
    labels: its stratum; weights: each stratum's share of the pool (W_h, summing to 1)."""

    pool: int
    chosen: np.ndarray
    labels: np.ndarray
    weights: np.ndarray
    edges: np.ndarray  # the predictor's quantile edges between strata

    @staticmethod
    def plain(samples: int) -> Design:
        """One stratum: the first ``samples`` recorded rounds, as recorded."""
        return Design(samples, np.arange(samples), np.zeros(samples, np.int64), np.ones(1), np.zeros(0))

    @staticmethod
    def stratified(proxy: np.ndarray, samples: int, k: int) -> Design:
        """Strata at the predictor's quantiles 1/2, 3/4, 7/8, ... (the top stratum 1/2^(k-1) of the
        rounds), Neyman allocation with the predictor's root-mean-square per stratum standing in for
        the gain's SD (at least MIN_PER_STRATUM each, at most the stratum's pool rounds), the first
        pool rounds of each stratum, interleaved (``_interleave``)."""
        m = len(proxy)
        levels = 1.0 - 0.5 ** np.arange(1, k)
        edges = np.unique(np.quantile(proxy, levels))
        labels = np.searchsorted(edges, proxy, side="right")
        counts = np.bincount(labels, minlength=len(edges) + 1)
        keep = np.flatnonzero(counts > 0)  # ties can leave a stratum empty: renumbered away
        labels = np.searchsorted(keep, labels)
        counts = counts[keep]
        weights = counts / m
        rms = np.sqrt(np.bincount(labels, weights=proxy * proxy) / counts)
        guide = weights * np.maximum(rms, 1e-3 * max(float(rms.max()), 1e-300))
        n = _allocate(guide, counts, samples)
        chosen, chosen_labels = [], []
        for h in range(len(counts)):
            rows = np.flatnonzero(labels == h)[: n[h]]
            chosen.append(rows)
            chosen_labels.append(np.full(len(rows), h, np.int64))
        order = _interleave(n)
        return Design(
            m, np.concatenate(chosen)[order], np.concatenate(chosen_labels)[order], weights, edges[keep[1:] - 1]
        )


def _allocate(guide: np.ndarray, available: np.ndarray, samples: int) -> np.ndarray:
    """Samples per stratum proportional to ``guide`` (largest remainders), each at least
    MIN_PER_STRATUM and at most ``available``; what a full stratum cannot take goes to the others."""
    n = np.minimum(MIN_PER_STRATUM, available).astype(np.int64)
    samples = min(samples, int(available.sum()))
    while n.sum() < samples:
        open_ = n < available
        share = np.where(open_, guide, 0.0)
        if share.sum() <= 0:
            share = open_.astype(float)
        target = n + (samples - n.sum()) * share / share.sum()
        step = np.minimum(np.floor(target).astype(np.int64), available)
        if step.sum() <= n.sum():  # only remainders left: one each to the largest
            room = np.flatnonzero(open_)
            best = room[np.argsort(-(target - np.floor(target))[room], kind="stable")]
            for h in best[: samples - n.sum()]:
                n[h] += 1
        else:
            n = np.maximum(n, step)
    return n


def _interleave(n: np.ndarray) -> np.ndarray:
    """Analysis order of the samples (concatenated by stratum): every stratum's first two, then all
    the rest by their place in their stratum's share ((j + 1/2) / n_h), so any prefix of the run
    (a Ctrl-C) is near the allocation."""
    keys = []
    for h, count in enumerate(n):
        j = np.arange(count)
        keys.append(np.where(j < MIN_PER_STRATUM, -1.0 + j / 10.0 + h / 1e4, (j + 0.5) / max(count, 1)))
    return np.argsort(np.concatenate(keys) if keys else np.zeros(0), kind="stable")


def stratified_mean(
    x: np.ndarray, labels: np.ndarray, weights: np.ndarray, pool: int
) -> tuple[float, float, np.ndarray]:
    """Mean, standard error and per-sample weights (summing to 1) of a two-phase stratified sample:
    sum_h W_h mean_h, variance sum_h W_h^2 s_h^2 / n_h + sum_h W_h (mean_h - mean)^2 / pool. A
    stratum with fewer than two samples (an interrupted run) is merged into its neighbour (the
    lower one where there is one), its weight with it. One stratum: the plain mean and its error."""
    x = np.asarray(x, float)
    n = len(x)
    if n == 0:
        return math.nan, math.inf, np.zeros(0)
    groups = [[h] for h in range(len(weights))]
    counts = [int((labels == h).sum()) for h in range(len(weights))]
    while len(groups) > 1 and min(counts) < MIN_PER_STRATUM:
        i = int(np.argmin(counts))
        j = i - 1 if i > 0 else i + 1
        groups[j] = groups[j] + groups[i]
        counts[j] += counts[i]
        del groups[i], counts[i]
    mean = 0.0
    within = 0.0
    means, shares = [], []
    sample_weights = np.zeros(n)
    for group in groups:
        rows = np.isin(labels, group)
        w = float(weights[group].sum())
        m_h = float(x[rows].mean())
        means.append(m_h)
        shares.append(w)
        mean += w * m_h
        sample_weights[rows] = w / rows.sum()
        if rows.sum() > 1:
            within += w * w * float(x[rows].var(ddof=1)) / rows.sum()
        else:
            within = math.inf
    between = sum(w * (m_h - mean) ** 2 for w, m_h in zip(shares, means, strict=True)) / pool
    return mean, math.sqrt(within + between), sample_weights


def weighted_percentiles(x: np.ndarray, weights: np.ndarray, q: Sequence[float]) -> np.ndarray:
    """Percentiles (0-100) of a weighted sample: the smallest value whose cumulative weight reaches q."""
    if len(x) == 0:
        return np.full(len(q), np.nan)
    order = np.argsort(x, kind="stable")
    cumulative = np.cumsum(weights[order]) / weights.sum()
    at = np.searchsorted(cumulative, np.asarray(q, float) / 100.0 - 1e-12)
    return x[order][np.minimum(at, len(x) - 1)]


# ============================================================================= one shoe, exactly
def shoe_values(rules: Rules, shoe: np.ndarray, basic: StrategyTable, in_round: bool = False) -> np.ndarray:
    """One shoe's exact values (columns V_*): basic strategy's EV, the best table's EV (never below
    basic's), the insurance bet's EV per unit given an ace, and with ``in_round`` the
    composition-dependent EV and the best table's EV without insurance (NaN otherwise); the
    number of chart cells the best table changes; last, E[X^2] of a round played by the better of
    the two tables (the perfect bettor's SD) where ``moments`` computes it exactly (games without
    splits), else NaN."""
    from .moments import check_moment_rules, round_moments

    out = np.full(N_VALUES, np.nan)
    model = Model(rules, shoe)
    best = analyse(rules, model=model, start=basic.actions)
    changed = int((best.actions != basic.actions).any(axis=2).sum())
    if changed == 0 and np.array_equal(best.insurance, basic.insurance):
        basic_ev = best.ev  # the same table on the same shoe: no second analysis
    else:
        basic_ev = analyse(rules, basic, model=model).ev
    n = float(shoe.sum())
    out[V_BASIC] = basic_ev
    out[V_BEST] = max(best.ev, basic_ev)
    out[V_INSURANCE] = 3.0 * shoe[9] / (n - 1.0) - 1.0
    out[V_CELLS] = changed
    try:
        check_moment_rules(rules)
    except ValueError:
        pass  # a split round's second moment is not defined by the solver's model: see ``bettor``
    else:
        table = StrategyTable(best.actions, best.insurance) if best.ev >= basic_ev else basic
        out[V_SECOND] = round_moments(rules, table, model=model)[1]
    if in_round:
        table = StrategyTable(best.actions, np.zeros(2, np.bool_))
        no_insurance = best.ev if not best.insurance.any() else analyse(rules, table, model=model).ev
        out[V_BEST_NO_INS] = no_insurance
        out[V_COMPOSITION] = composition_ev(rules, model=model)
    model.cache = None  # the shoe's dealer memo (~300k entries): freed now, not when a cycle is collected
    return out


def _shoe_task(
    rules: Rules, shoe: np.ndarray, actions: np.ndarray, insurance: np.ndarray, in_round: bool
) -> np.ndarray:
    """``shoe_values`` with picklable arguments (a process or a Ray task); the analysis's reference
    cycles (its split recursion's closures) are collected at once, so a worker's memory stays flat."""
    values = shoe_values(rules, shoe, StrategyTable(actions, insurance), in_round)
    gc.collect()
    return values


# ============================================================================= result
def check_bets(bets: Sequence[float], seats: int) -> tuple[float, ...]:
    """Bets in table-minimum units, strictly increasing, >= 0, the largest > 0; a 0 (sitting a
    round out) needs other seats to deal the round to."""
    out = tuple(float(b) for b in bets)
    if not out or any(not math.isfinite(b) or b < 0 for b in out):
        raise ValueError(f"bets must be numbers >= 0 such as 1,2,4,8, got {list(bets)}")
    if any(b >= c for b, c in itertools.pairwise(out)):
        raise ValueError(f"bets must be increasing, such as 1,2,4,8, got {list(bets)}")
    if out[-1] <= 0:
        raise ValueError(f"the largest bet must be > 0, got {list(bets)}")
    if out[0] == 0 and seats < 2:
        raise ValueError("a 0 bet sits a round out, which needs other seats at the table: use seats >= 2")
    return out


@dataclass
class CeilingResult:
    """Per analysed shoe, its exact values (``values``, columns V_*) and its stratum (``labels``), the
    strata's weights and pool size (see the module: every mean is the stratified one,
    ``estimate``), and the game that dealt them."""

    rules: Rules
    seats: int
    seat: int
    seed: int
    values: np.ndarray  # float[N, N_VALUES], samples not finished removed
    recording: Recording
    seconds: float
    interrupted: bool = False
    bets: tuple[float, ...] | None = None
    workers: int = 1
    meta: dict[str, Any] = field(default_factory=dict)
    labels: np.ndarray | None = None  # int[N] stratum of each shoe (None: one stratum)
    weights: np.ndarray = field(default_factory=lambda: np.ones(1))  # W_h, summing to 1
    pool: int = 0  # phase-1 rounds the strata's weights come from

    @property
    def samples(self) -> int:
        return len(self.values)

    def _labels(self) -> np.ndarray:
        return self.labels if self.labels is not None else np.zeros(self.samples, np.int64)

    def estimate(self, column: np.ndarray, rows: np.ndarray | None = None) -> tuple[float, list[float]]:
        """Stratified mean and 95% CI of a per-shoe quantity (``stratified_mean``), over ``rows``
        (a mask) or every shoe."""
        labels = self._labels()
        if rows is not None:
            column, labels = column[rows], labels[rows]
        mean, stderr, _ = stratified_mean(column, labels, self.weights, max(self.pool, 1))
        return mean, interval(mean, stderr)

    def sample_weights(self) -> np.ndarray:
        """Each shoe's share of the rounds it stands for (W_h / n_h; summing to 1)."""
        return stratified_mean(self.basic, self._labels(), self.weights, max(self.pool, 1))[2]

    def design(self) -> dict[str, Any]:
        """How the shoes were drawn, and the variance a plain sample of as many shoes would have had
        (its SD from the strata: within plus between), beside the stratified one's, for the gain."""
        labels = self._labels()
        k = len(self.weights)
        gains = self.gains
        _, stderr, _ = stratified_mean(gains, labels, self.weights, max(self.pool, 1))
        counts = np.bincount(labels, minlength=k)
        means = np.array([gains[labels == h].mean() if counts[h] else np.nan for h in range(k)])
        sds = np.array([gains[labels == h].std(ddof=1) if counts[h] > 1 else np.nan for h in range(k)])
        mean = float(np.nansum(self.weights * means))
        population_var = float(np.nansum(self.weights * (sds**2 + (means - mean) ** 2)))
        plain = math.sqrt(population_var / self.samples) if self.samples else math.nan
        return {
            "method": "plain sampling" if k == 1 else "two-phase stratified sampling on the gain predictor",
            "strata": k,
            "pool": self.pool,
            "weights": self.weights.tolist(),
            "samples_per_stratum": counts.tolist(),
            "gain_mean_per_stratum": [None if math.isnan(v) else float(v) for v in means],
            "gain_sd_per_stratum": [None if math.isnan(v) else float(v) for v in sds],
            "gain_stderr": stderr,
            "gain_stderr_plain": plain,
            "variance_reduction": plain**2 / stderr**2 if stderr > 0 and k > 1 else 1.0,
        }

    @property
    def basic(self) -> np.ndarray:
        return self.values[:, V_BASIC]

    @property
    def best(self) -> np.ndarray:
        return self.values[:, V_BEST]

    @property
    def gains(self) -> np.ndarray:
        return self.best - self.basic

    @property
    def gain(self) -> float:
        return self.estimate(self.gains)[0]

    @property
    def gain_ci95(self) -> list[float]:
        return self.estimate(self.gains)[1]

    def bettor(self, bets: Sequence[float]) -> dict[str, Any]:
        """The perfect bettor: every round the EV-maximising bet for its shoe (the largest where the
        shoe's best EV is positive, else the smallest: 0 where allowed). Its SD per round: exact in a
        game without splits, E[bet^2 X^2] - E[bet X]^2 with each shoe's exact E[X^2] under the table
        played (``moments``; ``sd_method`` "exact"); with splits approximate (the solver's split model
        gives a split round no second moment): E[bet^2] (stratified) times the simulated second
        moment of a flat-bet round (basic strategy over every round), minus the mean squared, i.e. a
        round's spread taken as the same on every shoe (``sd_method`` "approximate"; the error this
        makes, measured where the exact SD exists: the docs' ceiling guide). ``sd_approximate`` is that
        approximation in every game. SCORE and N0 as ``blackjack-evaluate``'s."""
        bets = check_bets(bets, self.seats)
        best = self.best
        bet = np.where(best > 0, bets[-1], bets[0])
        result = bet * best
        ev, ci = self.estimate(result)
        weights = self.sample_weights()
        mean_square_bet = float(weights @ (bet * bet)) if self.samples else math.nan
        approximate = math.sqrt(max(mean_square_bet * self.recording.second_moment - ev * ev, 0.0))
        second = self.values[:, V_SECOND]
        exact = self.samples > 0 and bool(np.isfinite(second).all())
        sd = math.sqrt(max(float(weights @ (bet * bet * second)) - ev * ev, 0.0)) if exact else approximate
        di = 1000.0 * ev / sd if sd > 0 else 0.0
        return {
            "bets": list(bets),
            "ev": ev,
            "ci95": ci,
            "win_per_100": 100.0 * ev,
            "win_per_100_ci95": [100.0 * x for x in ci],
            "avg_bet": float(weights @ bet) if self.samples else math.nan,
            "sd": sd,
            "sd_method": "exact" if exact else "approximate",
            "sd_approximate": approximate,
            "score": di * abs(di),
            "n0": sd * sd / (ev * ev) if ev != 0 else None,
        }

    def gain_over_basic(self, bets: Sequence[float] | None = None) -> tuple[float, list[float]]:
        """Mean and 95% CI of the perfect player's gain over flat-betting basic strategy: at a flat
        bet (bets None), or betting ``bets`` the EV-maximising way (as ``bettor``)."""
        if bets is None:
            return self.estimate(self.gains)
        bets = check_bets(bets, self.seats)
        return self.estimate(np.where(self.best > 0, bets[-1], bets[0]) * self.best - self.basic)

    def in_round(self) -> dict[str, Any]:
        """What the round's own cards add: composition-dependent EV over the best table's (both
        without insurance), on the samples where it was measured."""
        rows = ~np.isnan(self.values[:, V_COMPOSITION])
        diff = self.values[:, V_COMPOSITION] - self.values[:, V_BEST_NO_INS]
        mean, ci = self.estimate(diff, rows) if rows.any() else (math.nan, [math.nan, math.nan])
        return {
            "mean": mean,
            "ci95": ci,
            "samples": int(rows.sum()),
            "method": "exact composition-dependent EV of the shoe (every hand, split hands too, takes its own "
            "best action given its own cards and the up card; no insurance) minus the best total-dependent "
            "table's exact EV without insurance, on every "
            f"{self.meta.get('in_round_every', 0)}th shoe analysed (stratified mean over those); other seats' "
            "cards are not used",
        }

    def round_ev(self) -> dict[str, Any]:
        """Percentiles and a histogram of the round-start EV (basic strategy's and the best), over
        rounds: each shoe weighs the rounds it stands for (``sample_weights``), so the histogram's
        bins are shares of rounds (summing to 1; values beyond the edges in the end bins) and
        ``samples`` counts the shoes analysed per bin."""
        weights = self.sample_weights()
        out: dict[str, Any] = {"percentiles": {}, "histogram": {"edges": HIST_EDGES.tolist()}, "samples": {}}
        for name, column in (("basic", self.basic), ("best", self.best)):
            pct = weighted_percentiles(column, weights, PERCENTILES)
            out["percentiles"][name] = {str(p): float(v) for p, v in zip(PERCENTILES, pct, strict=True)}
            clipped = np.clip(column, HIST_EDGES[0], HIST_EDGES[-1])
            out["histogram"][name] = np.histogram(clipped, HIST_EDGES, weights=weights)[0].tolist()
            out["samples"][name] = np.histogram(clipped, HIST_EDGES)[0].tolist()
        out["share_positive"] = {
            "basic": float(weights @ (self.basic > 0)) if self.samples else math.nan,
            "best": float(weights @ (self.best > 0)) if self.samples else math.nan,
        }
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` contract (the ceiling guide lists its keys)."""
        basic_ev, basic_ci = self.estimate(self.basic)
        gain, gain_ci = self.estimate(self.gains)
        insurance = self.values[:, V_INSURANCE]
        weights = self.sample_weights()
        rec = self.recording
        out: dict[str, Any] = {
            "rules": self.rules.to_dict(),
            "description": self.rules.describe(),
            "seats": self.seats,
            "seat": self.seat,
            "seed": self.seed,
            "samples": self.samples,
            "interrupted": self.interrupted,
            "basic_ev": basic_ev,
            "basic_ev_ci95": basic_ci,
            "simulated_ev": rec.sim_ev,
            "simulated_ev_ci95": interval(rec.sim_ev, rec.sim_stderr),
            "simulated_rounds": int(rec.sums[2]),
            "gain": gain,
            "gain_ci95": gain_ci,
            "gain_per_100": 100.0 * gain,
            "gain_per_100_ci95": [100.0 * x for x in gain_ci],
            "best_ev": self.estimate(self.best)[0],
            "share_with_gain": float(weights @ (self.gains > 1e-12)) if self.samples else math.nan,
            "insurance": {
                "ev_mean": float(weights @ insurance) if self.samples else math.nan,
                "share_positive": float(weights @ (insurance > 0)) if self.samples else math.nan,
            },
            "in_round_gain": self.in_round(),
            "round_ev": self.round_ev(),
            "sampling": self.design(),
            "cached": bool(self.meta.get("cached", False)),
            "sample_stride": rec.stride,
            "workers": self.workers,
            "seconds": self.seconds,
        }
        if self.bets is not None:
            out["perfect_bettor"] = self.bettor(self.bets)
        return out


def share_of_ceiling(gain: float, gain_ci95: Sequence[float], ceiling: float, ceiling_ci95: Sequence[float]) -> dict:
    """A gain over basic strategy as a share of the ceiling's, with a 95% CI by the delta method
    (the two estimates come from independent samples: a simulation and the sampled shoes)."""
    se_gain = (gain_ci95[1] - gain_ci95[0]) / (2 * Z95)
    se_ceiling = (ceiling_ci95[1] - ceiling_ci95[0]) / (2 * Z95)
    if ceiling == 0:
        return {"share": math.nan, "ci95": [math.nan, math.nan]}
    share = gain / ceiling
    se = math.hypot(se_gain / ceiling, share * se_ceiling / ceiling)
    return {"share": share, "ci95": interval(share, se)}


def policy_bets(counting: CountingStrategy | None) -> tuple[float, ...] | None:
    """The bets a counting strategy places (its ramp's, and 0 where it sits out), for the perfect
    bettor it is compared with; None for a flat bet of one unit (and any other policy)."""
    if counting is None:
        return None
    bets = {float(bet) for _, bet in counting.ramp} | ({0.0} if counting.exit_below is not None else set())
    return None if bets == {1.0} else tuple(sorted(bets))


def policy_share(
    result: CeilingResult, gain: float, gain_ci95: Sequence[float], bets: Sequence[float] | None
) -> dict[str, Any]:
    """A policy's gain over flat basic strategy (simulated, paired) beside the ceiling's for the same
    game and bets, and its share of the ceiling with a 95% CI (``blackjack-evaluate --ceiling``, sweep)."""
    ceiling_gain, ceiling_ci = result.gain_over_basic(bets)
    share = share_of_ceiling(gain, gain_ci95, ceiling_gain, ceiling_ci)
    return {
        "samples": result.samples,
        "bets": None if bets is None else list(bets),
        "gain": ceiling_gain,
        "gain_ci95": ceiling_ci,
        "policy_gain": gain,
        "policy_gain_ci95": list(gain_ci95),
        "share": share["share"],
        "share_ci95": share["ci95"],
        "interrupted": result.interrupted,
        "seconds": result.seconds,
    }


# ============================================================================= runner
def check_rules(rules: Rules, samples: int, seats: int, seat: int) -> None:
    """The ceiling needs shoes dealt to a cut card and at least one sample."""
    if rules.infinite:
        raise ValueError("the ceiling needs a finite shoe (decks >= 1), not an infinite deck")
    if rules.penetration <= 0:
        raise ValueError(
            "the ceiling needs a shoe dealt to a cut card; the rules shuffle every round "
            "(set penetration, e.g. --set penetration=0.75)"
        )
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    E.check_seats(seats)
    if not 0 <= seat < seats:
        raise ValueError(f"seat must be 0..{seats - 1} (seat 0 is dealt first), got {seat}")


def ceiling(
    rules: Rules,
    *,
    seats: int = 1,
    seat: int = 0,
    samples: int = 600,
    seed: int = 0,
    workers: int | None = None,
    backend: str = "local",
    ray_address: str | None = None,
    bets: Sequence[float] | None = None,
    in_round_every: int = 10,
    basic: StrategyTable | None = None,
    progress: Callable[[int], None] | None = None,
    strata: int = STRATA,
    cache: bool = True,
) -> CeilingResult:
    """The ceiling of a game (see the module docstring): ``samples`` round-start shoes, each
    analysed exactly, drawn in up to ``strata`` strata (1: plain sampling). Shoes depend on (rules,
    seats, seat, samples, seed, strata) alone and their values are put in analysis order, so the
    result is the same for any ``workers`` and either backend. A KeyboardInterrupt stops the run;
    the shoes finished so far, up to the first one missing, make up the result. With ``cache`` the
    shoes' values are kept on disk (``cache_path``): the same call again (``blackjack-evaluate
    --ceiling``, a sweep) reads them, and an interrupted run's next call analyses only the shoes
    still missing."""
    from .solution import solve

    check_rules(rules, samples, seats, seat)
    if bets is not None:
        bets = check_bets(bets, seats)
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if strata < 1:
        raise ValueError(f"strata must be >= 1, got {strata}")
    if backend == "ray":
        from ..ray_cluster import check_address

        check_address(ray_address)  # before the shoes are recorded: a cluster that is not there is one line
    basic = basic if basic is not None else solve(rules).table
    k = n_strata(samples, strata)
    pool = samples if k == 1 else min(MAX_POOL, POOL_PER_SAMPLE * samples)
    recording = record_shoes(rules, basic, pool, seed, seats, seat)
    design = Design.plain(samples) if k == 1 else Design.stratified(gain_proxy(rules, recording.shoes), samples, k)
    shoes = recording.shoes[design.chosen]
    few = shoes[:, 9] < MIN_TENS
    if few.any():
        raise ValueError(
            f"{int(few.sum())} sampled shoe(s) hold fewer than {MIN_TENS} ten-value cards, which the solver "
            "cannot analyse; use more decks or a lower penetration"
        )
    every = max(int(in_round_every), 0)
    path = cache_path(rules, basic, seats, seat, samples, seed, k, every) if cache else None
    outputs = _load_values(path, len(design.chosen))
    tasks = [
        (i, (rules, shoes[i], basic.actions, basic.insurance, every > 0 and i % every == 0))
        for i in range(len(design.chosen))
        if i not in outputs
    ]
    start = time.perf_counter()
    workers = workers or (os.cpu_count() or 1)
    saver = _Saver(path, outputs, len(design.chosen))
    interrupted = False
    try:
        if tasks:
            workers = _run(tasks, backend, workers, ray_address, outputs, _chain(saver, progress))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        saver.save()
    done = np.array(sorted(outputs), np.int64)
    values = np.array([outputs[i] for i in done]).reshape(len(done), N_VALUES)
    kept = Recording(recording.shoes[design.chosen[done]], recording.rewards[design.chosen[done]],
                     recording.sums, recording.stride)  # fmt: skip
    return CeilingResult(
        rules, seats, seat, seed, values, kept, time.perf_counter() - start, interrupted, bets, workers,
        {"in_round_every": every, "cached": not tasks, "from_cache": len(done) - saver.new},
        design.labels[done], design.weights, design.pool,
    )  # fmt: skip


def cache_path(
    rules: Rules, basic: StrategyTable, seats: int, seat: int, samples: int, seed: int, strata: int, every: int
) -> Path:
    """Where a run's shoe values are kept: keyed by everything that fixes them (the rules, the basic
    strategy played, the table, the samples and their design, the seed) and by the code that
    computes them (``code_key`` of this module and every module it imports)."""
    from .._source import code_key
    from .solution import cache_dir

    table = hashlib.sha256(basic.actions.tobytes() + basic.insurance.tobytes()).hexdigest()[:16]
    key = {
        "code": code_key(__name__),
        "rules": rules.to_dict(),
        "basic": table,
        "seats": seats,
        "seat": seat,
        "samples": samples,
        "seed": seed,
        "strata": strata,
        "pool_per_sample": POOL_PER_SAMPLE,
        "in_round_every": every,
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    return cache_dir() / f"ceiling-{digest}.npz"


def _load_values(path: Path | None, n: int) -> dict[int, np.ndarray]:
    """The shoes a cache file holds (none if there is no readable file of this run's size); a file
    read is marked used (``_source.touch``), so the cache's pruning keeps it as it keeps solutions."""
    from .._source import touch

    if path is None or not path.exists():
        return {}
    try:
        with np.load(path) as data:
            values, done = data["values"], data["done"]
    except (OSError, ValueError, KeyError):
        return {}
    if values.shape != (n, N_VALUES) or done.shape != (n,):
        return {}
    touch(path)
    return {int(i): values[i].copy() for i in np.flatnonzero(done)}


class _Saver:
    """Writes the finished shoes to the cache file (atomically), at most every ``SAVE_SECONDS``
    while running and once at the end (also after a Ctrl-C): an interrupted run loses at most that."""

    def __init__(self, path: Path | None, outputs: dict[int, np.ndarray], n: int) -> None:
        self.path, self.outputs, self.n = path, outputs, n
        self.start = len(outputs)
        self.last = time.perf_counter()

    @property
    def new(self) -> int:
        return len(self.outputs) - self.start

    def __call__(self, done: int) -> None:
        if time.perf_counter() - self.last > SAVE_SECONDS:
            self.save()

    def save(self) -> None:
        if self.path is None or self.new == 0:
            return
        from .solution import atomic_file

        values = np.full((self.n, N_VALUES), np.nan)
        done = np.zeros(self.n, np.bool_)
        for i, row in list(self.outputs.items()):
            values[i] = row
            done[i] = True
        try:
            with atomic_file(self.path) as f:
                np.savez(f, values=values, done=done)
        except OSError:
            pass  # a read-only cache folder: the run goes on without it
        self.last = time.perf_counter()


def _chain(saver: _Saver, progress: Callable[[int], None] | None) -> Callable[[int], None]:
    """One callback per finished shoe: the cache's, then the caller's (which may raise Ctrl-C)."""

    def call(done: int) -> None:
        saver(done)
        if progress is not None:
            progress(done)

    return call


def _run(
    tasks: list[tuple[int, tuple[Any, ...]]],
    backend: str,
    workers: int,
    address: str | None,
    outputs: dict[int, np.ndarray],
    progress: Callable[[int], None],
) -> int:
    """Shoes on local processes or Ray workers (a local Ray, or the cluster at ``address``), a few
    queued per worker, each kept in ``outputs`` as it arrives (in task order); on Ctrl-C the queue
    is dropped, the shoes finished before the first missing one are kept. Returns the workers used."""
    pool = Workers(
        _shoe_task, "process" if backend == "local" else "ray", workers, ray_address=address, most=len(tasks)
    )
    with pool:
        for (i, _), values in zip(tasks, pool.map(task for _, task in tasks), strict=True):
            outputs[i] = values
            progress(1)
    return pool.workers


def format_text(summary: dict[str, Any]) -> str:
    """The ceiling for reading (per round and per 100 rounds, 95% CIs)."""

    def pct(x: float) -> str:
        return f"{100 * x:+.3f}"

    lo, hi = summary["basic_ev_ci95"]
    slo, shi = summary["simulated_ev_ci95"]
    glo, ghi = summary["gain_ci95"]
    lines = [
        f"{summary['description']}; seat {summary['seat']} of {summary['seats']}",
        f"Ceiling from {summary['samples']:,} sampled round-start shoes"
        + (" (interrupted: the finished samples)" if summary["interrupted"] else "")
        + f", {summary['seconds']:.0f} s on {summary['workers']} worker(s)",
        f"  basic strategy, exact mean   {pct(summary['basic_ev'])} per 100 rounds  (95% CI {pct(lo)} .. {pct(hi)})",
        f"  basic strategy, simulated    {pct(summary['simulated_ev'])} per 100 rounds  "
        f"(95% CI {pct(slo)} .. {pct(shi)}, {summary['simulated_rounds']:,} rounds)",
        f"  perfect player's flat gain   {pct(summary['gain'])} per 100 rounds  (95% CI {pct(glo)} .. {pct(ghi)}); "
        f"{100 * summary['share_with_gain']:.0f}% of rounds gain",
    ]
    d = summary.get("sampling")
    if d is not None and d["strata"] > 1:
        lines.append(
            f"  sampling: {d['strata']} strata of {d['pool']:,} recorded rounds by the gain predictor; the gain's "
            f"variance / {d['variance_reduction']:.1f} against plain sampling of as many shoes"
        )
    ir = summary["in_round_gain"]
    if ir["samples"]:
        lines.append(
            f"  the round's own cards add    {pct(ir['mean'])} per 100 rounds  (95% CI {pct(ir['ci95'][0])} .. "
            f"{pct(ir['ci95'][1])}, {ir['samples']} samples; not in the ceiling)"
        )
    bettor = summary.get("perfect_bettor")
    if bettor is not None:
        bets = ",".join(f"{b:g}" for b in bettor["bets"])
        n0 = "infinite" if bettor["n0"] is None else f"{bettor['n0']:,.0f}"
        lines.append(
            f"  perfect bettor ({bets})       {100 * bettor['ev']:+.3f} units per 100 rounds (95% CI "
            f"{100 * bettor['ci95'][0]:+.3f} .. {100 * bettor['ci95'][1]:+.3f}); SD {bettor['sd']:.3f} "
            f"({bettor['sd_method']}), "
            f"SCORE {bettor['score']:.2f}, N0 {n0}"
        )
    p = summary["round_ev"]["percentiles"]["best"]
    lines.append(
        "  round-start best EV, %: " + ", ".join(f"p{k} {100 * v:+.2f}" for k, v in p.items() if k in ("5", "50", "95"))
    )
    return "\n".join(lines)
