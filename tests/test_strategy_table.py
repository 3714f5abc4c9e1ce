"""A strategy table made by hand: the chart round trip and the saved file (README "Basic strategy")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from blackjack_env.solver import solve
from blackjack_env.strategy import StrategyTable


@pytest.mark.parametrize("rules", ["ultimatebet", "european", "single-deck", "face-up-no-hole-card"])
def test_a_chart_round_trip_plays_every_hand_as_the_table(rules: str) -> None:
    solution = solve(rules)
    table = solution.table
    again = StrategyTable.from_chart(table.to_chart())
    assert again.to_chart() == table.to_chart()
    np.testing.assert_array_equal(again.actions[:, :, 0], table.actions[:, :, 0])
    assert solution.evaluate(again).ev == pytest.approx(solution.ev, abs=1e-12)


def test_save_and_load_keep_the_whole_table(tmp_path: Path) -> None:
    table = solve("single-deck").table
    table.insurance[:] = [True, False]  # not in the chart; kept by the file
    table.save(tmp_path / "t.json")
    loaded = StrategyTable.load(tmp_path / "t.json")
    np.testing.assert_array_equal(loaded.actions, table.actions)
    np.testing.assert_array_equal(loaded.insurance, table.insurance)
    assert loaded.name == table.name


def test_a_chart_made_by_hand_changes_only_its_cells() -> None:
    solution = solve("ultimatebet")
    chart = solution.table.to_chart()
    chart["hard"]["16"]["10"] = "S"
    mine = StrategyTable.from_chart(chart, name="stand-16-v-10")
    changed = [(d.section, d.key, d.up) for d in solution.deviations(mine)]
    assert changed == [("hard", "16", "10")]
    assert mine.name == "stand-16-v-10" and not mine.insurance.any()
    with pytest.raises(ValueError, match="chart code 'X'"):
        StrategyTable.from_chart({"hard": {"16": {"10": "X"}}})
