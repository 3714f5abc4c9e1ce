"""Every hand-written page of the docs site is true as written: its ```python and ```bash blocks run
in order, per page, from a fresh folder (``doc_blocks``: commands through the console scripts'
``main``, sizes of minutes shrunk, as each page says). The API pages' examples run one by one in
``test_docs.py``; the generated pages are checked against the code there too."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from doc_blocks import ROOT, blocks, commands, is_analysis, run_blocks

DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """The hand-written pages with code: the home page, the guides and the results."""
    found = [DOCS / "index.md", *sorted((DOCS / "guides").glob("*.md")), *sorted((DOCS / "results").glob("*.md"))]
    return [page for page in found if blocks(page)]


def has_analyses(page: Path) -> bool:
    return any(
        not isinstance(command, tuple) and is_analysis(command)
        for language, block in blocks(page)
        if language == "bash"
        for command in commands(block)
    )


def page_id(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


@pytest.mark.slow
@pytest.mark.parametrize("page", pages(), ids=page_id)
def test_page_runs_in_order(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a fresh folder: every file an example reads, an example on the page made
    monkeypatch.setattr(sys, "argv", [page.stem])
    pytest.importorskip("matplotlib")  # the pictures the examples draw
    assert run_blocks(page, only_analyses=False) >= 1


@pytest.mark.slow
@pytest.mark.parametrize("page", [page for page in pages() if has_analyses(page)], ids=page_id)
def test_page_analyses_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's exact analyses (seconds each), apart so that CI's workers share them."""
    monkeypatch.chdir(tmp_path)
    pytest.importorskip("matplotlib")  # --plot
    assert run_blocks(page, only_analyses=True) >= 1
