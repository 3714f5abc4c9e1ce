"""Run a simulation's chunks on local threads or on Ray, with progress and clean interruption.

Chunks are fixed by (rounds, seed) alone (see ``blackjack_env.simulate``) and their statistics
are summed in chunk order, so the result does not depend on the worker count or the backend.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import numpy as np

from blackjack_env.rules import Rules
from blackjack_env.simulate import CHUNK_ROUNDS, Policy, SimulationResult, iter_chunks

ProgressCallback = Callable[[int], None]


@dataclass
class RunOutcome:
    """A finished (or interrupted) run: summed statistics and how long it took."""

    result: SimulationResult
    seconds: float
    interrupted: bool


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
) -> RunOutcome:
    """Simulate `rounds` rounds of `policy`; `baseline` and then `others` play the same cards.

    In the result, policy 0 is `policy`, 1 the baseline (if any), then the others.

    A KeyboardInterrupt stops the run; the chunks finished so far make up the result.
    ``chunk_rounds`` is part of the seed's meaning: keep the default to reproduce results."""
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    workers = workers or default_workers()
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    policies = [policy, *([baseline] if baseline is not None else []), *others]
    chunks = list(iter_chunks(rules, policies, rounds, seed, chunk_rounds))
    start = time.perf_counter()
    if backend == "local":
        outputs, interrupted = _run_local(chunks, workers, progress)
    elif backend == "ray":
        outputs, interrupted = _run_ray(chunks, workers, ray_address, progress)
    else:
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    result = SimulationResult(len(policies))
    for index in sorted(outputs):  # chunk order: the same sums whatever finished first
        result.add(outputs[index])
    return RunOutcome(result, time.perf_counter() - start, interrupted)


def _chunk_rounds(args: tuple[Any, ...]) -> int:
    return int(args[-1])


def _run_local(chunks, workers: int, progress: ProgressCallback | None) -> tuple[dict[int, np.ndarray], bool]:
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


def _run_ray(chunks, workers: int, address: str | None, progress: ProgressCallback | None):
    try:
        import ray
    except ImportError:
        raise ValueError("the ray backend needs Ray: pip install 'blackjack-env[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        kwargs: dict[str, Any] = {"address": address} if address else {"num_cpus": workers}
        ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR", **kwargs)
    remote_chunk = ray.remote(num_cpus=1)(_ray_chunk)
    outputs: dict[int, np.ndarray] = {}
    refs = {remote_chunk.remote(function, args): index for index, (function, args) in enumerate(chunks)}
    try:
        waiting = list(refs)
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1, timeout=0.5)
            for ref in done:
                index = refs[ref]
                outputs[index] = ray.get(ref)
                if progress:
                    progress(_chunk_rounds(chunks[index][1]))
    except KeyboardInterrupt:
        for ref in refs:
            if refs[ref] not in outputs:
                ray.cancel(ref, force=True)
        return outputs, True
    finally:
        if started_here:
            ray.shutdown()
    return outputs, False


def _ray_chunk(function, args):
    return function(*args)
