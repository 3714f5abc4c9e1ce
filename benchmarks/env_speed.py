"""Steps per second of blackjack_env/Blackjack-v0 against Gymnasium's Blackjack-v1.

Both are built with ``gymnasium.make`` (so both carry the same default wrappers) and driven by
the same random-legal-action loop; the two are measured alternately in several rounds and the
ratio of their medians is printed, since absolute times on shared machines are noise.

    python benchmarks/env_speed.py [--steps 200000] [--repeats 5] [--rules PRESET]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import blackjack_env  # noqa: F401  (registers the env)


def steps_per_second(env: gym.Env, steps: int, seed: int, masked: bool) -> float:
    """Random legal actions for `steps` steps, resetting after every round."""
    rng = np.random.default_rng(seed)
    n_actions = env.action_space.n
    all_legal = np.ones(n_actions, dtype=bool)
    _, info = env.reset(seed=seed)
    mask = info["action_mask"] if masked else all_legal
    start = time.perf_counter()
    for _ in range(steps):
        legal = np.flatnonzero(mask)
        action = legal[rng.integers(len(legal))]
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            _, info = env.reset()
        mask = info["action_mask"] if masked else all_legal
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rules", default="ultimatebet")
    args = parser.parse_args()

    ours = gym.make("blackjack_env/Blackjack-v0", rules=args.rules)
    toy = gym.make("Blackjack-v1")
    steps_per_second(ours, 2_000, 0, masked=True)  # compile and warm up both
    steps_per_second(toy, 2_000, 0, masked=False)
    ours_rates, toy_rates = [], []
    for repeat in range(args.repeats):
        ours_rates.append(steps_per_second(ours, args.steps, repeat, masked=True))
        toy_rates.append(steps_per_second(toy, args.steps, repeat, masked=False))
    ours_median = statistics.median(ours_rates)
    toy_median = statistics.median(toy_rates)
    print(f"blackjack_env/Blackjack-v0 ({args.rules}): {ours_median:>10,.0f} steps/s")
    print(f"Gymnasium Blackjack-v1:                 {toy_median:>10,.0f} steps/s")
    print(f"ratio (ours / Blackjack-v1): {ours_median / toy_median:.2f}x")


if __name__ == "__main__":
    main()
