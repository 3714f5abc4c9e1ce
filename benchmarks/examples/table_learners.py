"""Independent learners at a 3-seat PettingZoo table: each seat learns alone, then each seat's EV.

Every seat is an every-visit Monte Carlo learner with epsilon-greedy exploration over the single
env's observation (its hand, the up card; the other seats' cards are ignored): a table of action
values per observation, in a plain loop over the AEC API. Each learner then plays greedily
(epsilon 0, learning off) on fresh rounds and the script prints each seat's EV per round with its
95% interval, beside basic strategy's exact EV for the rules. Run from the repository root:

    python benchmarks/examples/table_learners.py --rounds 200000 --eval-rounds 100000
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Any

import numpy as np

from blackjack_env import engine as E
from blackjack_env.multiagent import raw_env
from blackjack_env.simulate import interval
from blackjack_env.solver import solve


class MonteCarloSeat:
    """One seat's learner: mean return of each (observation, action) seen, epsilon-greedy."""

    def __init__(self, n_actions: int, epsilon: float, rng: np.random.Generator) -> None:
        self.value: dict[tuple[int, ...], np.ndarray] = defaultdict(lambda: np.zeros(n_actions))
        self.visits: dict[tuple[int, ...], np.ndarray] = defaultdict(lambda: np.zeros(n_actions))
        self.epsilon, self.rng = epsilon, rng
        self.episode: list[tuple[tuple[int, ...], int]] = []

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        key = tuple(obs[: E.OBS_BASE].tolist())
        legal = np.flatnonzero(mask)
        if self.rng.random() < self.epsilon:
            action = int(self.rng.choice(legal))
        else:
            values = np.where(self.visits[key][legal] > 0, self.value[key][legal], 0.0)
            action = int(legal[np.argmax(values)])
        self.episode.append((key, action))
        return action

    def learn(self, reward: float) -> None:
        """The round's reward is the return of every decision made in it (no discounting)."""
        for key, action in self.episode:
            self.visits[key][action] += 1
            self.value[key][action] += (reward - self.value[key][action]) / self.visits[key][action]
        self.episode = []


def play(table: Any, seats: dict[str, MonteCarloSeat], rounds: int, learn: bool, seed: int) -> dict[str, list[float]]:
    """Play ``rounds`` rounds (an episode each); returns each seat's reward per round, which
    PettingZoo hands each agent at its last turn of the episode."""
    rewards: dict[str, list[float]] = {agent: [] for agent in seats}
    table.reset(seed=seed)
    for _ in range(rounds):
        for agent in table.agent_iter():
            obs, reward, terminated, _, _ = table.last()
            if terminated:
                rewards[agent].append(reward)
                if learn:
                    seats[agent].learn(reward)
                seats[agent].episode = []
                table.step(None)
                continue
            table.step(seats[agent].act(obs["observation"], obs["action_mask"]))
        table.reset()
    return rewards


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200_000, help="training rounds")
    parser.add_argument("--eval-rounds", type=int, default=100_000, help="greedy rounds per seat's EV")
    parser.add_argument("--epsilon", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    table = raw_env(seats=3, rules="ultimatebet")
    rng = np.random.default_rng(args.seed)
    seats = {agent: MonteCarloSeat(E.N_ACTIONS, args.epsilon, rng) for agent in table.possible_agents}
    play(table, seats, args.rounds, learn=True, seed=args.seed)
    for seat in seats.values():
        seat.epsilon = 0.0
    results = play(table, seats, args.eval_rounds, learn=False, seed=args.seed + 1)
    print(f"basic strategy's exact EV for these rules: {solve(table.rules).ev:+.4f}")
    for agent, rewards in results.items():
        r = np.asarray(rewards)
        low, high = interval(r.mean(), r.std(ddof=1) / np.sqrt(len(r)))
        print(f"{agent}: EV {r.mean():+.4f} per round (95% CI {low:+.4f} .. {high:+.4f}), {len(r)} rounds")


if __name__ == "__main__":
    main()
