"""The ceiling's result (``blackjack_env.solver.ceiling``): every analysed shoe's exact values and what
follows from them (the gain, the perfect bettor, the round-start EV's spread, the ``--json`` contract), a
policy's share of the ceiling, and the text ``blackjack-strategy --ceiling`` prints."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..counting import CountingStrategy
from ..rules import Rules
from ..simulate import Z95, interval
from ._ceiling_record import Recording
from ._ceiling_strata import stratified_mean, weighted_percentiles

#: Percentiles of the round-start EV reported in ``round_ev``.
PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
#: Histogram edges of the round-start EV (per round, units of the initial bet): 0.5% bins.
HIST_EDGES = np.round(np.arange(-0.06, 0.0601, 0.005), 6)
# columns of one shoe's values
V_BASIC, V_BEST, V_INSURANCE, V_COMPOSITION, V_BEST_NO_INS, V_CELLS, V_SECOND = range(7)
N_VALUES = 7


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
