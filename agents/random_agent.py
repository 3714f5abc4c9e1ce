"""Uniform random play over the legal actions: the floor every learner must rise from."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from blackjack_env.rules import Rules
from blackjack_env.strategy import StrategyTable

from .base import check_batch, read_manifest, write_manifest


class RandomAgent:
    """Picks uniformly among the legal actions with its own seeded generator.

    It has no table (its choice is random, not a function of the cell); the simulator plays the
    same policy natively (``Policy.random()``), which is what ``blackjack-evaluate`` uses for it.
    """

    kind = "random"

    def __init__(self, rules: Rules | str | Mapping[str, Any] | None = None, seed: int | None = None) -> None:
        self.rules = Rules.coerce(rules)
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError("no legal action in the mask (the round is over: reset the env)")
        return int(legal[self.rng.integers(len(legal))])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = check_batch(obs, masks)
        return np.array([self.act(o, m) for o, m in zip(obs, masks, strict=True)], np.int64)

    def to_table(self) -> StrategyTable | None:
        return None

    def save(self, path: str | Path) -> None:
        write_manifest(path, self.kind, self.rules, None, seed=self.seed)

    @classmethod
    def load(cls, path: str | Path) -> RandomAgent:
        manifest = read_manifest(path)
        return cls(Rules.from_dict(manifest["rules"]), seed=manifest.get("seed"))
