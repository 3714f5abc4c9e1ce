"""Nothing cached on disk outlives the code that made it (blackjack_env/_source.py).

The solver's results are keyed by a hash of the code that computes them, and numba's compiled code
lives in a folder named by a hash of the compiled sources. Each test here is a demonstration that a
stale cache would have fooled: a solution written by other code, and an engine function changed under
a kernel of another file that had inlined it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import blackjack_env
from blackjack_env import _source
from blackjack_env.rules import Rules
from blackjack_env.solver import solution as S
from blackjack_env.solver import solve

ROOT = Path(__file__).resolve().parents[1]
#: The repository's folders installed as subpackages (pyproject.toml's package-dir).
MAPPED = {"agents": "agents", "train": "train", "evaluate": "evaluate"}


def test_a_solution_cached_by_other_code_is_not_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache file holding a wrong answer is read back under its own code's key, and ignored (the
    analysis runs again) under any other: the key, not a hand-bumped version, decides."""
    monkeypatch.setenv("BLACKJACK_ENV_CACHE", str(tmp_path))
    rules = Rules(decks=0, hit_soft_17=True)
    true_ev = solve(rules, cache=False).ev
    monkeypatch.setattr(S, "code_key", lambda *modules: "other code")
    planted = solve(rules)  # written under the other code's key
    path = S.cache_dir() / f"{S.rules_key(rules)}.npz"
    S.Solution.save(S.dataclasses.replace(planted, ev=123.0), path)
    assert solve(rules).ev == 123.0  # the other code reads its own (planted) result: the cache is used
    monkeypatch.undo()
    monkeypatch.setenv("BLACKJACK_ENV_CACHE", str(tmp_path))
    assert solve(rules).ev == true_ev  # this code does not: it analyses again
    assert len(list(tmp_path.glob("*.npz"))) == 2  # and keeps its own result beside the other's


def test_the_code_key_covers_every_module_the_solver_imports() -> None:
    """The solution's key hashes the solver's modules and the engine, rules and strategy they import
    (transitively), and only this package's modules."""
    files = {name for name, _ in _source._closure(("blackjack_env.solver.solution",), True)}
    assert {
        "blackjack_env.solver.solution",
        "blackjack_env.solver._analysis",
        "blackjack_env.solver._kernels",
        "blackjack_env.solver._space",
        "blackjack_env.engine",
        "blackjack_env.rules",
        "blackjack_env.strategy",
    } <= files
    assert "blackjack_env.env" not in files  # the Gymnasium adapter computes nothing the solver caches
    assert _source.code_key("solver.solution") == _source.code_key("blackjack_env.solver.solution")
    assert re.fullmatch(r"[0-9a-f]{32}", _source.code_key("solver.removal"))
    with pytest.raises(ValueError, match=r"no source file for module 'blackjack_env\.nonexistent'"):
        _source.code_key("nonexistent")


def _njit_modules() -> set[str]:
    """Every module of the repository's package folders whose source compiles with numba."""
    found = set()
    roots = [
        ("blackjack_env", "blackjack_env"),
        *((folder, f"blackjack_env.{name}") for name, folder in MAPPED.items()),
    ]
    for folder, package in roots:
        for path in (ROOT / folder).rglob("*.py"):
            if re.search(r"^\s*@(numba\.)?n?jit\b", path.read_text(encoding="utf-8"), re.MULTILINE):
                parts = path.relative_to(ROOT / folder).with_suffix("").parts
                found.add(".".join([package, *parts]))
    return found


def test_every_compiled_module_is_in_numba_s_cache_key() -> None:
    """A module with numba code missing from the key would be cached by its file again (stale inlining):
    the package finds them all, in its own folder and in those installed from elsewhere."""
    assert set(_source.compiled_modules()) == _njit_modules()
    assert {"blackjack_env.engine", "blackjack_env.agents.tabular"} <= _njit_modules()
    compiled = set(_source.compiled_files())
    assert {"blackjack_env.rules", "blackjack_env.engine"} <= compiled  # constants and inlined callees


def test_the_subpackages_installed_from_elsewhere_are_pyproject_s() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    mapped = re.findall(r'^"blackjack_env\.(\w+)" = "(\w+)"$', text, re.MULTILINE)
    assert sorted(mapped) == sorted((name, name) for name in _source.ELSEWHERE) == sorted(MAPPED.items())


def test_numba_s_cache_is_the_source_keyed_folder_unless_the_user_chose_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from blackjack_env import engine

    if os.environ.get("NUMBA_CACHE_DIR"):
        pytest.skip("the user's NUMBA_CACHE_DIR holds every kernel's cache")
    folder = str(_source.cache_root() / "numba" / _source.compiled_key())
    assert engine.hand_total._cache._cache_path.startswith(folder + os.sep)
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/users/own/choice")
    assert _source.use_numba_cache() is None  # and numba's own locator for that folder answers first
    assert os.environ["NUMBA_CACHE_DIR"] == "/users/own/choice"


USERS_OWN = """
import json, os, sys
import blackjack_env
from numba import njit
sys.path.insert(0, sys.argv[1])
import users_kernel
from blackjack_env import engine
print(json.dumps({"env": os.environ.get("NUMBA_CACHE_DIR"), "users": users_kernel.twice._cache._cache_path,
                  "ours": engine.hand_total._cache._cache_path}))
"""


def test_the_users_own_kernels_and_environment_are_left_alone(tmp_path: Path) -> None:
    """Importing the package sets no NUMBA_CACHE_DIR and leaves a user's own kernel in numba's default
    place (its __pycache__ beside its file); only the package's kernels go to the package's folder."""
    (tmp_path / "users_kernel.py").write_text(
        "from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "home")
    done = subprocess.run([sys.executable, "-c", USERS_OWN, str(tmp_path)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["env"] is None
    assert seen["users"] == str(tmp_path / "__pycache__")
    assert seen["ours"].startswith(str(tmp_path / "home" / "blackjack-env" / "numba"))


# A kernel in strategy.py that inlines an engine function: numba's own cache, keyed by strategy.py,
# would keep serving the old engine code after engine.py changed.
PROBE = """

@njit(cache=True)
def _probe_soft_17_stands():
    st = np.zeros(E.S_RULES + E.R_H17 + 1, np.int32)  # S17 (the H17 flag clear)
    return E.dealer_stands_on(st, 7, 1)  # soft 17: A + 6
"""
RUN = """
import json, numba
from blackjack_env import _source, strategy
result = strategy._probe_soft_17_stands()
probe = strategy._probe_soft_17_stands
print(json.dumps({"stands": bool(result), "cache_hits": sum(probe.stats.cache_hits.values()),
                  "numba_dir": probe._cache._cache_path, "solver_key": _source.code_key("solver.solution")}))
"""


def _run(copy: Path, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")}
    env.update(PYTHONPATH=str(copy), XDG_CACHE_HOME=str(home))
    out = subprocess.run([sys.executable, "-c", RUN], cwd=copy, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_a_changed_engine_function_is_recompiled(tmp_path: Path) -> None:
    """A copy of the package with a kernel in strategy.py that calls engine.dealer_stands_on: the
    second run loads the kernel from numba's cache; after dealer_stands_on is broken in engine.py the
    kernel is compiled again and plays the broken rule (and the solver's code key moves too)."""
    copy = tmp_path / "src"
    package = Path(blackjack_env.__file__).parent
    shutil.copytree(package, copy / "blackjack_env", ignore=shutil.ignore_patterns("__pycache__"))
    strategy = copy / "blackjack_env" / "strategy.py"
    strategy.write_text(strategy.read_text() + PROBE)
    home = tmp_path / "cache"

    first = _run(copy, home)
    assert first["stands"] and first["numba_dir"].startswith(str(home / "blackjack-env" / "numba"))
    again = _run(copy, home)
    assert again == {**first, "cache_hits": 1}  # loaded, not compiled

    engine = copy / "blackjack_env" / "engine.py"
    text = engine.read_text()
    rule = "    if total < 17:\n        return False"  # in dealer_stands_on: a soft 17 now hits under S17
    assert text.count(rule) == 1
    engine.write_text(text.replace(rule, rule.replace("17", "18")))
    changed = _run(copy, home)
    assert changed["stands"] is False, "the kernel ran the engine code it had cached before the change"
    assert changed["cache_hits"] == 0
    assert changed["numba_dir"] != first["numba_dir"]
    assert changed["solver_key"] != first["solver_key"]


def test_the_solution_cache_file_says_which_code_wrote_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLACKJACK_ENV_CACHE", str(tmp_path))
    solve(Rules(decks=0))
    (path,) = tmp_path.glob("*.npz")
    with np.load(path) as data:
        assert json.loads(str(data["meta"]))["code"] == _source.code_key("solver.solution")
