"""``blackjack-train --algo shoe-ppo`` (``--env shoe --algo ppo``): MaskablePPO on BlackjackShoe-v0 and its evaluation.

The learner (:mod:`blackjack_env.agents.shoe_ppo`) sees the shoe env's observation with the count
(``--system hilo``: Hi-Lo's true count; ``--system composition``: the unseen cards per value) and
chooses the bet before every round. Its network cannot be tabulated, so the compiled simulator
cannot play it; every ``--eval-every`` steps
``blackjack_env.evaluate.shoe_agents.paired_evaluation`` plays it in the vector env on identical
shoes, beside basic strategy at a flat bet (``gain_vs_basic``: what its bets and its play earn together;
``flat_gain``: its play alone at a flat bet), and Hi-Lo I18 + Fab 4 with the EV-maximising use of the
same bets (``train/shoe.py``) is simulated in the compiled simulator on other shoes (``gain_vs_hilo``:
unpaired, its interval the two runs' errors combined). EVs are per round dealt, in table-minimum units.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blackjack_env import engine as E
from blackjack_env.agents.shoe_ppo import ShoePPOAgent, make_shoe_vec_env, shoe_arguments
from blackjack_env.evaluate.columns import NET_COLUMNS
from blackjack_env.evaluate.runner import simulate
from blackjack_env.evaluate.shoe_agents import paired_evaluation
from blackjack_env.rules import Rules
from blackjack_env.shoe_env import check_bets, shoe_rules
from blackjack_env.simulate import Z95, Policy, Table
from blackjack_env.solver import solve
from blackjack_env.strategy import StrategyTable

from .evaluation import RoundGame, shoe_postfix
from .ppo import PPOConfig, PPOLearner
from .shoe import hilo_ev_max

#: --system for PPO: what its observation carries (the shoe env's count_obs).
OBSERVATIONS = {"hilo": "hilo", "composition": "composition"}


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


#: paired_evaluation's figures that blackjack-evaluate prints but a run's metrics.csv does not keep.
CLI_ONLY = ("interrupted", "ev_flat", "stderr_basic", "stderr_flat")


class ShoeNetEvaluation:
    """How a network learner of the shoe game is evaluated (module docstring): :func:`paired_evaluation`
    of its agent, beside Hi-Lo I18 + Fab 4 with the EV-maximising use of the same bets."""

    columns: tuple[str, ...] = NET_COLUMNS
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
        for key in CLI_ONLY:
            row.pop(key)
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
