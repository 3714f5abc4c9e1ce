"""The README is true as written: its examples run, in order, from a fresh folder (``doc_blocks``
says how: commands run through the console scripts' ``main``, sizes of minutes shrunk)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from doc_blocks import ROOT, blocks, run_blocks

README = ROOT / "README.md"


def test_the_readme_has_python_examples() -> None:
    assert sum(language == "python" for language, _ in blocks(README)) >= 1


@pytest.mark.slow
def test_readme_examples_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a fresh folder: every file an example reads, an example made
    monkeypatch.setattr(sys, "argv", ["readme"])
    pytest.importorskip("matplotlib")  # the plots the examples ask for
    assert run_blocks(README, only_analyses=False) >= 3
