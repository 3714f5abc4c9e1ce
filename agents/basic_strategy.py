"""The exact basic-strategy player: the solver's optimal table, played from observation and mask.

It sees only what the env shows (hand total, softness, pair, up card, legal-action mask), so it
doubles as a check that the observation carries everything a basic-strategy decision needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from blackjack_env._jit import njit
from blackjack_env.rules import Rules
from blackjack_env.solver import Solution, solve
from blackjack_env.strategy import StrategyTable, table_action

from .base import check_batch, read_manifest, write_manifest


@njit(cache=True)
def _act_batch(actions, insurance, obs, masks, out):
    for i in range(obs.shape[0]):
        out[i] = table_action(actions, insurance, obs[i], masks[i])


class BasicStrategyAgent:
    """Plays the total-dependent basic strategy that is optimal for ``rules``.

    Each cell of the solver's table lists the actions best first, so the first legal one is the
    right fallback (double else hit, surrender else stand/hit/split, split only while allowed).

    Args:
        rules: a Rules, a preset name, a dict of fields, or None for the default game.
        solution: an already computed solver result for these rules (skips the lookup).
    """

    kind = "basic"

    def __init__(self, rules: Rules | str | Mapping[str, Any] | None = None, solution: Solution | None = None) -> None:
        self.rules = Rules.coerce(rules)
        self.solution = solution if solution is not None else solve(self.rules)
        self.table: StrategyTable = self.solution.table

    @property
    def ev(self) -> float:
        """Exact EV per round of this strategy off the top of a fresh shoe."""
        return self.solution.ev

    def strategy_table(self) -> StrategyTable:
        """The table the compiled simulator can run without Python in the loop."""
        return self.table

    def to_table(self) -> StrategyTable:
        """The agent protocol's name for :meth:`strategy_table`."""
        return self.table

    def save(self, path: str | Path) -> None:
        """An agent directory (agent.json + strategy.json); loading re-derives it from the rules."""
        write_manifest(path, self.kind, self.rules, self.table)

    @classmethod
    def load(cls, path: str | Path) -> BasicStrategyAgent:
        return cls(Rules.from_dict(read_manifest(path)["rules"]))

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The action for one observation and its legal-action mask."""
        return self.table.act(obs, mask)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions for N observations (int[N, obs]) and masks (bool[N, 7]) at once."""
        obs, masks = check_batch(obs, masks)
        out = np.empty(obs.shape[0], np.int64)
        _act_batch(self.table.actions, self.table.insurance, obs, masks, out)
        return out

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
        action_masks: np.ndarray | None = None,
    ) -> tuple[np.ndarray | int, None]:
        """Stable-Baselines3-style predict: one observation or a batch, with its action mask(s)."""
        if action_masks is None:
            raise ValueError("BasicStrategyAgent.predict needs action_masks (the env's action_masks())")
        obs = np.asarray(observation)
        if obs.ndim == 1:
            return self.act(obs, np.asarray(action_masks)), None
        return self.act_batch(obs, np.asarray(action_masks)), None
