"""The policy protocol every agent follows, and the files a saved agent is made of.

An agent maps an env observation and its legal-action mask to a legal action, one at a time or
in batches. Agents that are (or can be projected onto) a total-dependent table export a
:class:`~blackjack_env.strategy.StrategyTable`, which the compiled simulator then plays without
Python in the loop: that is how training evaluates them and how ``blackjack-evaluate`` loads them.

A saved agent is a directory: ``agent.json`` names its kind and rules, ``strategy.json`` holds the
table it exported when saved (so tools that know only tables can still run it), and the kind's
own files (``q.npz``, ``ppo.zip``) hold its learning state. :func:`~blackjack_env.agents.load_agent`
(``agents/loading.py``, above every agent class) loads one by its kind.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from blackjack_env.env_kit import STRATEGY_FILE
from blackjack_env.rules import Rules
from blackjack_env.strategy import StrategyTable

AGENT_FILE = "agent.json"
TABLE_FILE = STRATEGY_FILE  # the table others= of the envs plays from a saved agent's directory


class AgentFileWarning(UserWarning):
    """A saved agent's strategy.json is unreadable or differs from the table the agent plays."""


@runtime_checkable
class Agent(Protocol):
    """Observation + mask in, legal action out; saved to and loaded from a directory."""

    kind: str
    rules: Rules

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The action for one observation (int[k]) and its mask (bool[7])."""
        ...

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions (int64[N]) for N observations (int[N, k]) and masks (bool[N, 7])."""
        ...

    def to_table(self) -> StrategyTable | None:
        """The agent as a strategy table, or None if it cannot be tabulated (e.g. random play)."""
        ...

    def save(self, path: str | Path) -> None:
        """Write the agent into directory ``path`` (created if missing)."""
        ...


class ChunkAgent(Protocol):
    """A learner that plays inside the compiled engine, in seeded chunks of rounds, and plays the shoe by
    the count or the unseen cards (the count-table and composition learners). It has no ``act``: what
    plays it is its export (a counting strategy, a composition model), which the simulator runs."""

    kind: str
    rules: Rules
    bets: tuple[float, ...]
    seats: int
    seat: int  # -1: every seat, one shared policy
    seed: int
    chunk_rounds: int
    rounds: int
    chunks: int

    def chunk_inputs(self, index: int) -> tuple[np.ndarray, ...]:
        """Chunk ``index``'s seed words, then the arrays of the policy it plays (frozen)."""
        ...

    def play_chunk(self, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        """The statistics one chunk gathers (the learner itself unchanged)."""
        ...

    def merge(self, chunk: tuple[np.ndarray, ...]) -> tuple[int, float]:
        """Add a chunk's statistics, in chunk order: (its rounds, the behaviour policy's EV)."""
        ...

    def learn_chunk(self) -> tuple[int, float]:
        """Play and merge the next chunk."""
        ...

    def basic_table(self) -> StrategyTable:
        """Basic strategy of the learner's game (the other seats' play), solved once."""
        ...

    def to_table(self) -> StrategyTable:
        """Refused in one line: it plays by the count, not by one table."""
        ...

    def save(self, path: str | Path) -> None:
        """Write the learner, and its export, into directory ``path``."""
        ...


def check_batch(obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """obs as int64[N, k] and masks as bool[N, 7], or a ValueError naming the shapes."""
    obs = np.ascontiguousarray(obs, dtype=np.int64)
    masks = np.ascontiguousarray(masks, dtype=np.bool_)
    if obs.ndim != 2 or masks.ndim != 2 or obs.shape[0] != masks.shape[0] or masks.shape[1] != 7:
        raise ValueError(f"act_batch needs obs[N, k] and masks[N, 7], got {obs.shape} and {masks.shape}")
    return obs, masks


def write_manifest(path: str | Path, kind: str, rules: Rules, table: StrategyTable | None, **extra: Any) -> Path:
    """Create the agent directory with agent.json (and strategy.json when tabulable)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    manifest = {"kind": kind, "rules": rules.to_dict(), **extra}
    (path / AGENT_FILE).write_text(json.dumps(manifest, indent=2))
    if table is not None:
        table.save(path / TABLE_FILE)
    return path


def read_manifest(path: str | Path) -> dict[str, Any]:
    """agent.json of a saved agent directory (ValueError if there is none)."""
    file = Path(path) / AGENT_FILE
    if not file.is_file():
        raise ValueError(f"{path} is not a saved agent directory (no {AGENT_FILE})")
    return json.loads(file.read_text())


def check_table_file(path: str | Path, table: StrategyTable | None) -> None:
    """Warn when the directory's strategy.json is unreadable or is not ``table``."""
    file = Path(path) / TABLE_FILE
    if table is None or not file.exists():
        return
    try:
        saved = StrategyTable.load(file)
    except (OSError, ValueError, KeyError, TypeError) as error:
        message = f"{file} cannot be read ({error})"
    else:
        differing = int(np.any(saved.actions[..., :1] != table.actions[..., :1], axis=-1).sum())
        differing += int((saved.insurance != table.insurance).sum())
        if differing == 0 and np.array_equal(saved.actions, table.actions):
            return
        message = f"{file} differs from the agent's own table ({differing} cells play another first action)"
    warnings.warn(
        f"{message}; the agent plays its own table (from {AGENT_FILE} and its learning state), not that file. "
        f"Save the agent again to rewrite it, or evaluate the file itself by its path.",
        AgentFileWarning,
        stacklevel=3,
    )
