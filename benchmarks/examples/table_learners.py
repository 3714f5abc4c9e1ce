"""Independent learners at a 3-seat PettingZoo table: each seat learns alone, then each seat's EV.

Every seat is the project's tabular learner (:class:`blackjack_env.agents.TabularAgent`, Monte
Carlo control over the strategy table's cells), each with its own seed, fed the rounds its seat
plays at the table: ``agent.explore(obs, mask)`` picks the seat's action (epsilon-greedy, as the
learner does inside its own kernel) and ``agent.finish_round(reward)`` credits the seat's result
with the learner's compiled update. The seats' observations also hold the other seats' cards; the
learner's cells (hand, up card) set them aside. Each learner then plays its greedy strategy table
(learning off) on fresh rounds, and the script prints each seat's EV per round with its 95%
interval, the exact EV of its table (the solver), and basic strategy's exact EV for the rules.
Run from the repository root:

    python benchmarks/examples/table_learners.py --rounds 300000 --eval-rounds 100000
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

from blackjack_env.agents import TabularAgent
from blackjack_env.multiagent import raw_env
from blackjack_env.simulate import interval
from blackjack_env.solver import solve

SEATS = 3
RULES = "ultimatebet"


def play(
    table: Any,
    act: Callable[[str, np.ndarray, np.ndarray], int],
    rounds: int,
    seed: int,
    settled: Callable[[str, float], None] | None = None,
) -> dict[str, list[float]]:
    """Play ``rounds`` rounds (an episode each) with ``act(agent, obs, mask)``; returns each seat's
    reward per round, which PettingZoo hands each agent at its last turn of the episode (where
    ``settled(agent, reward)`` is called)."""
    rewards: dict[str, list[float]] = {agent: [] for agent in table.possible_agents}
    table.reset(seed=seed)
    for _ in range(rounds):
        for agent in table.agent_iter():
            obs, reward, terminated, _, _ = table.last()
            if terminated:
                rewards[agent].append(float(reward))
                if settled is not None:
                    settled(agent, float(reward))
                table.step(None)
            else:
                table.step(act(agent, obs["observation"], obs["action_mask"]))
        table.reset()
    return rewards


def train(table: Any, learners: dict[str, TabularAgent], rounds: int, seed: int) -> None:
    """Each seat's learner explores its decisions and learns from its own result, round by round."""

    def act(agent: str, obs: np.ndarray, mask: np.ndarray) -> int:
        return learners[agent].explore(obs, mask)

    def settled(agent: str, reward: float) -> None:
        learners[agent].finish_round(reward)

    play(table, act, rounds, seed, settled)


def main(argv: list[str] | None = None) -> dict[str, np.ndarray]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300_000, help="training rounds")
    parser.add_argument("--eval-rounds", type=int, default=100_000, help="greedy rounds per seat's EV")
    parser.add_argument("--epsilon", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    table = raw_env(seats=SEATS, rules=RULES)
    learners = {
        agent: TabularAgent(table.rules, epsilon=args.epsilon, seed=args.seed + i)
        for i, agent in enumerate(table.possible_agents)
    }
    train(table, learners, args.rounds, args.seed)
    tables = {agent: learner.to_table() for agent, learner in learners.items()}
    results = play(table, lambda agent, obs, mask: tables[agent].act(obs, mask), args.eval_rounds, args.seed + 1)
    solution = solve(table.rules)
    print(f"basic strategy's exact EV for these rules: {solution.ev:+.4f}")
    out = {}
    for agent, rewards in results.items():
        r = out[agent] = np.asarray(rewards)
        low, high = interval(r.mean(), r.std(ddof=1) / np.sqrt(len(r)))
        exact = solution.evaluate(tables[agent]).ev
        print(
            f"{agent}: EV {r.mean():+.4f} per round (95% CI {low:+.4f} .. {high:+.4f}), {len(r)} rounds; "
            f"its table's exact EV {exact:+.4f} after {learners[agent].rounds} rounds learned"
        )
    return out


if __name__ == "__main__":
    main()
