"""The composition learner: action values linear in the unseen cards, learned by least squares.

It learns the shoe game (a shoe dealt to the cut card at a table of ``seats``, the learner in one
seat or in every seat) from nothing: no basic strategy, index table or count is given to it. Per
strategy-table cell and action, and per insurance question (holding a natural or not; take or
decline), it learns a value ``w . x`` linear in the composition ``x`` of the cards not yet seen
(:func:`blackjack_env.linear_policy.features`: an intercept and the excess of each value A..T per
unseen deck); and the round's value per unit bet before the deal, linear in the composition then,
from which it bets.

Estimator: every-visit Monte Carlo control with weighted least squares. Behaviour is epsilon-greedy
in the weights of the statistics before the chunk (frozen for the chunk); a decision's return is
the round's result (the learner's seat, per unit bet), credited, as :mod:`blackjack_env.agents.count_table`
credits it, to the decisions from the last exploratory one on, each weighted by the importance
ratio of the greedy policy (1 / the behaviour's chance of every later greedy choice): so each
(cell, action)'s regression targets the value of taking that action in that composition and then
playing greedily, which is what the greedy choice compares. The statistics are sums per
(cell, action): X'WX and X'Wy (upper triangle kept), so chunks seeded by their index merge exactly
in chunk order: same seed same run, a resumed run equals an uninterrupted one, and a chunk could be
played anywhere. The round's value before the deal is fitted on rounds in which the seat made no
exploratory choice, with the same weights (the greedy policy's round); seats learning together at one
table share the round's composition, so their samples of a round are added as one (their summed weight,
their weighted mean result: the same sums, to rounding).

Solving: per (cell, action) a ridge toward the count-free value, ``(X'WX + lam S) w = X'Wy + lam S w0``
with ``w0 = [the cell's mean return, 0, ..., 0]``, ``S`` the diagonal of the features' mean squares in
that cell (1 for the intercept) and ``lam = RIDGE`` pseudo-decisions: the ridge on standardised
features, so a cell with few visits plays like its count-free mean and one with many is fitted by its
data alone. The ten excesses sum to zero (only nine are free); the ridge also fixes that direction
(the S-weighted sum of the ten value weights is 0), which changes no prediction.

Depth: the dealt part of the shoe is split into ``depth_bands`` bands of equal depth (default 3), and
each (cell, action)'s sums are kept per band. Where the bands' fits leave measurably less residual than
one fit of every depth (``band_weights``, p = 0.001), the (cell, action) is played by its band's fit;
elsewhere by the fit of every depth, so the model grows only where the data show it earns. With one
band the learner is the linear model of every depth.

The export is a :class:`blackjack_env.linear_policy.LinearModel` (``linear-model.json``, documented
there), which the compiled simulator plays and bets (``blackjack-evaluate --policy RUN_DIR``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from blackjack_env import engine as E
from blackjack_env import slots
from blackjack_env._jit import njit
from blackjack_env.linear_policy import (
    KIND,
    MAX_BANDS,
    N_FEATURES,
    LinearModel,
    band_edges,
    depth_band,
    features,
    unseen_cards,
)
from blackjack_env.rules import Rules
from blackjack_env.strategy import N_PLAY, N_ROWS, N_UP, table_cell
from blackjack_env.table import EVERY_SEAT, Policies, Table, play_until, seed_generator, start_chunk

from .chunk_agent import T_DECISIONS, T_ROUNDS, T_SUM, ChunkLearnerAgent
from .count_fit import chi2_quantile
from .tabular import MAX_DECISIONS
from .tabular import _epsilon_greedy as _tabular_epsilon_greedy
from .tabular import _greedy as _tabular_greedy

STATS_FILE = "linear_stats.npz"
MODEL_FILE = "linear-model.json"
#: Pseudo-decisions of the count-free value a (cell, action)'s fit is shrunk toward (module docstring).
RIDGE = 1000.0
#: Depth bands a new learner splits the dealt shoe into (``band_weights`` fits a (cell, action) per band
#: only where the data show depth changes it). Against one band, at a flat bet at seat 1 of 3
#: (training seed 7, 2e8 paired rounds of seed 777), 2, 3 and 4 bands gained +0.012, +0.020 and +0.019
#: per 100 rounds at one deck dealt to 65%, and 2 and 3 bands +0.005 and +0.008 at six dealt to 75%.
DEPTH_BANDS = 3
NF = N_FEATURES
#: The tabular learner's choice helpers inlined in this kernel (at every decision a call cost as much as
#: their work: 6% of the learner's time): the same Python functions, compiled again with inline="always".
_greedy = njit(_nrt=False, inline="always")(_tabular_greedy.py_func)
_epsilon_greedy = njit(_nrt=False, inline="always")(_tabular_epsilon_greedy.py_func)


#: The kernel's sums, one packed row per insurance answer, for the round before the deal and per
#: (depth band, cell, action): X'Wy (NF), then X'WX's upper triangle row by row (NF (NF + 1) / 2), then
#: y'Wy and the sum of squared weights (the fit's residual and its weights' spread: the depth test). A
#: sample touches one contiguous row (about half the memory of the [NF, NF] square the statistics keep),
#: unpacked once per chunk.
TRIANGLE = NF + NF * (NF + 1) // 2
PACKED = TRIANGLE + 2
N_PLAY_CELLS = N_ROWS * N_UP * N_PLAY
INS_SLOT = 0  # + 2 * natural + take
PRE_SLOT = 4
PLAY_SLOT = 5  # + band * N_PLAY_CELLS + cell


@njit(cache=True, _nrt=False, inline="always")
def _add(acc, x, w, y):
    """X'Wy and X'WX (upper triangle) of one weighted sample, added to a packed row."""
    k = NF
    for i in range(NF):
        wxi = w * x[i]
        acc[i] += wxi * y
        for j in range(i, NF):
            acc[k] += wxi * x[j]
            k += 1
    acc[TRIANGLE] += w * y * y
    acc[TRIANGLE + 1] += w * w


@njit(cache=True, _nrt=False)
def _unpack(acc, xtx, xty):
    """Packed rows (``[n, PACKED]``) into the statistics' shapes (``[n, NF, NF]`` upper, ``[n, NF]``)."""
    for c in range(acc.shape[0]):
        k = NF
        for i in range(NF):
            xty[c, i] = acc[c, i]
            for j in range(i, NF):
                xtx[c, i, j] = acc[c, k]
                k += 1


@njit(cache=True, _nrt=False, inline="always")
def _dot(w, x):
    s = 0.0
    for i in range(NF):
        s += w[i] * x[i]
    return s


@njit(cache=True, _nrt=False, inline="always")
def _credit(seat, reward, trace, prob, feats, depth, cut, acc):
    """Weighted importance sampling, newest decision first (as count_table's): a decision's weight
    is 1 / (behaviour's chance) of every greedy choice after it. Returns the round's weight."""
    weight = 1.0
    for d in range(depth - 1, cut - 1, -1):
        row = trace[seat, d, 0]
        col = trace[seat, d, 1]
        a = trace[seat, d, 2]
        band = trace[seat, d, 3]
        slot = INS_SLOT + 2 * col + a if row < 0 else PLAY_SLOT + ((band * N_ROWS + row) * N_UP + col) * N_PLAY + a
        _add(acc[slot], feats[seat, d], weight, reward)
        weight /= prob[seat, d]
    return weight


@njit(cache=True, _nrt=False)
def _learn_chunk(table, policies, chunk, learner, out, work):
    """Play ``chunk.rounds`` rounds of a fresh shoe, the learner in ``chunk.seat`` (-1: every seat)
    greedy in the frozen weights of ``learner`` (w_play per depth band, tried, w_ins, tried_ins: which
    actions have data; epsilon: its exploration; the depth bands' edges); write the chunk's statistics
    to the (zeroed) arrays of ``out`` (xtx, xty, yy, ins_xtx, ins_xty, pre_xtx, pre_xty, totals).
    ``policies``: the other seats' table policy. One call site of ``play_until`` (the engine inlined
    once), the small helpers inlined and the sums in packed rows: measured (the docs' speed results)."""
    w_play, tried, w_ins, tried_ins, epsilon, edges = learner
    xtx, xty, yy, ins_xtx, ins_xty, pre_xtx, pre_xty, totals = out
    prng, trace, prob, feats, depth, cut, explored, ins_mask, x0, qv, acc = work
    st, hands, res, mask = table.st, table.hands, table.res, table.mask
    seats, seat, at_table = chunk.seats, chunk.seat, chunk.at_table
    acc[:, :] = 0.0
    start_chunk(table, seats, chunk.words, 0)  # the other seats: the table policy given
    seed_generator(prng, chunk.words, 1)
    seed_generator(policies.prngs[0], chunk.words, 2)
    stop = EVERY_SEAT if seat < 0 else seat
    for _ in range(chunk.rounds):
        features(st, E.shuffle_due(st), x0)
        for s in range(seats):
            depth[s] = 0
            cut[s] = 0
            explored[s] = 0
        action = -1  # deal; then one call site of play_until (its inlined engine held once)
        while True:
            play_until(table, policies, action, stop, at_table)
            if slots.phase(st) == E.P_OVER:
                break
            if slots.phase(st) == E.P_SETTLE:  # nothing to decide: STAND settles the round
                action = E.STAND
                continue
            s = E.acting_seat(st, at_table)
            d = depth[s]
            x = feats[s, d]
            features(st, False, x)
            if slots.phase(st) == E.P_INSURANCE:
                cell = slots.natural(st)
                for k in range(2):
                    qv[k] = _dot(w_ins[cell, k], x)
                best = _greedy(qv, tried_ins[cell], ins_mask, 2)
                choice, p_best = _epsilon_greedy(prng, epsilon, best, ins_mask, 2)
                action = E.INSURANCE if choice == 1 else E.NO_INSURANCE
                trace[s, d, 0] = -1
                trace[s, d, 1] = cell
            else:
                E.legal_mask(st, hands, mask)
                row, col, _ = table_cell(st, hands)
                band = depth_band(edges, 0, edges.shape[0], unseen_cards(st, slots.hole_card(st)))
                for k in range(N_PLAY):
                    qv[k] = _dot(w_play[band, row, col, k], x) if mask[k] else 0.0
                best = _greedy(qv, tried[row, col], mask, N_PLAY)
                choice, p_best = _epsilon_greedy(prng, epsilon, best, mask, N_PLAY)
                action = choice
                trace[s, d, 0] = row
                trace[s, d, 1] = col
                trace[s, d, 3] = band
            trace[s, d, 2] = choice
            prob[s, d] = p_best
            if choice != best:
                cut[s] = d
                explored[s] = 1
            depth[s] = d + 1
            totals[T_DECISIONS] += 1
        # The seats whose every choice was greedy are samples of the greedy policy's round, all with
        # the same x0: added as one sample of their summed weight and weighted mean result (the same
        # sums, to rounding; exactly the seat's own sample when one seat learns or was greedy).
        pre_n = 0
        pre_w = 0.0
        pre_wy = 0.0
        pre_y = 0.0
        for s in range(seats):
            if seat >= 0 and s != seat:
                continue
            reward = res[s * E.RES_SIZE + E.RES_REWARD]
            totals[T_SUM] += reward
            w = _credit(s, reward, trace, prob, feats, depth[s], cut[s], acc)
            if explored[s] == 0:
                pre_n += 1
                pre_w += w
                pre_wy += w * reward
                pre_y = reward
        if pre_n > 0:
            _add(acc[PRE_SLOT], x0, pre_w, pre_y if pre_n == 1 else pre_wy / pre_w)
        totals[T_ROUNDS] += 1
    n_play = xty.size // NF
    _unpack(acc[PLAY_SLOT:], xtx.reshape(n_play, NF, NF), xty.reshape(n_play, NF))
    yy_rows = yy.reshape(n_play, 2)
    for c in range(n_play):
        yy_rows[c, 0] = acc[PLAY_SLOT + c, TRIANGLE]
        yy_rows[c, 1] = acc[PLAY_SLOT + c, TRIANGLE + 1]
    _unpack(acc[INS_SLOT:PRE_SLOT], ins_xtx.reshape(4, NF, NF), ins_xty.reshape(4, NF))
    _unpack(acc[PRE_SLOT:PLAY_SLOT], pre_xtx.reshape(1, NF, NF), pre_xty.reshape(1, NF))


def _symmetric(upper: np.ndarray) -> np.ndarray:
    """X'WX from its upper triangle (``[..., NF, NF]``)."""
    return np.triu(upper) + np.swapaxes(np.triu(upper, 1), -1, -2)


def _residual(xtx: np.ndarray, xty: np.ndarray, yy: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The weighted residual sum of squares of ``weights`` on the sums: y'Wy - 2 w'X'Wy + w'X'WXw."""
    quadratic = np.einsum("...i,...ij,...j->...", weights, _symmetric(xtx), weights)
    return yy - 2.0 * np.einsum("...i,...i->...", weights, xty) + quadratic


def band_weights(
    xtx: np.ndarray, xty: np.ndarray, yy: np.ndarray, ridge: float = RIDGE
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per depth band (the leading axis of the sums) the weights each (cell, action) plays, whether
    it has data (pooled over the bands), and the pooled weights.

    A (cell, action) is fitted per band only where the bands' fits leave measurably less residual
    than one fit of every depth: their residual's drop over its expected spread, sigma^2 kappa
    (sigma^2 the bands' residual per unit weight, kappa = sum w^2 / sum w the importance weights'
    spread), above the chi-square's 0.999 quantile with (NF - 1) (bands - 1) degrees of freedom (the
    ten excesses have nine free directions, and the intercept one). Elsewhere every band plays the
    pooled fit, so a band split costs nothing where depth does not change the answer."""
    pooled, tried = ridge_solve(xtx.sum(0), xty.sum(0), ridge)
    n_bands = xtx.shape[0]
    if n_bands == 1:
        return pooled[None], tried, pooled
    per_band = np.stack([ridge_solve(xtx[b], xty[b], ridge)[0] for b in range(n_bands)])
    apart_rss = _residual(xtx, xty, yy[..., 0], per_band).sum(0)
    pooled_rss = _residual(xtx.sum(0), xty.sum(0), yy[..., 0].sum(0), pooled)
    weight = xtx[..., 0, 0].sum(0)
    safe = np.maximum(weight, 1e-300)
    spread = yy[..., 1].sum(0) / safe
    sigma2 = apart_rss / safe
    drop = (pooled_rss - apart_rss) / np.maximum(sigma2 * spread, 1e-300)
    every_band = (xtx[..., 0, 0] > 0).all(0)
    threshold = float(chi2_quantile(np.array((NF - 1) * (n_bands - 1))))
    apart = every_band & (sigma2 > 0) & (drop > threshold)
    return np.where(apart[None, ..., None], per_band, pooled[None]), tried, pooled


def ridge_solve(xtx: np.ndarray, xty: np.ndarray, ridge: float = RIDGE) -> tuple[np.ndarray, np.ndarray]:
    """Weights (``[..., NF]``) and whether each has data, from the upper-triangle X'WX and X'Wy
    (``[..., NF, NF]``, ``[..., NF]``): the ridge toward the count-free mean of the module docstring.
    A (cell, action) with no data has weights 0 (what its ridge alone gives): only the others are
    solved, as every chunk starts with this."""
    tried = xtx[..., 0, 0] > 0
    weights = np.zeros(xty.shape)
    upper = np.triu(xtx[tried])
    diagonal = np.arange(NF)
    a = upper + np.swapaxes(upper, -1, -2)  # (the diagonal twice, set back next)
    a[..., diagonal, diagonal] = upper[..., diagonal, diagonal]
    n = a[..., 0, 0][..., None]
    # (a feature never away from 0 in a cell keeps a small ridge: the system stays solvable)
    scale = np.maximum(a[..., diagonal, diagonal] / n, 1e-3)
    scale[..., 0] = 1.0
    rhs = xty[tried]
    rhs[..., 0] += ridge * (rhs[..., 0] / n[..., 0])
    a[..., diagonal, diagonal] += ridge * scale
    weights[tried] = np.linalg.solve(a, rhs[..., None])[..., 0]
    return weights, tried


class LinearAgent(ChunkLearnerAgent):
    """The composition learner (module docstring) for ``rules`` (a shoe with a cut card).

    Args:
        rules: the game.
        bets: the allowed bets, increasing (0 sits a round out: needs seats >= 2 and one seat).
        seats, seat: the table, and the learner's seat (-1: every seat, one shared policy).
        epsilon: the chance of a uniformly random legal action at each decision while learning.
        seed: fixes every card and exploration draw of the run.
        chunk_rounds: rounds per seeded chunk (its policy is frozen; checkpoints fall between chunks).
        kelly, bankroll: the exported model bets a Kelly fraction of this bankroll (table units; see
            ``linear_policy.linear_bet``) instead of the EV-maximising bet; 0: the EV-maximising bet.
            Learning is the same either way (it plays every round at one unit).
        depth_bands: the dealt part of the shoe split into this many bands of equal depth, each
            (cell, action) fitted per band where the data show depth changes it
            (``band_weights``); 1: one linear fit at every depth.
    """

    kind = KIND
    _STATS = ("xtx", "xty", "yy", "ins_xtx", "ins_xty", "pre_xtx", "pre_xty")
    _LATER_STATS = ("yy",)
    stats_file = STATS_FILE
    _kernel = staticmethod(_learn_chunk)
    not_a_table = (
        "a composition learner plays by the unseen cards, not from one strategy table: use agent.model() "
        "(a LinearModel; blackjack_env.simulate.Policy.from_linear plays it) or blackjack-evaluate "
        "--policy RUN_DIR (its linear-model.json)"
    )

    def __init__(
        self,
        rules: Rules | str | Mapping[str, Any],
        bets: Sequence[float] = (1.0,),
        seats: int = 1,
        seat: int = 0,
        epsilon: float = 0.1,
        seed: int = 0,
        chunk_rounds: int = 1 << 16,
        kelly: float = 0.0,
        bankroll: float = 0.0,
        depth_bands: int = DEPTH_BANDS,
    ) -> None:
        super().__init__(rules, bets, seats, seat, seed, chunk_rounds, epsilon)
        self.kelly, self.bankroll = float(kelly), float(bankroll)
        LinearModel(*_zero_weights(), self.bets, kelly=self.kelly, bankroll=self.bankroll)  # (one line if not)
        if not (isinstance(depth_bands, int) and 1 <= depth_bands <= MAX_BANDS):
            raise ValueError(f"depth bands must be a whole number from 1 to {MAX_BANDS}, got {depth_bands!r}")
        self.depth_bands = depth_bands
        self.depth_edges = band_edges(52 * self.rules.decks, self.rules.penetration, depth_bands)
        self.epsilon = float(epsilon)
        self.xtx = np.zeros((depth_bands, N_ROWS, N_UP, N_PLAY, NF, NF))
        self.xty = np.zeros((depth_bands, N_ROWS, N_UP, N_PLAY, NF))
        self.yy = np.zeros((depth_bands, N_ROWS, N_UP, N_PLAY, 2))
        self.ins_xtx = np.zeros((2, 2, NF, NF))
        self.ins_xty = np.zeros((2, 2, NF))
        self.pre_xtx = np.zeros((NF, NF))
        self.pre_xty = np.zeros(NF)

    # ----------------------------------------------------------------- learning
    def _scratch(self, table: Table, policies: Policies) -> tuple[Any, ...]:
        """The learner's generator, its decisions' trace, chances and features, and the packed sums."""
        n = max(self.seats, 1)
        return (
            np.zeros(4, np.int64),
            np.zeros((n, MAX_DECISIONS, 4), np.int64),
            np.zeros((n, MAX_DECISIONS), np.float64),
            np.zeros((n, MAX_DECISIONS, NF), np.float64),
            np.zeros(n, np.int64),
            np.zeros(n, np.int64),
            np.zeros(n, np.int64),
            np.ones(2, np.bool_),
            np.zeros(NF, np.float64),
            np.zeros(N_PLAY, np.float64),
            np.zeros((PLAY_SLOT + self.depth_bands * N_PLAY_CELLS, PACKED), np.float64),
        )

    def policy(self) -> tuple[np.ndarray, ...]:
        """The frozen weights a chunk plays greedy in (per depth band), and which (cell, action)s have data."""
        w_play, tried, _ = band_weights(self.xtx, self.xty, self.yy)
        w_ins, tried_ins = ridge_solve(self.ins_xtx, self.ins_xty)
        return w_play, tried, w_ins, tried_ins

    def _learner(self, policy: tuple[np.ndarray, ...]) -> tuple[Any, ...]:
        return (*policy, self.epsilon, np.array(self.depth_edges, np.int64))

    # ----------------------------------------------------------------- export
    def model(self, name: str = "linear") -> LinearModel:
        """The learned weights and bets as a compiled-policy model."""
        bands, tried, pooled = band_weights(self.xtx, self.xty, self.yy)
        w_ins, _ = ridge_solve(self.ins_xtx, self.ins_xty)
        w_bet, _ = ridge_solve(self.pre_xtx, self.pre_xty)
        if self.depth_bands == 1:
            return LinearModel(pooled, tried, w_ins, w_bet, self.bets, name, self.kelly, self.bankroll)
        return LinearModel(
            pooled, tried, w_ins, w_bet, self.bets, name, self.kelly, self.bankroll, self.depth_edges, bands
        )

    # ----------------------------------------------------------------- files
    def _export(self, path: Path) -> None:
        self.model().save(path / MODEL_FILE)

    def _settings(self) -> dict[str, Any]:
        return {
            "bets": list(self.bets),
            "seats": self.seats,
            "seat": self.seat,
            "epsilon": self.epsilon,
            "seed": self.seed,
            "chunk_rounds": self.chunk_rounds,
            "ridge": RIDGE,
            "kelly": self.kelly,
            "bankroll": self.bankroll,
            "depth_bands": self.depth_bands,
            "model": MODEL_FILE,
        }

    @classmethod
    def _from_manifest(cls, path: str | Path, manifest: Mapping[str, Any]) -> LinearAgent:
        return cls(
            epsilon=manifest["epsilon"],
            kelly=manifest.get("kelly", 0.0),
            bankroll=manifest.get("bankroll", 0.0),
            depth_bands=manifest.get("depth_bands", 1),
            **cls._game_of(manifest),
        )


def _zero_weights() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return (
        np.zeros((N_ROWS, N_UP, N_PLAY, NF)),
        np.zeros((N_ROWS, N_UP, N_PLAY), np.bool_),
        np.zeros((2, 2, NF)),
        np.zeros(NF),
    )
