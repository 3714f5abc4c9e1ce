"""A Ray that is not there is one line, exit 2, nothing written, for every command with --ray-address
(blackjack_env/ray_cluster.py: the one place Ray is started or joined). Ray itself would retry a dead
address for many minutes; the address is probed first, so these tests take seconds."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from blackjack_env import ray_cluster
from blackjack_env.evaluate.cli import main as evaluate_main
from blackjack_env.evaluate.strategy import main as strategy_main
from blackjack_env.train.cli import main as train_main

DEAD = "127.0.0.1:1"  # nothing listens on port 1: the connection is refused at once
SHOE = ["--set", "penetration=0.75"]
COMMANDS: dict[str, tuple[Callable[[list[str]], int], list[str]]] = {
    "evaluate": (evaluate_main, ["--policy", "basic", "--rounds", "1e5"]),
    "report": (evaluate_main, ["report", "--policy", "basic", "--rounds", "1e5", "--out", "report"]),
    "sweep": (evaluate_main, ["sweep", "--rounds", "1e5", "--plot", "sweep.png"]),
    "ceiling": (strategy_main, ["--ceiling", *SHOE, "--samples", "5"]),
    "train": (train_main, ["--env", "shoe", *SHOE, "--steps", "1e5", "--out", "run"]),
    "train-linear": (train_main, ["--env", "shoe", "--algo", "linear", *SHOE, "--steps", "1e5", "--out", "run"]),
}


@pytest.fixture(autouse=True)
def no_ray_joined() -> None:
    """A process already joined to a Ray uses it whatever the address: these tests need one that is not."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        pytest.skip("this process is joined to a Ray")


def _one_line(err: str, *says: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert all(text in lines[0] for text in says), lines[0]
    return lines[0]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_dead_address_is_one_line_exit_2_nothing_written(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ray")
    monkeypatch.chdir(tmp_path)
    main, argv = COMMANDS[name]
    start = time.monotonic()
    assert main([*argv, "--backend", "ray", "--ray-address", DEAD]) == 2
    assert time.monotonic() - start < 30
    captured = capsys.readouterr()
    line = _one_line(captured.err, f"--ray-address {DEAD}: no Ray cluster answers there", "ray start --head")
    assert "leave out --ray-address" in line
    assert captured.out == "" and list(tmp_path.iterdir()) == []


def test_auto_with_no_cluster_as_a_user_runs_it(tmp_path: Path) -> None:
    """The installed command, ``auto`` resolved through RAY_ADDRESS (as Ray resolves it) to a dead
    address: one line naming both, exit 2, no traceback, nothing written."""
    pytest.importorskip("ray")
    command = [sys.executable, "-m", "blackjack_env.evaluate", "--policy", "basic", "--rounds", "1e5"]
    command += ["--backend", "ray", "--ray-address", "auto"]
    env = {**os.environ, "RAY_ADDRESS": DEAD}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    _one_line(done.stderr, f"--ray-address auto (RAY_ADDRESS={DEAD})", "no Ray cluster answers there")
    assert done.stdout == "" and list(tmp_path.iterdir()) == []


def _gcs_running() -> bool:
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == "gcs_server":
                return True
        except OSError:
            continue
    return False


def test_auto_finds_no_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ray")
    if _gcs_running() or not Path("/proc").is_dir():
        pytest.skip("a Ray cluster runs on this machine (auto would join it)")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", "/nonexistent-ray-tmp")  # no address file of an earlier `ray start`
    with pytest.raises(ray_cluster.RayUnavailable, match="auto: no running Ray cluster found on this machine"):
        ray_cluster.check_address("auto")


@pytest.mark.parametrize("address", ["10.0.0.5", "ray://", "host:port", "host:0"])
def test_an_address_ray_cannot_join_names_the_forms_it_can(address: str) -> None:
    pytest.importorskip("ray")
    with pytest.raises(ray_cluster.RayUnavailable, match=r"not an address Ray joins; give auto, HOST:PORT"):
        ray_cluster.check_address(address)


def test_without_ray_installed_the_line_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray then fails as if it were not installed
    for call in (lambda: ray_cluster.check_address(DEAD), lambda: ray_cluster.start_or_join(None, 1)):
        with pytest.raises(ray_cluster.RayUnavailable, match=r"pip install 'blackjack-env\[ray\]'"):
            call()
