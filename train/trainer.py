"""The one training loop: any :class:`~blackjack_env.train.learner.Learner`, evaluated, logged and
checkpointed on one schedule.

Every ``eval_every`` steps the learner plays its policy (``Learner.evaluate``, seed + 1) and the row
goes to ``metrics.csv`` and TensorBoard (``tb/``); then a checkpoint is written (the learner's own
files, and ``state.json``: its step count and the wall time so far). Ctrl-C finishes the learner's
current chunk or rollout, writes a checkpoint and exits 130; a resumed run drops the rows past its
checkpoint and continues as an uninterrupted one would.
"""

from __future__ import annotations

import csv
import json
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .learner import Learner
from .scalars import ScalarWriter

STATE_FILE = "state.json"
METRICS_FILE = "metrics.csv"


@dataclass(frozen=True)
class Schedule:
    """How long a run learns and how it is checked along the way."""

    steps: int  # the run ends at the first chunk or rollout boundary at or past this
    eval_every: int
    eval_rounds: int
    seed: int  # evaluations play on seed + 1
    progress: bool = True


class MetricsLog:
    """metrics.csv, rewritten whole on each row (a resumed run drops rows past its checkpoint)."""

    def __init__(self, path: Path, keep_up_to: int, columns: Sequence[str]) -> None:
        self.path = path
        self.columns = tuple(columns)
        self.rows: list[dict[str, float]] = []
        if keep_up_to >= 0 and path.is_file():
            with path.open(newline="") as f:
                self.rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
            self.rows = [r for r in self.rows if r["step"] <= keep_up_to]

    def append(self, row: dict[str, float]) -> None:
        self.rows.append(row)
        tmp = self.path.with_suffix(".tmp")
        with tmp.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self.columns)
            writer.writeheader()
            for r in self.rows:
                writer.writerow({k: (int(r[k]) if k == "step" else repr(float(r[k]))) for k in self.columns})
        tmp.replace(self.path)


class Trainer:
    """Runs a learner to ``schedule.steps`` in ``out`` (module docstring)."""

    def __init__(self, learner: Learner, schedule: Schedule, out: Path) -> None:
        self.learner = learner
        self.schedule = schedule
        self.out = out

    def run(self, resume: bool = False) -> int:
        """Learn (or continue learning) to the schedule's end; the exit status (130: interrupted)."""
        learner, plan, out = self.learner, self.schedule, self.out
        line = learner.plan(plan.steps)
        if line:
            print(f"blackjack-train: {line}", file=sys.stderr, flush=True)
        state = json.loads((out / STATE_FILE).read_text()) if resume else {"wall_s": 0.0}
        keep = learner.steps if resume else -1
        metrics = MetricsLog(out / METRICS_FILE, keep_up_to=keep, columns=learner.columns)
        writer = ScalarWriter(out / "tb")
        stop_requested = False

        def on_sigint(signum: int, frame: Any) -> None:
            nonlocal stop_requested
            stop_requested = True

        previous_handler = signal.signal(signal.SIGINT, on_sigint)
        bar = tqdm(total=plan.steps, initial=learner.steps, unit="step", unit_scale=True, disable=not plan.progress)
        started = time.perf_counter() - state["wall_s"]

        def checkpoint() -> None:
            learner.save(out)
            state.update(steps=learner.steps, wall_s=time.perf_counter() - started)
            (out / STATE_FILE).write_text(json.dumps(state, indent=2))

        def evaluate() -> None:
            row = learner.evaluate(plan.eval_rounds, seed=plan.seed + 1)
            row.update(step=learner.steps, wall_s=time.perf_counter() - started)
            metrics.append(row)
            for key in learner.scalar_keys:
                writer.add_scalar(f"eval/{key}", row[key], learner.steps)
            for key, value in learner.train_scalars().items():
                writer.add_scalar(key, value, learner.steps)
            bar.set_postfix(learner.postfix(row))

        try:
            if not metrics.rows:
                evaluate()  # the starting point of the learning curve
            while learner.steps < plan.steps and not stop_requested:
                next_eval = min((learner.steps // plan.eval_every + 1) * plan.eval_every, plan.steps)
                learner.advance(next_eval, lambda: stop_requested, bar.update)
                if learner.steps >= next_eval:
                    evaluate()
                checkpoint()
            checkpoint()
        finally:
            learner.close()
            bar.close()
            writer.close()
            signal.signal(signal.SIGINT, previous_handler)
        if stop_requested:
            print(f"interrupted at step {learner.steps}: checkpoint in {out}; continue with --resume", file=sys.stderr)
            return 130
        print(learner.summary(metrics.rows[-1], state["wall_s"], out))
        return 0


__all__ = ["METRICS_FILE", "STATE_FILE", "MetricsLog", "Schedule", "Trainer"]
