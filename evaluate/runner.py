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
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from blackjack_env.parallel import Workers
from blackjack_env.ray_cluster import check_address
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

    A KeyboardInterrupt stops the run; the chunks finished so far, up to the first one missing,
    make up the result (a run of whole chunks in chunk order).
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
    outputs: list[np.ndarray] = []
    compile_seconds, interrupted = 0.0, True  # as they stay after a Ctrl-C while warming up
    with contextlib.suppress(KeyboardInterrupt):
        compile_seconds = _warm_up_saying(chunks[0], on_compiling)  # Ray workers load the cache this writes
        outputs, interrupted, workers = _run(chunks, backend, workers, ray_address, progress, clock, on_start)
    result = SimulationResult(len(policies))
    for output in outputs:  # chunk order: the same sums whatever finished first
        result.add(output)
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


def _play(function: Callable[..., np.ndarray], args: tuple[Any, ...]) -> np.ndarray:
    """One chunk (a task of the parallel map: the kernel and its arguments)."""
    return function(*args)


def _run(
    chunks: list[Chunk],
    backend: str,
    workers: int | None,
    address: str | None,
    progress: ProgressCallback | None,
    clock: _Stopwatch,
    on_start: Callable[[], None] | None,
) -> tuple[list[np.ndarray], bool, int]:
    """The chunks on local threads (the kernels release the GIL) or on Ray, one actor per worker
    warmed up untimed; the clock times the chunks alone. Outputs come in chunk order; after a
    Ctrl-C, those finished before the first missing one."""
    pool = Workers(
        _play,
        "thread" if backend == "local" else "ray",
        workers,
        ray_address=address,
        warm_up=partial(warm_up, chunks[0]),
        most=len(chunks),
    )
    outputs: list[np.ndarray] = []
    try:
        with pool:
            clock.start(on_start)
            try:
                for output in pool.map(chunks):
                    outputs.append(output)
                    if progress:
                        progress(_chunk_rounds(chunks[len(outputs) - 1][1]))
            finally:
                clock.stop()
    except KeyboardInterrupt:
        return outputs, True, pool.workers
    return outputs, False, pool.workers


__all__ = ["COMPILING_AFTER_SECONDS", "RunOutcome", "simulate", "warm_up"]
