"""How a saved agent is found again: by the kind its ``agent.json`` names.

The loader knows every agent class, so it sits above them all (each agent imports only the protocol
and the manifest helpers of :mod:`blackjack_env.agents.base`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .base import TABLE_FILE, Agent, ChunkAgent, check_table_file, read_manifest
from .basic_strategy import BasicStrategyAgent
from .count_table import CountTableAgent
from .linear import LinearAgent
from .random_agent import RandomAgent
from .tabular import TabularAgent

#: What a saved agent loads as: an agent that acts, or a learner that plays by the count or the unseen
#: cards (its export is what plays it).
LoadedAgent = Agent | ChunkAgent

#: Each saved kind's loader; the PPO kinds (``PPO_KINDS``) are loaded by :func:`_ppo_class`.
KINDS: dict[str, Callable[[str | Path], LoadedAgent]] = {
    "tabular": TabularAgent.load,
    "random": RandomAgent.load,
    "basic": BasicStrategyAgent.load,
    "count-table": CountTableAgent.load,
    "composition-linear": LinearAgent.load,
}
PPO_KINDS = ("ppo", "ppo-shoe", "batch-ppo")


def load_agent(path: str | Path) -> LoadedAgent:
    """Load any saved agent by the kind its agent.json names.

    The agent plays from its own files (``q.npz``, ``ppo.zip``, the rules), not from
    ``strategy.json``; so that nobody evaluates one thing believing it is another, a
    ``strategy.json`` that cannot be read or differs from the agent's own table is warned about
    (:class:`~blackjack_env.agents.base.AgentFileWarning`).

    A count-table learner's run (``blackjack-train --env shoe``) loads as its
    :class:`~blackjack_env.agents.count_table.CountTableAgent`: it plays by the count, so it has no
    single strategy table; ``agent.to_strategy()`` is the counting strategy ``blackjack-evaluate
    --policy RUN_DIR`` plays (its ``counting-strategy.json``). A composition learner's run (``--algo
    linear``) loads as its :class:`~blackjack_env.agents.linear.LinearAgent`, whose ``model()`` is what
    ``blackjack-evaluate --policy RUN_DIR`` plays (its ``linear-model.json``)."""
    agent = _load_by_kind(path)
    if (Path(path) / TABLE_FILE).exists():  # kinds that play by the count write none
        check_table_file(path, agent.to_table())
    return agent


def _load_by_kind(path: str | Path) -> LoadedAgent:
    """The saved agent, as its kind's class loads it."""
    kind = read_manifest(path).get("kind")
    if kind in PPO_KINDS:
        agent: LoadedAgent = _ppo_class(kind).load(path)
        return agent
    if kind not in KINDS:
        raise ValueError(f"{path}: unknown agent kind {kind!r}; known: {', '.join([*KINDS, *PPO_KINDS])}")
    return KINDS[kind](path)


def _ppo_class(kind: str) -> Any:
    """A PPO kind's class. Optional dependency: these agents are the ``train`` extra's (sb3-contrib,
    torch; batch-ppo imports torch at once), so their modules load only when one is loaded."""
    if kind == "batch-ppo":
        from .batch_ppo import BatchPPOAgent  # optional dependency: torch (the train extra)

        return BatchPPOAgent
    if kind == "ppo-shoe":
        from .shoe_ppo import ShoePPOAgent  # optional dependency: sb3-contrib (the train extra)

        return ShoePPOAgent
    from .ppo import PPOAgent  # optional dependency: sb3-contrib (the train extra)

    return PPOAgent


def one_torch_thread() -> None:
    """Play a loaded network on one torch thread (if torch is loaded at all): its batches of a few hundred
    tables gain nothing from more, and torch's default of one thread per core fights the env for the cores
    (a paired shoe evaluation of 1e5 rounds took 11.2 s of CPU on two threads, 1.8 s on one, beside
    another run on a 2-core machine)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
