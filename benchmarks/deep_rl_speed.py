"""Env steps per second of SB3 MaskablePPO's whole learning loop: DummyVecEnv vs the compiled VecEnv.

The loop is everything ``model.learn`` does (rollouts: the network's forward pass, the masks, the
env; updates: forward and backward over the rollout, ``n_epochs`` times), with the hyperparameters
of ``blackjack-train --algo ppo`` (its defaults, ``train/settings.py``: a rollout of
``n_envs x n_steps`` steps, their minibatches, epochs, net and entropy bonus, the expected reward) on
one torch thread; the rollout is the same size at every table count. Each configuration learns
``--rollouts`` rollouts; configurations are measured alternately ``--repeats`` times and the medians
printed with their ratio to the first (SB3's ``DummyVecEnv`` of 8 single envs, what ``--algo ppo``
stepped before the compiled VecEnv), since absolute times on a shared machine are noise. CPU seconds
(this process's) are printed beside wall time, and the share of wall time spent collecting rollouts.
The last rows are ``--algo batch-ppo``'s whole loop (train/batch_ppo.py with its default config,
``--batch-rollouts`` rollouts of 4096 tables x 16 steps) on the same torch threads, paid the game's
default reward and then the other one (the expected reward walks the dealer's outcomes every round).

    python benchmarks/deep_rl_speed.py [--env round|shoe] [--n-envs 256,4096] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import gymnasium as gym

import blackjack_env
from blackjack_env.rules import Rules
from blackjack_env.train.registry import find
from blackjack_env.train.settings import Args

GAMES = {"round": blackjack_env.ENV_ID, "shoe": blackjack_env.SHOE_ENV_ID}


def make_env(kind: str, game: str, n_envs: int, seed: int) -> Any:
    """``dummy``: SB3's make_vec_env of single envs (what ``--algo ppo`` used); ``compiled``: the
    compiled VecEnv (``blackjack_env.sb3``). The shoe is seen round by round in both."""
    from stable_baselines3.common.env_util import make_vec_env

    from blackjack_env.agents.shoe_ppo import RoundEpisodes
    from blackjack_env.sb3 import make_sb3_vec_env

    env_id = GAMES[game]
    kwargs: dict[str, Any] = {"reward": "expected"}
    if game == "shoe":
        kwargs["rules"] = Rules().replace(penetration=0.75)
    if kind == "compiled":
        return make_sb3_vec_env(env_id, n_envs, seed, episode="round", **kwargs)

    def single() -> gym.Env:
        env = gym.make(env_id, **kwargs).unwrapped
        return RoundEpisodes(env) if game == "shoe" else env

    return make_vec_env(single, n_envs=n_envs, seed=seed)


def learn_rate(kind: str, game: str, n_envs: int, rollout: int, rollouts: int, seed: int) -> tuple[float, float, float]:
    """(env steps per wall second, per CPU second, share of wall time collecting rollouts) of
    ``rollouts`` rollouts of MaskablePPO learning."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    class Clock(BaseCallback):
        collecting = 0.0

        def _on_rollout_start(self) -> None:
            self.started = time.perf_counter()

        def _on_rollout_end(self) -> None:
            self.collecting += time.perf_counter() - self.started

        def _on_step(self) -> bool:
            return True

    n_steps = max(1, round(rollout / n_envs))
    d = Args()  # blackjack-train --algo ppo's defaults
    model = MaskablePPO(
        "MlpPolicy",
        make_env(kind, game, n_envs, seed),
        n_steps=n_steps,
        batch_size=min(d.batch_size, n_steps * n_envs),
        n_epochs=d.n_epochs,
        learning_rate=d.learning_rate,
        gamma=d.gamma,
        gae_lambda=d.gae_lambda,
        ent_coef=d.ent_coef,
        policy_kwargs={"net_arch": [int(w) for w in d.net_arch.split(",")]},
        seed=seed,
        device="cpu",
    )
    steps = n_steps * n_envs * rollouts
    clock = Clock()
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(steps, callback=clock)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return model.num_timesteps / wall, model.num_timesteps / cpu, clock.collecting / wall


def batch_rate(game: str, reward: str, rollouts: int, seed: int) -> tuple[float, float, float]:
    """(env steps per wall second, per CPU second, share collecting) of train/batch_ppo.py's loop."""
    import tempfile
    from pathlib import Path

    from blackjack_env.train.batch_ppo import BatchPPOConfig, BatchPPOLearner, collect

    rules = Rules().replace(penetration=0.75) if game == "shoe" else Rules()
    shoe = {"bets": [1.0, 2.0, 4.0, 8.0], "seats": 1, "seat": 0, "count_obs": "hilo"} if game == "shoe" else None
    config = BatchPPOConfig(seed=seed, reward=reward)
    per_rollout = config.num_tables * config.num_steps
    with tempfile.TemporaryDirectory() as out:
        trainer = BatchPPOLearner(config, rules, Path(out), resume=False, shoe=shoe)
    trainer.advance(per_rollout, lambda: False, lambda n: None)  # warm up
    collecting = 0.0
    import blackjack_env.train.batch_ppo as module

    def timed(*args: Any) -> Any:
        nonlocal collecting
        started = time.perf_counter()
        result = collect(*args)
        collecting += time.perf_counter() - started
        return result

    module.collect = timed  # type: ignore[assignment]
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        trainer.advance(per_rollout * (rollouts + 1), lambda: False, lambda n: None)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        module.collect = collect  # type: ignore[assignment]
    steps = per_rollout * rollouts
    return steps / wall, steps / cpu, collecting / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=tuple(GAMES), default="round")
    defaults = Args()
    parser.add_argument(
        "--n-envs",
        default=f"256,{defaults.n_envs}",
        help="the compiled VecEnv's table counts (default: 256 and --algo ppo's)",
    )
    parser.add_argument(
        "--rollout",
        type=int,
        default=defaults.n_envs * defaults.n_steps,
        help="env steps per rollout (n_envs x n_steps)",
    )
    parser.add_argument("--rollouts", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--batch-rollouts", type=int, default=8, help="rollouts of the batch-ppo row")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.torch_threads)
    configs = [("dummy", 8)] + [("compiled", int(n)) for n in args.n_envs.split(",")]
    for kind, n in configs:  # compile the kernels, warm the caches
        learn_rate(kind, args.env, n, rollout=max(n, 512), rollouts=1, seed=0)
    results: dict[tuple[str, int], list[tuple[float, float, float]]] = {c: [] for c in configs}
    default_reward = find("batch-ppo", args.env).default_reward
    rewards = [default_reward, *(r for r in ("expected", "sampled") if r != default_reward)]
    for reward in rewards:
        results[(f"batch-ppo, {reward}", 4096)] = []
    for repeat in range(args.repeats):
        for config in configs:
            results[config].append(learn_rate(config[0], args.env, config[1], args.rollout, args.rollouts, repeat))
        for reward in rewards:
            results[(f"batch-ppo, {reward}", 4096)].append(batch_rate(args.env, reward, args.batch_rollouts, repeat))
    base_wall = statistics.median(r[0] for r in results[configs[0]])
    base_cpu = statistics.median(r[1] for r in results[configs[0]])
    print(
        f"MaskablePPO learning loop, {args.env} game, rollouts of ~{args.rollout} steps, {args.rollouts} per run, "
        f"median of {args.repeats}, torch threads {args.torch_threads}"
    )
    print(f"{'VecEnv':<22}{'n_envs':>7}{'steps/s':>11}{'ratio':>8}{'steps/cpu-s':>13}{'ratio':>8}{'collecting':>12}")
    for (kind, n), runs in results.items():
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        share = statistics.median(r[2] for r in runs)
        name = {"dummy": "DummyVecEnv (single)", "compiled": "BlackjackSB3VecEnv"}.get(kind, kind)
        print(
            f"{name:<22}{n:>7}{wall:>11,.0f}{wall / base_wall:>8.2f}{cpu:>13,.0f}{cpu / base_cpu:>8.2f}{share:>11.0%}"
        )


if __name__ == "__main__":
    main()
