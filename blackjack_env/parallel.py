"""The package's one parallel map: tasks on local threads, local processes or Ray, results in task order.

Every scale-out here (the simulator's chunks, the shoe learners' chunks, the ceiling's shoes, the
index grid) maps a picklable function over independent tasks and combines the results in task
order, so a result never depends on the backend, the worker count or which task finished first.
This module is that map, written once:

* results come out in submission order, whatever order they finish in;
* at most ``queued`` tasks per worker are in flight, submitted and not finished (enough that a
  worker never waits for the driver between two tasks, few enough that a stop or a Ctrl-C wastes
  little); a result that finished before an earlier one waits on the driver;
* ``stop()`` (checked before each submission) ends the map cleanly: nothing more is submitted, the
  tasks under way finish and are delivered;
* Ctrl-C keeps what finished: tasks not started are cancelled, those running on local workers
  finish (worker processes ignore SIGINT, so the terminal's Ctrl-C reaches the driver alone), Ray's
  actors are killed; the results that continue the delivered ones in order are delivered, then the
  ``KeyboardInterrupt`` goes on to the caller, who has every result before the first missing one;
* one worker on a local backend runs the tasks in this thread, with no pool to start;
* Ray is started or joined by :func:`blackjack_env.ray_cluster.start_or_join` alone and imported
  inside functions, so importing this module costs nothing.

:class:`Workers` is a set of workers that outlives one map (a learner's workers keep its state from
one refresh period to the next); :func:`parallel_map` is the one-off map over a fresh set.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterable, Iterator, Sized
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.context import BaseContext
from typing import Any, Generic, TypeVar

import numpy as np

from .ray_cluster import start_or_join

R = TypeVar("R")
Task = tuple[Any, ...]

#: The places a map runs: ``thread`` (for kernels that release the GIL), ``process``, ``ray``.
BACKENDS = ("thread", "process", "ray")
#: Tasks kept in flight per worker unless told: one running, one waiting for it.
QUEUED_PER_WORKER = 2
#: How long the driver waits for a result before looking again (a Ctrl-C is seen within it).
POLL_SECONDS = 0.5


def check_backend(backend: str) -> None:
    """A backend name that is not one of ``BACKENDS``, in one line."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, got {backend!r}")


def pool_context() -> BaseContext:
    """fork where there is one: spawn would re-run a caller's unguarded script in every worker (and
    forked workers inherit the driver's compiled kernels)."""
    return get_context("fork" if "fork" in get_all_start_methods() else "spawn")


_PROCESS_FUNCTION: Any = None


def _init_process(function: Callable[..., Any]) -> None:
    """A pool process: keep the map's function (sent once, not with every task) and leave Ctrl-C to
    the driver, which lets the tasks under way finish and keeps them."""
    global _PROCESS_FUNCTION
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _PROCESS_FUNCTION = function


def _call_in_process(shared: Task, task: Task) -> Any:
    return _PROCESS_FUNCTION(*shared, *task)


def _writable(value: Any) -> Any:
    """Ray's object store hands out read-only arrays, for which numba would compile a second kernel:
    copies that are writable (inside tuples too)."""
    if isinstance(value, np.ndarray) and not value.flags.writeable:
        return np.array(value)
    if isinstance(value, tuple):
        return tuple(_writable(v) for v in value)
    return value


class _RayWorker:
    """A Ray actor (one per worker process): holds the map's function, sent once."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def warm_up(self, warm_up: Callable[[], Any]) -> Any:
        return warm_up()

    def call(self, shared: Task, *task: Any) -> Any:
        return self.function(*_writable(shared), *task)


class Workers(Generic[R]):
    """Workers that run ``function(*shared, *task)`` for the tasks of one or more :meth:`map` calls.

    Args:
        function: picklable for ``process`` and ``ray`` (each worker gets it once, with its state).
        backend: one of ``BACKENDS``.
        workers: how many (None: every local core; on Ray, every CPU of the cluster).
        ray_address: the Ray cluster to join (None: start a local Ray of ``workers`` CPUs).
        warm_up: a picklable callable of no arguments each Ray worker calls once on start, before any
            task (a Ray worker is a fresh process: its kernels compile or load numba's cache there,
            not in the caller's timed run); what each returned is ``warm_ups``. Local workers share
            or inherit the driver's kernels and skip it.
        queued: tasks in flight per worker.
        cap_to_cpus: more Ray workers than the cluster's CPUs are cut to that many (True) or refused.
        most: at most this many workers are started (a map of fewer tasks needs no more).

    ``workers`` is the count the map runs with once started (on Ray, at most the cluster's CPUs).
    Use it as a context manager, or call :meth:`start` and :meth:`close`.
    """

    def __init__(
        self,
        function: Callable[..., R],
        backend: str,
        workers: int | None = None,
        *,
        ray_address: str | None = None,
        warm_up: Callable[[], Any] | None = None,
        queued: int = QUEUED_PER_WORKER,
        cap_to_cpus: bool = True,
        most: int | None = None,
    ) -> None:
        check_backend(backend)
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if queued < 1:
            raise ValueError(f"queued must be >= 1, got {queued}")
        self.function = function
        self.backend = backend
        self.requested = workers
        self.workers = workers or os.cpu_count() or 1
        self.ray_address = ray_address
        self.warm_up = warm_up
        self.queued = queued
        self.cap_to_cpus = cap_to_cpus
        self.most = most
        self.warm_ups: list[Any] = []
        self._pool: Executor | None = None
        self._inline = False
        self._actors: list[Any] = []
        self._ray: Any = None
        self._started_ray = False
        self._busy = False  # a map left tasks running (Ray: the actors are killed, not let finish)
        self._started = False

    # ------------------------------------------------------------------ lifetime
    def __enter__(self) -> Workers[R]:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _count(self) -> int:
        return max(1, min(self.workers, self.most)) if self.most is not None else self.workers

    def start(self) -> None:
        """Start the pool, or start (join) Ray and warm its workers; undone by :meth:`close`, also
        when the start itself fails or is interrupted."""
        if self._started:
            return
        self._started = True
        try:
            if self.backend == "ray":
                self._start_ray()
            elif self._count() == 1:
                self._inline = True
            elif self.backend == "thread":
                self._pool = ThreadPoolExecutor(self._count())
            else:
                self._pool = ProcessPoolExecutor(
                    self._count(), mp_context=pool_context(), initializer=_init_process, initargs=(self.function,)
                )
        except BaseException:
            self.close()
            raise

    def _start_ray(self) -> None:
        self._started_ray = start_or_join(self.ray_address, self.workers)
        import ray  # optional dependency: Ray (the ray extra; start_or_join said if it is missing)

        self._ray = ray
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        if self.requested is not None and self.requested > cpus and not self.cap_to_cpus:
            raise ValueError(f"--workers {self.requested}: the Ray cluster has {cpus} CPUs")
        self.workers = min(self.requested or cpus, cpus)  # an actor beyond the CPUs would wait for ever
        actor = ray.remote(num_cpus=1)(_RayWorker)
        function = ray.put(self.function)
        self._actors = [actor.remote(function) for _ in range(self._count())]
        if self.warm_up is not None:
            warm_up = ray.put(self.warm_up)
            self.warm_ups = ray.get([a.warm_up.remote(warm_up) for a in self._actors])

    def close(self) -> None:
        """Stop the workers: a pool after its running tasks; Ray's actors (killed if a map left tasks
        running), and Ray itself if :meth:`start` started it."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
        if self._actors and self._busy:
            for actor in self._actors:
                self._ray.kill(actor)
        self._actors = []  # the last handles: Ray ends the actors (ray.kill would print a SIGTERM dump)
        if self._started_ray:
            self._ray.shutdown()
            self._started_ray = False
        self._inline = False
        self._busy = False
        self._started = False

    # ------------------------------------------------------------------ the map
    def map(self, tasks: Iterable[Task], shared: Task = (), stop: Callable[[], bool] | None = None) -> Iterator[R]:
        """``function(*shared, *task)`` for each task, yielded in task order (see the module).

        ``shared`` is sent once per map (Ray: one ``ray.put``) rather than kept in every task;
        ``stop()`` ends the map after the tasks under way. A Ctrl-C is raised again after the results
        that finished in order are yielded."""
        self.start()
        stopped = stop or (lambda: False)
        queue = iter(tasks)
        if self._inline:
            return self._map_inline(queue, shared, stopped)
        if self._pool is not None:
            return self._map_pool(self._pool, queue, shared, stopped)
        return self._map_ray(queue, shared, stopped)

    def _map_inline(self, queue: Iterator[Task], shared: Task, stopped: Callable[[], bool]) -> Iterator[R]:
        for task in queue:
            if stopped():
                return
            yield self.function(*shared, *task)

    def _map_pool(
        self, pool: Executor, queue: Iterator[Task], shared: Task, stopped: Callable[[], bool]
    ) -> Iterator[R]:
        in_process = isinstance(pool, ProcessPoolExecutor)
        pending: dict[Future[R], int] = {}
        finished: dict[int, R] = {}
        submitted = delivered = 0
        try:
            while True:
                while len(pending) < self.queued * self._count() and not stopped():
                    task = next(queue, None)
                    if task is None:
                        break
                    if in_process:
                        future = pool.submit(_call_in_process, shared, task)
                    else:
                        future = pool.submit(self.function, *shared, *task)
                    pending[future] = submitted
                    submitted += 1
                if not pending:
                    return
                done, _ = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                for future in done:
                    finished[pending.pop(future)] = future.result()
                while delivered in finished:
                    yield finished.pop(delivered)
                    delivered += 1
        except KeyboardInterrupt:
            for future in pending:
                future.cancel()
            for future, index in pending.items():  # the running ones end within a task's time
                if not future.cancelled():
                    finished[index] = future.result()
            pending.clear()
            while delivered in finished:
                yield finished.pop(delivered)
                delivered += 1
            raise
        finally:
            for future in pending:  # the caller stopped reading: what has not started never will
                future.cancel()

    def _map_ray(self, queue: Iterator[Task], shared: Task, stopped: Callable[[], bool]) -> Iterator[R]:
        ray = self._ray
        shared_arg: Any = ray.put(shared) if shared else ()
        pending: dict[Any, tuple[int, Any]] = {}
        finished: dict[int, R] = {}
        submitted = delivered = 0

        def submit(actor: Any) -> None:
            nonlocal submitted
            task = None if stopped() else next(queue, None)
            if task is not None:
                pending[actor.call.remote(shared_arg, *task)] = (submitted, actor)
                submitted += 1

        self._busy = True
        try:
            for actor in self._actors * self.queued:
                submit(actor)
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_SECONDS)
                for ref in done:
                    index, actor = pending.pop(ref)
                    finished[index] = ray.get(ref)
                    submit(actor)
                while delivered in finished:
                    yield finished.pop(delivered)
                    delivered += 1
        except KeyboardInterrupt:
            while delivered in finished:
                yield finished.pop(delivered)
                delivered += 1
            raise
        self._busy = False


def parallel_map(
    function: Callable[..., R],
    tasks: Iterable[Task],
    *,
    backend: str = "process",
    workers: int | None = None,
    shared: Task = (),
    stop: Callable[[], bool] | None = None,
    **options: Any,
) -> Iterator[R]:
    """``function(*shared, *task)`` for each task on fresh :class:`Workers` (``options`` are its
    keyword arguments), yielded in task order and stopped when the last is read or the map ends.
    The backend is checked now, not on the first result."""
    most = len(tasks) if isinstance(tasks, Sized) else None
    pool: Workers[R] = Workers(function, backend, workers, most=most, **options)

    def results() -> Iterator[R]:
        with pool:
            yield from pool.map(tasks, shared, stop)

    return results()


__all__ = ["BACKENDS", "QUEUED_PER_WORKER", "Workers", "check_backend", "parallel_map", "pool_context"]
