"""One formatter per kind of number.

The documents print every number through these, and the tests check that every number in
summary.json appears, formatted the same way, in report.md and report.html.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..counting_stats import n0_text

#: The chart's first letters by name (a strategy cell's play).
ACTIONS = {"H": "hit", "S": "stand", "D": "double", "P": "split", "R": "surrender"}
#: Index plays' actions by name (I: take insurance).
ACTION_NAMES = {**ACTIONS, "I": "insure"}
#: How an index play's direction is said.
WHEN = {"at_or_above": "at or above", "below": "below"}


def fmt_ev(value: float) -> str:
    """An EV or an EV gap per initial bet."""
    return f"{value:+.5f}"


def fmt_cost(value: float) -> str:
    """An exact deviation cost (tiny numbers: six decimals)."""
    return f"{value:.6f}"


def fmt_rate(value: float) -> str:
    return f"{value:.4f}"


def fmt_index(value: float) -> str:
    """A true count (an index, a ramp step): signed, as index tables print them."""
    return f"{value:+g}"


def fmt_per_100(value: float) -> str:
    """A result per round in table-minimum units, said per 100 rounds (as the ceiling's figures)."""
    return f"{100 * value:+.3f}"


def fmt_share(value: float) -> str:
    """A share (of the ceiling) as a percentage."""
    return f"{100 * value:.1f}%"


def fmt_gain_100(value: float) -> str:
    """An index entry's gain per 100 rounds (often tiny: four significant digits)."""
    return f"{value:+.4g}"


def fmt_tag(value: float) -> str:
    """A count's tag (scaled: two decimals)."""
    return f"{value:+.2f}"


def fmt_optional(value: float | None, formatter: Callable[[float], str] = fmt_ev) -> str:
    """A number that may be missing (a true-count bucket with no round played has no EV; one
    round has no interval): "n/a", as summary.json's null."""
    if value is None or not math.isfinite(value):
        return "n/a"
    return formatter(value)


def fmt_play(action: str) -> str:
    """An index play's action with its name, e.g. "S (stand)"."""
    return f"{action} ({ACTION_NAMES[action]})"


#: The counter's figures (``counting_figures``' keys, with avg_bet and rounds_played): format,
#: label and what the figure means, in the order the report lists them.
COUNT_FIGURES: dict[str, tuple[str, str, str]] = {
    "avg_bet": ("{:.3f}", "average bet", "units per round played"),
    "advantage": ("{:+.5f}", "advantage", "result per unit bet"),
    "win_per_100": ("{:+.3f}", "win per 100 rounds", "units"),
    "sd_per_100": ("{:.2f}", "SD per 100 rounds", "units"),
    "sd": ("{:.4f}", "SD per round", "units"),
    "di": ("{:.2f}", "DI", "desirability index: 1000 x EV / SD per round"),
    "score": ("{:.2f}", "SCORE", "win per 100 rounds of a 10,000-unit Kelly bettor: DI squared"),
    "n0": ("{:,.0f}", "N0", "rounds after which the expected win equals one SD"),
    "ror": ("{:.4f}", "risk of ruin", "of the bankroll below, with no time limit: exp(-2 bankroll EV / SD^2)"),
    "bankroll": ("{:,g}", "bankroll", "units"),
    "rounds_per_shoe": ("{:.1f}", "rounds per shoe", "rounds dealt between shuffles"),
    "rounds_played": ("{:,}", "rounds played", "rounds with a bet"),
}


def fmt_count(key: str, value: float | None) -> str:
    """One of the counter's figures, as COUNT_FIGURES formats it (N0 of a 0 EV is infinite)."""
    if key == "n0":
        return n0_text(value)
    return fmt_optional(value, COUNT_FIGURES[key][0].format)
