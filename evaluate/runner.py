"""Run a simulation's chunks on local threads or on Ray, with progress and clean interruption.

Chunks are fixed by (rounds, seed) alone (see ``blackjack_env.simulate``) and their statistics
are summed in chunk order, so the result does not depend on the worker count or the backend.

The kernels are warmed up (compiled, or loaded from numba's cache) on one round before the clock
starts, in this process and in every Ray worker, so ``RunOutcome.seconds`` times the simulation alone.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import numpy as np

from blackjack_env.ray_cluster import check_address, start_or_join
from blackjack_env.rules import Rules
from blackjack_env.simulate import CHUNK_ROUNDS, Policy, SimulationResult, Table, iter_chunks

ProgressCallback = Callable[[int], None]
#: A first kernel call still running after this many seconds is compiling the kernels, not loading
#: numba's cache (a load takes well under a second): ``simulate`` then calls ``on_compiling``.
COMPILING_AFTER_SECONDS = 3.0
Chunk = tuple[Callable[..., np.ndarray], tuple[Any, ...]]


@dataclass
class RunOutcome:
    """A finished (or interrupted) run: summed statistics and how long it took.

    ``seconds`` is the simulation alone; ``warmup_seconds`` everything before it (the kernels'
    first call here, ``compile_seconds``, which compiles them when numba has no cache yet, and on
    Ray starting the workers and warming them up)."""

    result: SimulationResult
    seconds: float
    interrupted: bool
    compile_seconds: float = 0.0
    warmup_seconds: float = 0.0
    workers: int = 1


class _Stopwatch:
    """Marks when the timed simulation starts and stops (backends start it once they are warm)."""

    def __init__(self) -> None:
        self.created = self.started = self.stopped = time.perf_counter()

    def start(self, on_start: Callable[[], None] | None = None) -> None:
        if on_start is not None:
            on_start()
        self.started = self.stopped = time.perf_counter()

    def stop(self) -> None:
        self.stopped = time.perf_counter()


def default_workers() -> int:
    return os.cpu_count() or 1


def simulate(
    rules: Rules,
    policy: Policy,
    rounds: int,
    seed: int = 0,
    baseline: Policy | None = None,
    others: Sequence[Policy] = (),
    workers: int | None = None,
    backend: str = "local",
    ray_address: str | None = None,
    progress: ProgressCallback | None = None,
    chunk_rounds: int = CHUNK_ROUNDS,
    table: Table | None = None,
    on_compiling: Callable[[], None] | None = None,
    on_start: Callable[[], None] | None = None,
) -> RunOutcome:
    """Simulate `rounds` rounds of `policy`; `baseline` and then `others` play the same cards,
    each in turn in ``table.seat`` of the table (the other seats play ``table.others``).

    In the result, policy 0 is `policy`, 1 the baseline (if any), then the others.
    ``workers`` defaults to every local core (on a Ray cluster: every CPU of the cluster).

    A KeyboardInterrupt stops the run; the chunks finished so far make up the result.
    ``chunk_rounds`` is part of the seed's meaning: keep the default to reproduce results.

    For a command's feedback: ``on_compiling`` is called once the kernels' first call has run
    ``COMPILING_AFTER_SECONDS`` (numba is compiling them: a user should hear why nothing moves),
    ``on_start`` when the timed simulation starts (a progress bar started then shows its rate)."""
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    workers = workers or None
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    if backend == "ray":
        check_address(ray_address)  # a cluster that is not there: one line now, not Ray's minutes of retries
    policies = [policy, *([baseline] if baseline is not None else []), *others]
    chunks = list(iter_chunks(rules, policies, rounds, seed, chunk_rounds, table))
    clock = _Stopwatch()
    outputs: dict[int, np.ndarray] = {}
    compile_seconds, interrupted = 0.0, True  # as they stay after a Ctrl-C while warming up
    with contextlib.suppress(KeyboardInterrupt):
        compile_seconds = _warm_up_saying(chunks[0], on_compiling)  # Ray workers load the cache this writes
        if backend == "local":
            workers = workers or default_workers()
            clock.start(on_start)
            outputs, interrupted = _run_local(chunks, workers, progress)
            clock.stop()
        else:
            outputs, interrupted, workers = _run_ray(chunks, workers, ray_address, progress, clock, on_start)
    result = SimulationResult(len(policies))
    for index in sorted(outputs):  # chunk order: the same sums whatever finished first
        result.add(outputs[index])
    return RunOutcome(
        result,
        seconds=clock.stopped - clock.started,
        interrupted=interrupted,
        compile_seconds=compile_seconds,
        warmup_seconds=clock.started - clock.created,
        workers=workers or default_workers(),
    )


def warm_up(chunk: Chunk) -> float:
    """Play one round of a chunk's kernel, so that compiling it (or loading numba's cache) happens
    here and not in the timed run; returns the seconds that took."""
    function, args = chunk
    start = time.perf_counter()
    function(*args[:-1], 1)  # the kernel's very argument types, one round
    return time.perf_counter() - start


def _warm_up_saying(chunk: Chunk, on_compiling: Callable[[], None] | None) -> float:
    """``warm_up``, calling ``on_compiling`` from a timer if it is still running after
    ``COMPILING_AFTER_SECONDS`` (a compile, not a cache load)."""
    if on_compiling is None:
        return warm_up(chunk)
    timer = threading.Timer(COMPILING_AFTER_SECONDS, on_compiling)
    timer.daemon = True
    timer.start()
    try:
        return warm_up(chunk)
    finally:
        timer.cancel()


def _chunk_rounds(args: tuple[Any, ...]) -> int:
    return int(args[-1])


def _run_local(
    chunks: list[Chunk], workers: int, progress: ProgressCallback | None
) -> tuple[dict[int, np.ndarray], bool]:
    outputs: dict[int, np.ndarray] = {}
    if workers == 1:
        try:
            for index, (function, args) in enumerate(chunks):
                outputs[index] = function(*args)
                if progress:
                    progress(_chunk_rounds(args))
        except KeyboardInterrupt:
            return outputs, True
        return outputs, False
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: dict[Future, int] = {}
        next_chunk = 0
        try:
            while next_chunk < len(chunks) or pending:
                while next_chunk < len(chunks) and len(pending) < 2 * workers:
                    function, args = chunks[next_chunk]
                    pending[pool.submit(function, *args)] = next_chunk
                    next_chunk += 1
                done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    index = pending.pop(future)
                    outputs[index] = future.result()
                    if progress:
                        progress(_chunk_rounds(chunks[index][1]))
        except KeyboardInterrupt:
            for future in pending:
                future.cancel()
            for future, index in pending.items():  # running chunks end within a chunk's time
                if not future.cancelled():
                    outputs[index] = future.result()
            return outputs, True
    return outputs, False


class _ChunkWorker:
    """A Ray actor (one per worker process): warmed up once before the clock starts, then fed chunks."""

    def warm_up(self, chunk: Chunk) -> float:
        return warm_up(chunk)

    def run(self, function: Callable[..., np.ndarray], args: tuple[Any, ...]) -> np.ndarray:
        return function(*args)


def _run_ray(
    chunks: list[Chunk],
    workers: int | None,
    address: str | None,
    progress: ProgressCallback | None,
    clock: _Stopwatch,
    on_start: Callable[[], None] | None = None,
) -> tuple[dict[int, np.ndarray], bool, int]:
    """Start (or join) Ray and warm one actor per worker untimed, then time the chunks alone."""
    started_here = start_or_join(address, workers or default_workers())
    import ray

    actors: list[Any] = []
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        workers = min(workers or cpus, cpus)  # an actor beyond the CPUs would wait for ever
        worker_class = ray.remote(num_cpus=1)(_ChunkWorker)
        actors = [worker_class.remote() for _ in range(min(workers, len(chunks)))]
        try:
            ray.get([actor.warm_up.remote(chunks[0]) for actor in actors])
        except KeyboardInterrupt:
            return {}, True, workers
        clock.start(on_start)
        try:
            outputs, interrupted = _run_actors(ray, actors, chunks, progress)
        finally:
            clock.stop()
    finally:
        for actor in actors:  # also ends chunks still running after Ctrl-C
            ray.kill(actor)
        if started_here:
            ray.shutdown()
    return outputs, interrupted, workers


def _run_actors(
    ray: Any, actors: list[Any], chunks: list[Chunk], progress: ProgressCallback | None
) -> tuple[dict[int, np.ndarray], bool]:
    """Keep two chunks queued on every actor (no idle gap between chunks) until all are done."""
    outputs: dict[int, np.ndarray] = {}
    pending: dict[Any, tuple[int, Any]] = {}
    queue = iter(enumerate(chunks))

    def submit(actor: Any) -> None:
        item = next(queue, None)
        if item is not None:
            index, (function, args) = item
            pending[actor.run.remote(function, args)] = (index, actor)

    try:
        for actor in actors * 2:
            submit(actor)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            for ref in done:
                index, actor = pending.pop(ref)
                outputs[index] = ray.get(ref)
                if progress:
                    progress(_chunk_rounds(chunks[index][1]))
                submit(actor)
    except KeyboardInterrupt:
        return outputs, True
    return outputs, False


__all__ = ["COMPILING_AFTER_SECONDS", "RunOutcome", "simulate", "warm_up"]
