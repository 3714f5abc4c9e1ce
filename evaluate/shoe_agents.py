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
from blackjack_env.counting import SYSTEMS
from blackjack_env.rules import Rules
from blackjack_env.simulate import N_TC, TC_HIGH, TC_LOW, Z95, interval
from blackjack_env.vector import BlackjackShoeVectorEnv

from .counting_stats import counter_figures

#: Tables the evaluation plays at once (each plays one shoe per batch).
EVAL_TABLES = 512
#: The three ways each batch of shoes is played, in this order.
PLAYS = ("own", "flat", "basic")

Act = Callable[[np.ndarray, np.ndarray], np.ndarray]


class CountTally:
    """One play's rounds filed by the Hi-Lo true count when its bet is made (whole counts, floored; the
    tails pooled into ``simulate.TC_LOW`` and ``TC_HIGH``: the simulator's filing of a counter), counted
    from the cards not seen yet whatever the agent observes: per bucket the rounds, the bets, and the
    sum and sum of squares of the round's result per unit bet over the rounds played (a bet of 0 sits the
    round out); overall the rounds, the sum and sum of squares of the results per round, and the shoes.

    A round is opened by its bet and closed by the next bet at that table or the shoe's end, so a
    result paid on the bet's own step (a natural) is the new round's."""

    def __init__(self) -> None:
        self.rounds, self.played, self.bets = np.zeros(N_TC), np.zeros(N_TC), np.zeros(N_TC)
        self.unit, self.unit_sq = np.zeros(N_TC), np.zeros(N_TC)
        self.total_rounds, self.total, self.total_sq, self.shoes = 0.0, 0.0, 0.0, 0.0
        self._open = np.zeros(0, np.int64)  # per table the open round's bucket, -1: none
        self._bet, self._result = np.zeros(0), np.zeros(0)

    @staticmethod
    def bucket(unseen: np.ndarray) -> np.ndarray:
        """The floored Hi-Lo true count of each row of unseen cards (``unseen_cards``), as a bucket 0..N_TC-1."""
        running = -(unseen @ np.asarray(SYSTEMS["hilo"].tags))  # the cards seen: a full shoe's tags add to 0
        true = running * 52.0 / np.maximum(unseen.sum(axis=1), 1)
        return (np.clip(np.floor(true), TC_LOW, TC_HIGH) - TC_LOW).astype(np.int64)

    def start(self, tables: int) -> None:
        """A new batch of shoes: no round open at any table."""
        self._open = np.full(tables, -1, np.int64)
        self._bet, self._result = np.zeros(tables), np.zeros(tables)
        self.shoes += tables

    def close(self, which: np.ndarray) -> None:
        """File the open rounds of the tables ``which`` (a bool mask)."""
        done = which & (self._open >= 0)
        bucket, bet, result = self._open[done], self._bet[done], self._result[done]
        unit = np.divide(result, bet, out=np.zeros_like(result), where=bet > 0)
        np.add.at(self.rounds, bucket, 1.0)
        np.add.at(self.played, bucket, bet > 0)
        np.add.at(self.bets, bucket, bet)
        np.add.at(self.unit, bucket, unit)
        np.add.at(self.unit_sq, bucket, unit**2)
        self.total_rounds += float(done.sum())
        self.total += float(result.sum())
        self.total_sq += float((result**2).sum())
        self._open[done] = -1

    def bet(self, unseen: np.ndarray, betting: np.ndarray, sizes: np.ndarray) -> None:
        """Close the rounds of the tables now betting and open theirs at the count of ``unseen`` (their
        rows of ``unseen_cards``), with bets ``sizes``."""
        self.close(betting)
        self._open[betting] = self.bucket(unseen)
        self._bet[betting], self._result[betting] = sizes, 0.0

    def paid(self, reward: np.ndarray) -> None:
        self._result += reward

    def by_count(self) -> list[dict[str, Any]]:
        """Per bucket, the keys of ``SimulationResult.by_true_count``: the share of rounds, the average
        bet and the EV per unit bet with its 95% CI (NaN where no round fell)."""
        out = []
        for i, n in enumerate(self.played):
            count = TC_LOW + i
            ev = self.unit[i] / n if n else math.nan
            var = max(self.unit_sq[i] / n - ev * ev, 0.0) * n / (n - 1) if n > 1 else math.inf
            out.append(
                {
                    "true_count": count,
                    "label": f"<= {count}" if i == 0 else f">= {count}" if i == N_TC - 1 else str(count),
                    "share": float(self.rounds[i] / max(self.total_rounds, 1.0)),
                    "rounds": int(self.rounds[i]),
                    "rounds_played": int(n),
                    "avg_bet": float(self.bets[i] / n) if n else 0.0,
                    "ev_per_unit_bet": float(ev),
                    "ci95": interval(float(ev), math.sqrt(var / n)) if n else [math.nan, math.nan],
                }
            )
        return out

    def figures(self, bankroll: float | None) -> dict[str, Any]:
        """The counter's figures of the play (``counter_figures``), its average bet and rounds."""
        n, played, staked = self.total_rounds, int(self.played.sum()), float(self.bets.sum())
        ev = self.total / n
        sd = math.sqrt(max(self.total_sq / n - ev * ev, 0.0))
        advantage = self.total / staked if staked > 0 else 0.0
        figures = counter_figures(ev, sd, advantage, n / self.shoes, self.by_count(), bankroll)
        return {"avg_bet": staked / max(played, 1), "rounds_played": played, **figures}

    def add(self, other: CountTally) -> None:
        """Add a whole batch's tally (``paired_batches``: a batch cut short by Ctrl-C is never added)."""
        for name in ("rounds", "played", "bets", "unit", "unit_sq", "total_rounds", "total", "total_sq", "shoes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def play_shoes(
    rules: Rules, shoe: dict[str, Any], act: Act, seeds: list[int], tally: CountTally | None = None
) -> np.ndarray:
    """The first shoe of a vector env's tables seeded ``seeds``, played by ``act(obs, masks)``:
    float[3, tables], the seat's summed results, rounds dealt and summed bets per table; ``tally``
    files each round by the count seen at its bet."""
    env = BlackjackShoeVectorEnv(len(seeds), rules, **shoe)
    obs, info = env.reset(seed=seeds)
    masks = info["action_mask"]
    sizes = np.asarray(shoe["bets"], np.float64)
    totals, rounds, bets = np.zeros((3, len(seeds)))
    live = np.ones(len(seeds), np.bool_)
    if tally is not None:
        tally.start(len(seeds))
    while live.any():
        actions = act(obs, masks)
        betting = live & (obs[:, E.O_PHASE] == E.P_BET)
        rounds += betting
        bets[betting] += sizes[actions[betting] - E.N_ACTIONS]
        if tally is not None and betting.any():
            tally.bet(env.unseen_cards()[betting], betting, sizes[actions[betting] - E.N_ACTIONS])
        obs, reward, terminated, _, info = env.step(actions)
        totals += np.where(live, reward, 0.0)
        if tally is not None:
            tally.paid(np.where(live, reward, 0.0))
            tally.close(terminated & live)
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


def paired_batches(
    agent: Any, rounds: int, seed: int, tally: CountTally | None = None
) -> Iterator[dict[str, np.ndarray]]:
    """Batches of shoes, each played the three ways (``play_shoes``' arrays by play), until about
    ``rounds`` rounds: a short evaluation plays fewer tables a batch (still two shoes); ``tally``
    files the agent's own play by count."""
    plays = paired_plays(agent)
    tables = min(EVAL_TABLES, max(2, rounds // 50))
    played, batch = 0.0, 0
    while played < rounds:
        seeds = [seed * 1_000_003 + batch * EVAL_TABLES + i for i in range(tables)]
        batch_tally = None if tally is None else CountTally()
        runs = {
            name: play_shoes(agent.rules, agent.shoe, act, seeds, batch_tally if name == "own" else None)
            for name, act in plays.items()
        }
        if tally is not None and batch_tally is not None:  # a batch cut short by Ctrl-C is left out whole
            tally.add(batch_tally)
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
    row["stderr_flat"] = float(np.std(resid["flat"], ddof=1)) / math.sqrt(shoes)
    row["avg_bet"] = float(sum(b["own"][2].sum() for b in batches)) / float(counts["own"].sum())
    return row


def paired_evaluation(
    agent: Any,
    rounds: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
    tally: CountTally | None = None,
) -> dict[str, Any]:
    """The agent's paired evaluation (module docstring) on about ``rounds`` rounds; ``progress(n)`` after
    every batch of n rounds; ``tally`` files its own play's rounds by count. Ctrl-C ends it at the last
    whole batch (``interrupted`` True), or raises KeyboardInterrupt when none has finished."""
    batches: list[dict[str, np.ndarray]] = []
    interrupted = False
    try:
        for runs in paired_batches(agent, rounds, seed, tally):
            batches.append(runs)
            if progress is not None:
                progress(int(runs["basic"][1].sum()))
    except KeyboardInterrupt:
        if not batches:
            raise
        interrupted = True
    return {**paired_row(batches), "interrupted": interrupted}


__all__ = ["EVAL_TABLES", "CountTally", "paired_evaluation", "play_shoes"]
