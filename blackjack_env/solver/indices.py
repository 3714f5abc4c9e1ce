"""Index generation: for any rules, counting system and penetration, the count at which each
count-dependent decision changes, and what playing it gains.

    from blackjack_env.solver import generate_indices
    table = generate_indices(Rules(decks=4, hit_soft_17=False, surrender="none", penetration=0.75), "hilo")
    table.entries   # [{"hand": "insurance", "up": "A", "index": 2.46, "gain_per_100": 0.029}, ...,
                    #  {"hand": "hard 16", "up": "10", "index": 0.42, "action": "S", "when": "at_or_above",
                    #   "gain_per_100": 0.016}, ...]
    table.to_json() # {"indices": [...]}, the format a counting strategy takes as its ``indices``

Method (exact EVs at average compositions, mixed over the depths of the shoe):

* The count's distribution. Rounds start evenly over the cards dealt before the cut card
  (``N_DEPTHS`` depths). After n of the shoe's N cards the seen cards' tag sum is taken as
  normal, with the hypergeometric mean and variance (finite-population factor (N - n)/(N - 1)).
  Every system is put on one scale, tau = (a full shoe's tags per deck) - (the unseen cards' tags
  per unseen deck): a balanced system's true count, for KO the running count's excess over what
  the depth alone gives; tau has mean 0 at every depth.
* The grid. At each tau in ``GRID`` (-12..+14, step 1) the unseen cards are the full shoe tilted
  exponentially, u_k = c N_k exp(-lambda tag_k), solved for that tag sum: the maximum-entropy (the
  most probable) composition at that count, every value of a tag changed in the same proportion.
  Its size is the harmonic mean of the unseen decks over the rounds dealt at that tau, so the
  finite-shoe effects are those of the depth where the count arises. Where that shoe holds fewer
  than 8 tens (``MIN_TENS``: low counts deep in a small shoe, where an average composition holds a
  fraction of a card of some values) a shoe of the
  same composition with 8 tens is analysed instead, and the table says where, by how much and for
  what share of rounds (``IndexTable.enlarged``, a line under the chart, ``about`` in its JSON).
  ``analyse`` re-optimises the total-dependent strategy for that composition
  and gives every cell's weighted EV sums exactly (player's and up card out of the shoe). Held
  re-optimised rather than basic strategy: an index player plays his other indices too, so at a
  count the other decisions of the hand (after a hit, on split hands) follow that count.
* The questions, in the casino's order: surrender (vs the best other play at that count), split
  (vs the best unsplit play; pairs answer only these two), double (vs the row's stand/hit choice
  at that count, on the unsplit and, with DAS, split two-card hands), stand vs hit (two-card,
  split and multi-card hands: an entry governs every hand of its cell). Each difference is per
  round: the chance of the up card times the weighted EV sums. The index compares the answers for
  every hand the question concerns, as if it were asked; the gain counts only the hands that reach
  it in play (e.g. not the two-card 16s the re-optimised table surrenders at that count).
* The count at the decision. A counter's count includes his cards and the up card; so for each
  cell the mean tags and number of those visible cards (hands weighted as basic strategy reaches
  them off the top; split hands left out) shift the pre-round count to the count at the decision
  (a balanced system's true count, the running count of an unbalanced one). The per-round EV
  difference at a decision count is the sum over depths of the rounds reaching that count there;
  the index is where it changes sign (linear interpolation on a fine grid; the crossing nearest
  the average count where there are several), kept when it lies in ``TC_RANGE`` (for KO the
  running counts of that range at the average depth).
* Insurance: the insurance bet's EV (and even money's for a natural) averaged over the player's
  two-card hands against the ace, at the decision count (ace and both cards seen).
* gain_per_100: 100 x the EV per round gained by the entry over basic strategy's answer to that
  question, summed over the count distribution (every other decision as at that count).

Approximations, stated: a count's average composition stands for the many shoes that reach it
(the EV differences are close to linear in the composition); the count's distribution is normal
at each depth; one seat (no other boxes' cards); past the grid the EVs are held at its ends.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import engine as E
from .._source import code_key, touch
from ..counting import CountingSystem, load_system
from ..parallel import parallel_map
from ..rules import Rules
from ..strategy import CHART_UPS, N_ROWS, PAIR_BASE, row_label, up_label
from . import _kernels as K
from ._analysis import Model, _insurance_value, _insured_natural, analyse, shoe_vector
from .solution import Solution, atomic_file, cache_dir, rules_key, solve

#: The counts (tau, see the module docstring) at which the shoe is analysed exactly.
GRID = np.arange(-12.0, 15.0, 1.0)
#: Indices are kept when they change play in this true-count range.
TC_RANGE = (-10.0, 12.0)
#: Depths (rounds' starting points before the cut card) the count distribution is averaged over.
N_DEPTHS = 24
#: Spacing of the decision-count grid on which the crossings and gains are computed.
X_STEP = 0.02
#: A question asked less often than this per round (e.g. only by unreachable hands) gets no entry.
MIN_FREQUENCY = 1e-7
#: Fewest ten-value cards a grid point's average composition is analysed with: below it (low counts
#: deep in a small shoe) a larger shoe of the same composition stands in, which keeps an average of
#: a fraction of a card per value from standing for a shoe (reported: ``IndexTable.enlarged``).
MIN_TENS = 8.0

QUESTIONS = ("R", "P", "D", "S")  # the casino's order; "S" is the stand/hit question
_ARRAYS = ("actions", "obj", "obj_split", "obj_multi", "legal2", "legal_split", "shoe")


@dataclass(frozen=True)
class Enlargement:
    """A grid count whose shoe, at the depth where that count arises, holds fewer than the
    ``MIN_TENS`` ten-value cards: a shoe of the same composition ``factor`` times
    larger (``factor * decks`` decks) was analysed instead, so finite-shoe effects there are those of
    the larger shoe. ``share``: the share of rounds whose count (tau) lies nearest this grid point."""

    count: float  # tau: a balanced system's true count (see the module docstring)
    decks: float  # unseen decks where the count arises
    factor: float
    share: float


@dataclass(frozen=True)
class IndexTable:
    """Generated index plays for a game and a counting system.

    entries: the counting strategy's index format, each with ``gain_per_100`` (EV per 100 rounds,
    units of the initial bet, gained over basic strategy's answer to that question).
    enlarged: the grid counts analysed on a larger shoe than the one they arise in (deep in a
    small shoe at low counts); empty where every count was analysed as it arises."""

    rules: Rules
    system: CountingSystem
    entries: list[dict[str, Any]]
    enlarged: tuple[Enlargement, ...] = ()

    def approximation(self) -> str | None:
        """One sentence on the enlarged shoes (None where there are none), shown with the table."""
        if not self.enlarged:
            return None
        counts = f"{self.enlarged[0].count:+g}" + (
            f" to {self.enlarged[-1].count:+g}" if len(self.enlarged) > 1 else ""
        )
        factors = sorted(e.factor for e in self.enlarged)
        return (
            f"approximated: at counts (tau) {counts} the shoe holds fewer than {MIN_TENS:g} tens; "
            f"analysed {factors[0]:.2f}-{factors[-1]:.2f} times larger shoes of the same "
            f"composition ({100 * sum(e.share for e in self.enlarged):.2g}% of rounds)"
        )

    def to_json(self) -> dict[str, Any]:
        """The object a counting strategy takes its ``indices`` from (and ``about``: the approximation,
        where there is one)."""
        note = self.approximation()
        return {"indices": self.entries, **({"about": note} if note else {})}

    @property
    def count_name(self) -> str:
        return self.system.count_name

    def to_csv(self) -> str:
        """One line per entry: hand, up, action (I for insurance), when, index, gain_per_100."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(_CSV_FIELDS)
        for e in self.entries:
            writer.writerow([e.get(k, {"action": "I", "when": "at_or_above"}.get(k)) for k in _CSV_FIELDS])
        return out.getvalue().rstrip("\n")

    def format_chart(self) -> str:
        """A text table, the most valuable plays first."""
        lines = [
            f"{self.system.name} index plays, {self.rules.describe()}: {len(self.entries)} plays",
            f"(the {self.count_name} at the decision, a float, never rounded; gain: units per 100 rounds over basic)",
            f"{'hand':<10}{'up':>3}  {'play':<24}{'gain/100':>10}",
        ]
        for e in sorted(self.entries, key=lambda e: -e["gain_per_100"]):
            lines.append(f"{e['hand']:<10}{e['up']:>3}  {play_text(e):<24}{e['gain_per_100']:>10.5f}")
        note = self.approximation()
        return "\n".join(lines + ([note] if note else []))

    def plot(self, path: str | Path) -> None:
        """A PNG chart: hands by up card, each cell the plays and their indices, coloured by index."""
        from matplotlib.figure import Figure  # optional dependency: matplotlib (the report extra)

        cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for e in self.entries:
            if e["hand"] != "insurance":
                cells.setdefault((e["hand"], e["up"]), []).append(e)
        hands = list(dict.fromkeys(e["hand"] for e in self.entries if e["hand"] != "insurance"))
        ups = [up_label(u) for u in CHART_UPS]
        grid = np.full((len(hands), len(ups)), np.nan)
        for (hand, up), es in cells.items():
            grid[hands.index(hand), ups.index(up)] = max(es, key=lambda e: e["gain_per_100"])["index"]
        fig = Figure(figsize=(9, 0.32 * len(hands) + 1.6), dpi=100, layout="constrained")
        ax = fig.subplots()
        limit = float(np.nanmax(np.abs(grid))) if len(hands) else 1.0
        image = ax.imshow(grid, cmap="coolwarm", vmin=-limit, vmax=limit, aspect="auto")
        for (hand, up), es in cells.items():
            text = "\n".join(play_text(e, short=True) for e in es)
            ax.text(ups.index(up), hands.index(hand), text, ha="center", va="center", fontsize=6)
        ax.set_xticks(range(len(ups)), ups)
        ax.set_yticks(range(len(hands)), hands, fontsize=7)
        ax.set_xlabel("dealer up card")
        insurance = [e for e in self.entries if e["hand"] == "insurance"]
        title = f"{self.system.name} indices ({self.count_name}), {self.rules.describe()}"
        if insurance:
            title += f"; insure at {insurance[0]['index']:+.2f} or above"
        ax.set_title(title, fontsize=9)
        fig.colorbar(image, ax=ax, label=f"index ({self.count_name})", shrink=0.6)
        fig.savefig(path, format="png")


_CSV_FIELDS = ("hand", "up", "action", "when", "index", "gain_per_100")


def play_text(entry: dict[str, Any], short: bool = False) -> str:
    """'S >= +0.42 (else H)', 'D < -1.20', 'insure >= +2.46'; short: 'S>=+0.4'."""
    action = entry.get("action", "insure")
    sign = "<" if entry.get("when") == "below" else ">="
    if short:
        return f"{action}{sign}{entry['index']:+.1f}"
    other = {"S": " (else H)", "H": " (else S)"}.get(action, "")
    return f"{action} {sign} {entry['index']:+.2f}{other}"


def check_rules(rules: Rules) -> None:
    """Index generation needs a finite shoe dealt to a cut card: otherwise there is no count."""
    if rules.infinite:
        raise ValueError("index generation needs a finite shoe (decks >= 1): an infinite deck has no count")
    if rules.penetration <= 0:
        raise ValueError(
            "index generation needs a cut card (penetration > 0, e.g. --set penetration=0.75): "
            "with a shuffle every round the count is always 0 off the top"
        )


# ============================================================================ the count's distribution
@dataclass(frozen=True)
class _Counts:
    """The shoe's count scale and the rounds' depths (see the module docstring)."""

    system: CountingSystem
    decks: int
    unseen: np.ndarray  # [N_DEPTHS] unseen decks when a round starts
    sd: np.ndarray  # [N_DEPTHS] standard deviation of tau there

    @classmethod
    def of(cls, rules: Rules, system: CountingSystem) -> _Counts:
        full = shoe_vector(rules)[0]  # a finite shoe (check_rules)
        n_cards = full.sum()
        tags = np.asarray(system.tags)
        mean = full @ tags / n_cards
        var = full @ (tags - mean) ** 2 / n_cards
        seen = (np.arange(N_DEPTHS) + 0.5) / N_DEPTHS * rules.penetration * n_cards
        left = n_cards - seen
        var_sum = seen * var * left / (n_cards - 1)
        return cls(system, rules.decks, left / 52.0, np.sqrt(var_sum) / (left / 52.0))

    @property
    def deck_sum(self) -> float:
        return self.system.deck_sum()

    def log_weights(self, tau: np.ndarray) -> np.ndarray:
        """log of each depth's density of tau (rows: tau, columns: depths), up to a constant."""
        return -0.5 * (tau / self.sd) ** 2 - np.log(self.sd)

    def grid_share(self, i: int) -> float:
        """The share of rounds whose tau lies nearest grid point ``i`` (the ends take the tails), the
        depths equally likely and tau normal at each."""
        edges = [-math.inf, *(0.5 * (GRID[1:] + GRID[:-1])), math.inf]
        lo, hi = edges[i], edges[i + 1]

        def below(t: float) -> np.ndarray:
            return 0.5 * np.array([math.erfc(-t / (math.sqrt(2.0) * sd)) for sd in self.sd])

        return float(np.mean(below(hi) - below(lo)))

    def grid_depth(self, tau: float) -> float:
        """Harmonic mean of the unseen decks over the rounds dealt at tau."""
        w = _normalised(self.log_weights(np.array([[tau]])))[0]
        return float(1.0 / (w @ (1.0 / self.unseen)))

    def tau(self, x: np.ndarray, visible_tags: float, visible_cards: float) -> tuple[np.ndarray, np.ndarray]:
        """Pre-round tau at each depth (columns) of a decision count x (rows) after visible cards
        with those tags were seen, and d tau / d x."""
        left = self.unseen - visible_cards / 52.0
        x = x[:, None]
        if self.system.balanced:
            running, slope = x * left, left / self.unseen
        else:
            running, slope = x - self.system.initial_running_count(self.decks), 1.0 / self.unseen
        seen_tags = running - visible_tags
        tau = self.deck_sum - (self.deck_sum * self.decks - seen_tags) / self.unseen
        return tau, np.broadcast_to(slope, tau.shape)

    def x_of_tau(self, tau: float, depth: float) -> float:
        """The decision count (no visible cards) of tau at a depth: the true count, or KO's running count."""
        if self.system.balanced:
            return tau
        return (
            (tau - self.deck_sum) * depth + self.deck_sum * self.decks + self.system.initial_running_count(self.decks)
        )

    def entry_range(self) -> tuple[float, float]:
        depth = float(self.unseen.mean())
        return self.x_of_tau(TC_RANGE[0], depth), self.x_of_tau(TC_RANGE[1], depth)

    def x_grid(self) -> np.ndarray:
        """Decision counts covering the entry range and +-6 sd of tau at every depth."""
        lo, hi = self.entry_range()
        for depth, sd in zip(self.unseen, self.sd, strict=True):
            lo = min(lo, self.x_of_tau(-6 * sd, depth) - 2)
            hi = max(hi, self.x_of_tau(6 * sd, depth) + 2)
        return np.arange(np.floor(lo), np.ceil(hi) + X_STEP / 2, X_STEP)

    def centre(self) -> float:
        """The average count (where several crossings are told apart)."""
        return self.x_of_tau(0.0, float(self.unseen.mean())) if not self.system.balanced else 0.0


def _normalised(log_w: np.ndarray) -> np.ndarray:
    w = np.exp(log_w - log_w.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)


def tilted_shoe(rules: Rules, system: CountingSystem, tau: float, decks_unseen: float) -> np.ndarray:
    """The unseen cards (per value A, 2..10) at count tau: the full shoe tilted by exp(-lambda tag)
    to a tag sum of (deck_sum - tau) per unseen deck, scaled to ``decks_unseen`` decks."""
    full = shoe_vector(rules)[0]  # a finite shoe (check_rules)
    tags = np.asarray(system.tags)
    target = (system.deck_sum() - tau) / 52.0
    if not tags.min() < target < tags.max():
        raise ValueError(f"no composition of the {system.name} tags has a true count of {tau:g}")

    def mean_tag(lam: float) -> tuple[float, np.ndarray]:
        e = -lam * tags
        w = full * np.exp(e - e.max())
        return float(w @ tags / w.sum()), w

    lo, hi = -60.0, 60.0  # mean_tag decreases in lambda
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mean_tag(mid)[0] > target:
            lo = mid
        else:
            hi = mid
    w = mean_tag(0.5 * (lo + hi))[1]
    shoe = w / w.sum() * 52.0 * decks_unseen
    if shoe[9] < MIN_TENS:  # a larger shoe of the same composition, reported (IndexTable.enlarged)
        shoe *= MIN_TENS / shoe[9]
    return shoe


# ============================================================================ the grid of exact analyses
def _analyse_point(rules: Rules, shoe: np.ndarray) -> dict[str, np.ndarray]:
    """One grid point: the re-optimised analysis of that composition (a worker's job)."""
    a = analyse(rules, None, shoe=shoe)
    return {
        "actions": a.actions,
        "obj": a.obj,
        "obj_split": a.obj_split,
        "obj_multi": a.obj_multi,
        "legal2": a.legal2,
        "legal_split": a.legal_split,
        "shoe": np.asarray(shoe, np.float64),
    }


def _grid_key(rules: Rules, system: CountingSystem) -> str:
    text = json.dumps(
        {
            "indices": code_key(__name__),
            "rules": rules_key(rules),
            "penetration": rules.penetration,
            "tags": [float(t) for t in system.tags],
            "balanced": system.balanced,
            "grid": GRID.tolist(),
            "depths": N_DEPTHS,
        },
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _grid(
    rules: Rules, system: CountingSystem, counts: _Counts, workers: int | None, cache: bool
) -> dict[str, np.ndarray]:
    """The analyses at every grid point, stacked (arrays [len(GRID), ...]); cached on disk."""
    path = cache_dir() / f"indices-{_grid_key(rules, system)}.npz"
    if cache and path.exists():
        try:
            with np.load(path, allow_pickle=False) as data:
                grid = {name: data[name] for name in _ARRAYS}
            touch(path)  # used: kept by the cache's pruning
            return grid
        except Exception:
            pass
    shoes = [tilted_shoe(rules, system, float(t), counts.grid_depth(float(t))) for t in GRID]
    points = list(parallel_map(_analyse_point, [(rules, s) for s in shoes], workers=workers))
    grid = {name: np.stack([p[name] for p in points]) for name in _ARRAYS}
    if cache:
        with contextlib.suppress(OSError):
            _save(path, grid)
    return grid


def _save(path: Path, arrays: dict[str, Any]) -> None:  # Any: mypy reads **arrays as maybe savez's allow_pickle
    """Into the cache, atomically (``atomic_file``)."""
    with atomic_file(path) as f:
        np.savez(f, **arrays)


# ============================================================================ questions
def _first(order: np.ndarray, legal: np.ndarray, skip: Sequence[int] = ()) -> int:
    """The first action of a preference order that is legal and not skipped (-1: none)."""
    for a in order:
        if legal[a] and a not in skip:
            return int(a)
    return -1


def _question_diff(q: str, order, l2, ls, obj, obj_split, obj_multi) -> tuple[float, float]:
    """Weighted EV sums (given the up card) of answering ``q`` yes minus no in one cell: over every
    hand the question concerns (as if it were asked), and over those that reach it when the earlier
    questions are answered as ``order`` (the table at that count) answers them."""
    if q == "R":
        diff = obj[E.SURRENDER] - obj[_first(order, l2, (E.SURRENDER,))]
        return diff, diff
    reached = _first(order, l2) not in (E.SURRENDER, E.SPLIT, E.DOUBLE)[: QUESTIONS.index(q)]
    if q == "P":
        diff = obj[E.SPLIT] - obj[_first(order, l2, (E.SURRENDER, E.SPLIT))]
        return diff, diff * reached
    fallback = int(K.first_of(order, E.STAND, E.HIT))
    if q == "D":
        dealt = obj[E.DOUBLE] - obj[fallback] if l2[E.DOUBLE] else 0.0
        split = obj_split[E.DOUBLE] - obj_split[fallback] if ls[E.DOUBLE] else 0.0
        return dealt + split, dealt * reached + split
    dealt = obj[E.STAND] - obj[E.HIT]
    split = obj_split[E.STAND] - obj_split[E.HIT] if ls.any() else 0.0
    split_reached = ls.any() and _first(order, ls) in (E.STAND, E.HIT)
    multi = obj_multi[0] - obj_multi[1]
    return dealt + split + multi, dealt * reached + split * split_reached + multi


def _per_round(q: str, grid: dict[str, np.ndarray], p_up: np.ndarray, row: int, col: int) -> np.ndarray:
    """[2, len(GRID)]: the question's two differences (see _question_diff) per round at each grid tau."""
    names = ("actions", "legal2", "legal_split", "obj", "obj_split", "obj_multi")
    diffs = [_question_diff(q, *(grid[name][i, row, col] for name in names)) for i in range(len(GRID))]
    return np.array(diffs).T * p_up[:, col]


def _basic_says_yes(q: str, order: np.ndarray, l2: np.ndarray) -> bool:
    """Basic strategy's answer to a question (for "S": whether it stands)."""
    if q == "R":
        return _first(order, l2) == E.SURRENDER
    if q == "P":
        return _first(order, l2, (E.SURRENDER,)) == E.SPLIT
    if q == "D":
        return _first(order, l2, (E.SURRENDER, E.SPLIT)) == E.DOUBLE
    return int(K.first_of(order, E.STAND, E.HIT)) == E.STAND


def _questions(basic: Solution) -> list[tuple[int, int, str]]:
    """Every (row, column, question) a count may change: decided often enough, action legal."""
    out = []
    for row in range(N_ROWS):
        section, key = row_label(row)
        if section != "pairs" and int(key) == 21:
            continue  # 21 stands by itself
        for col in range(10):
            if basic.freq[row, col] < MIN_FREQUENCY:
                continue
            l2 = basic.legal2[row, col]
            asks = ["R", "P"] if section == "pairs" else ["R", "D", "S"]
            for q in asks:
                legal = {
                    "R": l2[E.SURRENDER],
                    "P": l2[E.SPLIT],
                    "D": l2[E.DOUBLE] or basic.legal_split[row, col, E.DOUBLE],
                }
                if legal.get(q, True):
                    out.append((row, col, q))
    return out


def _visible_cards(rules: Rules, system: CountingSystem, basic: Solution) -> dict[tuple[int, int, str], tuple]:
    """Mean tags and number of the cards a counter has seen at each cell's decision (his cards and
    the up card), per question (stand/hit: multi-card hands too); hands weighted as basic strategy
    reaches them off the top (split hands left out)."""
    model = Model(rules)
    sp = model.space
    tags = np.asarray(system.tags)
    hand_tags = sp.counts @ tags
    hand_cards = sp.n_cards.astype(np.float64)
    out: dict[tuple[int, int, str], tuple[float, float]] = {}
    two = sp.n_cards == 2
    for up in range(1, 11):
        col = up - 1
        weights = np.zeros((3, sp.size))
        deal = model.deal_weights(up)
        weights[K.W_DEAL] = deal * (1.0 - model.split_frac)
        weights[K.W_DEAL, model.natural_id] = 0.0
        model.reach(up, basic.table.actions, weights)
        for row in range(PAIR_BASE):
            in_row = sp.row == row
            deal_w = np.where(in_row & two, weights[K.W_DEAL], 0.0)
            for qs, w in (("RD", deal_w), ("S", deal_w + np.where(in_row, weights[K.W_MULTI], 0.0))):
                total = w.sum()
                mean = (w @ hand_tags / total, w @ hand_cards / total) if total > 0 else (0.0, 2.0)
                for q in qs:
                    out[row, col, q] = (mean[0] + tags[col], mean[1] + 1.0)
        for pair in range(1, 11):
            for q in "RP":
                out[PAIR_BASE + pair - 1, col, q] = (2 * tags[pair - 1] + tags[col], 3.0)
    w = model.deal_weights(1)
    out[-1, 0, "I"] = (w @ hand_tags / w.sum() + tags[0], 3.0)
    return out


def _insurance_diffs(rules: Rules, shoes: np.ndarray) -> np.ndarray:
    """Per round, at each grid shoe: the gain of insuring (and of even money or insuring a
    natural) over declining, summed over the player's two-card hands against an ace."""
    out = np.zeros(len(shoes))
    for i, shoe in enumerate(shoes):
        n = shoe.sum()
        left = shoe.copy()
        left[0] -= 1.0
        m = n - 1.0
        gain = 0.0
        for a in range(10):
            for b in range(a, 10):
                pa = left[a] / m
                pb = (left[b] - (a == b)) / (m - 1.0)
                w = max(pa, 0.0) * max(pb, 0.0) * (1 if a == b else 2)
                p = (left[9] - (a == 9) - (b == 9)) / (m - 2.0)
                if a == 0 and b == 9:
                    gain += w * (_insured_natural(rules, p) - (1.0 - p) * rules.blackjack_pays)
                elif rules.insurance:
                    gain += w * _insurance_value(p)
        out[i] = shoe[0] / n * gain
    return out


# ============================================================================ crossings and gains
def _entry(
    counts: _Counts, x: np.ndarray, per_round: np.ndarray, visible: tuple[float, float], basic_yes: bool
) -> tuple[float, bool, float] | None:
    """(index, yes at or above it, gain per round) of one question, or None if it does not
    change play in the entry range. per_round: the yes-minus-no EV per round at each grid tau, of
    the hands the question concerns (the index) and of those that reach it in play (the gain)."""
    tau, slope = counts.tau(x, *visible)
    log_w = counts.log_weights(tau) + np.log(slope)
    diff = np.interp(tau, GRID, per_round[0])
    mean = (_normalised(log_w) * diff).sum(axis=1)  # the EV difference averaged over rounds at x
    lo, hi = counts.entry_range()
    sign = np.where(mean >= 0, 1, -1)
    cross = np.flatnonzero(sign[:-1] != sign[1:])
    if not len(cross):
        return None
    at = x[cross] - mean[cross] * (x[cross + 1] - x[cross]) / (mean[cross + 1] - mean[cross])
    keep = (at >= lo) & (at <= hi)
    if not keep.any():
        return None
    k = int(np.argmin(np.where(keep, np.abs(at - counts.centre()), np.inf)))
    index = float(at[k])
    above = bool(mean[cross[k] + 1] > mean[cross[k]])
    # the rounds' density at x (cards dealt uniformly over the depths), times the EV difference
    played = np.interp(tau, GRID, per_round[1])
    density = (np.exp(log_w) / np.sqrt(2 * np.pi) / N_DEPTHS * played).sum(axis=1)
    yes = (x >= index) == above
    gain = float((density * (yes.astype(float) - float(basic_yes))).sum() * X_STEP)
    return index, above, gain


def _format(row: int, col: int, q: str, index: float, above: bool, gain: float) -> dict[str, Any]:
    section, key = row_label(row)
    hand = f"pair {key}" if section == "pairs" else f"{section} {key}"
    if q == "S":  # stand/hit: the action played at or above the index
        action, when = ("S" if above else "H"), "at_or_above"
    else:
        action, when = q, ("at_or_above" if above else "below")
    return {
        "hand": hand,
        "up": up_label(col + 1),
        "index": round(index, 2),
        "action": action,
        "when": when,
        "gain_per_100": float(f"{100 * gain:.4g}"),
    }


def generate_indices(
    rules: Rules | str | Mapping[str, Any],
    system: CountingSystem | str,
    *,
    workers: int | None = None,
    cache: bool = True,
) -> IndexTable:
    """Index plays for a game (its ``penetration`` is the cut card) and a counting system.

    workers: processes for the grid of analyses (None: one per CPU); the grid is cached on disk
    (``cache_dir()``, keyed by the rules, penetration, tags and the code, ``code_key``)."""
    rules = Rules.coerce(rules)
    system = load_system(system)
    check_rules(rules)
    counts = _Counts.of(rules, system)
    basic = solve(rules)
    grid = _grid(rules, system, counts, workers, cache)
    p_up = grid["shoe"] / grid["shoe"].sum(axis=1, keepdims=True)
    visible = _visible_cards(rules, system, basic)
    x = counts.x_grid()
    entries: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
    for row, col, q in _questions(basic):
        per_round = _per_round(q, grid, p_up, row, col)
        basic_yes = _basic_says_yes(q, basic.table.actions[row, col], basic.legal2[row, col])
        found = _entry(counts, x, per_round, visible[row, col, q], basic_yes)
        if found is not None:
            entries.append(((row, CHART_UPS.index(col + 1), QUESTIONS.index(q)), _format(row, col, q, *found)))
    if rules.insurance or rules.even_money:
        insurance = _insurance_diffs(rules, grid["shoe"])
        found = _entry(counts, x, np.stack([insurance, insurance]), visible[-1, 0, "I"], bool(basic.table.insurance[0]))
        if found is not None and found[1]:  # insuring at high counts (tens tagged negative)
            entry = {
                "hand": "insurance",
                "up": "A",
                "index": round(found[0], 2),
                "gain_per_100": float(f"{100 * found[2]:.4g}"),
            }
            entries.append(((-1, 0, 0), entry))
    entries.sort(key=lambda item: item[0])
    return IndexTable(rules, system, [entry for _, entry in entries], _enlargements(counts, grid["shoe"]))


def _enlargements(counts: _Counts, shoes: np.ndarray) -> tuple[Enlargement, ...]:
    """The grid points whose analysed shoe (``shoes[i]``) is larger than the depth they arise at."""
    out = []
    for i, tau in enumerate(GRID):
        decks = counts.grid_depth(float(tau))
        factor = float(shoes[i].sum()) / 52.0 / decks
        if factor > 1.0 + 1e-9:
            out.append(Enlargement(float(tau), decks, factor, counts.grid_share(i)))
    return tuple(out)


__all__ = [
    "GRID",
    "MIN_TENS",
    "TC_RANGE",
    "Enlargement",
    "IndexTable",
    "check_rules",
    "generate_indices",
    "load_system",
]
