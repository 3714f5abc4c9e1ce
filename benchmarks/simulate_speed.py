"""Rounds per second of the compiled simulator (basic strategy, full rules) on 1 and 2 cores,
against a minimal "tight numba loop" blackjack measured in the same run, and the vector env's
steps per second against Gymnasium's SyncVectorEnv over Blackjack-v1.

    python benchmarks/simulate_speed.py [--rounds 2e7] [--rules ultimatebet] [--vector-steps 200] [--seats 7]

It also times a full table: the policy in one of ``--seats`` boxes, the others playing basic
strategy, as the cost per dealt hand against the lone player's (the table's must stay <= 1.3x).

Absolute figures on shared machines are noise; the ratios printed are the figures to compare.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
from numba import njit

import blackjack_env  # noqa: F401  (registers the env)
from blackjack_env import Rules
from blackjack_env.evaluate.policies import basic_strategy_table
from blackjack_env.evaluate.runner import simulate
from blackjack_env.simulate import Policy, Table


@njit(cache=True, nogil=True)
def tight_loop(n_rounds: int, seed: int) -> float:
    """The peer: infinite deck, player hits below 17, dealer stands on 17, no options at all."""
    np.random.seed(seed)
    total = 0.0
    for _ in range(n_rounds):
        p_hard, p_aces, d_hard, d_aces = 0, 0, 0, 0
        for k in range(4):
            card = min(np.random.randint(1, 14), 10)
            if k % 2 == 0:
                p_hard += card
                p_aces += card == 1
            else:
                d_hard += card
                d_aces += card == 1
        p_total = p_hard + 10 if p_aces and p_hard <= 11 else p_hard
        while p_total < 17:
            card = min(np.random.randint(1, 14), 10)
            p_hard += card
            p_aces += card == 1
            p_total = p_hard + 10 if p_aces and p_hard <= 11 else p_hard
        d_total = d_hard + 10 if d_aces and d_hard <= 11 else d_hard
        if p_total <= 21:
            while d_total < 17:
                card = min(np.random.randint(1, 14), 10)
                d_hard += card
                d_aces += card == 1
                d_total = d_hard + 10 if d_aces and d_hard <= 11 else d_hard
        if p_total > 21:
            total -= 1
        elif d_total > 21 or p_total > d_total:
            total += 1
        elif p_total < d_total:
            total -= 1
    return total / n_rounds


def rate(function, rounds: int) -> float:
    start = time.perf_counter()
    function(rounds)
    return rounds / (time.perf_counter() - start)


def vector_rates(num_envs: int, steps: int) -> tuple[float, float]:
    """Steps/s of our vector env and of SyncVectorEnv(Blackjack-v1), random legal actions."""
    rng = np.random.default_rng(0)
    ours = gym.make_vec("blackjack_env/Blackjack-v0", num_envs=num_envs, vectorization_mode="vector_entry_point")
    _, info = ours.reset(seed=0)
    for _ in range(3):  # compile the stepping kernels first (a cold numba cache would be timed)
        actions = np.argmax(rng.random(info["action_mask"].shape) * info["action_mask"], axis=1)
        _, _, _, _, info = ours.step(actions)
    start = time.perf_counter()
    for _ in range(steps):
        actions = np.argmax(rng.random(info["action_mask"].shape) * info["action_mask"], axis=1)
        _, _, _, _, info = ours.step(actions)
    ours_rate = steps * num_envs / (time.perf_counter() - start)
    toy_envs = min(num_envs, 256)  # SyncVectorEnv is Python per sub-env: fewer envs, same per-step cost
    toy = gym.make_vec("Blackjack-v1", num_envs=toy_envs, vectorization_mode="sync")
    toy.reset(seed=0)
    toy_steps = max(steps // 4, 10)
    start = time.perf_counter()
    for _ in range(toy_steps):
        toy.step(rng.integers(0, 2, toy_envs))
    toy_rate = toy_steps * toy_envs / (time.perf_counter() - start)
    return ours_rate, toy_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=float, default=2e7)
    parser.add_argument("--rules", default="ultimatebet")
    parser.add_argument("--num-envs", type=int, default=4096)
    parser.add_argument("--vector-steps", type=int, default=200)
    parser.add_argument("--seats", type=int, default=7, help="boxes of the table timed against one box")
    args = parser.parse_args()
    rounds = int(args.rounds)
    rules = Rules.preset(args.rules)
    policy = Policy.from_table(basic_strategy_table(rules))

    def ours(workers: int):
        return lambda n: simulate(rules, policy, n, seed=1, workers=workers)

    ours(1)(10_000)  # compile
    tight_loop(1000, 0)
    peer = rate(lambda n: tight_loop(n, 1), rounds)
    one = rate(ours(1), rounds)
    two = rate(ours(2), rounds)
    print(f"simulator, basic strategy, {rules.describe()}:")
    print(f"  1 core : {one / 1e6:7.2f} M rounds/s")
    print(f"  2 cores: {two / 1e6:7.2f} M rounds/s   (x{two / one:.2f} of 1 core)")
    print(f"  tight numba loop (no rules, 1 core): {peer / 1e6:.2f} M rounds/s; ours / peer = {one / peer:.2f}")
    table = Table(args.seats, args.seats // 2, policy)
    simulate(rules, policy, 10_000, seed=1, workers=1, table=table)  # compile
    full = rate(lambda n: simulate(rules, policy, n, seed=1, workers=1, table=table), rounds // args.seats)
    print(
        f"  a {args.seats}-seat table (policy in seat {table.seat}, 1 core): {full / 1e6:.2f} M rounds/s, "
        f"{args.seats * full / 1e6:.2f} M hands/s; cost per dealt hand / one seat's = {one / (args.seats * full):.2f}"
    )
    ours_rate, toy_rate = vector_rates(args.num_envs, args.vector_steps)
    print(f"vector env, {args.num_envs} envs, random legal actions: {ours_rate / 1e6:.2f} M steps/s")
    print(f"SyncVectorEnv(Blackjack-v1): {toy_rate / 1e6:.3f} M steps/s; ratio {ours_rate / toy_rate:.1f}x")


if __name__ == "__main__":
    main()
