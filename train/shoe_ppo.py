"""``blackjack-train --algo shoe-ppo`` (``--env shoe --algo ppo``): MaskablePPO on BlackjackShoe-v0 and its evaluation.

The learner (:mod:`blackjack_env.agents.shoe_ppo`) sees the shoe env's observation with the count
(``--system hilo``: Hi-Lo's true count; ``--system composition``: the unseen cards per value) and
chooses the bet before every round. Its network cannot be tabulated, so the compiled simulator
cannot play it; every ``--eval-every`` steps :func:`paired_evaluation` plays it in the vector env
instead, on identical shoes (the first shoe of tables seeded alike) as

* basic strategy at a flat bet of 1 (``gain_vs_basic``: what its bets and its play earn together),
* itself at a flat bet of 1 (``flat_gain`` = that minus basic strategy: the gain from its play alone),

and Hi-Lo I18 + Fab 4 with the EV-maximising use of the same bets (``train/shoe.py``) is simulated
in the compiled simulator on other shoes (``gain_vs_hilo``: unpaired, its interval the two runs'
errors combined). EVs are per round dealt, in table-minimum units; per-shoe totals are paired and
their ratio to rounds linearised (the delta method) for the 95% intervals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from blackjack_env import engine as E
from blackjack_env.agents.basic_strategy import BasicStrategyAgent
from blackjack_env.agents.shoe_ppo import ShoePPOAgent, make_shoe_vec_env, shoe_arguments
from blackjack_env.evaluate.columns import with_ci
from blackjack_env.evaluate.runner import simulate
from blackjack_env.rules import Rules
from blackjack_env.shoe_env import check_bets, shoe_rules
from blackjack_env.simulate import Z95, Policy, Table
from blackjack_env.solver import solve
from blackjack_env.strategy import StrategyTable
from blackjack_env.vector import BlackjackShoeVectorEnv

from .evaluation import RoundGame, shoe_postfix
from .ppo import PPOConfig, PPOLearner
from .shoe import hilo_ev_max

#: --system for PPO: what its observation carries (the shoe env's count_obs).
OBSERVATIONS = {"hilo": "hilo", "composition": "composition"}
PPO_SHOE_COLUMNS = (
    "step",
    "ev",
    "ev_basic",
    "ev_hilo",
    *with_ci("gain_vs_basic"),
    *with_ci("flat_gain"),
    *with_ci("gain_vs_hilo"),
    "avg_bet",
    "rounds",
    "wall_s",
)
#: Tables the evaluation plays at once (each plays one shoe per batch).
EVAL_TABLES = 512


def shoe_arguments_of(rules: Rules, system: str, bets: tuple[float, ...], seats: int, seat: int) -> dict[str, Any]:
    """The shoe env's arguments of a PPO learner (``seat`` -1: every seat, refused), checked (one line
    per problem)."""
    shoe_rules(rules)  # a cut card
    if system not in OBSERVATIONS:
        raise ValueError(
            "--env shoe --algo ppo observes hilo (Hi-Lo's true count) or composition (the unseen cards per value) "
            f"as --system; got {system!r}"
        )
    E.check_seats(seats, "--seats")
    if seat < 0:
        raise ValueError("--seat all is for the count-table learner; --algo ppo plays one seat (--seat K)")
    return shoe_arguments(check_bets(bets, seats), seats, seat, OBSERVATIONS[system])


def play_shoes(rules: Rules, shoe: dict[str, Any], act: Any, seeds: list[int]) -> np.ndarray:
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


def paired_evaluation(agent: Any, rounds: int, seed: int) -> dict[str, Any]:
    """The agent with its bets, the agent at a flat bet and basic strategy at a flat bet, each on
    the same shoes (module docstring), until about ``rounds`` rounds: per-round EVs, the paired
    gains with 95% intervals, and the agent's average bet."""
    shoe = agent.shoe
    bets = shoe["bets"]
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

    runs: dict[str, list[np.ndarray]] = {"own": [], "flat": [], "basic": []}
    played = 0.0
    batch = 0
    tables = min(EVAL_TABLES, max(2, rounds // 50))  # a short evaluation plays fewer (still two shoes)
    while played < rounds:
        seeds = [seed * 1_000_003 + batch * EVAL_TABLES + i for i in range(tables)]
        for name, act in (("own", own), ("flat", own_flat), ("basic", basic_flat)):
            runs[name].append(play_shoes(agent.rules, shoe, act, seeds))
        played += float(runs["basic"][-1][1].sum())
        batch += 1
    totals = {name: np.concatenate([t for t, _, _ in r]) for name, r in runs.items()}
    counts = {name: np.concatenate([n for _, n, _ in r]) for name, r in runs.items()}
    ev = {name: totals[name].sum() / counts[name].sum() for name in runs}
    # per shoe, each EV's linearised residual (delta method for a ratio of sums)
    resid = {name: (totals[name] - ev[name] * counts[name]) / counts[name].mean() for name in runs}
    shoes = len(totals["basic"])
    row: dict[str, Any] = {"ev": ev["own"], "ev_basic": ev["basic"], "rounds": float(counts["basic"].sum())}
    for key, a, b in (("gain_vs_basic", "own", "basic"), ("flat_gain", "flat", "basic")):
        gain = ev[a] - ev[b]
        half = Z95 * float(np.std(resid[a] - resid[b], ddof=1)) / math.sqrt(shoes)
        row.update({key: gain, f"{key}_low": gain - half, f"{key}_high": gain + half})
    row["stderr_own"] = float(np.std(resid["own"], ddof=1)) / math.sqrt(shoes)
    row["avg_bet"] = float(sum(b.sum() for _, _, b in runs["own"])) / float(counts["own"].sum())
    return row


class ShoeNetEvaluation:
    """How a network learner of the shoe game is evaluated (module docstring): :func:`paired_evaluation`
    of its agent, beside Hi-Lo I18 + Fab 4 with the EV-maximising use of the same bets."""

    columns: tuple[str, ...] = PPO_SHOE_COLUMNS
    scalar_keys: tuple[str, ...] = ("ev", "gain_vs_basic", "flat_gain", "gain_vs_hilo", "avg_bet")

    def __init__(self, rules: Rules, shoe: dict[str, Any], seed: int, eval_rounds: int, out: Path) -> None:
        self.rules, self.shoe, self.seed, self.eval_rounds, self.out = rules, shoe, seed, eval_rounds, out
        self._hilo: tuple[float, float] | None = None

    def hilo_ev(self) -> tuple[float, float]:
        """(EV per round, its standard error) of Hi-Lo I18 + Fab 4 with the EV-maximising use of the
        bets, simulated once on ``eval_rounds`` rounds (seed + 1) of the compiled simulator."""
        if self._hilo is None:
            basic = solve(self.rules).table
            seats, seat = self.shoe["seats"], self.shoe["seat"]
            table = Table(seats, seat, Policy.from_table(basic) if seats > 1 else None)
            bets = tuple(self.shoe["bets"])
            hilo = hilo_ev_max(self.rules, bets, basic, table, self.eval_rounds, self.seed, self.out)
            run = simulate(self.rules, hilo, self.eval_rounds, self.seed + 1, table=table).result
            self._hilo = (run.ev(), run.stderr())
        return self._hilo

    def evaluate(self, agent: Any, rounds: int, seed: int) -> dict[str, float]:
        row = paired_evaluation(agent, rounds, seed)
        ev_hilo, se_hilo = self.hilo_ev()
        gain = row["ev"] - ev_hilo
        half = Z95 * math.hypot(row.pop("stderr_own"), se_hilo)
        row.update(ev_hilo=ev_hilo, gain_vs_hilo=gain, gain_vs_hilo_low=gain - half, gain_vs_hilo_high=gain + half)
        return row

    @staticmethod
    def summary(label: str, steps: int, last: Mapping[str, float], wall_s: float, out: Path) -> str:
        """The run's last line."""

        def per100(key: str) -> str:
            return f"{100 * last[key]:+.3f} [{100 * last[key + '_low']:+.3f}, {100 * last[key + '_high']:+.3f}]"

        return (
            f"{label} (shoe): {steps} steps in {wall_s:.1f} s; per 100 rounds: EV {100 * last['ev']:+.3f}, "
            f"vs basic strategy {per100('gain_vs_basic')} (paired), its play at a flat bet vs basic "
            f"{per100('flat_gain')} (paired), vs Hi-Lo I18+Fab4 EV-max {per100('gain_vs_hilo')} (unpaired); "
            f"average bet {last['avg_bet']:.2f}; run in {out}"
        )


@dataclass(frozen=True)
class ShoePPOConfig:
    """MaskablePPO's options, the shoe env's arguments and the evaluation's length."""

    ppo: PPOConfig
    shoe: dict[str, Any]  # the shoe env's arguments: shoe_arguments_of
    eval_rounds: int


class ShoePPOLearner(PPOLearner):
    """MaskablePPO on the shoe env seen round by round; evaluated by :class:`ShoeNetEvaluation`."""

    columns = ShoeNetEvaluation.columns
    scalar_keys = ShoeNetEvaluation.scalar_keys

    def __init__(self, config: ShoePPOConfig, rules: Rules, out: Path, resume: bool) -> None:
        self.shoe = config.shoe
        super().__init__(config.ppo, rules, out, resume)
        if not resume:
            self.agent.shoe = self.shoe
        self.shoe_game = ShoeNetEvaluation(rules, self.shoe, config.ppo.seed, config.eval_rounds, out)

    def agent_class(self) -> Any:
        return ShoePPOAgent

    def make_env(self, config: PPOConfig, rules: Rules) -> Any:
        return make_shoe_vec_env(rules, config.n_envs, config.seed, self.shoe, config.reward)

    def round_game(self, rules: Rules) -> RoundGame | None:
        return None

    def table(self) -> StrategyTable:
        raise ValueError("the shoe game's PPO agent has no strategy table")

    def evaluate(self, rounds: int, seed: int) -> dict[str, float]:
        return self.shoe_game.evaluate(self.agent, rounds, seed)

    def postfix(self, row: Mapping[str, float]) -> dict[str, str]:
        return shoe_postfix(row)

    def summary(self, last: Mapping[str, float], wall_s: float, out: Path) -> str:
        return ShoeNetEvaluation.summary("ppo", self.steps, last, wall_s, out)
