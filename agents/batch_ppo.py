"""The batch-PPO network and the agent it exports (trained by ``blackjack-train --algo batch-ppo``,
``blackjack_env.train.batch_ppo``).

* Observations are normalised for the network: each component one-hot over its values (at most
  ``ONE_HOT_MAX``), a larger one (a composition count) scaled to [0, 1].
* The policy is a masked categorical: illegal actions get a logit of -1e8 (probability 0, no NaN).
* On the one-round game the agent tabulates as :class:`~blackjack_env.agents.ppo.PPOAgent` does
  a MaskablePPO model, so ``blackjack-evaluate --policy RUN_DIR`` and the report play it; on the
  shoe it plays by the count (``act_batch``), as :class:`~blackjack_env.agents.shoe_ppo.ShoePPOAgent`,
  and ``blackjack-evaluate --policy RUN_DIR`` plays it in the vector env
  (``blackjack_env.evaluate.shoe_agents``); the report does not.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from blackjack_env.rules import Rules
from blackjack_env.strategy import StrategyTable
from blackjack_env.vector import BlackjackShoeVectorEnv, BlackjackVectorEnv

from .base import read_manifest, write_manifest
from .ppo import PPOAgent

KIND = "batch-ppo"
MODEL_FILE = "batch_ppo.pt"  # the network's weights (agent.json holds its shape and the run's config)
ONE_HOT_MAX = 64  # components with more values are scaled to [0, 1] instead


class Encoder(nn.Module):
    """Integer observations (N, k) to the network's inputs: a one-hot block per component of at
    most ONE_HOT_MAX values, a [0, 1] scalar per larger one."""

    # the buffers registered in __init__ (torch types a module's attributes loosely)
    hot: torch.Tensor
    offsets: torch.Tensor
    scaled: torch.Tensor
    scale: torch.Tensor

    def __init__(self, nvec: np.ndarray) -> None:
        super().__init__()
        nvec = np.asarray(nvec, np.int64)
        hot = nvec <= ONE_HOT_MAX
        offsets = np.concatenate([[0], np.cumsum(np.where(hot, nvec, 0))[:-1]])
        self.register_buffer("hot", torch.from_numpy(np.flatnonzero(hot)))
        self.register_buffer("offsets", torch.from_numpy(offsets[hot]))
        self.register_buffer("scaled", torch.from_numpy(np.flatnonzero(~hot)))
        self.register_buffer("scale", torch.from_numpy(1.0 / np.maximum(nvec[~hot] - 1, 1)).float())
        self.n_hot = int(nvec[hot].sum())
        self.size = self.n_hot + int((~hot).sum())

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = torch.zeros(obs.shape[0], self.size)
        x.scatter_(1, obs[:, self.hot] + self.offsets, 1.0)
        x[:, self.n_hot :] = obs[:, self.scaled].float() * self.scale
        return x


def mlp(sizes: list[int]) -> nn.Sequential:
    """Linear layers with tanh between (CleanRL's orthogonal init; the output layer small)."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        last = i == len(sizes) - 2
        layer = nn.Linear(a, b)
        nn.init.orthogonal_(layer.weight, 0.01 if last else np.sqrt(2))
        nn.init.zeros_(layer.bias)
        layers += [layer] if last else [layer, nn.Tanh()]
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """Separate actor (logits per action) and critic (a value) over the encoded observation."""

    def __init__(self, nvec: np.ndarray, n_actions: int, hidden: tuple[int, ...]) -> None:
        super().__init__()
        self.encoder = Encoder(nvec)
        self.actor = mlp([self.encoder.size, *hidden, n_actions])
        self.critic = mlp([self.encoder.size, *hidden, 1])

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked log-probabilities of every action, values)."""
        x = self.encoder(obs)
        logits = self.actor(x).masked_fill(~mask, -1e8)
        return torch.log_softmax(logits, dim=1), self.critic(x).squeeze(1)


def network(rules: Rules, hidden: Sequence[int], shoe: Mapping[str, Any] | None = None) -> ActorCritic:
    """A fresh network for the game's observations and actions (``shoe``: the shoe env's arguments)."""
    probe = BlackjackVectorEnv(1, rules) if shoe is None else BlackjackShoeVectorEnv(1, rules, **shoe)
    return ActorCritic(probe.single_observation_space.nvec, int(probe.single_action_space.n), tuple(hidden))


class BatchPPOAgent(PPOAgent):
    """The trained network as an agent: greedy masked play.

    Args:
        rules: the game.
        net: the network.
        config: the run's settings, kept in agent.json (``hidden`` is the network's shape).
        shoe: the shoe env's arguments it learned with (``agents.shoe_ppo.shoe_arguments``); None:
            the one-round game.
    """

    kind = KIND

    def __init__(
        self, rules: Rules, net: ActorCritic, config: Mapping[str, Any], shoe: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(rules, None)
        self.net, self.config = net, dict(config)
        self.shoe = None if shoe is None else dict(shoe)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Unmasked action logits float[N, n_actions]."""
        obs_t = torch.as_tensor(np.asarray(obs, np.int64))
        with torch.no_grad():
            return self.net.actor(self.net.encoder(obs_t)).numpy()

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks, np.bool_)
        if np.ndim(obs) != 2 or masks.ndim != 2 or len(obs) != len(masks):
            raise ValueError(f"act_batch needs obs[N, k] and masks[N, actions], got {np.shape(obs)} and {masks.shape}")
        return np.where(masks, self.logits(obs), -np.inf).argmax(axis=1).astype(np.int64)

    def to_table(self) -> StrategyTable:
        if self.shoe is not None:
            raise ValueError(
                "a batch-PPO agent of the shoe game plays by the count, not from one strategy table: "
                "play it in BlackjackShoe-v0 with agent.act_batch(obs, masks), or with blackjack-evaluate --policy "
                "RUN_DIR (beside basic strategy on the same shoes)"
            )
        return super().to_table()

    def save(self, path: str | Path) -> None:
        """agent.json (rules, config, the shoe's arguments) + strategy.json (the one-round game's
        tabulation) + batch_ppo.pt (the weights)."""
        table = None if self.shoe is not None else self.to_table()
        path = write_manifest(path, self.kind, self.rules, table, config=self.config, shoe=self.shoe)
        torch.save(self.net.state_dict(), Path(path) / MODEL_FILE)

    @classmethod
    def load(cls, path: str | Path, env: Any = None) -> BatchPPOAgent:
        """The saved agent (``env`` is not used: it trains in ``blackjack_env.train.batch_ppo``)."""
        manifest = read_manifest(path)
        rules = Rules.from_dict(manifest["rules"])
        shoe = manifest.get("shoe")
        net = network(rules, manifest["config"]["hidden"], shoe)
        net.load_state_dict(torch.load(Path(path) / MODEL_FILE, weights_only=True))
        return cls(rules, net, manifest["config"], shoe)


__all__ = ["ActorCritic", "BatchPPOAgent", "Encoder", "network"]
