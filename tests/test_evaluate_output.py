"""What the commands tell a user beyond the numbers: a line as the simulator starts compiling (not a
silent wait), a progress bar that starts with the simulation, and the exact EV beside the
simulated one wherever the solver can price the policy, with whether the 95% interval covers it."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from blackjack_env import Rules
from blackjack_env.evaluate import runner
from blackjack_env.evaluate.cli import exact_line, main
from blackjack_env.evaluate.options import RunFeedback
from blackjack_env.evaluate.policies import load_policy
from blackjack_env.solver import solve


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main([*args, "--json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------------- compile notice and progress
def slow_warm_up(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Make the kernels' first call take ``seconds`` longer, as a compile does."""
    warm_up = runner.warm_up

    def slow(chunk: runner.Chunk) -> float:
        time.sleep(seconds)
        return warm_up(chunk) + seconds

    monkeypatch.setattr(runner, "warm_up", slow)


def test_a_slow_first_call_is_announced_while_it_runs_and_the_bar_starts_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runner, "COMPILING_AFTER_SECONDS", 0.05)
    slow_warm_up(monkeypatch, 0.5)
    events: list[tuple[str, float]] = []
    start = time.perf_counter()
    rules = Rules()
    runner.simulate(
        rules,
        load_policy("basic", rules),
        3 << 10,
        workers=1,
        chunk_rounds=1 << 10,
        progress=lambda n: events.append(("progress", time.perf_counter() - start)),
        on_compiling=lambda: events.append(("compiling", time.perf_counter() - start)),
        on_start=lambda: events.append(("start", time.perf_counter() - start)),
    )
    kinds = [kind for kind, _ in events]
    assert kinds == ["compiling", "start", "progress", "progress", "progress"]
    # said during the slow call (0.05 s into its 0.5 s), not after it; the bar (and its rate) starts
    # when the simulation does
    assert events[1][1] - events[0][1] >= 0.3


def test_a_fast_first_call_says_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    rules = Rules()
    runner.simulate(rules, load_policy("basic", rules), 1 << 10, workers=1, on_compiling=lambda: said.append("x"))
    assert said == []  # loading numba's cache is well under COMPILING_AFTER_SECONDS


def test_the_command_says_it_is_compiling_before_it_has_compiled(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "COMPILING_AFTER_SECONDS", 0.05)
    slow_warm_up(monkeypatch, 0.3)
    assert main(["--rounds", "2000", "--no-progress"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("blackjack-evaluate: compiling the simulator (once: about")


def test_the_bar_counts_from_the_simulation_start(capsys: pytest.CaptureFixture[str]) -> None:
    feedback = RunFeedback("prog", 10, bar=True)
    feedback.update(3)  # before the start: nothing to show yet, nothing fails
    assert feedback.bar is None
    feedback.started()
    feedback.update(10)
    assert feedback.bar.n == 10
    feedback.close()


# ---------------------------------------------------------------------- the exact EV beside the simulated one
def test_basic_strategy_gets_its_exact_ev_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, "--rounds", "2e4", "--seed", "3")
    assert report["exact_ev"] == solve(Rules()).ev
    low, high = report["ci95"]
    assert report["ci95_covers_exact"] is (low <= report["exact_ev"] <= high)


def test_a_paired_run_gets_the_exact_difference(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    rules = Rules(decks=2)
    table = solve(rules).table
    table.actions[12, 9] = table.actions[12, 9][::-1].copy()  # another play in one cell
    path = tmp_path / "mine.json"
    table.save(path)
    report = run_json(capsys, "--policy", str(path), "--baseline", "basic", "--set", "decks=2", "--rounds", "2e4")
    exact = solve(rules).evaluate(table).ev
    assert report["exact_ev"] == pytest.approx(exact, abs=1e-15)
    assert report["baseline_exact_ev"] == solve(rules).ev
    assert report["exact_ev_diff"] == pytest.approx(exact - solve(rules).ev, abs=1e-15)
    assert isinstance(report["ev_diff_ci95_covers_exact"], bool)


@pytest.mark.parametrize(
    "args",
    [
        ["--set", "penetration=0.75"],  # a cut card: the solver prices a fresh shoe only
        ["--policy", "random"],
        ["--policy", "hilo", "--set", "penetration=0.75"],
        ["--no-exact"],
    ],
)
def test_no_exact_ev_where_the_solver_cannot_price_the_run(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    report = run_json(capsys, *args, "--rounds", "2e4")
    assert "exact_ev" not in report and "ci95_covers_exact" not in report


def test_exact_with_a_cut_card_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--exact", "--set", "penetration=0.75", "--rounds", "100", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("blackjack-evaluate: error: --exact: the shoe is dealt to a cut card")
    assert len(err.splitlines()) == 1


def test_the_text_says_whether_the_interval_covers_the_exact_ev(capsys: pytest.CaptureFixture[str]) -> None:
    assert exact_line("exact EV", -0.005356, (-0.0060, -0.0050)).endswith("the 95% CI covers it")
    assert exact_line("exact EV", -0.005356, (-0.00526, -0.00384)).endswith("the 95% CI misses it by 0.00010")
    assert main(["--rounds", "2e4", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "exact EV (the solver, no sampling): -0.005356; the 95% CI" in out
    assert max(len(line) for line in out.splitlines()) <= 120


# ---------------------------------------------------------------------- pictures
def test_the_ev_panel_shows_where_break_even_is() -> None:
    from blackjack_env.evaluate.report import Estimate, Report, ev_figure

    def top_panel(policy: float, basic: float) -> Any:
        ev = {"policy": Estimate.of(policy, 0.0003), "basic": Estimate.of(basic, 0.0003)}
        report = Report("agent", Rules(), 10**7, 0, False, ev, Estimate.of(policy - basic, 4e-5), 10**7, {}, None)
        return ev_figure(report).axes[0]

    far = top_panel(-0.0062, -0.0054)  # 0 well off the intervals' scale: named at the edge, scale kept
    assert far.get_xlim()[1] < 0 and [t.get_text() for t in far.texts] == ["0 (break-even) →"]
    near = top_panel(-0.0004, 0.0002)  # 0 in view: a line
    assert any(list(line.get_xdata()) == [0, 0] for line in near.lines)


def test_the_sweep_plot_has_error_bars_and_keeps_the_baseline_off_its_scale() -> None:
    from blackjack_env.evaluate.sweep import score_figure, score_interval

    def cell(penetration: float, system: str, spread: str, ev: float, sd: float) -> dict[str, Any]:
        di = 1000 * ev / sd
        return {"penetration": penetration, "system": system, "spread": spread, "score": di * abs(di), "sd": sd,
                "ci95": [ev - 0.0007, ev + 0.0007]}  # fmt: skip

    cells = [cell(p, "basic", "flat", -0.0055, 1.15) for p in (0.75, 0.83)]
    cells += [cell(p, "hilo", s, ev, 2.3) for p in (0.75, 0.83) for s, ev in (("1-8", 0.006), ("1-12", 0.009))]
    ax = score_figure(cells, "test").axes[0]
    assert len(ax.containers) == 2  # one errorbar line per spread
    low, high = score_interval(cells[2])
    assert low < cells[2]["score"] < high
    assert ax.get_ylim()[0] > cells[0]["score"]  # SCORE -22.9 does not squash the counting lines
    assert "off the scale" in ax.texts[0].get_text()
