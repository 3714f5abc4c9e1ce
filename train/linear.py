"""``blackjack-train --algo composition`` (``--env shoe --algo linear``): the composition learner's run.

The run is the count-table learner's (:mod:`blackjack_env.train.shoe`): the same chunks, checkpoints
and paired evaluation on identical shoes against basic strategy and Hi-Lo I18 + Fab 4 with the
EV-maximising use of the same bets; only the learner (:mod:`blackjack_env.agents.linear`) and what
is evaluated differ: the composition model as exported (``linear-model.json``), with its bets and
at a flat bet of 1, as ``blackjack-evaluate --policy RUN_DIR`` plays it. It takes no counting
system (the model sees every value of the unseen cards).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from blackjack_env.agents.linear import DEPTH_BANDS, LinearAgent
from blackjack_env.rules import Rules
from blackjack_env.simulate import Policy

from .shoe import ChunkLearner, ChunkRun
from .shoe_args import ShoeGame


@dataclass(frozen=True)
class CompositionConfig:
    """The composition learner's options: its exploration, the exported model's bet, the game, the run."""

    game: ShoeGame
    run: ChunkRun
    epsilon: float = 0.1
    kelly: float = 0.0  # the exported model bets a Kelly fraction of bankroll; 0: the EV-maximising bet
    bankroll: float = 0.0
    depth_bands: int = DEPTH_BANDS  # 1: one linear fit at every depth


def composition_agent(config: CompositionConfig, rules: Rules) -> LinearAgent:
    """A new composition learner; everything its options can refuse, refused in one line."""
    game, run = config.game, config.run
    return LinearAgent(
        rules,
        bets=game.bets,
        seats=game.seats,
        seat=game.seat,
        epsilon=config.epsilon,
        seed=run.seed,
        chunk_rounds=run.chunk_rounds,
        kelly=config.kelly,
        bankroll=config.bankroll,
        depth_bands=config.depth_bands,
    )


class CompositionLearner(ChunkLearner):
    """The composition learner's chunks, evaluated as the count-table learner's are."""

    agent: LinearAgent
    name = "composition"
    export_file = "linear-model.json"

    def __init__(self, config: CompositionConfig, rules: Rules, out: Path, resume: bool) -> None:
        agent = LinearAgent.load(out) if resume else composition_agent(config, rules)
        super().__init__(agent, config.run, rules, out, resume)

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
