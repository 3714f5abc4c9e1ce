"""TensorBoard scalars without torch: the tabular learner trains with the core install.

``tensorboard``'s own event-file writer (the one torch's ``SummaryWriter`` wraps) needs neither
torch nor TensorFlow. Without the package the run says so once and logs nothing there;
``metrics.csv`` holds every evaluation either way.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any


class ScalarWriter:
    """``add_scalar`` / ``close`` into ``logdir``'s TensorBoard event file, when tensorboard is installed."""

    def __init__(self, logdir: Path) -> None:
        try:  # optional dependency: TensorBoard (the train extra)
            from tensorboard.compat.proto import event_pb2, summary_pb2
            from tensorboard.summary.writer.event_file_writer import EventFileWriter
        except ImportError:
            print(
                "blackjack-train: TensorBoard logging is off (pip install tensorboard); metrics.csv has the curve",
                file=sys.stderr,
            )
            self._writer: Any = None
            return
        self._event, self._summary = event_pb2.Event, summary_pb2.Summary
        self._writer = EventFileWriter(str(logdir))

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        if self._writer is None:
            return
        summary = self._summary(value=[self._summary.Value(tag=tag, simple_value=float(value))])
        self._writer.add_event(self._event(wall_time=time.time(), step=int(step), summary=summary))

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
