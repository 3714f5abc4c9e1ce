"""The presets' solutions that ship with the package (``solver.solution.BUNDLE_DIR``) are what the
solver computes today, bit for bit; ``solve`` reads them for any penetration of a preset's game and
for nothing else. A failure here means: run ``python tools/bundle_solutions.py``."""

from __future__ import annotations

import numpy as np
import pytest

from blackjack_env.rules import PRESETS, Rules
from blackjack_env.solver import solve
from blackjack_env.solver.solution import _ARRAYS, BUNDLE_DIR, Solution, bundled_solution


def _arrays(solution: Solution) -> dict[str, np.ndarray]:
    return {
        "actions": solution.table.actions,
        "insurance": solution.table.insurance,
        **{name: getattr(solution, name) for name in _ARRAYS if name not in ("actions", "insurance")},
    }


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_shipped_solution_is_a_fresh_analysis(name: str) -> None:
    rules = PRESETS[name].rules
    shipped = Solution.load(BUNDLE_DIR / f"{name}.npz")
    fresh = solve(rules, cache=False)
    assert shipped.rules == rules and shipped.ev == fresh.ev
    for key, value in _arrays(fresh).items():
        np.testing.assert_array_equal(_arrays(shipped)[key], value, err_msg=key)


def test_every_shipped_file_is_a_preset() -> None:
    assert sorted(p.stem for p in BUNDLE_DIR.glob("*.npz")) == sorted(PRESETS)


def test_solve_reads_a_preset_at_any_penetration_and_nothing_else(monkeypatch, tmp_path) -> None:
    import blackjack_env.solver.solution as solution_module

    def no_analysis(*args):
        raise AssertionError("a preset's solution was analysed, not read")

    monkeypatch.setenv("BLACKJACK_ENV_CACHE", str(tmp_path))
    monkeypatch.setattr(solution_module, "analyse", no_analysis)
    rules = PRESETS["vegas-strip"].rules.replace(penetration=0.6)
    shipped = bundled_solution(rules)
    assert shipped is not None and shipped.rules == rules
    assert solve(rules).ev == shipped.ev
    assert bundled_solution(Rules(decks=3)) is None
