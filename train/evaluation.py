"""The periodic check of a training run: a policy table against basic strategy (the one-round game),
and what the progress bar shows of an evaluation.

Gaps are policy minus basic strategy, in units of the initial bet per round (negative = behind),
the convention of ``blackjack-evaluate report``'s learning curve.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blackjack_env.evaluate.runner import simulate
from blackjack_env.rules import Rules
from blackjack_env.simulate import Z95, Policy
from blackjack_env.solver import Solution, solve
from blackjack_env.strategy import StrategyTable

METRIC_COLUMNS = (
    "step",
    "ev",
    "ev_gap",
    "ev_gap_low",
    "ev_gap_high",
    "exact_ev",
    "exact_ev_gap",
    "agreement",
    "wall_s",
)


def agreement(solution: Solution, table: StrategyTable) -> float:
    """Share of basic strategy's decisions (weighted by how often each cell decides) that fall in
    cells where ``table`` plays the same; insurance is not a cell and is left out."""
    differing = sum(d.frequency for d in solution.deviations(table))
    return float(1.0 - differing / solution.freq.sum())


def evaluate_table(
    rules: Rules, table: StrategyTable, solution: Solution, rounds: int, seed: int, workers: int | None = None
) -> dict[str, float]:
    """Simulated EV, paired EV gap with its 95% interval, exact EV and gap, and agreement."""
    outcome = simulate(
        rules, Policy.from_table(table), rounds, seed, baseline=Policy.from_table(solution.table), workers=workers
    )
    gap, stderr, _ = outcome.result.diff()
    exact = solution.evaluate(table).ev
    return {
        "ev": outcome.result.ev(),
        "ev_gap": gap,
        "ev_gap_low": gap - Z95 * stderr,
        "ev_gap_high": gap + Z95 * stderr,
        "exact_ev": exact,
        "exact_ev_gap": exact - solution.ev,
        "agreement": agreement(solution, table),
    }


#: The round game's row keys written to TensorBoard.
ROUND_SCALARS = ("ev", "ev_gap", "exact_ev_gap", "agreement")


class RoundGame:
    """The evaluation every learner of the one-round game shares: its policy as a strategy table
    against basic strategy, simulated on the same cards and priced exactly (the game solved once, as
    the learner is made: before the run's clock starts)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.solution = solve(rules)

    def evaluate(self, table: StrategyTable, rounds: int, seed: int) -> dict[str, float]:
        return evaluate_table(self.rules, table, self.solution, rounds, seed)


@dataclass
class Best:
    """A network learner's best evaluation so far on the one-round game: its exact gap to basic strategy,
    step and weights (a ``state_dict``). The run exports it: each evaluation is priced exactly by the
    solver, so the best of them is that policy's true gap, not a lucky draw, while late in a run the
    gap moves by about 0.01 pp from one evaluation to the next as close cells flip."""

    exact_ev_gap: float
    step: int
    weights: dict[str, Any]

    @staticmethod
    def beaten(best: Best | None, row: Mapping[str, float]) -> bool:
        """Whether the evaluation ``row`` is closer to basic strategy than ``best`` (None: no evaluation yet)."""
        return best is None or row["exact_ev_gap"] > best.exact_ev_gap


class RoundPlay:
    """What every learner of the one-round game does alike (a base over its ``agent`` and ``game``):
    its policy is its agent's strategy table, evaluated by :class:`RoundGame`; the progress bar shows
    the exact gap; it prints no budget line and starts nothing to release."""

    agent: Any
    game: RoundGame | None

    def table(self) -> StrategyTable:
        return self.agent.to_table()

    def evaluate(self, rounds: int, seed: int) -> dict[str, float]:
        assert self.game is not None
        return self.game.evaluate(self.table(), rounds, seed)

    def postfix(self, row: Mapping[str, float]) -> dict[str, str]:
        return round_postfix(row)

    def plan(self, total: int) -> str:
        return ""

    def close(self) -> None:
        pass


def round_postfix(row: Mapping[str, float]) -> dict[str, str]:
    """The progress bar's figures for the one-round game."""
    return {"exact_gap_pp": f"{100 * row['exact_ev_gap']:.3f}", "agree": f"{row['agreement']:.3f}"}


def round_summary(
    label: str, steps: int, last: Mapping[str, float], wall_s: float, out: Path, best: Best | None = None
) -> str:
    """A one-round learner's last line, and which evaluation's network it exports (``best``)."""
    exported = ""
    if best is not None:
        exported = f"\nexported the network of step {best.step}, its best evaluation (exact {best.exact_ev_gap:+.6f})"
    return (
        f"{label}: {steps} steps in {wall_s:.1f} s; EV {last['ev']:+.5f}, "
        f"gap to basic strategy {last['ev_gap']:+.5f} [{last['ev_gap_low']:+.5f}, {last['ev_gap_high']:+.5f}] "
        f"(exact {last['exact_ev_gap']:+.6f}), agreement {last['agreement']:.4f}; run in {out}" + exported
    )


def shoe_postfix(row: Mapping[str, float]) -> dict[str, str]:
    """The progress bar's figures for the shoe game (per 100 rounds)."""
    return {"vs_hilo_per100": f"{100 * row['gain_vs_hilo']:+.3f}", "flat_per100": f"{100 * row['flat_gain']:+.3f}"}
