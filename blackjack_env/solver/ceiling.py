"""The ceiling: what a player who knew the shoe's exact composition before every round would win.

    from blackjack_env.solver import ceiling
    result = ceiling(Rules(split_to=4, penetration=0.75), samples=600, seed=0, bets=(1, 8))
    result.gain, result.gain_ci95          # flat-bet gain per round over basic strategy
    result.to_json()                       # the contract of ``blackjack-strategy --ceiling --json``

Method. The compiled simulator plays shoes to the cut card at the table (every seat basic
strategy) and records the unseen composition at the start of one round in every ``stride``
rounds (``stride`` is longer than any shoe, so no two samples share a shoe and the samples are
independent; every round of every shoe is equally likely to be sampled, so a sample's mean is the
game's per-round mean). For each sampled shoe the solver then computes exactly, on one model
(one dealer-outcome memo) of that composition:

* ``basic``: the EV of the full shoe's basic strategy played on that shoe;
* ``best``: the EV of the best total-dependent strategy for that shoe (the solver re-optimises
  every cell and the insurance choice, starting from basic strategy); the perfect player plays
  the better of the two, so the gain ``best - basic`` is never negative;
* ``insurance``: the insurance bet's EV per unit insured given an ace shows, 3 T / (n - 1) - 1
  (the hole card is exchangeable with every unseen card, so the player's own cards average out);
* on every ``in_round_every``-th sample, the composition-dependent EV (each hand its own best
  action given its own cards, no insurance) beside the best table without insurance: what the
  round's own cards add (``in_round_gain``). Other seats' cards seen during the round are not used.

The ceiling includes the composition at the round's start and the best total-dependent strategy
for it, not the cards dealt during the round. The sampled shoes follow basic strategy's play at
the seat (a perfect player's different play would consume slightly different cards).
"""

from __future__ import annotations

import gc
import itertools
import math
import os
import signal
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from .. import engine as E
from ..counting import CountingStrategy
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
V_BASIC, V_BEST, V_INSURANCE, V_COMPOSITION, V_BEST_NO_INS, V_CELLS = range(6)
N_VALUES = 6
#: Rounds the sampling run plays at least: basic strategy's simulated EV beside the exact mean
#: (a 95% CI of about +-0.23 per 100 rounds).
SIM_ROUNDS = 1_000_000


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
    min_rounds: int = SIM_ROUNDS,
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
    n_rounds = max(samples * stride, min_rounds)
    record_chunk(
        rules.to_array(), kinds, actions, insurance, words, n_rounds, stride, seats, seat, work, comps, rewards, sums,
        E.table_kind(seats),
    )  # fmt: skip
    return Recording(comps, rewards, sums, stride)


# ============================================================================= one shoe, exactly
def shoe_values(rules: Rules, shoe: np.ndarray, basic: StrategyTable, in_round: bool = False) -> np.ndarray:
    """One shoe's exact values (columns V_*): basic strategy's EV, the best table's EV (never below
    basic's), the insurance bet's EV per unit given an ace, and with ``in_round`` the
    composition-dependent EV and the best table's EV without insurance (NaN otherwise); last, the
    number of chart cells the best table changes."""
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


def _ignore_sigint() -> None:
    """Worker processes leave Ctrl-C to the parent, which keeps the finished shoes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# ============================================================================= result
def _mean_ci(values: np.ndarray) -> tuple[float, list[float]]:
    """Mean and its 95% CI over independent samples."""
    n = len(values)
    mean = float(values.mean()) if n else math.nan
    stderr = float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    return mean, interval(mean, stderr)


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
    """Per sampled shoe, its exact values (``values``, columns V_*), and the game that dealt them."""

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

    @property
    def samples(self) -> int:
        return len(self.values)

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
        return _mean_ci(self.gains)[0]

    @property
    def gain_ci95(self) -> list[float]:
        return _mean_ci(self.gains)[1]

    def bettor(self, bets: Sequence[float]) -> dict[str, Any]:
        """The perfect bettor: every round the EV-maximising bet for its shoe (the largest where the
        shoe's best EV is positive, else the smallest: 0 where allowed). SD per round from the
        simulated second moment of a flat-bet round, scaled by each round's bet, plus the spread
        of the rounds' expected results; SCORE and N0 as ``blackjack-evaluate``'s."""
        bets = check_bets(bets, self.seats)
        best = self.best
        bet = np.where(best > 0, bets[-1], bets[0])
        result = bet * best
        ev, ci = _mean_ci(result)
        variance = float(np.mean(bet * bet)) * self.recording.second_moment - ev * ev
        sd = math.sqrt(max(variance, 0.0))
        di = 1000.0 * ev / sd if sd > 0 else 0.0
        return {
            "bets": list(bets),
            "ev": ev,
            "ci95": ci,
            "win_per_100": 100.0 * ev,
            "win_per_100_ci95": [100.0 * x for x in ci],
            "avg_bet": float(bet.mean()),
            "sd": sd,
            "score": di * abs(di),
            "n0": sd * sd / (ev * ev) if ev != 0 else None,
        }

    def gain_over_basic(self, bets: Sequence[float] | None = None) -> tuple[float, list[float]]:
        """Mean and 95% CI of the perfect player's gain over flat-betting basic strategy: at a flat
        bet (bets None), or betting ``bets`` the EV-maximising way (as ``bettor``)."""
        if bets is None:
            return _mean_ci(self.gains)
        bets = check_bets(bets, self.seats)
        return _mean_ci(np.where(self.best > 0, bets[-1], bets[0]) * self.best - self.basic)

    def in_round(self) -> dict[str, Any]:
        """What the round's own cards add: composition-dependent EV over the best table's (both
        without insurance), on the samples where it was measured."""
        rows = self.values[~np.isnan(self.values[:, V_COMPOSITION])]
        diff = rows[:, V_COMPOSITION] - rows[:, V_BEST_NO_INS]
        mean, ci = _mean_ci(diff)
        return {
            "mean": mean,
            "ci95": ci,
            "samples": len(rows),
            "method": "exact composition-dependent EV of the shoe (every hand, split hands too, takes its own "
            "best action given its own cards and the up card; no insurance) minus the best total-dependent "
            "table's exact EV without insurance, on every "
            f"{self.meta.get('in_round_every', 0)}th sample; other seats' cards are not used",
        }

    def round_ev(self) -> dict[str, Any]:
        """Percentiles and a histogram of the round-start EV (basic strategy's and the best)."""
        out: dict[str, Any] = {"percentiles": {}, "histogram": {"edges": HIST_EDGES.tolist()}}
        for name, column in (("basic", self.basic), ("best", self.best)):
            pct = np.percentile(column, PERCENTILES) if len(column) else np.full(len(PERCENTILES), np.nan)
            out["percentiles"][name] = {str(p): float(v) for p, v in zip(PERCENTILES, pct, strict=True)}
            clipped = np.clip(column, HIST_EDGES[0], HIST_EDGES[-1])
            out["histogram"][name] = np.histogram(clipped, HIST_EDGES)[0].tolist()
        out["share_positive"] = {"basic": float((self.basic > 0).mean()), "best": float((self.best > 0).mean())}
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` contract (see the issue and README)."""
        basic_ev, basic_ci = _mean_ci(self.basic)
        gain, gain_ci = _mean_ci(self.gains)
        insurance = self.values[:, V_INSURANCE]
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
            "best_ev": _mean_ci(self.best)[0],
            "share_with_gain": float((self.gains > 1e-12).mean()) if self.samples else math.nan,
            "insurance": {
                "ev_mean": float(insurance.mean()) if self.samples else math.nan,
                "share_positive": float((insurance > 0).mean()) if self.samples else math.nan,
            },
            "in_round_gain": self.in_round(),
            "round_ev": self.round_ev(),
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
    if not 1 <= seats <= E.MAX_SEATS:
        raise ValueError(f"seats must be 1..{E.MAX_SEATS}, got {seats}")
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
) -> CeilingResult:
    """The ceiling of a game (see the module docstring): ``samples`` round-start shoes, each
    analysed exactly. Shoes depend on (rules, seats, seat, samples, seed) alone and their values
    are put in sample order, so the result is the same for any ``workers`` and either backend.
    A KeyboardInterrupt stops the run; the shoes finished so far make up the result."""
    from .solution import solve

    check_rules(rules, samples, seats, seat)
    if bets is not None:
        bets = check_bets(bets, seats)
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    basic = basic if basic is not None else solve(rules).table
    recording = record_shoes(rules, basic, samples, seed, seats, seat)
    few = recording.shoes[:, 9] < MIN_TENS
    if few.any():
        raise ValueError(
            f"{int(few.sum())} sampled shoe(s) hold fewer than {MIN_TENS} ten-value cards, which the solver "
            "cannot analyse; use more decks or a lower penetration"
        )
    every = max(int(in_round_every), 0)
    tasks = [
        (rules, recording.shoes[i], basic.actions, basic.insurance, every > 0 and i % every == 0)
        for i in range(samples)
    ]
    start = time.perf_counter()
    workers = workers or (os.cpu_count() or 1)
    outputs: dict[int, np.ndarray] = {}
    interrupted = False
    try:
        if backend == "ray":
            workers = _run_ray(tasks, workers, ray_address, outputs, progress)
        elif workers == 1 or samples == 1:
            for i, task in enumerate(tasks):
                outputs[i] = _shoe_task(*task)
                if progress:
                    progress(1)
        else:
            _run_processes(tasks, workers, outputs, progress)
    except KeyboardInterrupt:
        interrupted = True
    done = sorted(outputs)
    values = np.array([outputs[i] for i in done]).reshape(len(done), N_VALUES)
    keep = np.array(done, np.int64)
    recording = Recording(recording.shoes[keep], recording.rewards[keep], recording.sums, recording.stride)
    return CeilingResult(
        rules, seats, seat, seed, values, recording, time.perf_counter() - start, interrupted, bets, workers,
        {"in_round_every": every},
    )  # fmt: skip


def _run_processes(tasks: list[tuple[Any, ...]], workers: int, outputs: dict[int, np.ndarray], progress: Any) -> None:
    """Shoes on worker processes, a few queued per worker; on Ctrl-C the queue is dropped and
    the shoes being analysed are finished and kept."""
    with ProcessPoolExecutor(max_workers=workers, initializer=_ignore_sigint) as pool:
        pending: dict[Future, int] = {}
        queue = iter(enumerate(tasks))
        try:
            while True:
                while len(pending) < 2 * workers:
                    item = next(queue, None)
                    if item is None:
                        break
                    pending[pool.submit(_shoe_task, *item[1])] = item[0]
                if not pending:
                    break
                done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    outputs[pending.pop(future)] = future.result()
                    if progress:
                        progress(1)
        except KeyboardInterrupt:
            for future in pending:
                future.cancel()
            for future, index in pending.items():
                if not future.cancelled():
                    outputs[index] = future.result()
            raise


def _run_ray(
    tasks: list[tuple[Any, ...]], workers: int, address: str | None, outputs: dict[int, np.ndarray], progress: Any
) -> int:
    """Shoes as Ray tasks (a local Ray, or the cluster at ``address``), at most ``workers`` at once."""
    try:
        import ray
    except ImportError:
        raise ValueError("the ray backend needs Ray: pip install 'blackjack-env[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        kwargs: dict[str, Any] = {"address": address} if address else {"num_cpus": workers}
        ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR", **kwargs)
    try:
        task = ray.remote(num_cpus=1)(_shoe_task)
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        workers = min(workers, cpus)
        pending: dict[Any, int] = {}
        queue = iter(enumerate(tasks))
        while True:
            while len(pending) < 2 * workers:
                item = next(queue, None)
                if item is None:
                    break
                pending[task.remote(*item[1])] = item[0]
            if not pending:
                break
            done, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            for ref in done:
                outputs[pending.pop(ref)] = ray.get(ref)
                if progress:
                    progress(1)
    finally:
        if started_here:
            ray.shutdown()
    return workers


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
        f"{100 * summary['share_with_gain']:.0f}% of shoes gain",
    ]
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
            f"{100 * bettor['ci95'][0]:+.3f} .. {100 * bettor['ci95'][1]:+.3f}); SD {bettor['sd']:.3f}, "
            f"SCORE {bettor['score']:.2f}, N0 {n0}"
        )
    p = summary["round_ev"]["percentiles"]["best"]
    lines.append(
        "  round-start best EV, %: " + ", ".join(f"p{k} {100 * v:+.2f}" for k, v in p.items() if k in ("5", "50", "95"))
    )
    return "\n".join(lines)
