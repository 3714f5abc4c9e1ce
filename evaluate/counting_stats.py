"""Statistics of a simulation as a card counter reads them (SCORE, DI, N0, risk of ruin, ...).

Shared by ``blackjack-evaluate`` and its ``report`` and ``sweep`` commands; they live here so
that no command module imports another.
"""

from __future__ import annotations

import math
from typing import Any

from blackjack_env.simulate import SimulationResult


def counting_figures(result: SimulationResult, bankroll: float | None, policy: int = 0) -> dict[str, Any]:
    """The card counter's figures (:func:`counter_figures`) of a simulated policy, its rounds by true
    count for a counting strategy (None otherwise)."""
    return counter_figures(
        result.ev(policy),
        result.sd(policy),
        result.ev_per_unit_bet(policy),
        result.rounds / result.shoes if result.shoes else None,
        result.by_true_count(policy),
        bankroll,
    )


def counter_figures(
    ev: float,
    sd: float,
    advantage: float,
    rounds_per_shoe: float | None,
    by_true_count: list[dict[str, Any]] | None,
    bankroll: float | None,
) -> dict[str, Any]:
    """The card counter's figures, per round dealt in table-minimum units (rounds sat out count
    as 0): sd; advantage (result per unit bet: ev / avg_bet when every round is played); win and
    sd per 100 rounds; DI = 1000 ev / sd; SCORE = DI squared, the win per 100 rounds of a
    10,000-unit Kelly bettor (signed: negative for a losing game); N0 = sd^2 / ev^2, the rounds
    after which the expected win equals one sd; the risk of ruin of ``bankroll`` units with no
    time limit, exp(-2 bankroll ev / sd^2) (1 for ev <= 0); rounds per shoe; the rounds by count."""
    di = 1000.0 * ev / sd if sd > 0 else 0.0
    figures: dict[str, Any] = {
        "sd": sd,
        "advantage": advantage,
        "win_per_100": 100.0 * ev,
        "sd_per_100": 10.0 * sd,
        "di": di,
        "score": di * abs(di),
        "n0": sd * sd / (ev * ev) if ev != 0 else None,  # JSON has no infinity
        "rounds_per_shoe": rounds_per_shoe,
        "by_true_count": by_true_count,
    }
    if bankroll is not None:
        figures["bankroll"] = bankroll
        figures["ror"] = math.exp(-2.0 * bankroll * ev / (sd * sd)) if ev > 0 and sd > 0 else 1.0
    return figures


def n0_text(n0: float | None) -> str:
    """N0 for reading: rounds, or "infinite" where the EV is 0 (``counting_figures`` gives None)."""
    return "infinite" if n0 is None else f"{n0:,.0f}"
