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
frozen policy playing on (``count_kernel._rollout``). The copy keeps the shoe's random stream, so every
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
neighbours fit. Where the data refuse the line (its chi-square beyond the 0.999 quantile:
``count_fit.PER_BUCKET``) the answers are read from each bucket's own mean instead. The cell's
questions are then answered in the counting format's order (:func:`greedy_answers`: stand or hit,
double, split, surrender), each against the answer the others give, and the export reads its
indices from the same values (where a line crosses 0, or the threshold that gains most on per-bucket
values), so what the learner plays by is what it exports, up to the export's one threshold per
question and its significance test.

Cells: the strategy table's, with a hard or soft total's hands of three or more cards (after a hit)
in cells of their own (``later_apart``, ``count_kernel.N_CELL_ROWS``). 16 v 10 stands at a lower count
on three cards than on two (the small card drawn is gone from the shoe), a difference no count sees.
Where a total's stand-or-hit line on its later hands differs from its two-card line by more than
their errors allow (:meth:`CountTableAgent.cell_stats`: a chi-square test on the two lines'
coefficients, ``CHI2_APART``), the two are played and exported apart (entries narrowed by ``cards``,
one entry for both where they read the same index); elsewhere both cells play from the pooled
statistics, so a difference the data do not show costs no precision.

Count buckets, by a stated rule (:func:`bucket_spec`): a balanced system's unit is its tags'
per-card standard deviation over Hi-Lo's (Hi-Lo: one whole true count, floored as the simulator's
true-count table), and its buckets are one unit wide, or half a unit in a shoe of at most
``FINE_DECKS`` (2) decks, whose true count strays far enough to fill them (so indices and bets there
move in half counts); an unbalanced system's unit is the same times the unseen decks at half the
penetration (its running count moves that much for one true count's worth), one bucket a unit. The
buckets span two standard deviations of the count at the cut card either side of where it starts,
the tails pooled.

The export (:meth:`CountTableAgent.to_strategy`) is a counting strategy: the system, the ramp that
maximises the learned EV (each bucket bets the allowed bet with the highest bet x learned value per
unit bet: the largest where it is positive, the smallest where negative; a bucket with fewer than
``MIN_BUCKET_ROUNDS`` rounds bets as the bucket below it, the lowest the smallest bet above 0),
and the learned deviations as index entries (see :func:`fit_question`). The simulator plays it
exactly as ``blackjack-evaluate`` does.

The pieces: the buckets and the compiled chunk of rounds in ``count_kernel``, the fits and the answers read
from them in ``count_fit``, what a shoe-game learner refuses and its bets in ``shoe_game``, learning in
chunks and the files in ``chunk_agent`` (shared with the composition learner); this module is the agent
(its statistics, its policy, the export) and re-exports the pieces' public names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from blackjack_env import count_policy as CP
from blackjack_env import engine as E
from blackjack_env.counting import CountingStrategy, CountingSystem, IndexEntry, parse_system
from blackjack_env.rules import Rules
from blackjack_env.strategy import N_PLAY, N_ROWS, N_UP, PAIR_BASE, row_label, up_label
from blackjack_env.table import Policies, Table, new_table

from .chunk_agent import T_DECISIONS, T_ROUNDS, T_SUM, ChunkLearnerAgent, chunk_words, write_json
from .count_fit import (
    CHI2_APART,
    DEGREE,
    PRIOR_SD,
    VAR_FLOOR,
    Z_EXPORT,
    CurveFit,
    Deviation,
    bucket_counts,
    fit_curves,
    fit_question,
    greedy_answers,
    lines_differ,
    pair_column,
    pair_curves,
    ranking_of,
    stat_means,
    stat_stderrs,
)
from .count_kernel import (
    FAR_EVERY,
    N_CELL_ROWS,
    N_PAIRS,
    PAIR_FIRST,
    PAIR_ID,
    PAIR_SECOND,
    PAIRS,
    T_ROLLOUTS,
    WR,
    WRR,
    BucketSpec,
    W,
    bucket_spec,
    learn_chunk_kernel,
    tag_sd,
)
from .shoe_game import check_table, parse_bets, spread_bets
from .tabular import MAX_DECISIONS

STATS_FILE = "count_table.npz"
STRATEGY_FILE = "counting-strategy.json"
KIND = "count-table"
#: Greedy rounds a bucket needs before its learned value sets its bet (else the smallest bet).
MIN_BUCKET_ROUNDS = 1000
#: Before merging chunk 2^k (k >= 1) the statistics so far are scaled by this: the values of a
#: decision depend on the policy that plays on after it, which is poor in the first chunks (it
#: starts from nothing), so older chunks weigh less: a chunk's weight halves each time the run
#: doubles (the last half of a run weighs 1, the quarter before 1/2, ...: about 78% of the
#: plain average's effective rounds, while the first 16 chunks of a 512-chunk run weigh 1/32).
FORGET = 0.5
#: An answer whose fitted value in a bucket and cell is more than NEAR below the greedy answer's is
#: far: no count in reach makes it best (a strong deviation gains about 0.01-0.03 per true count).
NEAR = 0.15
#: What agent.json says the statistics are (a run of another estimator is refused on load).
ESTIMATOR = "paired-rollouts"


#: Whether a new learner keeps a total's hands of three or more cards in cells of their own.
LATER_APART = True


def _narrowed(fits: dict[str, Any]) -> dict[str, Any]:
    """A stand question answered apart for two-card hands ("any": the cell's first row) and for
    hands of three or more cards, as entries: one entry for both where both read the same index and
    direction (its gain the sum), else one per kind of hand that deviates."""
    two, more = fits["any"], fits["three_or_more"]
    if two is not None and more is not None and two[:2] == more[:2]:
        return {"any": (two[0], two[1], two[2] + more[2], float(np.hypot(two[3], more[3])))}
    return {"two": two, "three_or_more": more}


# the questions of a cell in the casino's order: (question letter, action code)
_QUESTIONS = (("R", E.SURRENDER), ("P", E.SPLIT), ("D", E.DOUBLE), ("S", E.STAND))


class CountTableAgent(ChunkLearnerAgent):
    """The count-table learner (module docstring) for ``rules`` (a shoe with a cut card).

    Args:
        rules: the game.
        system: the counting system (a built-in name or a CountingSystem).
        bets: the allowed bets, increasing (0 sits a round out: needs seats >= 2).
        seats, seat: the table, and the learner's seat (-1: every seat, one shared policy).
        seed: fixes every card of the run.
        chunk_rounds: rounds per seeded chunk (its policy is frozen; checkpoints fall between chunks).
        fine: half-unit buckets (None: by ``bucket_spec``'s rule for the shoe).
        later_apart: keep a hard or soft total's hands of three or more cards in cells of their own
            (answered apart where their stand-or-hit line differs: :meth:`cell_stats`).
    """

    kind = KIND
    _STATS = ("stats", "ins_stats", "pre_stats")
    _TALLIES = ("decisions", "rollouts")
    stats_file = STATS_FILE
    compress_stats = True
    not_a_table = (
        "a count-table learner plays by the count, not from one strategy table: use "
        "agent.to_strategy() (a CountingStrategy; blackjack_env.simulate.Policy.from_counting plays it) "
        "or blackjack-evaluate --policy RUN_DIR (its counting-strategy.json)"
    )
    _kernel = staticmethod(learn_chunk_kernel)
    rollouts: int

    def __init__(
        self,
        rules: Rules | str | Mapping[str, Any],
        system: CountingSystem,
        bets: Sequence[float] = (1.0,),
        seats: int = 1,
        seat: int = 0,
        seed: int = 0,
        chunk_rounds: int = 1 << 16,
        fine: bool | None = None,
        later_apart: bool = LATER_APART,
    ) -> None:
        super().__init__(rules, bets, seats, seat, seed, chunk_rounds)
        self.system = system
        self.spec = bucket_spec(system, self.rules, fine)
        self.later_apart = later_apart
        n = self.spec.n
        self.stats = np.zeros((n, N_CELL_ROWS if later_apart else N_ROWS, N_UP, N_PAIRS, 3))
        self.ins_stats = np.zeros((n, 2, 3))
        self.pre_stats = np.zeros((n, 3))
        self.params = CP.policy_params(CountingStrategy(system, name=system.name), self.rules)

    # ----------------------------------------------------------------- learning
    def _scratch(self, table: Table, policies: Policies) -> tuple[Any, ...]:
        """The learner's generator, its decisions' trace and values, and the rollouts' copy of the
        table (sharing ``mask``) and of the policies (their own generators)."""
        n = max(self.seats, 1)
        copy = new_table(table.rv, self.seats)._replace(mask=table.mask)
        scratch = (copy, policies._replace(prngs=np.zeros_like(policies.prngs)))
        return (
            np.zeros(4, np.int64),
            np.zeros((n, MAX_DECISIONS, 5), np.int64),
            np.zeros((n, MAX_DECISIONS, N_PLAY), np.float64),
            np.zeros(n, np.int64),
            scratch,
        )

    def _learner(self, policy: tuple[np.ndarray, ...]) -> tuple[Any, ...]:
        return (self.params, self.spec.array(), *policy)

    def _age(self) -> None:
        """Before merging chunk 2^k (k >= 1), the statistics so far weigh FORGET."""
        if self.chunks >= 2 and self.chunks & (self.chunks - 1) == 0:
            for kept in (self.stats, self.ins_stats, self.pre_stats):
                kept *= FORGET

    def policy(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The greedy policy of the statistics so far, per bucket: the play actions' preference order
        per cell (greedy_answers of the fitted pair curves), whether to take insurance, and which
        answers are near enough to the greedy one to roll out at every decision (NEAR)."""
        stats, _ = self.cell_stats()
        values = pair_curves(stats, self.spec).values()
        ranking = ranking_of(greedy_answers(values))
        take = pair_curves(self.ins_stats[..., None, :], self.spec).curve_values()[..., 0] > 0  # linear: the tens
        near = np.ones((*ranking.shape, N_PLAY), np.bool_)  # [..., the greedy answer, another]
        measured = stats[..., W].sum(axis=0) > 0  # [rows, cols, pairs]
        for best in range(N_PLAY):
            for a in range(N_PLAY):
                if a != best:
                    column, sign = pair_column(best, a)
                    far = (sign * values[..., column] > NEAR) & measured[None, ..., column]
                    near[..., best, a] = ~far
        return ranking, np.ascontiguousarray(take), near

    def cell_stats(self) -> tuple[np.ndarray, np.ndarray]:
        """The statistics the policy and the export read, per learner cell, and which totals' cells
        (PAIR_BASE x N_UP) answer their hands of three or more cards apart: those whose stand-or-hit
        line there differs from the two-card hands' (``lines_differ``, chi-square above CHI2_APART).
        Elsewhere both rows hold the pooled sums, so a difference the data do not show costs no
        precision (and a run that keeps no later cells reads its own statistics)."""
        apart = np.zeros((PAIR_BASE, N_UP), np.bool_)
        if not self.later_apart:
            return self.stats, apart
        first, later = self.stats[:, :PAIR_BASE], self.stats[:, N_ROWS:]
        column, _ = pair_column(E.STAND, E.HIT)
        lines = [pair_curves(part[..., column : column + 1, :], self.spec) for part in (first, later)]
        apart = lines_differ(*lines)[..., 0]
        pooled = first + later
        out = self.stats.copy()
        out[:, :PAIR_BASE] = np.where(apart[..., None, None], first, pooled)
        out[:, N_ROWS:] = np.where(apart[..., None, None], later, pooled)
        return out, apart

    # ----------------------------------------------------------------- export
    def round_values(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per bucket: the learned value per unit bet of the greedy policy's round, its standard
        error, and the greedy rounds behind it."""
        return stat_means(self.pre_stats), stat_stderrs(self.pre_stats), self.pre_stats[:, W]

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
        stats, apart = self.cell_stats()
        curves = pair_curves(stats, self.spec)
        answers = greedy_answers(curves.values())
        weights = stats[..., W]
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
                    fits = {"any": self._question(stats, curves, answers[letter + "_no"], row, col, action, basic_yes)}
                    if letter == "S" and row < PAIR_BASE and apart[row, col]:
                        # hands of three or more cards: stand or hit, by their own line
                        later_yes = next(a for a in order if a in (E.STAND, E.HIT)) == E.STAND
                        fits["three_or_more"] = self._question(
                            stats, curves, answers["S_no"], N_ROWS + row, col, action, later_yes
                        )
                        fits = _narrowed(fits)
                    for cards, fit in fits.items():
                        if fit is not None:
                            found.append(self._deviation(row, col, letter, cards, fit, rounds))
        ins = self._insurance_deviation(rounds)
        return ([ins] if ins else []) + found

    def _deviation(
        self, row: int, col: int, letter: str, cards: str, fit: tuple[int, str, float, float], rounds: int
    ) -> Deviation:
        """A fitted question's answer as an index entry with its gain per 100 rounds."""
        k, when, gain, err = fit
        section, key = row_label(row)
        hand = {"hard": "hard", "soft": "soft", "pairs": "pair"}[section] + " " + key
        data = {"hand": hand, "up": up_label(col + 1), "index": self.spec.edge(k), "action": letter, "when": when}
        if cards != "any":
            data["cards"] = cards
        return Deviation(IndexEntry.from_dict(data, "learned"), 100 * gain / rounds, 100 * err / rounds)

    def _question(
        self,
        stats: np.ndarray,
        curves: CurveFit,
        alternatives: np.ndarray,
        row: int,
        col: int,
        action: int,
        basic_yes: bool,
    ) -> tuple[int, str, float, float] | None:
        """fit_question for ``action`` in a learner cell against its per-bucket alternative
        (``alternatives[:, row, col]``): the pair curves (action, m) for each alternative m, mixed by
        where m is the answer, weighed by how often the pair was measured (the question's
        decisions; fit_question's gain is then per run, the caller divides by the rounds)."""
        alternative = alternatives[:, row, col]
        others = [m for m in range(N_PLAY) if m != action and np.any(alternative == m)]
        columns = [pair_column(action, m) for m in others]
        if not others or all(stats[:, row, col, c, W].sum() == 0 for c, _ in columns):
            return None
        # each pair's curve, or one value per bucket for all of them where the data refuse one's curve
        per_bucket = any(curves.refuses(row, col, c) for c, _ in columns)
        fits = [(curves.buckets_at if per_bucket else curves.at)(row, col, c) for c, _ in columns]
        beta = np.stack([sign * fit.beta for fit, (_, sign) in zip(fits, columns, strict=True)])
        cov = np.stack([fit.cov for fit in fits])
        mix = np.stack([(alternative == m).astype(float) for m in others], axis=-1)
        freq = np.asarray(sum(mix[:, i] * stats[:, row, col, c, W] for i, (c, _) in enumerate(columns)))
        return fit_question(CurveFit(beta, cov, fits[0].design), mix, freq, basic_yes, self.spec)

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
            "(every legal answer rolled out on the same cards) crosses 0, or where the data refuse the line "
            "the threshold that gains most on the buckets' own values; a stand question answered apart for "
            "hands of three or more cards where their line differs from two cards' (cards), "
            f"kept when their fitted gain over basic strategy's answer is {Z_EXPORT:g} standard errors "
            "above 0 (gain_per_100 as learned)"
        )
        return data

    # ----------------------------------------------------------------- files
    def _export(self, path: Path) -> None:
        write_json(path / STRATEGY_FILE, self.strategy_dict())

    def _settings(self) -> dict[str, Any]:
        return {
            "system": CountingStrategy(self.system).to_dict()["system"],
            "bets": list(self.bets),
            "seats": self.seats,
            "seat": self.seat,
            "seed": self.seed,
            "chunk_rounds": self.chunk_rounds,
            "estimator": ESTIMATOR,
            "strategy": STRATEGY_FILE,
            "buckets_per_unit": self.spec.per_unit,
            "later_apart": self.later_apart,
        }

    @classmethod
    def _from_manifest(cls, path: str | Path, manifest: Mapping[str, Any]) -> CountTableAgent:
        if manifest.get("estimator") != ESTIMATOR:
            raise ValueError(
                f"{path} holds statistics of an earlier count-table learner (Monte Carlo with exploration); "
                f"this version learns from {ESTIMATOR} and cannot continue or export it: train it again"
            )
        # a run saved before half-unit buckets kept whole ones whatever its deck count
        fine = manifest.get("buckets_per_unit", 1) == 2
        # and one saved before later cells pooled a total's decisions in one cell
        later_apart = bool(manifest.get("later_apart", False))
        return cls(
            system=parse_system(manifest["system"]), **cls._game_of(manifest), fine=fine, later_apart=later_apart
        )


__all__ = [
    "CHI2_APART",
    "DEGREE",
    "ESTIMATOR",
    "FAR_EVERY",
    "FORGET",
    "KIND",
    "LATER_APART",
    "MIN_BUCKET_ROUNDS",
    "NEAR",
    "N_CELL_ROWS",
    "N_PAIRS",
    "PAIRS",
    "PAIR_FIRST",
    "PAIR_ID",
    "PAIR_SECOND",
    "PRIOR_SD",
    "STATS_FILE",
    "STRATEGY_FILE",
    "T_DECISIONS",
    "T_ROLLOUTS",
    "T_ROUNDS",
    "T_SUM",
    "VAR_FLOOR",
    "WR",
    "WRR",
    "Z_EXPORT",
    "BucketSpec",
    "CountTableAgent",
    "CurveFit",
    "Deviation",
    "W",
    "bucket_counts",
    "bucket_spec",
    "check_table",
    "chunk_words",
    "fit_curves",
    "fit_question",
    "greedy_answers",
    "pair_curves",
    "parse_bets",
    "ranking_of",
    "spread_bets",
    "tag_sd",
]
