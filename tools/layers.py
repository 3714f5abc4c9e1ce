"""Run import-linter and mypy over the package as it is installed.

The repository's ``agents/``, ``train/`` and ``evaluate/`` install as ``blackjack_env.agents``, ...
(``[tool.setuptools.package-dir]`` in pyproject.toml); an editable install maps them with an import
hook, which neither import-linter (grimp reads the package's folder) nor mypy follows. So the package
is mirrored as links under ``build/layers/`` (``blackjack_env/`` with those folders linked in, as a
wheel lays them out, beside a link to pyproject.toml) and both tools run there, with its settings::

    python tools/layers.py lint-imports   # the import contracts ([tool.importlinter])
    python tools/layers.py mypy           # the type check ([tool.mypy])

Extra arguments go to the tool. The exit status is the tool's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10: mypy's own dependency
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "blackjack_env"
TREE = ROOT / "build" / "layers"


def package_tree(tree: Path = TREE) -> Path:
    """``tree`` holding ``blackjack_env/`` as installed (links to the package's own files and to
    each folder pyproject.toml maps into it) and a link to pyproject.toml, where both tools look for
    their settings. Rebuilt on every call (a module may have moved)."""
    config = ROOT / "pyproject.toml"
    mapped = tomllib.loads(config.read_text())["tool"]["setuptools"]["package-dir"]
    package = tree / PACKAGE
    if package.exists():
        shutil.rmtree(package)
    package.mkdir(parents=True)
    (tree / config.name).unlink(missing_ok=True)
    (tree / config.name).symlink_to(config)
    for entry in (ROOT / PACKAGE).iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in mapped.items():
        parent, _, child = name.rpartition(".")
        if parent != PACKAGE:
            raise ValueError(f"{name}: only folders mapped straight into {PACKAGE} are mirrored")
        (package / child).symlink_to(ROOT / folder)
    return tree


def command(tool: str, args: list[str]) -> list[str]:
    """The tool's command line (this Python's; each reads pyproject.toml in the tree)."""
    if tool == "lint-imports":
        return [str(Path(sys.executable).with_name("lint-imports")), *args]
    if tool == "mypy":
        return [sys.executable, "-m", "mypy", "-p", PACKAGE, *args]
    raise ValueError(f"tool must be lint-imports or mypy, got {tool!r}")


def run(
    tool: str, args: list[str] | None = None, tree: Path = TREE, capture: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run ``tool`` in the mirrored ``tree`` (its ``blackjack_env`` first on the path), its output
    captured when ``capture`` (the tests mirror the package into a folder of their own)."""
    package_tree(tree)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(command(tool, args or []), cwd=tree, env=env, check=False, text=True, capture_output=capture)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("lint-imports", "mypy"):
        print(__doc__, file=sys.stderr)
        return 2
    return run(argv[0], argv[1:]).returncode


if __name__ == "__main__":
    sys.exit(main())
