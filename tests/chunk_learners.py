"""Checks the chunk learners' tests share (the count-table and composition learners): chunks merge
exactly, so a resumed run equals an uninterrupted one and the same seed gives the same run; and the
command refuses bad input in one line."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from blackjack_env.agents.chunk_agent import ChunkLearnerAgent
from blackjack_env.train.cli import main as train_main


def assert_resume_equals_uninterrupted(fresh: Callable[[int], ChunkLearnerAgent], tmp_path: Path) -> None:
    """Four chunks in one go equal two, a save and load, and two more (every statistic and counter);
    one chunk of ``fresh(7)`` is another's, and ``fresh(8)``'s differs."""
    whole = fresh(7)
    for _ in range(4):
        whole.learn_chunk()
    half = fresh(7)
    for _ in range(2):
        half.learn_chunk()
    half.save(tmp_path)
    resumed = type(half).load(tmp_path)
    for _ in range(2):
        resumed.learn_chunk()
    for name in whole._STATS:
        assert np.array_equal(getattr(whole, name), getattr(resumed, name)), name
    counters = whole._counters()
    assert [getattr(whole, n) for n in counters] == [getattr(resumed, n) for n in counters]
    first, again, other = fresh(7), fresh(7), fresh(8)
    for agent in (first, again, other):
        agent.learn_chunk()
    name = whole._STATS[0]
    assert np.array_equal(getattr(first, name), getattr(again, name))
    assert not np.array_equal(getattr(first, name), getattr(other, name))


def rows(run: Path) -> list[dict[str, str]]:
    """metrics.csv's rows but their wall time."""
    with (run / "metrics.csv").open() as f:
        return [{k: v for k, v in row.items() if k != "wall_s"} for row in csv.DictReader(f)]


def assert_cli_run_resumes_exactly(common: list[str], half: int, tmp_path: Path, stats: str, export: str) -> Path:
    """A run of ``2 * half`` rounds in two halves (--resume) equals one uninterrupted run: statistics
    (``stats``), export (``export``) and curve (evaluated every ``half``). Returns the whole run."""
    whole, halves = tmp_path / "whole", tmp_path / "halves"
    assert train_main([*common, "--steps", str(2 * half), "--out", str(whole)]) == 0
    assert train_main([*common, "--steps", str(half), "--out", str(halves)]) == 0
    assert train_main(["--out", str(halves), "--resume", "--steps", str(2 * half), "--no-progress"]) == 0
    with np.load(whole / stats) as a, np.load(halves / stats) as b:
        for key in a.files:
            assert np.array_equal(a[key], b[key]), key
    assert (whole / export).read_text() == (halves / export).read_text()
    assert rows(whole) == rows(halves) and [int(r["step"]) for r in rows(whole)] == [0, half, 2 * half]
    return whole


def assert_refused_in_one_line(argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """blackjack-train ``argv`` exits 2 with one line saying ``says``, and writes nothing."""
    out = tmp_path / "run"
    assert train_main([*argv, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err
    assert not out.exists()
