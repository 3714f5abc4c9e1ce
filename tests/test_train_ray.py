"""The shoe learners' backends (train/backends.py): the same seed gives the same statistics, bit for
bit, on one process, on local worker processes and on a local Ray with two workers; a run resumes
across backends, also from inside a refresh period (a Ctrl-C keeps only merged chunks); bad
--backend / --workers input is one line, exit 2, nothing written."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from blackjack_env.agents.count_table import CountTableAgent
from blackjack_env.counting import system
from blackjack_env.rules import Rules
from blackjack_env.train.backends import SYNC_FILE, ChunkRunner, ProcessBackend, SerialBackend
from blackjack_env.train.cli import main as train_main

RULES = Rules.preset("ultimatebet").with_settings(["penetration=0.75"])
STATS = {"tabular": "count_table.npz", "linear": "linear_stats.npz"}
#: Tiny chunks: 7 of them in periods of 3 (3, 3, then 1), evaluations nearly free.
COMMON = ["--env", "shoe", "--set", "penetration=0.75", "--chunk-steps", "3000", "--sync-chunks", "3", "--seed", "5"]
COMMON += ["--eval-every", "1e9", "--eval-rounds", "2000", "--no-progress"]
STEPS = "21000"


@pytest.fixture(scope="module")
def local_ray() -> Any:
    """One local Ray with two CPUs for the module (starting Ray takes seconds); the runs join it."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


def _same_stats(a: Path, b: Path, algo: str) -> None:
    with np.load(a / STATS[algo]) as x, np.load(b / STATS[algo]) as y:
        assert x.files == y.files
        for key in x.files:
            assert np.array_equal(x[key], y[key]), key
    assert int(np.load(a / STATS[algo])["counters"][1]) == 7  # seven chunks merged


@pytest.mark.parametrize("algo", ["tabular", "linear"])
def test_ray_and_local_processes_equal_one_process(tmp_path: Path, local_ray: Any, algo: str) -> None:
    runs = {name: tmp_path / name for name in ("one", "processes", "ray")}
    base = [*COMMON, "--algo", algo, "--steps", STEPS]
    assert train_main([*base, "--out", str(runs["one"])]) == 0
    assert train_main([*base, "--workers", "2", "--out", str(runs["processes"])]) == 0
    assert train_main([*base, "--backend", "ray", "--workers", "2", "--out", str(runs["ray"])]) == 0
    _same_stats(runs["one"], runs["processes"], algo)
    _same_stats(runs["one"], runs["ray"], algo)
    assert (runs["ray"] / SYNC_FILE).exists()  # 7 chunks end inside the third period: its policy kept


def test_resume_across_backends_from_inside_a_refresh_period(tmp_path: Path, local_ray: Any) -> None:
    """Ray stops after 4 chunks (inside the second period of 3), local processes finish the run."""
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    base = [*COMMON, "--algo", "tabular"]
    assert train_main([*base, "--steps", STEPS, "--out", str(whole)]) == 0
    assert train_main([*base, "--steps", "12000", "--backend", "ray", "--workers", "2", "--out", str(parts)]) == 0
    assert (parts / SYNC_FILE).exists()
    assert train_main(["--out", str(parts), "--resume", "--steps", STEPS, "--workers", "2", "--no-progress"]) == 0
    _same_stats(whole, parts, "tabular")
    assert (whole / "counting-strategy.json").read_text() == (parts / "counting-strategy.json").read_text()


def test_ctrl_c_on_ray_keeps_a_checkpoint_that_resumes_locally(tmp_path: Path) -> None:
    """Ctrl-C as a terminal sends it (to the whole process group, Ray's processes included): exit 130,
    a checkpoint of merged chunks, and the run continues with --resume in one process."""
    pytest.importorskip("ray")
    run = tmp_path / "run"
    command = [sys.executable, "-m", "blackjack_env.train", *COMMON, "--steps", "1e10", "--eval-every", "6000"]
    command += ["--backend", "ray", "--workers", "2", "--out", str(run)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not (run / "state.json").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "--resume" in err and "Traceback" not in err
    state = json.loads((run / "state.json").read_text())
    with np.load(run / "count_table.npz") as stats:
        assert int(stats["counters"][0]) == state["steps"] == 3000 * int(stats["counters"][1]) > 0
    more = str(state["steps"] + 3000)
    assert train_main(["--out", str(run), "--resume", "--steps", more, "--backend", "local", "--no-progress"]) == 0
    assert json.loads((run / "state.json").read_text())["steps"] == int(more)


def _agent() -> CountTableAgent:
    return CountTableAgent(RULES, system("hilo"), bets=(1, 2, 4, 8), seed=9, chunk_rounds=2000)


@pytest.mark.parametrize(
    ("g", "starts"),
    [(1, [0, 1, 2, 3, 4, 5]), (3, [0, 1, 2, 3, 6, 9]), (8, [0, 1, 2, 4, 8, 16, 24]), (6, [0, 1, 2, 4, 6, 12])],
)
def test_refresh_periods_double_up_to_g_then_every_g(g: int, starts: list[int]) -> None:
    runner = ChunkRunner(_agent(), g, SerialBackend())
    found = sorted({runner.period_start(i) for i in range(starts[-1] + 1)})
    assert found == starts
    assert [runner.period_end(s) for s in starts[:-1]] == starts[1:]


def test_one_chunk_per_refresh_is_the_learners_own_loop() -> None:
    """--sync-chunks 1 plays exactly what ``learn_chunk`` plays: every chunk sees every one before."""
    own, runner_agent = _agent(), _agent()
    for _ in range(3):
        own.learn_chunk()
    runner = ChunkRunner(runner_agent, 1, SerialBackend())
    runner.advance(6000, lambda: False, lambda rounds: None)
    assert runner_agent.chunks == 3 and np.array_equal(own.stats, runner_agent.stats)


def test_a_stop_keeps_merged_chunks_and_resumes_exactly(tmp_path: Path) -> None:
    """The Ctrl-C path: stop after two merged chunks of a period of 4 on two processes; the chunks
    under way finish, the checkpoint holds a run of whole chunks in order, and resuming it (in one
    process) equals the uninterrupted run."""
    whole = _agent()
    ChunkRunner(whole, 4, SerialBackend()).advance(16000, lambda: False, lambda rounds: None)

    stopped = _agent()
    merged: list[int] = []
    runner = ChunkRunner(stopped, 4, ProcessBackend(2))
    try:
        runner.advance(16000, lambda: len(merged) >= 2, merged.append)
    finally:
        runner.close()
    assert 2 <= stopped.chunks < 8 and stopped.rounds == 2000 * stopped.chunks
    stopped.save(tmp_path)
    runner.save(tmp_path)
    resumed = CountTableAgent.load(tmp_path)
    again = ChunkRunner(resumed, 4, SerialBackend())
    again.load(tmp_path)
    again.advance(16000, lambda: False, lambda rounds: None)
    assert resumed.chunks == 8 and np.array_equal(whole.stats, resumed.stats)
    assert np.array_equal(whole.pre_stats, resumed.pre_stats)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--workers", "0"], "--workers must be >= 1, got 0"),
        (["--sync-chunks", "0"], "--sync-chunks must be >= 1"),
        (["--algo", "ppo", "--backend", "ray"], "only with --env shoe --algo tabular or linear"),
        (["--env", "round", "--backend", "ray"], "only with --env shoe --algo tabular or linear"),
        (["--env", "round", "--workers", "2"], "only with --env shoe --algo tabular or linear"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path: Path, capsys, argv: list[str], says: str) -> None:
    out = tmp_path / "run"
    argv = ["--env", "shoe", "--set", "penetration=0.75", *argv] if "--env" not in argv else argv
    assert train_main([*argv, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err
    assert not out.exists()


def test_ray_backend_without_ray_is_one_line(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    out = tmp_path / "run"
    argv = ["--env", "shoe", "--set", "penetration=0.75", "--backend", "ray", "--out", str(out), "--no-progress"]
    assert train_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--backend ray needs Ray: pip install 'blackjack-env[ray]'" in err, err
    assert not out.exists()
