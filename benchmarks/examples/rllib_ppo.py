"""RLlib's PPO with action masking on BlackjackShoe-v0, for a few iterations.

The env is wrapped in :class:`blackjack_env.wrappers.DictObservation` (``encoding="one_hot"``):
``{"observations": float32 one-hot, "action_mask": float32}``, the convention of RLlib's own
``ActionMaskingTorchRLModule``, which sets illegal actions' logits to the lowest float. Needs the
``rllib`` extra (``pip install "blackjack-env[rllib]"``: ``ray[rllib]`` and torch).

    python benchmarks/examples/rllib_ppo.py --iterations 3
"""

from __future__ import annotations

import argparse
from typing import Any

import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

from blackjack_env import BlackjackShoeEnv
from blackjack_env.wrappers import DictObservation

ENV_NAME = "blackjack_env/BlackjackShoe-v0-dict"


def make_env(config: dict[str, Any]) -> DictObservation:
    """The shoe env (its arguments from RLlib's env_config) with the mask in its observation."""
    return DictObservation(BlackjackShoeEnv(**config), encoding="one_hot")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--batch", type=int, default=2000, help="env steps per training iteration")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    # a small network: one torch thread is faster and leaves the cores to the env runners
    torch.set_num_threads(1)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    register_env(ENV_NAME, make_env)
    config = (
        PPOConfig()
        .environment(ENV_NAME, env_config={"rules": {"decks": 2, "penetration": 0.75}, "bets": (1, 4)})
        .env_runners(num_env_runners=0)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=ActionMaskingTorchRLModule))
        .training(train_batch_size_per_learner=args.batch, minibatch_size=args.batch // 4, num_epochs=2)
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    try:
        for i in range(args.iterations):
            result = algo.train()
            runners = result["env_runners"]
            print(
                f"iteration {i + 1}: {runners['num_env_steps_sampled_lifetime']} steps, "
                f"mean return per shoe {runners.get('episode_return_mean', float('nan')):+.2f} units"
            )
    finally:
        algo.stop()
        ray.shutdown()


if __name__ == "__main__":
    main()
