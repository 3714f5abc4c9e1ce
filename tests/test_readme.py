"""The README is true as written: its Python examples run, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_the_readme_has_python_examples() -> None:
    assert len(python_blocks()) >= 3


def test_readme_python_examples_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # an example that writes files writes them here
    namespace: dict = {"__name__": "readme"}
    for i, block in enumerate(python_blocks()):
        try:
            exec(compile(block, f"README.md python block {i + 1}", "exec"), namespace)
        except Exception as error:  # name the block that failed
            raise AssertionError(f"README python block {i + 1} failed: {error!r}\n{block}") from error
