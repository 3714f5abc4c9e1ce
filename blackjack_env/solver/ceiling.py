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
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import engine as E
from ..parallel import Workers
from ..ray_cluster import check_address
from ..rules import Rules
from ..strategy import StrategyTable
from ._analysis import Model, analyse, composition_ev
from ._ceiling_cache import Saver, cache_path, load_values
from ._ceiling_record import SIM_ROUNDS, Recording, record_chunk, record_shoes, sample_stride
from ._ceiling_result import (
    HIST_EDGES,
    N_VALUES,
    PERCENTILES,
    V_BASIC,
    V_BEST,
    V_BEST_NO_INS,
    V_CELLS,
    V_COMPOSITION,
    V_INSURANCE,
    V_SECOND,
    CeilingResult,
    check_bets,
    format_text,
    policy_bets,
    policy_share,
    share_of_ceiling,
)
from ._ceiling_strata import (
    MAX_POOL,
    MIN_PER_STRATUM,
    POOL_PER_SAMPLE,
    STRATA,
    Design,
    gain_proxy,
    n_strata,
    stratified_mean,
    weighted_percentiles,
)
from .moments import check_moment_rules, round_moments
from .solution import solve


# ============================================================================= one shoe, exactly
def shoe_values(rules: Rules, shoe: np.ndarray, basic: StrategyTable, in_round: bool = False) -> np.ndarray:
    """One shoe's exact values (columns V_*): basic strategy's EV, the best table's EV (never below
    basic's), the insurance bet's EV per unit given an ace, and with ``in_round`` the
    composition-dependent EV and the best table's EV without insurance (NaN otherwise); the
    number of chart cells the best table changes; last, E[X^2] of a round played by the better of
    the two tables (the perfect bettor's SD) where ``moments`` computes it exactly (games without
    splits), else NaN."""
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
    E.check_seat(seat, seats)


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
        check_address(ray_address)  # before the shoes are recorded: a cluster that is not there is one line
    basic = basic if basic is not None else solve(rules).table
    k = n_strata(samples, strata)
    pool = samples if k == 1 else min(MAX_POOL, POOL_PER_SAMPLE * samples)
    recording = record_shoes(rules, basic, pool, seed, seats, seat, SIM_ROUNDS)
    design = Design.plain(samples) if k == 1 else Design.stratified(gain_proxy(rules, recording.shoes), samples, k)
    shoes = recording.shoes[design.chosen]
    every = max(int(in_round_every), 0)
    path = cache_path(rules, basic, seats, seat, samples, seed, k, every) if cache else None
    outputs = load_values(path, len(design.chosen))
    tasks = [
        (i, (rules, shoes[i], basic.actions, basic.insurance, every > 0 and i % every == 0))
        for i in range(len(design.chosen))
        if i not in outputs
    ]
    start = time.perf_counter()
    workers = workers or (os.cpu_count() or 1)
    saver = Saver(path, outputs, len(design.chosen))
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


def _chain(saver: Saver, progress: Callable[[int], None] | None) -> Callable[[int], None]:
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


# The pieces, importable from here as before: the sampling (``_ceiling_record``), the design
# (``_ceiling_strata``), the result and its text (``_ceiling_result``) and the disk cache (``_ceiling_cache``).
__all__ = [
    "HIST_EDGES",
    "MAX_POOL",
    "MIN_PER_STRATUM",
    "N_VALUES",
    "PERCENTILES",
    "POOL_PER_SAMPLE",
    "SIM_ROUNDS",
    "STRATA",
    "V_BASIC",
    "V_BEST",
    "V_BEST_NO_INS",
    "V_CELLS",
    "V_COMPOSITION",
    "V_INSURANCE",
    "V_SECOND",
    "CeilingResult",
    "Design",
    "Recording",
    "cache_path",
    "ceiling",
    "check_bets",
    "check_rules",
    "format_text",
    "gain_proxy",
    "n_strata",
    "policy_bets",
    "policy_share",
    "record_chunk",
    "record_shoes",
    "sample_stride",
    "share_of_ceiling",
    "shoe_values",
    "stratified_mean",
    "weighted_percentiles",
]
