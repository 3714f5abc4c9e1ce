"""The periodic check of a training run: a policy table against basic strategy.

Gaps are policy minus basic strategy, in units of the initial bet per round (negative = behind),
the convention of ``blackjack-evaluate report``'s learning curve.
"""

from __future__ import annotations

from blackjack_env.evaluate.runner import simulate
from blackjack_env.rules import Rules
from blackjack_env.simulate import Z95, Policy
from blackjack_env.solver import Solution
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
