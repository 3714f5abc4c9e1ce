"""What the chunk learners share (the count-table and composition learners): the game they learn, seeded
chunks played with a frozen policy and merged in chunk order, and their files.

Such a learner plays inside the compiled engine. A chunk of rounds is fixed by (seed, index) alone
(:func:`chunk_words`) and plays with the policy of the statistics merged before it, frozen; it returns
its own sums, which are then added in chunk order. So a chunk can be played anywhere (another process,
a Ray task) from the same inputs, the same seed gives the same run and a resumed run equals an
uninterrupted one. :class:`ChunkLearnerAgent` holds that once; a learner says only what is its own:
its statistics, the policy arrays it reads from them, its kernel call and scratch, its export and the
settings its ``agent.json`` keeps.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from blackjack_env import engine as E
from blackjack_env.rules import Rules
from blackjack_env.solver import solve
from blackjack_env.strategy import StrategyTable
from blackjack_env.table import POLICY_TABLE, Chunk, Policies, Table, new_table, table_policies

from .base import AGENT_FILE, read_manifest
from .shoe_game import check_table

#: A chunk's totals, as every chunk kernel writes them: its rounds, the learning seats' summed result
#: and their decisions, then the learner's own tallies (``ChunkLearnerAgent._TALLIES``).
T_ROUNDS, T_SUM, T_DECISIONS = 0, 1, 2

if sys.version_info >= (3, 11):
    from typing import Self
else:  # pragma: no cover - Python 3.10 (gymnasium depends on typing_extensions)
    from typing_extensions import Self


def chunk_words(seed: int, index: int) -> np.ndarray:
    """The seed words of a run's chunk ``index`` (its shoe and exploration streams): a chunk is
    fixed by (seed, index) alone, so chunks can be played in any order, anywhere."""
    return E.seed_words(np.random.SeedSequence([seed, index]), 3)


def write_json(path: Path, data: Any) -> None:
    """``data`` as indented JSON, replacing ``path`` at once (a checkpoint is never half written)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)


class ChunkLearnerAgent:
    """A shoe-game learner of the compiled engine, learning in seeded chunks (module docstring); it
    follows :class:`~blackjack_env.agents.base.ChunkAgent`.

    Args:
        rules: the game (a shoe with a cut card).
        bets: the allowed bets, increasing (0 sits a round out: needs seats >= 2 and one seat).
        seats, seat: the table, and the learner's seat (-1: every seat, one shared policy).
        seed: fixes every card (and exploration draw) of the run.
        chunk_rounds: rounds per seeded chunk (its policy is frozen; checkpoints fall between chunks).
        epsilon: the learner's exploration where it explores (checked in (0, 1)), else None.
    """

    kind: str
    #: The statistics: arrays summed over chunks, by attribute name (saved under the same names).
    _STATS: tuple[str, ...]
    #: Statistics added after runs were saved without them: such a run loads with them at zero.
    _LATER_STATS: tuple[str, ...] = ()
    #: Counters summed from a chunk's totals, from ``T_DECISIONS`` on (after rounds and the result).
    _TALLIES: tuple[str, ...] = ("decisions",)
    #: The file the statistics and counters are saved to, and whether it is compressed.
    stats_file: str
    compress_stats = False
    #: Why ``to_table`` refuses, in one line naming what plays the agent instead.
    not_a_table: str
    #: The chunk kernel, ``(table, policies, chunk, learner, out, work)``: a chunk played with the frozen
    #: policy, its sums written to the zeroed ``out`` (the statistics in ``_STATS`` order, then the totals).
    _kernel: Callable[..., None]

    rounds: int
    chunks: int
    decisions: int

    def __init__(
        self,
        rules: Rules | str | Mapping[str, Any],
        bets: Sequence[float],
        seats: int,
        seat: int,
        seed: int,
        chunk_rounds: int,
        epsilon: float | None = None,
    ) -> None:
        self.rules = Rules.coerce(rules)
        self.bets = tuple(float(b) for b in bets)
        check_table(self.rules, self.bets, seats, seat, epsilon, chunk_rounds)
        self.seats, self.seat = int(seats), int(seat)
        self.seed = int(seed)
        self.chunk_rounds = int(chunk_rounds)
        for name in self._counters():
            setattr(self, name, 0)
        self._basic: StrategyTable | None = None

    def _counters(self) -> tuple[str, ...]:
        return ("rounds", "chunks", *self._TALLIES)

    # ----------------------------------------------------------------- what a learner says
    def policy(self) -> tuple[np.ndarray, ...]:
        """The arrays of the policy the statistics so far give, which a chunk plays frozen."""
        raise NotImplementedError

    def _scratch(self, table: Table, policies: Policies) -> tuple[Any, ...]:
        """The kernel's scratch for a chunk on ``table`` with the other seats' ``policies``."""
        raise NotImplementedError

    def _learner(self, policy: tuple[np.ndarray, ...]) -> tuple[Any, ...]:
        """The kernel's ``learner`` argument: the frozen ``policy`` with the learner's own constants."""
        raise NotImplementedError

    def _age(self) -> None:
        """Change the statistics before the next chunk is merged (nothing: every chunk weighs the same)."""

    def _export(self, path: Path) -> None:
        """Write the learned policy's file into ``path``."""
        raise NotImplementedError

    def _settings(self) -> dict[str, Any]:
        """agent.json after its kind and rules: what ``_from_manifest`` makes the agent from again."""
        raise NotImplementedError

    @classmethod
    def _from_manifest(cls, path: str | Path, manifest: Mapping[str, Any]) -> Self:
        """A new agent of the settings ``manifest`` (agent.json) holds, its statistics still empty."""
        raise NotImplementedError

    # ----------------------------------------------------------------- learning
    def chunk_inputs(self, index: int) -> tuple[np.ndarray, ...]:
        """What chunk ``index`` plays with: its seed words and the frozen policy."""
        return (chunk_words(self.seed, index), *self.policy())

    def play_chunk(self, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        """One chunk's statistics (``_STATS``' arrays, then the totals) from its inputs."""
        words, *policy = inputs
        out = (
            *(np.zeros_like(getattr(self, name)) for name in self._STATS),
            np.zeros(T_DECISIONS + len(self._TALLIES)),
        )
        policies = table_policies(POLICY_TABLE, self.basic_table())
        table = new_table(self.rules.to_array(), self.seats)
        work = self._scratch(table, policies)
        chunk = Chunk(words, self.chunk_rounds, self.seats, self.seat, E.table_kind(self.seats))
        self._kernel(table, policies, chunk, self._learner(tuple(policy)), out, work)
        return out

    def merge(self, chunk: tuple[np.ndarray, ...]) -> tuple[int, float]:
        """Add a chunk's statistics (in chunk order); returns its (rounds, mean learner result)."""
        *sums, totals = chunk
        self._age()
        for name, value in zip(self._STATS, sums, strict=True):
            kept = getattr(self, name)
            kept += value
        self.rounds += int(totals[T_ROUNDS])
        for i, name in enumerate(self._TALLIES, T_DECISIONS):
            setattr(self, name, getattr(self, name) + int(totals[i]))
        self.chunks += 1
        seats = self.seats if self.seat < 0 else 1
        return int(totals[T_ROUNDS]), float(totals[T_SUM] / max(totals[T_ROUNDS] * seats, 1))

    def learn_chunk(self) -> tuple[int, float]:
        """Play and merge the next chunk."""
        return self.merge(self.play_chunk(self.chunk_inputs(self.chunks)))

    def basic_table(self) -> StrategyTable:
        """The rules' basic strategy, solved once: the other seats' play (never the learner's own
        starting point)."""
        if self._basic is None:
            self._basic = solve(self.rules).table
        return self._basic

    def to_table(self) -> StrategyTable:
        """Not a table: refused in one line naming what plays this agent (``load_agent`` callers
        that expect a table agent meet this instead of an AttributeError)."""
        raise ValueError(self.not_a_table)

    # ----------------------------------------------------------------- files
    def save(self, path: str | Path) -> None:
        """The statistics (``stats_file``), the export and agent.json, each written atomically."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        tmp = path / (self.stats_file + ".tmp.npz")
        savez = np.savez_compressed if self.compress_stats else np.savez
        savez(
            tmp,
            **{name: getattr(self, name) for name in self._STATS},
            counters=np.array([getattr(self, name) for name in self._counters()], np.int64),
        )
        tmp.replace(path / self.stats_file)
        self._export(path)
        write_json(path / AGENT_FILE, {"kind": self.kind, "rules": self.rules.to_dict(), **self._settings()})

    @classmethod
    def load(cls, path: str | Path) -> Self:
        """The agent saved in ``path``, statistics and counters included (it continues exactly)."""
        agent = cls._from_manifest(path, read_manifest(path))
        with np.load(Path(path) / cls.stats_file) as data:
            for name in cls._STATS:
                if name in data.files or name not in cls._LATER_STATS:
                    getattr(agent, name)[:] = data[name]
            for name, value in zip(agent._counters(), data["counters"], strict=True):
                setattr(agent, name, int(value))
        return agent

    @staticmethod
    def _game_of(manifest: Mapping[str, Any]) -> dict[str, Any]:
        """The constructor's arguments every chunk learner's agent.json holds."""
        keys = ("bets", "seats", "seat", "seed", "chunk_rounds")
        return {"rules": Rules.from_dict(manifest["rules"]), **{key: manifest[key] for key in keys}}


__all__ = ["T_DECISIONS", "T_ROUNDS", "T_SUM", "ChunkLearnerAgent", "chunk_words", "write_json"]
