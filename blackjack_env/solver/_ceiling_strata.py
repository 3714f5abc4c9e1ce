"""The ceiling's sampling design (``blackjack_env.solver.ceiling``'s method): a cheap predictor of each
recorded round's gain, strata at its quantiles with Neyman allocation, and the two-phase stratified mean
and weighted percentiles every estimate of the ceiling is made with."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..counting import VALUES
from ..rules import Rules
from .removal import effects_of_removal

#: Recorded rounds (phase 1) per analysed shoe of a stratified run; at most ``MAX_POOL`` in all.
POOL_PER_SAMPLE = 100
MAX_POOL = 400_000
#: Strata of a stratified run, at most (fewer where samples are few: see ``n_strata``).
STRATA = 8
#: Samples each stratum gets at least (two: its variance needs them).
MIN_PER_STRATUM = 2


def gain_proxy(rules: Rules, shoes: np.ndarray) -> np.ndarray:
    """A cheap predictor of each shoe's gain (per round; only its ranking and scale matter): every
    chart decision's margin off the top moved by its effects of removal for the shoe's removed
    cards (``effects_of_removal``: linear in the composition), the margins that turn negative (the
    decision flips) weighted by how often the decision arises, plus insurance's positive part
    against an ace. About a microsecond a shoe; computed for every pool round."""
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
