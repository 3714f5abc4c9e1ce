"""``blackjack-train --env shoe --algo linear``: the composition learner's run.

The run is the count-table learner's (:mod:`blackjack_env.train.shoe`): the same chunks, checkpoints
and paired evaluation on identical shoes against basic strategy and Hi-Lo I18 + Fab 4 with the
EV-maximising use of the same bets; only the learner (:mod:`blackjack_env.agents.linear`) and what
is evaluated differ: the composition model as exported (``linear-model.json``), with its bets and
at a flat bet of 1, as ``blackjack-evaluate --policy RUN_DIR`` plays it. It takes no counting
system (``--system`` is refused in one line: the model sees every value of the unseen cards).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from blackjack_env.agents.linear import LinearAgent
from blackjack_env.engine import check_seats
from blackjack_env.rules import Rules
from blackjack_env.simulate import Policy

from .shoe import CountTableTrainer
from .shoe_args import bets_of, seat_of


def _agent(args: Any, rules: Rules) -> Any:
    return LinearAgent(
        rules,
        bets=bets_of(args.bets, args.spread),
        seats=args.seats,
        seat=seat_of(args.seat, args.seats),
        epsilon=args.epsilon,
        seed=args.seed,
        chunk_rounds=args.chunk_steps,
        kelly=args.kelly,
        bankroll=args.bankroll,
    )


def check_linear_args(args: Any, rules: Rules) -> None:
    """Everything --algo linear can refuse, before anything is written (one line each)."""
    if args.reward != "sampled":
        raise ValueError("--env shoe learns from the dealt results (--reward sampled)")
    check_seats(args.seats, "--seats")
    _agent(args, rules)


class LinearTrainer(CountTableTrainer):
    """The composition learner's chunks, evaluated as the count-table learner's are."""

    @staticmethod
    def new_agent(args: Any, rules: Rules, out: Path, resume: bool) -> Any:
        """The composition learner: loaded from ``out`` to resume, else a new one."""
        return LinearAgent.load(out) if resume else _agent(args, rules)

    def learned_policies(self) -> tuple[Policy, Policy]:
        """The model as exported (its bets), and the same at a flat bet of 1."""
        model = self.agent.model()
        basic = self.agent.basic_table()
        return Policy.from_linear(model, self.rules, basic), Policy.from_linear(
            model.with_bets((1.0,)), self.rules, basic
        )

    def learned_figures(self) -> dict[str, float]:
        """No index entries or ramp: the counting strategy's own columns are left empty."""
        return {"deviations": math.nan, "max_bet_from": math.nan}
