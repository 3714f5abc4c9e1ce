"""Hi-Lo's EV-maximising bets (``train.shoe.ev_max_ramp``): the largest bet from the true count whose
tail of results is largest, chosen from a flat-bet run's EV by count."""

from __future__ import annotations

import math
from typing import Any

import pytest

from blackjack_env.train.shoe import ev_max_ramp

BETS = (1.0, 2.0, 4.0, 8.0)


def rows(evs: dict[int, float], rounds: int = 1000) -> list[dict[str, Any]]:
    """By-count rows as ``SimulationResult.by_true_count`` gives them; a NaN EV is a count never played."""
    return [
        {"true_count": count, "ev_per_unit_bet": ev, "rounds_played": 0 if math.isnan(ev) else rounds}
        for count, ev in evs.items()
    ]


def test_the_top_bet_starts_where_the_tail_of_results_is_largest() -> None:
    evs = {-2: -0.02, -1: -0.01, 0: -0.002, 1: 0.004, 2: 0.01, 3: 0.02}
    assert ev_max_ramp(rows(evs), BETS) == ((-2.0, 1.0), (1.0, 8.0))


def test_a_count_never_played_does_not_move_the_threshold() -> None:
    """At one deck the floored true count skips -1 (its EV is NaN); the ramp is the one without it,
    not 8 units at every count."""
    evs = {-6: -0.05, -5: -0.02, -4: -0.017, -3: -0.01, -2: -0.0035, -1: math.nan, 0: 0.002, 1: 0.013, 2: 0.022}
    played = {count: ev for count, ev in evs.items() if not math.isnan(ev)}
    assert ev_max_ramp(rows(evs), BETS) == ((-6.0, 1.0), (0.0, 8.0))
    assert ev_max_ramp(rows(played), BETS) == ((-6.0, 1.0), (0.0, 8.0))


def test_a_game_lost_at_every_count_bets_the_minimum_and_one_won_at_every_count_the_maximum() -> None:
    assert ev_max_ramp(rows({-1: -0.02, 0: -0.01, 1: -0.001}), BETS) == ((-1.0, 1.0),)
    assert ev_max_ramp(rows({-1: 0.001, 0: 0.01, 1: 0.02}), BETS) == ((-1.0, 8.0),)


def test_a_calibration_run_without_rounds_is_refused_in_words() -> None:
    for by_count in ([], [{"true_count": 0, "rounds_played": 0, "ev_per_unit_bet": math.nan}]):
        with pytest.raises(ValueError, match="the calibration run played no rounds"):
            ev_max_ramp(by_count, (1.0, 8.0))
