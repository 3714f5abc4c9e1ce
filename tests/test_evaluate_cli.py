"""blackjack-evaluate: the JSON contract, errors as one line, interruption, Ray equals local, and
compile time kept out of the reported speed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from blackjack_env import Rules
from blackjack_env import simulate as simulate_module
from blackjack_env.evaluate import runner
from blackjack_env.evaluate.cli import main
from blackjack_env.evaluate.options import parse_rounds
from blackjack_env.simulate import Policy
from blackjack_env.strategy import StrategyTable

RATE_KEYS = ("win", "push", "loss", "blackjack", "bust", "surrender", "double", "split", "insurance")


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main([*args, "--json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_report_has_every_contract_key(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, "--policy", "basic", "--rounds", "2e5", "--seed", "4", "--workers", "2")
    for key in ("ev", "ci95", "stderr", "rounds", "rounds_per_second", "seconds", "rules", *RATE_KEYS):
        assert key in report, key
    assert report["rounds"] == 200_000
    low, high = report["ci95"]
    assert low < report["ev"] < high
    assert high - low == pytest.approx(2 * 1.959964 * report["stderr"], rel=1e-5)
    assert report["rules"] == Rules().to_dict()


def test_baseline_gives_a_paired_difference(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, "--policy", "random", "--baseline", "basic", "--rounds", "1e5", "--rules", "vegas-strip")
    for key in ("baseline_ev", "ev_diff", "ev_diff_ci95"):
        assert key in report
    assert report["ev_diff"] == pytest.approx(report["ev"] - report["baseline_ev"])
    assert report["ev_diff_ci95"][1] < 0  # random play is far worse than basic strategy
    assert report["rules"]["decks"] == 4


def test_seed_fixes_the_result_whatever_the_workers(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--rounds", "3e5", "--seed", "8", "--set", "decks=2", "--set", "penetration=0.8")
    one = run_json(capsys, *args, "--workers", "1")
    two = run_json(capsys, *args, "--workers", "2")
    assert one["ev"] == two["ev"] and one["stderr"] == two["stderr"]


def test_exact_prints_the_exact_ev_of_a_table(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    from blackjack_env.solver import solve

    rules = Rules(decks=0, hit_soft_17=False)
    path = tmp_path / "basic.json"
    solve(rules).table.save(path)
    report = run_json(
        capsys, "--policy", str(path), "--exact", "--rounds", "1e5", "--set", "decks=inf", "--set", "hit_soft_17=no"
    )
    assert report["exact_ev"] == pytest.approx(solve(rules).ev, abs=1e-12)


def test_text_output_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--rounds", "1000", "--no-progress", "--rules", "single-deck"]) == 0
    out = capsys.readouterr().out
    assert "EV" in out and "95% CI" in out and "1,000 rounds" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "no/such/agent"], "no such file"),
        (["--rules", "moon-base"], "unknown rules preset"),
        (["--set", "decks=-2"], "decks"),
        (["--set", "colour=red"], "unknown rules field"),
        (["--exact", "--policy", "random"], "strategy-table"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    assert main([*args, "--rounds", "100", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_rounds_accepts_scientific_notation() -> None:
    assert parse_rounds("1e8") == 100_000_000
    assert parse_rounds("2_000") == 2000
    with pytest.raises(Exception, match="whole number"):
        parse_rounds("0.5")


def test_module_entry_point_runs() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "blackjack_env.evaluate",
            "--rounds",
            "1000",
            "--json",
            "--no-progress",
            "--policy",
            "random",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout)["rounds"] == 1000


def interrupt_after(chunks: int):
    """A progress callback that presses Ctrl-C once `chunks` chunks have reported."""
    seen = []

    def progress(_rounds: int) -> None:
        seen.append(_rounds)
        if len(seen) == chunks:
            raise KeyboardInterrupt

    return progress


def test_interruption_keeps_the_chunks_already_finished() -> None:
    policy = Policy.from_table(StrategyTable.from_chart({}))
    outcome = runner.simulate(Rules(), policy, 5000, seed=1, workers=1, progress=interrupt_after(2), chunk_rounds=1000)
    assert outcome.interrupted
    assert outcome.result.rounds == 2000  # the two chunks finished before Ctrl-C
    threaded = runner.simulate(
        Rules(), policy, 50_000, seed=1, workers=2, progress=interrupt_after(2), chunk_rounds=1000
    )
    assert threaded.interrupted
    assert 2000 <= threaded.result.rounds < 50_000


def test_ray_backend_equals_local() -> None:
    pytest.importorskip("ray")
    rules = Rules(decks=1)
    policy = Policy.from_table(StrategyTable.from_chart({}))
    rounds = 30_000
    local = runner.simulate(rules, policy, rounds, seed=2, workers=2, baseline=Policy.random())
    on_ray = runner.simulate(rules, policy, rounds, seed=2, workers=2, baseline=Policy.random(), backend="ray")
    np.testing.assert_array_equal(local.result.totals, on_ray.result.totals)
    # Ray's start-up and the workers' warm-up are before the clock: far longer than 30,000 rounds
    assert 0 < on_ray.seconds < on_ray.warmup_seconds
    assert on_ray.workers == 2


COMPILE_SECONDS = 1.5


def slow_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the chunk kernel's first call in this test take COMPILE_SECONDS, as numba's first
    call does when it compiles instead of loading its cache."""
    runner.simulate(Rules(), Policy.random(), 10)  # the real kernel compiled (or loaded) beforehand
    real = simulate_module.run_chunk
    calls: list[int] = []

    def run_chunk(*args):
        if not calls:
            time.sleep(COMPILE_SECONDS)
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(simulate_module, "run_chunk", run_chunk)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_seconds_exclude_compiling_which_is_said_once_on_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], workers: str
) -> None:
    slow_first_call(monkeypatch)
    monkeypatch.setattr(runner, "COMPILING_AFTER_SECONDS", 1.0)  # a compile is said after 1 s of it
    assert main(["--rounds", "3000", "--workers", workers, "--json", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)  # stdout stays pure JSON
    assert report["warmup_seconds"] >= COMPILE_SECONDS
    assert report["seconds"] < COMPILE_SECONDS / 3  # 3,000 rounds take milliseconds
    assert report["rounds_per_second"] == pytest.approx(3000 / report["seconds"])
    said = r"blackjack-evaluate: compiling the simulator \(once: about .*\)\.\.\.\n"
    assert re.fullmatch(
        said + r"blackjack-evaluate: compiled the simulator in 1\.\d s \(cached for later runs\)\n", err
    ), err


def test_a_warm_kernel_is_not_reported_as_compiling(capsys: pytest.CaptureFixture[str]) -> None:
    runner.simulate(Rules(), Policy.random(), 10)  # compiles or loads the cache, whatever ran before
    assert main(["--rounds", "3000", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "3,000 rounds in" in out


COUNTING_KEYS = (
    "sd", "avg_bet", "advantage", "win_per_100", "sd_per_100", "di", "score", "n0", "rounds_per_shoe", "by_true_count",
)  # fmt: skip


def test_a_counter_wins_with_the_contracts_figures(capsys: pytest.CaptureFixture[str]) -> None:
    """The must-show game at 4e6 rounds: Hi-Lo with I18 + Fab 4 and a 1-8 spread, 6D H17 DAS LS cut
    at 75%, wins with a CI clear of 0 (the 1e9-round figures are in the README), and every counter's
    figure follows from ev and sd as the contract defines it."""
    report = run_json(
        capsys, "--policy", "hilo-i18-fab4", "--spread", "1-8", "--set", "penetration=0.75",
        "--rounds", "4e6", "--seed", "1", "--workers", "2", "--bankroll", "1000",
    )  # fmt: skip
    for key in (*COUNTING_KEYS, "ror", "bankroll"):
        assert key in report, key
    ev, sd = report["ev"], report["sd"]
    assert report["ci95"][0] > 0
    assert report["avg_bet"] > 1.2 and report["advantage"] == pytest.approx(ev / report["avg_bet"])
    assert report["win_per_100"] == pytest.approx(100 * ev) and report["sd_per_100"] == pytest.approx(10 * sd)
    assert report["di"] == pytest.approx(1000 * ev / sd) and report["score"] == pytest.approx(report["di"] ** 2)
    assert report["n0"] == pytest.approx(sd**2 / ev**2)
    assert report["ror"] == pytest.approx(np.exp(-2 * 1000 * ev / sd**2))
    assert 40 < report["rounds_per_shoe"] < 47  # 234 cards dealt before the cut, about 5.4 a round
    buckets = report["by_true_count"]
    assert [b["true_count"] for b in buckets] == list(range(-6, 11))
    assert sum(b["share"] for b in buckets) == pytest.approx(1.0)
    assert [b["avg_bet"] for b in buckets if 2 <= b["true_count"] <= 6] == [2, 4, 6, 8, 8]
    high, low = buckets[-1], buckets[0]
    assert high["ev_per_unit_bet"] > 0 > low["ev_per_unit_bet"]  # the count predicts the edge


def test_basic_strategy_reports_no_true_count_and_flat_figures(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, "--policy", "basic", "--rounds", "1e5", "--seed", "2", "--workers", "1")
    assert report["by_true_count"] is None and "ror" not in report
    assert report["avg_bet"] == 1.0 and report["advantage"] == pytest.approx(report["ev"])
    assert report["score"] == pytest.approx(report["di"] * abs(report["di"]))  # signed, as the EV


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "hilo"], "needs a shoe dealt to a cut card"),
        (["--policy", "hilo", "--set", "penetration=0.7", "--set", "decks=0"], "needs a finite shoe"),
        (["--policy", "basic", "--spread", "1-8"], "--spread needs a counting strategy"),
        (["--policy", "hilo", "--set", "penetration=0.7", "--spread", "8-1"], "--spread must be MIN-MAX"),
        (["--policy", "nosuch-system.json"], "no such file"),
    ],
)
def test_bad_counting_runs_are_one_line(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    assert main([*args, "--rounds", "1000", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
