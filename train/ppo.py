"""``blackjack-train --algo ppo``: MaskablePPO learning in slices between evaluations (the shoe game's
trainer, ``train/shoe_ppo.py``, is this one with another agent and env)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from blackjack_env.agents.ppo import LinearDecay, PPOAgent, make_vec_env
from blackjack_env.rules import Rules
from blackjack_env.strategy import StrategyTable


class PPOTrainer:
    """MaskablePPO learning in slices between evaluations; SB3's logger writes to out/tb/ppo.

    ``args`` is the run's ``blackjack_env.train.cli.Args``."""

    def __init__(self, args: Any, rules: Rules, out: Path, resume: bool) -> None:
        # optional dependencies (the train extra): stable-baselines3 and torch
        import torch
        from stable_baselines3.common.logger import configure

        self.args = args
        if args.torch_threads > 0:
            torch.set_num_threads(args.torch_threads)

        def make_env() -> Any:
            return self.make_env(args, rules)

        agent_class = self.agent_class()
        if resume:
            self.agent = agent_class.resume(out, make_env)
        else:
            self.agent = agent_class.build(
                rules,
                make_env(),
                seed=args.seed,
                n_steps=args.n_steps,
                batch_size=args.batch_size,
                n_epochs=args.n_epochs,
                learning_rate=args.learning_rate,
                gamma=args.gamma,
                gae_lambda=args.gae_lambda,
                ent_coef=args.ent_coef,
                net_arch=[int(x) for x in args.net_arch.split(",")],
                device="cpu",
            )
        self.agent.model.set_logger(configure(str(out / "tb" / "ppo"), ["tensorboard"]))

    def agent_class(self) -> Any:
        """The agent it trains (the shoe game's trainer, train/shoe_ppo.py, trains another)."""
        return PPOAgent

    def make_env(self, args: Any, rules: Rules) -> Any:
        """The SB3 VecEnv it learns on."""
        return make_vec_env(rules, args.n_envs, args.seed, args.reward)

    @property
    def steps(self) -> int:
        return int(self.agent.model.num_timesteps)

    def advance(self, target: int, stop: Any, progress: Any) -> None:
        from stable_baselines3.common.callbacks import BaseCallback  # optional dependency (the train extra)

        class Tick(BaseCallback):
            def _on_step(self) -> bool:
                progress(self.training_env.num_envs)
                return not stop()

        if self.steps < target and not stop():
            if self.args.lr_schedule == "linear":
                self.agent.model.lr_schedule = LinearDecay(self.args.learning_rate, self.args.steps, target)
            self.agent.model.learn(target - self.steps, callback=Tick(), reset_num_timesteps=False)

    def train_scalars(self) -> dict[str, float]:
        return {}

    def table(self) -> StrategyTable:
        return self.agent.to_table()

    def save(self, out: Path) -> None:
        self.agent.save(out)
        self.agent.save_training_state(out)
