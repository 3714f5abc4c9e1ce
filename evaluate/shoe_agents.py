"""Playing a shoe agent that bets and plays from the count in its observation (a network trained on
``BlackjackShoe-v0``: ``--env shoe --algo ppo`` or ``--algo batch-ppo``), paired with basic strategy.

The compiled simulator runs strategy tables, counting strategies and composition models; a network
is none of these, so it plays the vector env instead, on identical shoes (the first shoe of tables
seeded alike) as

* itself with its bets (``ev``),
* itself at a flat bet of 1 (``flat_gain`` = that minus basic strategy's: the gain from its play alone),
* basic strategy at a flat bet of 1 (``gain_vs_basic`` = ``ev`` minus that: its bets and play together).

EVs are per round dealt, in table-minimum units; per-shoe totals are paired and their ratio to rounds
linearised (the delta method) for the 95% intervals. ``blackjack-train`` runs this as its evaluation of
such a learner, ``blackjack-evaluate --policy RUN_DIR`` on as many rounds as asked.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from blackjack_env import engine as E
from blackjack_env.agents.basic_strategy import BasicStrategyAgent
from blackjack_env.rules import Rules
from blackjack_env.simulate import Z95
from blackjack_env.vector import BlackjackShoeVectorEnv

#: Tables the evaluation plays at once (each plays one shoe per batch).
EVAL_TABLES = 512
#: The three ways each batch of shoes is played, in this order.
PLAYS = ("own", "flat", "basic")

Act = Callable[[np.ndarray, np.ndarray], np.ndarray]


def play_shoes(rules: Rules, shoe: dict[str, Any], act: Act, seeds: list[int]) -> np.ndarray:
    """The first shoe of a vector env's tables seeded ``seeds``, played by ``act(obs, masks)``:
    float[3, tables], the seat's summed results, rounds dealt and summed bets per table."""
    env = BlackjackShoeVectorEnv(len(seeds), rules, **shoe)
    obs, info = env.reset(seed=seeds)
    masks = info["action_mask"]
    sizes = np.asarray(shoe["bets"], np.float64)
    totals, rounds, bets = np.zeros((3, len(seeds)))
    live = np.ones(len(seeds), np.bool_)
    while live.any():
        actions = act(obs, masks)
        betting = live & (obs[:, E.O_PHASE] == E.P_BET)
        rounds += betting
        bets[betting] += sizes[actions[betting] - E.N_ACTIONS]
        obs, reward, terminated, _, info = env.step(actions)
        totals += np.where(live, reward, 0.0)
        live &= ~terminated
        masks = info["action_mask"]
    return np.stack([totals, rounds, bets])


def paired_plays(agent: Any) -> dict[str, Act]:
    """The three plays of :data:`PLAYS` for an agent with ``act_batch``, ``rules`` and ``shoe`` (the
    shoe env's arguments): the flat bet is the bet of 1 (else the smallest positive one)."""
    bets = agent.shoe["bets"]
    flat = E.N_ACTIONS + (bets.index(1.0) if 1.0 in bets else next(i for i, b in enumerate(bets) if b > 0))
    basic = BasicStrategyAgent(agent.rules)

    def betting(obs: np.ndarray) -> np.ndarray:
        return obs[:, E.O_PHASE] == E.P_BET

    def own(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return agent.act_batch(obs, masks)

    def own_flat(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.where(betting(obs), flat, agent.act_batch(obs, masks))

    def basic_flat(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.where(betting(obs), flat, basic.act_batch(obs, masks[:, : E.N_ACTIONS]))

    return {"own": own, "flat": own_flat, "basic": basic_flat}


def paired_batches(agent: Any, rounds: int, seed: int) -> Iterator[dict[str, np.ndarray]]:
    """Batches of shoes, each played the three ways (``play_shoes``' arrays by play), until about
    ``rounds`` rounds: a short evaluation plays fewer tables a batch (still two shoes)."""
    plays = paired_plays(agent)
    tables = min(EVAL_TABLES, max(2, rounds // 50))
    played, batch = 0.0, 0
    while played < rounds:
        seeds = [seed * 1_000_003 + batch * EVAL_TABLES + i for i in range(tables)]
        runs = {name: play_shoes(agent.rules, agent.shoe, act, seeds) for name, act in plays.items()}
        played += float(runs["basic"][1].sum())
        batch += 1
        yield runs


def paired_row(batches: list[dict[str, np.ndarray]]) -> dict[str, Any]:
    """Per-round EVs of the three plays, the paired gains with 95% intervals, the agent's average bet
    and its own EV's standard error (``stderr_own``), from the batches played."""
    totals = {name: np.concatenate([b[name][0] for b in batches]) for name in PLAYS}
    counts = {name: np.concatenate([b[name][1] for b in batches]) for name in PLAYS}
    ev = {name: totals[name].sum() / counts[name].sum() for name in PLAYS}
    # per shoe, each EV's linearised residual (delta method for a ratio of sums)
    resid = {name: (totals[name] - ev[name] * counts[name]) / counts[name].mean() for name in PLAYS}
    shoes = len(totals["basic"])
    row: dict[str, Any] = {"ev": ev["own"], "ev_basic": ev["basic"], "rounds": float(counts["basic"].sum())}
    for key, a, b in (("gain_vs_basic", "own", "basic"), ("flat_gain", "flat", "basic")):
        gain = ev[a] - ev[b]
        half = Z95 * float(np.std(resid[a] - resid[b], ddof=1)) / math.sqrt(shoes)
        row.update({key: gain, f"{key}_low": gain - half, f"{key}_high": gain + half})
    row["ev_flat"] = ev["flat"]
    row["stderr_own"] = float(np.std(resid["own"], ddof=1)) / math.sqrt(shoes)
    row["stderr_basic"] = float(np.std(resid["basic"], ddof=1)) / math.sqrt(shoes)
    row["avg_bet"] = float(sum(b["own"][2].sum() for b in batches)) / float(counts["own"].sum())
    return row


def paired_evaluation(
    agent: Any, rounds: int, seed: int, progress: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """The agent's paired evaluation (module docstring) on about ``rounds`` rounds; ``progress(n)`` after
    every batch of n rounds. Ctrl-C ends it at the last whole batch (``interrupted`` True), or raises
    KeyboardInterrupt when none has finished."""
    batches: list[dict[str, np.ndarray]] = []
    interrupted = False
    try:
        for runs in paired_batches(agent, rounds, seed):
            batches.append(runs)
            if progress is not None:
                progress(int(runs["basic"][1].sum()))
    except KeyboardInterrupt:
        if not batches:
            raise
        interrupted = True
    return {**paired_row(batches), "interrupted": interrupted}


__all__ = ["EVAL_TABLES", "paired_evaluation", "play_shoes"]
