"""The ceiling's disk cache: every analysed shoe's values, kept beside the solver's results, keyed by what
fixes them and by the code that computes them, written while a run goes on, so the same call again reads
them and an interrupted run's next call analyses only the shoes still missing."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np

from .._source import code_key, touch
from ..rules import Rules
from ..strategy import StrategyTable
from ._ceiling_result import N_VALUES
from ._ceiling_strata import POOL_PER_SAMPLE
from .solution import atomic_file, cache_dir

#: The longest a running ceiling goes without writing its finished shoes to the cache.
SAVE_SECONDS = 30.0
#: The module whose code (with every module it imports: the sampling, the design, the analysis) keys the cache.
CODE = "blackjack_env.solver.ceiling"


def cache_path(
    rules: Rules, basic: StrategyTable, seats: int, seat: int, samples: int, seed: int, strata: int, every: int
) -> Path:
    """Where a run's shoe values are kept: keyed by everything that fixes them (the rules, the basic
    strategy played, the table, the samples and their design, the seed) and by the code that
    computes them (``code_key`` of this module and every module it imports)."""
    table = hashlib.sha256(basic.actions.tobytes() + basic.insurance.tobytes()).hexdigest()[:16]
    key = {
        "code": code_key(CODE),
        "rules": rules.to_dict(),
        "basic": table,
        "seats": seats,
        "seat": seat,
        "samples": samples,
        "seed": seed,
        "strata": strata,
        "pool_per_sample": POOL_PER_SAMPLE,
        "in_round_every": every,
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    return cache_dir() / f"ceiling-{digest}.npz"


def load_values(path: Path | None, n: int) -> dict[int, np.ndarray]:
    """The shoes a cache file holds (none if there is no readable file of this run's size); a file
    read is marked used (``_source.touch``), so the cache's pruning keeps it as it keeps solutions."""
    if path is None or not path.exists():
        return {}
    try:
        with np.load(path) as data:
            values, done = data["values"], data["done"]
    except (OSError, ValueError, KeyError):
        return {}
    if values.shape != (n, N_VALUES) or done.shape != (n,):
        return {}
    touch(path)
    return {int(i): values[i].copy() for i in np.flatnonzero(done)}


class Saver:
    """Writes the finished shoes to the cache file (atomically), at most every ``SAVE_SECONDS``
    while running and once at the end (also after a Ctrl-C): an interrupted run loses at most that."""

    def __init__(self, path: Path | None, outputs: dict[int, np.ndarray], n: int) -> None:
        self.path, self.outputs, self.n = path, outputs, n
        self.start = len(outputs)
        self.last = time.perf_counter()

    @property
    def new(self) -> int:
        return len(self.outputs) - self.start

    def __call__(self, done: int) -> None:
        if time.perf_counter() - self.last > SAVE_SECONDS:
            self.save()

    def save(self) -> None:
        if self.path is None or self.new == 0:
            return
        values = np.full((self.n, N_VALUES), np.nan)
        done = np.zeros(self.n, np.bool_)
        for i, row in list(self.outputs.items()):
            values[i] = row
            done[i] = True
        try:
            with atomic_file(self.path) as f:
                np.savez(f, values=values, done=done)
        except OSError:
            pass  # a read-only cache folder: the run goes on without it
        self.last = time.perf_counter()
