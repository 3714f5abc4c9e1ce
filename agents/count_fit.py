"""The count-table learner's statistics read as a policy (``blackjack_env.agents.count_table``): per-bucket
means and errors of the paired differences, curves in the count fitted to them by weighted least squares,
the casino's questions answered from those curves, and an index entry read off a curve where it crosses 0."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from blackjack_env import engine as E
from blackjack_env.counting import IndexEntry
from blackjack_env.strategy import N_PLAY

from .count_kernel import PAIR_ID, WR, WRR, BucketSpec, W

#: The degree of the polynomial in the count that each action's value difference is fitted with.
DEGREE = 1
#: The prior standard deviation of a fitted curve's slope (and higher coefficients) per bucket width.
PRIOR_SD = 0.05
#: Standard errors by which a learned deviation's fitted gain over basic strategy's answer must be
#: positive to be exported (see CountTableAgent.deviations: one test per question).
Z_EXPORT = 2.0
#: The chi-square (two degrees of freedom: a line's intercept and slope; p = 0.001) above which a
#: total's stand-or-hit line on hands of three or more cards differs from its line on two cards: the
#: two are then answered apart (:func:`lines_differ`).
CHI2_APART = 13.8
#: Where the data refuse a fitted line (its chi-square above the 1 - P_REFUSE quantile for its
#: degrees of freedom, at least MIN_REFUSE_DOF of them), its answers are read per bucket
#: (CurveFit.values, CurveFit.buckets_at): a line is the better estimate only where it fits.
PER_BUCKET = True
P_REFUSE_Z = 3.09  # the standard normal's 0.999 quantile: P_REFUSE = 0.001
MIN_REFUSE_DOF = 3
#: The least variance a paired difference is assumed to have (a few equal differences are not
#: taken as certain; insurance's, the smallest that matters, is about 0.4).
VAR_FLOOR = 0.25


def stat_means(stats: np.ndarray) -> np.ndarray:
    """Weighted means of a statistics array (0 where there is no weight)."""
    w = stats[..., W]
    return np.divide(stats[..., WR], w, out=np.zeros_like(w), where=w > 0)


def stat_stderrs(stats: np.ndarray) -> np.ndarray:
    """Standard errors of the weighted means (the summed weight taken as the sample size; inf
    below two; the variance at least VAR_FLOOR, so a few equal returns are not taken as certain)."""
    w = stats[..., W]
    mean = stat_means(stats)
    second = np.divide(stats[..., WRR], w, out=np.zeros_like(w), where=w > 0)
    var = np.maximum(second - mean * mean, VAR_FLOOR)
    return np.where(w >= 2, np.sqrt(var / np.maximum(w - 1, 1)), np.inf)


@dataclass(frozen=True)
class CurveFit:
    """Weighted least-squares fits of per-bucket estimates on a polynomial of the bucket's count,
    one per trailing index: ``beta`` (..., p), ``cov`` (..., p, p), ``design`` (buckets, p); with
    the estimates themselves (``means``, ``variances``: buckets first, inf where a bucket has none)
    and the fits their data refuse (``refused``, :func:`fit_curves`), if kept."""

    beta: np.ndarray
    cov: np.ndarray
    design: np.ndarray
    means: np.ndarray | None = None
    variances: np.ndarray | None = None
    refused: np.ndarray | None = None

    def curve_values(self) -> np.ndarray:
        """The fitted curve at every bucket's count (buckets first)."""
        return np.einsum("bp,...p->b...", self.design, self.beta)

    def values(self) -> np.ndarray:
        """The value per bucket (buckets first) the answers are read from: the fitted curve, or where
        the data refuse it (``PER_BUCKET``) the bucket's own estimate wherever it has one."""
        values = self.curve_values()
        if not PER_BUCKET or self.refused is None or self.means is None or self.variances is None:
            return values
        own = self.refused[None] & np.isfinite(self.variances)
        return np.where(own, self.means, values)

    def refuses(self, *index: int) -> bool:
        """Whether the answers of the fit at ``index`` are read per bucket (:meth:`values`)."""
        return PER_BUCKET and self.refused is not None and bool(self.refused[index])

    def at(self, *index: int) -> CurveFit:
        """The fit at ``index`` (a cell's pair: row, col, column) alone."""
        return CurveFit(self.beta[index], self.cov[index], self.design)

    def buckets_at(self, *index: int) -> CurveFit:
        """The fit at ``index`` as one parameter per bucket (design: the identity): where the data
        refuse the curve each bucket's own estimate with its variance, a bucket without one keeping
        the curve's value with no error (a question weighs it by its decisions: none); elsewhere the
        curve's values with their covariance."""
        if not self.refuses(*index):
            design = self.design
            return CurveFit(design @ self.beta[index], design @ self.cov[index] @ design.T, np.eye(len(design)))
        assert self.means is not None and self.variances is not None
        means, variances, curve = (
            np.moveaxis(a, 0, -1)[index] for a in (self.means, self.variances, self.curve_values())
        )
        measured = np.isfinite(variances)
        beta = np.where(measured, means, curve)
        return CurveFit(beta, np.diag(np.where(measured, variances, 0.0)), np.eye(len(beta)))


def bucket_counts(spec: BucketSpec) -> np.ndarray:
    """The count each bucket stands for in the fits: its middle, in units of the count (a bucket
    width, or two where buckets are half a unit wide), so a slope's prior is the same per unit."""
    return (spec.lo + (np.arange(spec.n) + 0.5) * spec.width) / (spec.width * spec.per_unit)


def fit_curves(y: np.ndarray, var: np.ndarray, spec: BucketSpec, degree: int = DEGREE) -> CurveFit:
    """Fit ``y`` (buckets first; ``var`` its variances, inf where a bucket has no data) by weighted
    least squares on a polynomial of the bucket's count, independently for every trailing index.

    Why: a deviation's gain changes smoothly with the count (insurance's exactly linearly in the
    tens' share), so a curve pools every bucket's data into 2-3 parameters instead of one noisy mean
    per bucket. The two tail buckets are left out (the counts they hold are unknown; the curve is
    read there at their middle). Each coefficient but the intercept has a normal prior of mean 0
    and standard deviation PRIOR_SD (per unit of the count to its power): with a few returns in a few
    buckets the curve stays near the cell's count-free mean instead of extrapolating noise (a
    line through three noisy points would double 20 v 3), while a slope the data show (about 0.01
    to 0.03 per true count for the strong deviations) is barely pulled. The parameters'
    covariance is scaled up by the reduced chi-square where that exceeds 1, so a curve the data
    refuse widens its own errors. Without any data: a flat 0 with an infinite variance."""
    x = bucket_counts(spec)
    design = np.stack([x**k for k in range(degree + 1)], axis=-1)
    p = degree + 1
    w = np.where(np.isfinite(var) & np.isfinite(y), 1.0 / np.maximum(var, 1e-300), 0.0)
    own_var = np.where(w > 0, var, np.inf)  # every bucket's own estimate, the tails' too
    w[0] = w[-1] = 0.0
    yw = np.where(w > 0, y, 0.0) * w
    prior = np.diag([0.0] + [PRIOR_SD**-2] * degree)
    normal = np.einsum("bp,bq,b...->...pq", design, design, w) + prior
    points = (w > 0).sum(axis=0)
    ok = points >= 1
    cov = np.linalg.inv(np.where(ok[..., None, None], normal, np.eye(p)))
    beta = np.einsum("...pq,...q->...p", cov, np.einsum("bp,b...->...p", design, yw))
    residual = np.where(w > 0, y - np.einsum("bp,...p->b...", design, beta), 0.0)
    dof = points - p
    chi2 = (w * residual * residual).sum(axis=0)
    refused = (dof >= MIN_REFUSE_DOF) & (chi2 > chi2_quantile(np.maximum(dof, 1)))
    cov = cov * np.maximum(chi2 / np.maximum(dof, 1), 1.0)[..., None, None]
    beta = np.where(ok[..., None], beta, 0.0)
    cov = np.where(ok[..., None, None], cov, np.inf)
    return CurveFit(beta, cov, design, np.where(np.isfinite(y), y, 0.0), own_var, refused)


def chi2_quantile(dof: np.ndarray) -> np.ndarray:
    """The chi-square distribution's 1 - P_REFUSE quantile (Wilson-Hilferty: within 1% from 3
    degrees of freedom on)."""
    h = 2.0 / (9.0 * dof)
    return dof * (1.0 - h + P_REFUSE_Z * np.sqrt(h)) ** 3


def lines_differ(first: CurveFit, later: CurveFit) -> np.ndarray:
    """Per fit, whether two fitted curves differ by more than their errors allow (their
    coefficients' difference's chi-square above CHI2_APART); False where either has no data."""
    diff = first.beta - later.beta
    cov = first.cov + later.cov
    ok = np.isfinite(cov).all(axis=(-2, -1))
    cov = np.where(ok[..., None, None], cov, np.eye(cov.shape[-1]))
    chi2 = np.einsum("...p,...pq,...q->...", diff, np.linalg.inv(cov), diff)
    return ok & (chi2 > CHI2_APART)


def pair_column(a: int, c: int) -> tuple[int, float]:
    """The statistics column of actions (a, c) and the sign that makes it v_a - v_c."""
    return (PAIR_ID[a, c], 1.0) if a < c else (PAIR_ID[c, a], -1.0)


def pair_curves(stats: np.ndarray, spec: BucketSpec) -> CurveFit:
    """The fitted curve in the count of every pair's paired difference v_a - v_c (a < c), per cell
    (:func:`fit_curves` of the per-bucket means and their standard errors).

    The differences are measured on the same cards (the rollouts), so each curve's error is the
    difference's own, far below that of two independently sampled action values; and a pair is
    measured only where both actions were legal, so doubling is weighed against hitting on the
    first decisions alone, and a learner cell's stand-or-hit question on the decisions the cell holds
    (a total's two-card hands, or its hands of three or more cards where they are kept apart)."""
    return fit_curves(stat_means(stats), stat_stderrs(stats) ** 2, spec)


def _difference(values: np.ndarray, a: int, other: np.ndarray) -> np.ndarray:
    """v_a - v_other per entry (``values``: [..., pairs]; ``other``: an action per entry)."""
    out = np.zeros(other.shape)
    for c in range(N_PLAY):
        if c != a:
            column, sign = pair_column(a, c)
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
