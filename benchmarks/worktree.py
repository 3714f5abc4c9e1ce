"""An earlier commit's code in a temporary git worktree, for benchmarks that time two trees alternately.

Shared by before_table.py and solver_speed.py (run as scripts, so this folder is on ``sys.path``).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
        try:
            yield tree
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
