"""An earlier commit's code in a temporary git worktree, for benchmarks that time two trees alternately.

Shared by before_table.py, solver_speed.py and ceiling_speed.py (run as scripts, so this folder is on
``sys.path``), with the one way they run a tree's code in a fresh process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The repository's top-level folders that install as ``blackjack_env.<name>`` (pyproject's package-dir).
SUBPACKAGES = ("agents", "evaluate", "train")


@contextmanager
def checked_out(revision: str, prog: str) -> Iterator[Path]:
    """The tree of ``revision`` (it needs the repository's history), removed again on the way out.

    A revision git cannot check out ends the benchmark with one line naming it (exit status 1).
    """
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "before"
        made = subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), revision],
            capture_output=True,
            text=True,
        )
        if made.returncode != 0:
            sys.exit(f"{prog}: cannot check out {revision!r} (needs the git history): {made.stderr.strip()}")
        for sub in SUBPACKAGES:  # laid out as installed, so no other checkout's editable install serves them
            if (tree / sub).is_dir() and not (tree / "blackjack_env" / sub).exists():
                (tree / "blackjack_env" / sub).symlink_to(tree / sub, target_is_directory=True)
        try:
            yield tree
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


def run_fresh(tree: Path, argv: list[str], env: dict[str, str] | None = None) -> str:
    """``python argv`` in one fresh process on ``tree``'s code (its blackjack_env first on the path, run
    outside this checkout, ``env`` added to the environment), so each timing gets its own imports and
    numba state; the last line it printed."""
    done = subprocess.run(
        [sys.executable, *argv],
        cwd=tempfile.gettempdir(),
        env={**os.environ, "PYTHONPATH": str(tree), **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()[-1]
