"""``blackjack-train --algo ppo``: MaskablePPO learning in slices between evaluations (the shoe game's
learner, ``train/shoe_ppo.py``, is this one with another agent and env)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blackjack_env.agents.ppo import LinearDecay, PPOAgent, make_vec_env
from blackjack_env.rules import Rules

from .evaluation import METRIC_COLUMNS, ROUND_SCALARS, Best, RoundGame, RoundPlay, round_summary

LR_SCHEDULES = ("constant", "linear")


@dataclass(frozen=True)
class PPOConfig:
    """MaskablePPO's options (``blackjack-train``'s defaults are in :class:`~blackjack_env.train.settings.Args`)."""

    seed: int
    total_steps: int  # where a linear learning-rate schedule reaches 0
    n_envs: int
    n_steps: int
    batch_size: int
    n_epochs: int
    learning_rate: float
    lr_schedule: str
    gamma: float
    gae_lambda: float
    ent_coef: float
    net_arch: tuple[int, ...]
    reward: str
    torch_threads: int  # 0: torch's default

    def __post_init__(self) -> None:
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"--lr-schedule must be one of {', '.join(LR_SCHEDULES)}, got {self.lr_schedule!r}")
        if self.torch_threads < 0:
            raise ValueError(f"--torch-threads must be >= 0 (0: one per core), got {self.torch_threads}")


def layer_widths(text: str) -> tuple[int, ...]:
    """--net-arch: layer widths such as 256,256."""
    try:
        hidden = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--net-arch must be layer widths such as 128,128, got {text!r}") from None
    if any(h < 1 for h in hidden):
        raise ValueError(f"--net-arch must be layer widths >= 1, got {text!r}")
    return hidden


class PPOLearner(RoundPlay):
    """MaskablePPO in slices between evaluations; SB3's logger writes to out/tb/ppo. On the one-round
    game the run exports the policy of its best evaluation (:class:`.evaluation.Best`); the policy
    learning goes on from is kept in the checkpoint (``--resume``)."""

    columns: tuple[str, ...] = METRIC_COLUMNS
    scalar_keys: tuple[str, ...] = ROUND_SCALARS

    def __init__(self, config: PPOConfig, rules: Rules, out: Path, resume: bool) -> None:
        # optional dependencies (the train extra): stable-baselines3 and torch
        import torch
        from stable_baselines3.common.logger import configure

        self.config = config
        if config.torch_threads > 0:
            torch.set_num_threads(config.torch_threads)

        def make_env() -> Any:
            return self.make_env(config, rules)

        agent_class = self.agent_class()
        if resume:
            self.agent = agent_class.resume(out, make_env)
        else:
            self.agent = agent_class.build(
                rules,
                make_env(),
                seed=config.seed,
                n_steps=config.n_steps,
                batch_size=config.batch_size,
                n_epochs=config.n_epochs,
                learning_rate=config.learning_rate,
                gamma=config.gamma,
                gae_lambda=config.gae_lambda,
                ent_coef=config.ent_coef,
                net_arch=list(config.net_arch),
                device="cpu",
            )
        self.agent.model.set_logger(configure(str(out / "tb" / "ppo"), ["tensorboard"]))
        self.game = self.round_game(rules)
        resumed = self.agent.resumed if resume else {}
        if "weights" in resumed:  # the policy learning goes on from (the model's files are the best one's)
            self.agent.model.policy.load_state_dict(resumed["weights"])
        self.best: Best | None = resumed.get("best")

    def agent_class(self) -> Any:
        """The agent it trains (the shoe game's learner, train/shoe_ppo.py, trains another)."""
        return PPOAgent

    def make_env(self, config: PPOConfig, rules: Rules) -> Any:
        """The SB3 VecEnv it learns on."""
        return make_vec_env(rules, config.n_envs, config.seed, config.reward)

    def round_game(self, rules: Rules) -> RoundGame | None:
        """How it is evaluated: the one-round game's evaluation (None for the shoe game's learner)."""
        return RoundGame(rules)

    @property
    def steps(self) -> int:
        return int(self.agent.model.num_timesteps)

    def advance(self, target: int, stop: Callable[[], bool], progress: Callable[[int], None]) -> None:
        from stable_baselines3.common.callbacks import BaseCallback  # optional dependency (the train extra)

        class Tick(BaseCallback):
            def _on_step(self) -> bool:
                progress(self.training_env.num_envs)
                return not stop()

        if self.steps < target and not stop():
            if self.config.lr_schedule == "linear":
                self.agent.model.lr_schedule = LinearDecay(self.config.learning_rate, self.config.total_steps, target)
            self.agent.model.learn(target - self.steps, callback=Tick(), reset_num_timesteps=False)

    def evaluate(self, rounds: int, seed: int) -> dict[str, float]:
        row = super().evaluate(rounds, seed)
        if Best.beaten(self.best, row):
            self.best = Best(row["exact_ev_gap"], self.steps, copy.deepcopy(self.agent.model.policy.state_dict()))
        return row

    def train_scalars(self) -> dict[str, float]:
        return {}

    def save(self, out: Path) -> None:
        """The best evaluation's policy as the agent (the one-round game), the current one for --resume."""
        policy = self.agent.model.policy
        current = copy.deepcopy(policy.state_dict())
        if self.best is not None:
            policy.load_state_dict(self.best.weights)
        try:
            self.agent.save(out)
        finally:
            policy.load_state_dict(current)
        self.agent.save_training_state(out, {"weights": current, "best": self.best})

    def summary(self, last: Mapping[str, float], wall_s: float, out: Path) -> str:
        return round_summary("ppo", self.steps, last, wall_s, out, self.best)
