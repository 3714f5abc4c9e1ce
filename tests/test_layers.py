"""The import contracts of pyproject.toml hold (import-linter, as CI runs it), and every module of the
package sits in a layer of them, so a new module cannot slip out from under the contract."""

from __future__ import annotations

import importlib.util
import io
import os
import re
import sys
import tokenize
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")


def _layers_tool() -> ModuleType:
    """tools/layers.py (a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("layers_tool", ROOT / "tools" / "layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_import_contracts_hold(tmp_path: Path) -> None:
    if importlib.util.find_spec("importlinter") is None:
        pytest.skip("import-linter is not installed (the dev extra: pip install -e '.[dev]')")
    done = _layers_tool().run("lint-imports", ["--no-logo"], tree=tmp_path, capture=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_module_is_in_a_layer(tmp_path: Path) -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    named = {name.strip() for layer in layers for name in re.split(r"[|:]", layer)}
    tree = _layers_tool().package_tree(tmp_path)
    modules = set()
    for folder, _, files in os.walk(tree / "blackjack_env", followlinks=True):
        package = Path(folder).relative_to(tree).parts
        modules |= {".".join(package if f == "__init__.py" else (*package, f[:-3])) for f in files if f.endswith(".py")}

    def covered(module: str) -> bool:
        parts = module.split(".")
        in_a_layer = any(".".join(parts[:n]) in named for n in range(1, len(parts) + 1))
        return in_a_layer or any(name.startswith(module + ".") for name in named)  # a package of listed modules

    assert sorted(m for m in modules if not covered(m)) == []


#: The modules that know a table state's slots: the engine, the table driver and the named accessors
#: (``slots``); every other kernel and adapter reads and writes the state through those names.
SLOT_HOMES = {"blackjack_env/engine.py", "blackjack_env/table.py", "blackjack_env/slots.py"}
#: Indexing a state ``st`` at all, or naming a slot or a seat block's field of the engine.
SLOT_USE = re.compile(r"\bst\[|\bE\.(?:S_[A-Z]|SEAT_[A-Z]|seat_slot\b)|(?<![\w.])S_[A-Z][A-Z0-9_]*\b")


def _code_only(source: str) -> str:
    """The source with its strings and comments blanked (a docstring may name a slot)."""
    lines = source.splitlines(keepends=True)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.STRING, tokenize.COMMENT):
            (r0, c0), (r1, c1) = token.start, token.end
            for r in range(r0, r1 + 1):
                line = lines[r - 1]
                start = c0 if r == r0 else 0
                end = c1 if r == r1 else len(line.rstrip("\n"))
                lines[r - 1] = line[:start] + " " * (end - start) + line[end:]
    return "".join(lines)


def test_only_the_engines_home_indexes_the_table_state_by_slot() -> None:
    found = []
    for folder in ("blackjack_env", "agents", "train", "evaluate"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name in SLOT_HOMES:
                continue
            for number, line in enumerate(_code_only(path.read_text()).splitlines(), 1):
                if SLOT_USE.search(line):
                    found.append(f"{name}:{number}: {line.strip()}")
    assert found == [], "slot indexing outside engine.py, table.py and slots.py:\n" + "\n".join(found)
