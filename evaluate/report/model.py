"""The report's numbers: the data model (what summary.json holds) and the run that fills it.

``build_report`` simulates the policy with basic strategy (and random play) on the same cards, adds the
exact analysis of a strategy table or a counter's figures, a training run's learning curve and, with
``--ceiling``, the ceiling of the game; figures and documents only read a :class:`Report`.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from blackjack_env.counting import CARDS_MARK, VALUES, CountingStrategy
from blackjack_env.counting import system as counting_system
from blackjack_env.rules import Rules
from blackjack_env.simulate import Z95, Policy, SimulationResult, interval
from blackjack_env.solver import solve
from blackjack_env.solver.ceiling import CeilingResult, check_rules, policy_share
from blackjack_env.strategy import StrategyTable
from blackjack_env.train.trainer import METRICS_FILE

from ..counting_stats import counting_figures
from ..options import (
    CliError,
    RunFeedback,
    ceiling_bets,
    game_ceiling,
    note_compile,
    policy_rules,
    table_from_args,
)
from ..policies import load_policy, shoe_agent_run
from ..runner import RunOutcome
from .formats import COUNT_FIGURES, fmt_count
from .learner import build_learner, learner_kind, read_run_metrics

if TYPE_CHECKING:
    from blackjack_env.linear_policy import LinearModel
    from blackjack_env.simulate import Table

    from .learner import Learner
    from .network import Network

PROG = "blackjack-evaluate report"
METRICS_COLUMNS = ("step", "ev_gap", "ev_gap_low", "ev_gap_high", "agreement")
#: The counter's bankroll when --bankroll is not given (table-minimum units).
DEFAULT_BANKROLL = 1000.0
#: Bankroll paths drawn, and the rounds each one lasts.
BANKROLL_PATHS = 5
BANKROLL_ROUNDS = 100_000
#: SeedSequence spawn key of the bankroll paths' generator: far beyond the chunks' keys (0, 1, ...),
#: so the paths never reuse the cards' random numbers.
BANKROLL_STREAM = 2**31
BANKROLL_METHOD = "normal approximation with the simulated EV and SD per round"
#: What the ceiling includes (blackjack_env.solver.ceiling's method), as the documents say it.
CEILING_METHOD = (
    "round-start shoes sampled as the game deals them (the compiled simulator plays shoes to the cut card), "
    "each analysed exactly: the composition at the round's start and the best total-dependent strategy for it, "
    "not the cards dealt during the round"
)


@dataclass
class Estimate:
    """A simulated mean with its 95% confidence interval."""

    value: float
    low: float
    high: float
    stderr: float

    @classmethod
    def of(cls, mean: float, stderr: float) -> Estimate:
        low, high = interval(mean, stderr)
        return cls(mean, low, high, stderr)

    def to_dict(self) -> dict[str, float]:
        return {"value": self.value, "ci95_low": self.low, "ci95_high": self.high, "stderr": self.stderr}


@dataclass
class BankrollPaths:
    """A few bankrolls over ``rounds`` rounds, each round's result drawn from a normal law with the
    simulated EV and SD per round. Resampling simulated rounds would not be honest for a counter:
    its results come in runs, its bets following the count. A path that reaches 0 is ruined there."""

    start: float
    ev: float
    sd: float
    seed: int
    values: np.ndarray  # float[paths, rounds + 1]: the bankroll after 0, 1, ..., rounds rounds; NaN after ruin
    ruined_at: list[int | None]

    @classmethod
    def simulate(
        cls, start: float, ev: float, sd: float, seed: int, paths: int = BANKROLL_PATHS, rounds: int = BANKROLL_ROUNDS
    ) -> BankrollPaths:
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(BANKROLL_STREAM,)))
        walk = start + np.cumsum(rng.normal(ev, sd, size=(paths, rounds)), axis=1)
        values = np.concatenate([np.full((paths, 1), start), walk], axis=1)
        ruined_at: list[int | None] = []
        for row in values:
            broke = np.flatnonzero(row <= 0)
            if broke.size:
                row[broke[0]] = 0.0
                row[broke[0] + 1 :] = np.nan
            ruined_at.append(int(broke[0]) if broke.size else None)
        return cls(start, ev, sd, seed, values, ruined_at)

    @property
    def rounds(self) -> int:
        return self.values.shape[1] - 1

    @property
    def final(self) -> list[float]:
        """Each path's bankroll at the end (0 once ruined)."""
        return [0.0 if r is not None else float(v[-1]) for v, r in zip(self.values, self.ruined_at, strict=True)]

    def describe(self) -> str:
        """One sentence with every path's end, as both documents print it."""
        ruined = [r for r in self.ruined_at if r is not None]
        finals = ", ".join(f"{v:,.0f}" for v in self.final)
        text = (
            f"After {self.rounds:,} rounds from {self.start:,g} units the {len(self.ruined_at)} paths end at {finals}"
        )
        if not ruined:
            return text + "; none is ruined."
        return text + f"; {len(ruined)} ruined, after " + ", ".join(f"{r:,}" for r in ruined) + " rounds."

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": BANKROLL_METHOD,
            "start": self.start,
            "rounds": self.rounds,
            "paths": len(self.ruined_at),
            "seed": self.seed,
            "final": self.final,
            "ruined_at": self.ruined_at,
        }


@dataclass
class Counting:
    """The counter's pages: its strategy, its figures (``counting_figures``' keys, with avg_bet and
    rounds_played), the basic strategy its un-indexed questions follow, and bankroll paths. A
    composition model (``model``) has these pages too, its rounds filed by the Hi-Lo true count
    (``strategy``: Hi-Lo at a flat bet, the simulator's filing), without a ramp or index plays."""

    strategy: CountingStrategy
    basic: StrategyTable
    figures: dict[str, Any]
    bankroll_given: bool
    spread: str | None
    paths: BankrollPaths
    model: LinearModel | None = None

    @classmethod
    def of(cls, policy: Policy, result: SimulationResult, args: argparse.Namespace) -> Counting:
        assert policy.compiled_count and policy.table is not None
        strategy = policy.counting
        if strategy is None:  # a composition model: its rounds are filed by the Hi-Lo true count
            assert policy.linear is not None
            strategy = CountingStrategy(counting_system("hilo"), ramp=((0.0, 1.0),), name=policy.linear.name)
        bankroll = DEFAULT_BANKROLL if args.bankroll is None else args.bankroll
        figures = {
            "avg_bet": result.avg_bet(),
            "rounds_played": result.rounds_played(),
            **counting_figures(result, bankroll),
        }
        paths = BankrollPaths.simulate(bankroll, result.ev(), result.sd(), args.seed)
        return cls(strategy, policy.table, figures, args.bankroll is not None, args.spread, paths, policy.linear)

    def figure_rows(self) -> list[tuple[str, str, str]]:
        """(label, value, meaning) of every figure in COUNT_FIGURES, as both documents list them."""
        rows = []
        for key, (_format, label, meaning) in COUNT_FIGURES.items():
            if key == "bankroll" and not self.bankroll_given:
                meaning += f" (no --bankroll: {DEFAULT_BANKROLL:,.0f} by default)"
            rows.append((label, fmt_count(key, self.figures.get(key)), meaning))
        return rows

    @property
    def count_name(self) -> str:
        """What the buckets count (``CountingSystem.count_name``)."""
        return self.strategy.system.count_name

    def system_text(self) -> str:
        system = self.strategy.system
        tags = ", ".join(f"{v} {t:+g}" for v, t in zip(VALUES, system.tags, strict=True))
        return f"{system.name} ({'balanced' if system.balanced else 'unbalanced'}; tags {tags})"

    def ramp_rows(self) -> list[tuple[str, float]]:
        """(range of the count, bet) per ramp pair: a pair's bet holds from its count up to the
        next pair's, the first pair's also below it."""
        ramp = self.strategy.ramp
        rows = []
        for i, (count, bet) in enumerate(ramp):
            if len(ramp) == 1:
                where = "any"
            elif i == 0:
                where = f"below {ramp[1][0]:+g}"
            elif i == len(ramp) - 1:
                where = f"{count:+g} and above"
            else:
                where = f"{count:+g} to below {ramp[i + 1][0]:+g}"
            rows.append((where, bet))
        return rows

    def index_rows(self) -> list[dict[str, Any]]:
        """The index plays, each with what basic strategy's chart plays there."""
        rows = []
        for entry in self.strategy.indices:
            if entry.hand == "insurance":
                basic = "insure" if self.basic.insurance[0] else "no insurance"
            else:
                basic = self.basic.cell_code(entry.row, entry.col + 1)
            rows.append({**entry.to_dict(), "up": entry.up, "action": entry.action, "basic": basic})
        return rows

    def chart_marks(self) -> dict[tuple[int, int], str]:
        """Index plays by chart cell (row, up card): the play and the count it needs, e.g. "S≥+0"."""
        marks: dict[tuple[int, int], str] = {}
        for entry in self.strategy.indices:
            if entry.hand != "insurance":
                # one decimal, as the learner report's entries: a learned index sits on a bucket edge
                mark = f"{entry.action}{'≥' if entry.when == 'at_or_above' else '<'}{round(entry.index, 1):+g}"
                mark += CARDS_MARK[entry.cards]
                key = (entry.row, entry.col + 1)
                marks[key] = f"{marks[key]}\n{mark}" if key in marks else mark
        return marks

    def to_dict(self) -> dict[str, Any]:
        strategy = self.strategy.to_dict()
        del strategy["indices"]  # listed below, with basic strategy's plays
        if self.model is not None:  # its bets and play are its weights (summary's learner), not a ramp
            strategy = {"composition_model": self.model.name, "bets": list(self.model.bets), "filed_by": "hilo"}
        return {
            **self.figures,
            "bankroll_given": self.bankroll_given,
            "spread": self.spread,
            "strategy": strategy,
            "indices": self.index_rows(),
            "bankroll_paths": self.paths.to_dict(),
        }


@dataclass
class Ceiling:
    """The ceiling of the report's game (``--ceiling``): what a perfect counter, who knew the shoe's
    composition before every round, gains over basic strategy with the policy's bets; the policy's
    paired gain as a share of it; and the round-start EV of the sampled shoes, whose spread is what
    any count can only partly see."""

    share: dict[str, Any]  # solver.ceiling.policy_share: gain, policy_gain, share (each with ci95), bets, ...
    basic_ev: Estimate  # basic strategy's exact EV, averaged over the sampled shoes
    round_ev: dict[str, Any]  # CeilingResult.round_ev(): percentiles, histogram, share_positive
    seed: int

    @classmethod
    def of(cls, result: CeilingResult, gap: Estimate, bets: tuple[float, ...] | None) -> Ceiling:
        """The ceiling ``result`` beside the policy's paired gap to basic strategy, for ``bets``."""
        share = policy_share(result, gap.value, [gap.low, gap.high], bets)
        summary = result.to_json()  # the ceiling's own estimate of basic strategy's mean EV (its sampling design's)
        low, high = summary["basic_ev_ci95"]
        basic_ev = Estimate(summary["basic_ev"], low, high, (high - low) / (2 * Z95))
        return cls(share, basic_ev, result.round_ev(), result.seed)

    @property
    def samples(self) -> int:
        return int(self.share["samples"])

    @property
    def method(self) -> str:
        return CEILING_METHOD

    @property
    def bets_text(self) -> str:
        """The bets compared, as the documents say them."""
        bets = self.share["bets"]
        if bets is None:
            return "a flat bet of one unit"
        return "bets of " + ", ".join(f"{b:g}" for b in bets) + " units"

    def histogram_shares(self) -> dict[str, np.ndarray]:
        """The histogram's bins as shares of the rounds (basic strategy's and the best strategy's
        EV), whether ``round_ev`` counts shoes or already weighs them by the rounds they stand for."""
        hist = self.round_ev["histogram"]
        out = {}
        for name in ("basic", "best"):
            values = np.array(hist[name], dtype=float)
            out[name] = values / values.sum() if values.sum() > 0 else values
        return out

    def histogram_rows(self) -> list[tuple[float, float, float, float]]:
        """(from, to, share of rounds where basic strategy's EV falls there, where the best
        strategy's does) per histogram bin with a shoe in it; the end bins hold the tails."""
        edges, shares = self.round_ev["histogram"]["edges"], self.histogram_shares()
        basic, best = shares["basic"], shares["best"]
        return [
            (edges[i], edges[i + 1], float(basic[i]), float(best[i])) for i in range(len(basic)) if basic[i] or best[i]
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.share,
            "basic_ev": self.basic_ev.to_dict(),
            "round_ev": self.round_ev,
            "seed": self.seed,
            "method": self.method,
        }


@dataclass
class Report:
    """Everything the report shows (``to_summary`` is summary.json)."""

    policy: str
    rules: Rules
    rounds: int
    seed: int
    # False in every report written: an interrupted run raises KeyboardInterrupt and writes none
    interrupted: bool
    ev: dict[str, Estimate]  # policy, basic and random: all three on the same cards every round
    gap_to_basic: Estimate
    paired_rounds: int
    rates: dict[str, dict[str, float]]  # policy, basic
    exact: dict[str, float] | None  # policy and basic strategy's exact EVs (table policies)
    deviations: list[dict[str, Any]] = field(default_factory=list)
    table: StrategyTable | None = None
    basic_table: StrategyTable | None = None
    curve: list[dict[str, float]] | None = None
    counting: Counting | None = None
    ceiling: Ceiling | None = None
    learner: Learner | None = None
    network: Network | None = None  # a network of the shoe game, played in the vector env
    notes: list[str] = field(default_factory=list)
    figures: dict[str, str] = field(default_factory=dict)  # file name -> caption

    @property
    def ev_unit(self) -> str:
        """A counter's bet varies: its EV is per round, in table-minimum units."""
        return "per round (table-minimum units)" if self.counting else "per initial bet"

    def cards(self, name: str) -> str:
        """Whose cards the player ``name`` of ``ev`` was dealt."""
        if self.network:
            return "the policy's shoes" if name == "policy" else "paired per shoe: the policy's shoes"
        return "the policy's cards" if name == "policy" else "paired: the cards the policy was dealt, every round"

    def to_summary(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "rules": self.rules.to_dict(),
            "rules_description": self.rules.describe(),
            "rounds": self.rounds,
            "seed": self.seed,
            "interrupted": self.interrupted,
            "ev": {name: estimate.to_dict() for name, estimate in self.ev.items()},
            "ev_unit": self.ev_unit,
            "ev_cards": {name: self.cards(name) for name in self.ev},
            "gap_to_basic": {**self.gap_to_basic.to_dict(), "paired_rounds": self.paired_rounds},
            "rates": self.rates,
            "exact": self.exact,
            "deviations": self.deviations,
            "learning_curve": self.curve,
            "counting": self.counting.to_dict() if self.counting else None,
            "ceiling": self.ceiling.to_dict() if self.ceiling else None,
            "learner": self.learner.to_dict() if self.learner else None,
            "network": self.network.to_dict() if self.network else None,
            "figures": sorted(self.figures),
            "notes": self.notes,
        }


def paired_run(args: argparse.Namespace, rules: Rules, policy: Policy, table: Table) -> RunOutcome:
    """The policy, basic strategy (at a flat bet) and random play, all on the same cards every round.

    A counting strategy (or a composition model) is paired with basic strategy alone: the shoe advances along the last
    player's play, so random play last would deal the counter other shoes than its own (more
    rounds per shoe, another spread of the true count), and it has nothing to say about a count.

    A Ctrl-C during the run is a KeyboardInterrupt here (the simulator keeps the rounds finished, but a
    report of part of a run is not the report asked for): the command writes nothing and exits 130.
    On a terminal a progress bar shows the simulation, as ``blackjack-evaluate``'s does."""
    feedback = RunFeedback(PROG, args.rounds, bar=sys.stderr.isatty())
    try:
        outcome = feedback.simulate(
            args,
            rules,
            policy,
            table,
            baseline=load_policy("basic", rules),
            others=[] if policy.compiled_count else [Policy.random()],
        )
    finally:
        feedback.close()
    note_compile(outcome, PROG)
    if outcome.interrupted:
        raise KeyboardInterrupt
    return outcome


def build_report(args: argparse.Namespace) -> Report:
    """Simulate, analyse and collect every number of the report."""
    if shoe_agent_run(args.policy) is not None:
        from .network import build_network_report  # a network's report builds on this module's

        return build_network_report(args)
    rules, rules_source = policy_rules(args)
    table = table_from_args(args, rules)
    if args.ceiling:
        check_ceiling(args, rules)
    policy = load_policy(args.policy, rules, args.spread)
    kind = learner_kind(args.policy, policy)
    run = paired_run(args, rules, policy, table)
    a = run.result
    diff, diff_stderr, paired = a.diff(1)
    ev = {"policy": Estimate.of(a.ev(), a.stderr()), "basic": Estimate.of(a.ev(1), a.stderr(1))}
    if not policy.compiled_count:
        ev["random"] = Estimate.of(a.ev(2), a.stderr(2))
    report = Report(
        policy=args.policy,
        rules=rules,
        rounds=a.rounds,
        seed=args.seed,
        interrupted=False,
        ev=ev,
        gap_to_basic=Estimate.of(diff, diff_stderr),
        paired_rounds=paired,
        rates={"policy": a.rates(), "basic": a.rates(1)},
        exact=None,
    )
    if args.bankroll is not None and not policy.compiled_count:
        report.notes.append("--bankroll is used by a counting strategy's pages only; this policy does not count.")
    if policy.compiled_count:  # no exact analysis: a count's play follows the cards seen
        report.counting = Counting.of(policy, a, args)
        if kind is not None:
            assert policy.table is not None
            report.learner = build_learner(args.policy, kind, rules, policy, policy.table, rules_source)
            report.notes += report.learner.notes
        report.notes.append(
            "Basic strategy plays a flat bet of one unit on the counter's very cards, so the paired gap is "
            "what counting (bet ramp and index plays) gains per round. Random play is left out: the shoe "
            "advances along the last player's cards, so random play after the counter would deal it other shoes."
        )
        note_default_bankroll(report)
    elif policy.table is not None:
        solution = solve(rules)
        evaluation = solution.evaluate(policy.table)
        report.table, report.basic_table = policy.table, solution.table
        report.exact = {"policy": evaluation.ev, "basic": evaluation.basic_ev, "loss": evaluation.loss}
        deviations = sorted(evaluation.deviations, key=lambda d: d.cost_per_round, reverse=True)
        if not np.array_equal(policy.table.insurance, solution.table.insurance):
            report.notes.append(
                "Insurance choices differ from basic strategy's (not a chart cell: their cost is in the exact EV)."
            )
        report.deviations = [
            {
                "section": d.section,
                "hand": d.key,
                "up": d.up,
                "basic": d.basic,
                "played": d.played,
                "cost": d.cost,
                "frequency": d.frequency,
                "cost_per_round": d.cost_per_round,
            }
            for d in deviations
        ]
    else:
        report.notes.append(f"Policy {args.policy!r} is not a strategy table: it has no chart and no exact analysis.")
    if args.run is not None:
        metrics = Path(args.run) / METRICS_FILE
        if metrics.is_file():
            report.curve = read_metrics(metrics)
        else:
            note = f"--run {args.run}: no {METRICS_FILE} there, so no learning curve"
            print(f"{PROG}: note: {note}", file=sys.stderr)
            report.notes.append(note[0].upper() + note[1:] + ".")
    if args.ceiling:
        add_ceiling(report, args, rules, ceiling_bets(policy))
    return report


def note_default_bankroll(report: Report) -> None:
    """A counter's report without --bankroll says which bankroll its risk of ruin and paths use."""
    if report.counting is not None and not report.counting.bankroll_given:
        report.notes.append(
            f"No --bankroll: the risk of ruin and the bankroll paths use {DEFAULT_BANKROLL:,.0f} units."
        )


def check_ceiling(args: argparse.Namespace, rules: Rules) -> None:
    """--ceiling's game and --ceiling-samples, checked before anything is simulated."""
    if args.ceiling_samples < 1:
        raise CliError(f"--ceiling-samples must be >= 1, got {args.ceiling_samples}")
    try:
        check_rules(rules, args.ceiling_samples, args.seats, args.seat)
    except ValueError as error:
        raise CliError(f"--ceiling: {error}") from None


def add_ceiling(report: Report, args: argparse.Namespace, rules: Rules, bets: tuple[float, ...] | None) -> None:
    """The ceiling of the same game (seats, seed, workers, backend: ``game_ceiling``, as
    ``blackjack-evaluate --ceiling``) for the policy's bets, beside the policy's paired gap. A Ctrl-C
    in it is a KeyboardInterrupt (no report is written) whose message says the shoes analysed are kept
    in the ceiling's cache, so the same command again analyses only the rest."""
    print(
        f"{PROG}: analysing {args.ceiling_samples:,} round-start shoes for the ceiling (seconds per shoe)...",
        file=sys.stderr,
        flush=True,
    )
    result = game_ceiling(rules, args)
    if result.interrupted:
        raise KeyboardInterrupt(
            f"the ceiling's {result.samples:,} shoes analysed are kept: the same command again analyses only the rest"
            if result.samples
            else "no ceiling shoe was analysed"
        )
    report.ceiling = Ceiling.of(result, report.gap_to_basic, bets)


def read_metrics(path: Path) -> list[dict[str, float]]:
    """A training run's metrics.csv (see the module docstring), checked row by row."""
    return read_run_metrics(path, METRICS_COLUMNS, writer="needs")
