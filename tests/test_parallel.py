"""The package's one parallel map (``blackjack_env.parallel``): results in task order whatever finishes
first, on threads, processes and Ray; a stop or a Ctrl-C keeps the results finished in order and
cancels the rest; worker processes leave Ctrl-C to the driver; a bad backend is one clear line; and
Ray is imported by no module of the solver.

Tasks sleep for fixed times so that later tasks finish first; no randomness is involved."""

from __future__ import annotations

import _thread
import re
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from blackjack_env.parallel import BACKENDS, Workers, parallel_map

PACKAGE = Path(__file__).resolve().parents[1] / "blackjack_env"


def _slow_square(x: int, delay: float) -> int:
    time.sleep(delay)
    return x * x


def _late_first(n: int, step: float = 0.05) -> list[tuple[int, float]]:
    """Tasks whose delays fall with their index: on several workers the last finish first."""
    return [(i, step * (n - i)) for i in range(n)]


@pytest.mark.parametrize("backend", ["thread", "process"])
def test_results_come_in_task_order_whatever_finishes_first(backend: str) -> None:
    finished: list[int] = []

    def record(x: int, delay: float) -> int:  # threads only: processes return _slow_square's value
        value = _slow_square(x, delay)
        finished.append(x)
        return value

    function = record if backend == "thread" else _slow_square
    results = list(parallel_map(function, _late_first(6), backend=backend, workers=3))
    assert results == [i * i for i in range(6)]
    if backend == "thread":
        assert finished != sorted(finished)  # the order was restored, not merely kept


def test_shared_arguments_come_first_and_one_worker_runs_here() -> None:
    here = threading.get_ident()
    seen: list[int] = []

    def call(base: int, x: int) -> int:
        seen.append(threading.get_ident())
        return base + x

    assert list(parallel_map(call, [(1,), (2,)], backend="process", workers=1, shared=(10,))) == [11, 12]
    assert seen == [here, here]  # no pool for one worker (a closure could not even be pickled for one)


def test_in_flight_tasks_are_bounded() -> None:
    running, most = [0], [0]
    lock = threading.Lock()

    def task(x: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        return x

    with Workers(task, "thread", 2, queued=1) as pool:
        assert list(pool.map((i,) for i in range(20))) == list(range(20))
    assert most[0] <= 2


def test_a_stop_ends_the_map_after_the_tasks_under_way() -> None:
    got: list[int] = []
    calls: list[int] = []

    def task(x: int) -> int:
        calls.append(x)
        time.sleep(0.02)
        return x

    with Workers(task, "thread", 2) as pool:  # 4 in flight
        for x in pool.map(((i,) for i in range(50)), stop=lambda: len(got) >= 2):
            got.append(x)
    assert got == list(range(len(got))) and 2 <= len(got) <= 2 + 4
    assert sorted(calls) == got  # every task submitted was delivered, in order


def _interrupted(pool: Workers[int], tasks: list[tuple[int, float]], after: float) -> list[int]:
    """Map ``tasks`` on a started pool, Ctrl-C (as the terminal's) reaching the driver ``after``
    seconds in; the results delivered. The map must raise the KeyboardInterrupt again."""
    timer = threading.Timer(after, _thread.interrupt_main)
    got: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        timer.start()
        try:
            for value in pool.map(tasks):
                got.append(value)
        finally:
            timer.cancel()
    return got


@pytest.mark.parametrize("backend", ["thread", "process"])
def test_ctrl_c_keeps_the_finished_prefix_and_cancels_the_rest(backend: str) -> None:
    """Task 1 is slow; Ctrl-C comes while it runs and task 0 and the quick ones after it are done: the
    running task finishes and is kept, with everything after it already finished; the queue is dropped."""
    tasks = [(0, 0.0), (1, 0.6)] + [(i, 0.1) for i in range(2, 40)]
    started = time.perf_counter()
    with Workers(_slow_square, backend, 2) as pool:
        got = _interrupted(pool, tasks, after=0.3)
    assert got == [i * i for i in range(len(got))]
    assert 2 <= len(got) < 20  # task 1 kept (it was running); most of the queue never ran
    assert time.perf_counter() - started < 2.0


def test_worker_processes_ignore_ctrl_c() -> None:
    handlers = list(parallel_map(signal.getsignal, [(signal.SIGINT,)] * 2, backend="process", workers=2))
    assert handlers == [signal.SIG_IGN] * 2


def test_a_bad_backend_is_one_clear_line() -> None:
    says = "backend must be one of 'thread', 'process', 'ray', got 'gpu'"
    with pytest.raises(ValueError, match=re.escape(says)):
        parallel_map(abs, [(1,)], backend="gpu")  # said at once, not on the first result
    with pytest.raises(ValueError, match=re.escape(says)):
        Workers(abs, "gpu")
    with pytest.raises(ValueError, match="workers must be >= 1, got 0"):
        Workers(abs, "thread", 0)
    assert BACKENDS == ("thread", "process", "ray")


def test_the_solver_and_the_map_do_not_import_ray() -> None:
    for path in (PACKAGE / "solver").glob("*.py"):  # nowhere: the solver passes a function to the map
        assert not re.search(r"^\s*(import ray|from ray)\b", path.read_text(), re.M), path
    assert not re.search(r"^(import ray|from ray)\b", (PACKAGE / "parallel.py").read_text(), re.M)  # in functions
    probe = "import sys, blackjack_env.parallel, blackjack_env.solver.indices; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


# ---------------------------------------------------------------------------- Ray
def _ray():
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        pytest.skip("a Ray is already running in this process")
    # the test module's functions travel by value: a Ray worker need not import the tests
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    return ray


def test_ray_started_here_keeps_task_order_and_is_shut_down() -> None:
    """A Ray of two CPUs started by the map (through ray_cluster), warmed up once per worker, gone after."""
    ray = _ray()
    pool = Workers(_slow_square, "ray", 2, warm_up=partial(_slow_square, 3, 0.0))
    with pool:
        assert pool.warm_ups == [9, 9] and pool.workers == 2
        assert list(pool.map(_late_first(6))) == [i * i for i in range(6)]
        assert list(pool.map([(0.0,), (0.01,)], shared=(5,))) == [25, 25]  # shared: put once, first
    assert not ray.is_initialized()


def test_ray_joined_caps_or_refuses_workers_stops_and_keeps_the_prefix_on_ctrl_c() -> None:
    ray = _ray()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        with Workers(_slow_square, "ray", 5) as pool:
            assert pool.workers == 2  # an actor beyond the CPUs would wait for ever
            got: list[int] = []
            for value in pool.map([(i, 0.05) for i in range(30)], stop=lambda: len(got) >= 3):
                got.append(value)
            assert got == [i * i for i in range(len(got))] and 3 <= len(got) < 12
        with pytest.raises(ValueError, match="--workers 5: the Ray cluster has 2 CPUs"):
            Workers(_slow_square, "ray", 5, cap_to_cpus=False).start()
        tasks = [(0, 0.0), (1, 2.0)] + [(i, 0.05) for i in range(2, 40)]
        with Workers(_slow_square, "ray", 2, warm_up=partial(_slow_square, 0, 0.0)) as pool:  # actors up
            got = _interrupted(pool, tasks, after=1.0)
        assert got == [0]  # task 1 was running: on Ray it is ended with its actor, not waited for
        assert ray.is_initialized()  # a joined Ray is left running
    finally:
        ray.shutdown()
