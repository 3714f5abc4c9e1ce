"""``blackjack-compile``: compile the package's kernels once, so that the first env step, the first
simulation and a test run start from numba's disk cache.

numba compiles a kernel the first time it is called and caches it on disk; with an empty cache the
first step of an env costs about 8-10 s of CPU, the first simulation more. This command makes those
first calls up front, one part at a time, and says what each took: run it once after installing
(or after changing the engine), e.g. before opening a notebook or running the tests (CI does). What it
compiles is what a first user meets: both envs' first step, the native vector env, the simulator
playing basic strategy (flat, with a random baseline on the same cards) and a counting strategy.
A warm cache makes it take about a second.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

import gymnasium as gym
import numpy as np

import blackjack_env
from blackjack_env import __version__
from blackjack_env._jit import silence_compiling_notice
from blackjack_env.rules import Rules
from blackjack_env.simulate import Policy

from .options import console_entry
from .policies import load_policy
from .runner import simulate

PROG = "blackjack-compile"


def _first_step(env_id: str) -> None:
    env = gym.make(env_id)
    _, info = env.reset(seed=0)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    env.close()


def _vector_step() -> None:
    envs = gym.make_vec("blackjack_env/Blackjack-v0", num_envs=4, vectorization_mode="vector_entry_point")
    _, info = envs.reset(seed=0)
    envs.step(blackjack_env.sample_legal(info["action_mask"], np.random.default_rng(0)))
    envs.close()


def _simulate(policy_name: str) -> None:
    rules = Rules(penetration=0.75)  # a counter needs a cut card; basic strategy compiles the same kernel
    simulate(rules, load_policy(policy_name, rules), 2_000, baseline=Policy.random(), workers=1)


#: What is compiled, in the order a new user meets it: (name, the first call that compiles it).
PARTS: list[tuple[str, Callable[[], None]]] = [
    ("Blackjack-v0, first step", lambda: _first_step("blackjack_env/Blackjack-v0")),
    ("BlackjackShoe-v0, first step", lambda: _first_step("blackjack_env/BlackjackShoe-v0")),
    ("vector env, first step", _vector_step),
    ("simulator, basic strategy", lambda: _simulate("basic")),
    ("simulator, counting strategy", lambda: _simulate("hilo-i18-fab4")),
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Compile the envs' and the simulator's kernels once into numba's disk cache, "
        "so that later first steps and simulations start at once.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


@console_entry("blackjack-compile")
def main(argv: Sequence[str] | None = None) -> int:
    build_parser().parse_args(argv)
    silence_compiling_notice()  # each part's line says what compiles
    total, failed = time.process_time(), False
    for name, first_call in PARTS:
        print(f"{PROG}: {name}...", end="", file=sys.stderr, flush=True)
        start = time.process_time()
        try:
            first_call()
        except KeyboardInterrupt:
            print(" interrupted (what was compiled so far stays cached)", file=sys.stderr)
            return 130
        except Exception as error:  # a bug, not bad input: one line, and the rest still compiles
            print(f" failed: {type(error).__name__}: {error}", file=sys.stderr)
            failed = True
            continue
        print(f" {time.process_time() - start:.1f} s CPU", file=sys.stderr)
    print(f"{PROG}: done in {time.process_time() - total:.1f} s CPU; numba's cache holds them now", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
