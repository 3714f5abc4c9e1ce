"""Where the shoe learners' chunks are played: in this process, on local worker processes, or on Ray.

The schedule is fixed by the run's seed and ``sync_chunks`` (G) alone, never by the backend or the
worker count: the chunks fall into refresh periods beginning at chunks 0, 1, 2, 4, ... (doubling) up
to G and then every G chunks; every chunk of a period plays with the policy of the statistics merged
before the period began, with its own seed words (:func:`blackjack_env.agents.chunk_agent.chunk_words`),
and the chunks' statistics are merged on the driver in chunk order. So the same seed gives the same
statistics, bit for bit, with one worker or many, here or on a Ray cluster. G = 1 is the learners'
own ``learn_chunk`` loop (every chunk sees every chunk before it); a larger G lets up to G chunks run
at once, at the price of a policy up to G - 1 chunks stale. The doubling start keeps the first
periods short, where the policy changes most: played for G chunks, the untrained policy's rounds
would weigh in the learned round values for long (measured: benchmarks/sync_chunks.py).

A learner here is an agent with the chunk API: ``chunk_inputs(index)`` (the chunk's seed words,
then the arrays of the frozen policy), ``play_chunk(inputs)`` and ``merge(chunk)``, with ``seed``,
``chunks``, ``rounds`` and ``chunk_rounds``. The policy arrays are computed once per refresh on the
driver and sent once per refresh (Ray: one ``ray.put``), each task adding only its seed words.

A checkpoint may fall inside a refresh period (a Ctrl-C, or a --steps that is not a whole number of
periods): the period's frozen policy is then saved beside the agent (``SYNC_FILE``), so a resumed run
plays the rest of the period exactly as an uninterrupted one would.
"""

from __future__ import annotations

import copy
import importlib.util
import math
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from blackjack_env.agents.base import ChunkAgent
from blackjack_env.agents.chunk_agent import chunk_words
from blackjack_env.parallel import Workers

BACKENDS = ("local", "ray")
#: Chunks per policy refresh unless told (--sync-chunks): one default for every backend and worker
#: count, so a seed means one run; measured in the docs' learning-to-count results.
DEFAULT_SYNC_CHUNKS = 16
#: The frozen policy of an unfinished refresh period, saved with a checkpoint that falls inside one.
SYNC_FILE = "sync.npz"

Policy = tuple[np.ndarray, ...]
Chunk = tuple[np.ndarray, ...]


def check_backend(backend: str, workers: int) -> None:
    """Bad --backend / --workers in one line, before anything is written."""
    if backend not in BACKENDS:
        raise ValueError(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    if backend == "ray" and importlib.util.find_spec("ray") is None:
        raise ValueError("--backend ray needs Ray: pip install 'blackjack-env[ray]'")


# ---------------------------------------------------------------------------- backends
class _Player:
    """What a worker plays with: a learner (its rules, table and shapes), sent to each worker once;
    a task is a chunk's index, the refresh's frozen policy is shared by the tasks of a period."""

    def __init__(self, agent: ChunkAgent) -> None:
        self.agent = agent

    def __call__(self, policy: Policy, index: int) -> Chunk:
        return self.agent.play_chunk((chunk_words(self.agent.seed, index), *policy))


def warm_up(agent: ChunkAgent) -> float:
    """One round with the learner's kernel, so compiling it (or loading numba's cache) is done
    before the chunks start; returns the seconds that took. The driver does it before it starts
    workers: forked processes inherit the compiled kernel, Ray workers load the cache it wrote."""
    start = time.perf_counter()
    agent.basic_table()  # solved once, kept by the copy
    one = copy.copy(agent)
    one.chunk_rounds = 1
    one.play_chunk(one.chunk_inputs(0))
    return time.perf_counter() - start


def _player(agent: ChunkAgent) -> ChunkAgent:
    """The copy of the learner a worker plays with: its basic-strategy table solved here once (the
    other seats' play), so no worker solves the game again."""
    agent.basic_table()
    return copy.copy(agent)


class _Backend:
    """Chunks on the package's parallel map (:class:`blackjack_env.parallel.Workers`), started on
    the first chunk and kept for the run: the learner travels to each worker once, the frozen
    policy once per refresh (Ray: one ``ray.put``), each task adding only its chunk index."""

    def __init__(self, backend: str, workers: int, address: str | None = None) -> None:
        self.backend = backend
        self.workers = workers
        self.address = address
        self.pool: Workers[Chunk] | None = None
        self.warm_up_seconds: list[float] = []

    def start(self, agent: ChunkAgent) -> None:
        if self.backend == "process" and self.workers == 1:  # this process plays: the learner itself
            self.pool = Workers(_Player(agent), "process", 1)
            return
        driver = warm_up(agent)
        player = _Player(_player(agent))
        on_ray = self.backend == "ray"
        self.pool = Workers(
            player,
            self.backend,
            self.workers,
            ray_address=self.address,
            warm_up=partial(warm_up, player.agent) if on_ray else None,
            cap_to_cpus=False,
        )
        self.pool.start()
        if on_ray:
            self.driver_warm_up_seconds, self.warm_up_seconds = driver, list(self.pool.warm_ups)
        else:
            self.warm_up_seconds = [driver]

    def play(self, policy: Policy, indices: Sequence[int], stop: Callable[[], bool]) -> Iterator[tuple[int, Chunk]]:
        """The chunks ``indices`` played with ``policy``, in order, until ``stop()`` (the chunks
        under way then finish and come too)."""
        assert self.pool is not None
        chunks = self.pool.map(((index,) for index in indices), (policy,), stop)
        return zip(indices, chunks, strict=False)  # a stop ends the chunks before the indices

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None


class SerialBackend(_Backend):
    """Chunks one after another in this process (``--backend local --workers 1``)."""

    def __init__(self) -> None:
        super().__init__("process", 1)


class ProcessBackend(_Backend):
    """Chunks on ``workers`` local processes (``--backend local --workers K``, K > 1): each process
    gets the learner once; the frozen policy travels with each task (pickled, a few hundred kB)."""

    def __init__(self, workers: int) -> None:
        super().__init__("process", workers)


class RayBackend(_Backend):
    """Chunks as tasks of one Ray actor per worker (``--backend ray --workers K``): a local Ray,
    or the cluster at ``address``. The learner is put once per run, the policy once per refresh."""

    def __init__(self, workers: int, address: str | None) -> None:
        check_backend("ray", workers)
        super().__init__("ray", workers, address)


def make_backend(backend: str, workers: int, address: str | None = None) -> _Backend:
    """The backend of --backend / --workers / --ray-address."""
    check_backend(backend, workers)
    if backend == "ray":
        return RayBackend(workers, address)
    return SerialBackend() if workers == 1 else ProcessBackend(workers)


# ---------------------------------------------------------------------------- the schedule
class ChunkRunner:
    """Plays a learner's chunks on a backend by the schedule of the module docstring, merging them
    in chunk order. ``start`` happens on the first chunk, so a run that has nothing to play starts
    no workers."""

    def __init__(self, agent: ChunkAgent, sync_chunks: int, backend: _Backend) -> None:
        if sync_chunks < 1:
            raise ValueError(f"--sync-chunks must be >= 1, got {sync_chunks}")
        self.agent = agent
        self.sync_chunks = sync_chunks
        self.backend = backend
        self.started = False
        self.policy: Policy | None = None
        self.policy_start = -1  # the chunk at which self.policy was frozen
        self.behaviour_ev = 0.0
        # the driver's own work, for benchmarks/train_scaling.py: policy refreshes and merges
        self.refresh_seconds = 0.0
        self.refreshes = 0
        self.merge_seconds = 0.0
        self.merges = 0

    def period_start(self, index: int) -> int:
        """The chunk whose merged predecessors chunk ``index`` plays with: periods begin at chunks
        0, 1, 2, 4, ... (doubling) up to G, then every G chunks."""
        g = self.sync_chunks
        if index >= g:
            return index - index % g
        return 0 if index == 0 else min(1 << (index.bit_length() - 1), g)

    def period_end(self, start: int) -> int:
        """The first chunk of the period after the one beginning at ``start``."""
        g = self.sync_chunks
        return start + g if start >= g else max(min(2 * start, g), 1)

    def advance(self, target: int, stop: Callable[[], bool], progress: Callable[[int], None]) -> None:
        """Play and merge chunks until ``target`` rounds or ``stop()`` (then the chunks under way
        finish, and those that continue the merged ones in order are kept)."""
        agent = self.agent
        while agent.rounds < target and not stop():
            first = agent.chunks
            start = self.period_start(first)
            if self.policy_start != start:
                if first != start:
                    raise ValueError(
                        f"chunk {first} is inside a refresh period begun at chunk {start}, whose policy "
                        f"is not in the run directory ({SYNC_FILE})"
                    )
                clock = time.perf_counter()
                self.policy = agent.chunk_inputs(first)[1:]
                self.policy_start = start
                self.refresh_seconds += time.perf_counter() - clock
                self.refreshes += 1
            assert self.policy is not None
            wanted = math.ceil((target - agent.rounds) / agent.chunk_rounds)
            indices = range(first, min(self.period_end(start), first + wanted))
            if not self.started:
                self.started = True  # (close() then also undoes a start that failed half-way)
                self.backend.start(agent)
            for index, chunk in self.backend.play(self.policy, indices, stop):  # in chunk order
                assert index == agent.chunks
                clock = time.perf_counter()
                rounds, self.behaviour_ev = agent.merge(chunk)
                self.merge_seconds += time.perf_counter() - clock
                self.merges += 1
                progress(rounds)

    def close(self) -> None:
        if self.started:
            self.backend.close()
            self.started = False

    # ------------------------------------------------------------------ checkpoints
    def save(self, out: Path) -> None:
        """The frozen policy when the merged chunks end inside a refresh period (else no file)."""
        path = out / SYNC_FILE
        chunks = self.agent.chunks
        if self.period_start(chunks) == chunks or self.policy_start != self.period_start(chunks):
            path.unlink(missing_ok=True)
            return
        assert self.policy is not None
        tmp = out / (SYNC_FILE + ".tmp.npz")
        # Any: mypy reads **arrays as maybe savez's allow_pickle
        arrays: dict[str, Any] = {f"policy_{i}": a for i, a in enumerate(self.policy)}
        np.savez(tmp, start=np.array([self.policy_start, self.sync_chunks], np.int64), **arrays)
        tmp.replace(path)

    def load(self, out: Path) -> None:
        """The frozen policy of the refresh period a resumed run is inside (see ``save``)."""
        path = out / SYNC_FILE
        chunks = self.agent.chunks
        if self.period_start(chunks) == chunks:
            return
        if not path.is_file():
            raise ValueError(f"{out}: its checkpoint ends inside a refresh period, but {SYNC_FILE} is missing")
        with np.load(path) as data:
            start, sync_chunks = (int(x) for x in data["start"])
            n = sum(1 for name in data.files if name.startswith("policy_"))
            policy = tuple(data[f"policy_{i}"] for i in range(n))
        if sync_chunks != self.sync_chunks or start != self.period_start(chunks):
            raise ValueError(f"{path} belongs to another schedule (chunk {start}, --sync-chunks {sync_chunks})")
        self.policy, self.policy_start = policy, start
