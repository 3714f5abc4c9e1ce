"""Steps per second of blackjack_env/Blackjack-v0 and BlackjackShoe-v0 against Gymnasium's Blackjack-v1.

Both are built with ``gymnasium.make`` (so both carry the same default wrappers) and driven by
the same random-legal-action loop; they are measured alternately in several rounds and the
ratios of their medians are printed, since absolute times on shared machines are noise. The shoe
env runs whole shoes (a bet before every round, the cut card ending the episode).

    python benchmarks/env_speed.py [--steps 200000] [--repeats 5] [--rules PRESET]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import blackjack_env  # noqa: F401  (registers the env)
from blackjack_env import Rules


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

    envs = {
        "blackjack_env/Blackjack-v0": (gym.make("blackjack_env/Blackjack-v0", rules=args.rules), True),
        "blackjack_env/BlackjackShoe-v0": (
            gym.make("blackjack_env/BlackjackShoe-v0", rules=Rules.preset(args.rules).replace(penetration=0.75)),
            True,
        ),
        "Gymnasium Blackjack-v1": (gym.make("Blackjack-v1"), False),
    }
    rates: dict[str, list[float]] = {name: [] for name in envs}
    for env, masked in envs.values():
        steps_per_second(env, 2_000, 0, masked=masked)  # compile and warm up
    for repeat in range(args.repeats):
        for name, (env, masked) in envs.items():
            rates[name].append(steps_per_second(env, args.steps, repeat, masked=masked))
    medians = {name: statistics.median(r) for name, r in rates.items()}
    toy = medians["Gymnasium Blackjack-v1"]
    for name, median in medians.items():
        print(f"{name + ' (' + args.rules + ')' if 'blackjack_env' in name else name:<45} {median:>10,.0f} steps/s")
    for name, median in medians.items():
        if "blackjack_env" in name:
            print(f"ratio ({name} / Blackjack-v1): {median / toy:.2f}x")


if __name__ == "__main__":
    main()
