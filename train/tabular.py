"""``blackjack-train --algo tabular``: Monte Carlo control in the compiled engine
(:mod:`blackjack_env.agents.tabular`), a chunk of steps at a time; a chunk is the unit of checkpoints."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from blackjack_env.agents.tabular import TabularAgent
from blackjack_env.rules import Rules

from .evaluation import METRIC_COLUMNS, ROUND_SCALARS, RoundGame, RoundPlay, round_summary


@dataclass(frozen=True)
class TabularConfig:
    """The tabular learner's options."""

    seed: int = 0
    epsilon: float = 0.1
    chunk_steps: int = 1 << 18
    reward: str = "sampled"


class TabularLearner(RoundPlay):
    """The tabular learner (see :class:`~blackjack_env.train.learner.Learner`)."""

    columns: tuple[str, ...] = METRIC_COLUMNS
    scalar_keys: tuple[str, ...] = ROUND_SCALARS

    def __init__(self, config: TabularConfig, rules: Rules, out: Path, resume: bool) -> None:
        if resume:
            self.agent = TabularAgent.load(out)
        else:
            self.agent = TabularAgent(
                rules, epsilon=config.epsilon, seed=config.seed, chunk_steps=config.chunk_steps, reward=config.reward
            )
        self.game = RoundGame(rules)
        self.behaviour_ev = 0.0

    @property
    def steps(self) -> int:
        return self.agent.steps

    def advance(self, target: int, stop: Callable[[], bool], progress: Callable[[int], None]) -> None:
        while self.agent.steps < target and not stop():
            before = self.agent.steps
            _, self.behaviour_ev = self.agent.learn_chunk()
            progress(self.agent.steps - before)

    def train_scalars(self) -> dict[str, float]:
        return {"train/behaviour_ev": self.behaviour_ev}

    def save(self, out: Path) -> None:
        self.agent.save(out)

    def summary(self, last: Mapping[str, float], wall_s: float, out: Path) -> str:
        return round_summary("tabular", self.steps, last, wall_s, out)
