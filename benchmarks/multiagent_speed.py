"""Steps per second of the PettingZoo table beside PettingZoo's own card games, same run.

Every game is played by uniformly random legal agents through the AEC API (``agent_iter``,
``last``, ``step``), the loop a user writes; a step is one ``env.step`` call (dead agents'
``None`` steps included, as in PettingZoo's own benchmark). PettingZoo's classic games need
``pip install "pettingzoo[classic]"`` (RLCard); missing ones are reported and skipped.

    python benchmarks/multiagent_speed.py --seconds 5
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from blackjack_env.multiagent import raw_env

PEERS = ("leduc_holdem_v4", "texas_holdem_v4")


def steps_per_second(make: Callable[[], Any], seconds: float, seed: int = 0) -> float:
    """Random legal play for about ``seconds`` (after one warm-up episode): env.step calls per second."""
    env = make()
    rng = np.random.default_rng(seed)

    def episode(first_seed: int | None) -> int:
        env.reset(seed=first_seed)
        steps = 0
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
            steps += 1
        return steps

    episode(seed)  # compiles (numba) or warms caches
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        steps += episode(None)
    return steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="timed play per game")
    args = parser.parse_args(argv)
    games: dict[str, Callable[[], Any]] = {
        "blackjack table, 3 seats, round": lambda: raw_env(seats=3),
        "blackjack table, 7 seats, shoe": lambda: raw_env(seats=7, game="shoe"),
    }
    for name in PEERS:
        try:
            module = importlib.import_module(f"pettingzoo.classic.{name}")
        except ImportError as error:
            print(f"{name}: skipped ({error})")
            continue
        games[name] = module.raw_env
    rates = {name: steps_per_second(make, args.seconds) for name, make in games.items()}
    ours = [name for name in rates if name.startswith("blackjack")]
    for name, rate in rates.items():
        ratios = "" if name in ours else "   blackjack: " + ", ".join(f"{rates[o] / rate:.1f}x" for o in ours)
        print(f"{name:<34} {rate:>10,.0f} steps/s{ratios}")
    if len(rates) > len(ours):
        print(f"(blackjack: the {' and the '.join(name.removeprefix('blackjack ') for name in ours)}, per peer)")


if __name__ == "__main__":
    main()
