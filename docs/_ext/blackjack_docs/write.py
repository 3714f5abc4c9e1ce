"""Writing generated pages: a file is rewritten only when its text changed, so Sphinx rebuilds
only what changed."""

from __future__ import annotations

from pathlib import Path


def write_text(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` unless it already holds it; True if written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True
