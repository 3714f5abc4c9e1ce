"""What ``blackjack-train`` asks of a learner: the :class:`~blackjack_env.train.learner.Learner` protocol.

A learner learns in steps it chooses (a chunk of rounds merged into its statistics, a rollout and an
update), plays its policy in an evaluation, writes a checkpoint (its exported agent and what a resume
needs) and says what it wrote. The one loop over it, with the progress bar, evaluations, checkpoints,
Ctrl-C, TensorBoard and ``metrics.csv``, is :class:`blackjack_env.train.trainer.Trainer`; a learner is
made (new, or loaded from a run directory to resume) by its entry in
:mod:`blackjack_env.train.registry`, from its own typed config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

#: The games a learner may play: one round from a fresh shoe, or a shoe played to its cut card.
GAMES = ("round", "shoe")


class Learner(Protocol):
    """One learning run's learner, as the training loop drives it."""

    #: metrics.csv's columns, from ``step`` to ``wall_s``: an evaluation's row and the loop's two.
    columns: tuple[str, ...]
    #: The row's keys also written to TensorBoard (as ``eval/KEY``).
    scalar_keys: tuple[str, ...]

    @property
    def steps(self) -> int:
        """Steps learned so far (env steps, or rounds for a learner of the shoe's rounds)."""
        ...

    def advance(self, target: int, stop: Callable[[], bool], progress: Callable[[int], None]) -> None:
        """Learn whole chunks (or rollouts) until ``steps`` reaches ``target`` or ``stop()``, merging each
        into the learner and telling ``progress`` the steps it added; the checkpoint's unit."""
        ...

    def evaluate(self, rounds: int, seed: int) -> dict[str, float]:
        """Play the policy as exported for about ``rounds`` rounds on cards seeded ``seed``: one row of
        ``columns`` but ``step`` and ``wall_s``."""
        ...

    def train_scalars(self) -> dict[str, float]:
        """What the last chunk showed of learning itself (TensorBoard tag to value)."""
        ...

    def postfix(self, row: Mapping[str, float]) -> dict[str, str]:
        """The progress bar's figures after an evaluation."""
        ...

    def plan(self, total: int) -> str:
        """A line the run starts with (its budget and expected time), or ""."""
        ...

    def save(self, out: Path) -> None:
        """Write a checkpoint into ``out``: the agent as evaluation and ``blackjack-evaluate --policy``
        load it, and whatever a resumed run needs to continue exactly."""
        ...

    def close(self) -> None:
        """Release what the learner started (worker processes, a Ray it started)."""
        ...

    def summary(self, last: Mapping[str, float], wall_s: float, out: Path) -> str:
        """The run's last line, from its last evaluation."""
        ...


__all__ = ["GAMES", "Learner"]
