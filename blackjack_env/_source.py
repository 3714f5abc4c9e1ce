"""Hashes of the package's own source code, so nothing cached on disk outlives the code that made it.

Two caches use them:

* the solver's results (solutions, effects of removal, index grids, the ceiling): each is keyed by
  :func:`code_key` of the module that computes it, a hash of that module's source and of every module
  of this package it imports, directly or not, so a change anywhere in the code behind a result means
  the result is computed again rather than read back;
* numba's compiled code: numba keys a cached function by its own file only, so a kernel that inlined an
  engine function kept running the old engine after ``engine.py`` changed. :func:`use_numba_cache`
  (called by ``blackjack_env/_jit.py``, whose ``njit`` every compiled module uses) gives numba a cache
  locator for this package's own files that puts their cache in a folder named by :func:`compiled_key`,
  so changed code compiles afresh and unchanged code still loads from the cache. The process
  environment and numba's settings are left alone: a user's own kernels cache where they always did.

Neither cache is left to grow: every code change makes a new numba folder (a few MB) and new solver
files, so :func:`prune` removes the ones unused for :data:`MAX_IDLE_DAYS` when a new one is made (and
numba folders beyond the :data:`NUMBA_KEEP` most recently used), never the one in use.

Only the standard library is imported at module level; numba only by :func:`use_numba_cache`.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import os
import re
import shutil
import stat
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any

PACKAGE = "blackjack_env"
#: Subpackages installed from folders outside the package's own (pyproject.toml's package-dir).
ELSEWHERE = ("agents", "train", "evaluate")
_NJIT = re.compile(r"^[ \t]*@(?:numba\.)?n?jit\b", re.MULTILINE)
#: A cache entry unused this long is removed when a new entry is made beside it.
MAX_IDLE_DAYS = 30.0
#: numba cache folders kept besides the one in use (each is 2-20 MB; a day of edits makes dozens).
NUMBA_KEEP = 8
#: An entry used this recently is kept whatever the count: a process started from it may still run.
MIN_IDLE_S = 3600.0
#: The names of numba's cache folders (:func:`compiled_key`).
NUMBA_FOLDER = re.compile(r"[0-9a-f]{32}")


def _spec(name: str) -> importlib.machinery.ModuleSpec | None:
    """Where module ``name`` lives, found without running any package's ``__init__`` that has not
    run yet (numba must be configured before the compiled modules are imported)."""
    parent, _, _ = name.rpartition(".")
    try:
        if not parent or parent in sys.modules:
            return importlib.util.find_spec(name)
        outer = _spec(parent)
        if outer is None or not outer.submodule_search_locations:
            return None
        return importlib.machinery.PathFinder.find_spec(name, list(outer.submodule_search_locations))
    except (ImportError, ValueError):
        return None


@cache
def _source(name: str) -> Path | None:
    spec = _spec(name)
    origin = spec.origin if spec is not None else None
    return Path(origin) if origin and origin.endswith(".py") else None


_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w., \t]+)", re.MULTILINE)


def _names(text: str) -> list[str]:
    """The imported names of an import list (``a as b, c``, parenthesised or not, comments dropped)."""
    text = re.sub(r"#[^\n]*", "", text).strip("()")
    return [part.split()[0] for part in text.replace("\\", " ").split(",") if part.split()]


def _imports(name: str, path: Path) -> set[str]:
    """The modules of this package that module ``name`` imports anywhere in its file (``from pkg
    import x`` counts as pkg.x where x is a submodule, else as pkg, whose code defines x).

    Read with a pattern, not parsed (parsing the compiled modules costs half a second at every
    import): a line in a docstring that looks like an import only adds a file to the hash."""
    text = path.read_text(encoding="utf-8")
    is_package = path.name == "__init__.py"
    found = {m for line in _IMPORT.findall(text) for m in _names(line)}
    for module, names in _FROM.findall(text):
        dots = len(module) - len(module.lstrip("."))
        base = module[dots:]
        if dots:
            parts = name.split(".")
            base = ".".join([*parts[: len(parts) - dots + is_package], *([base] if base else [])])
        if not _ours(base):
            continue
        spec = _spec(base)
        if spec is None or not spec.submodule_search_locations:  # a module: its names are not modules
            found.add(base)
            continue
        for alias in _names(names):
            sub = f"{base}.{alias}"
            found.add(sub if _source(sub) is not None else base)
    return {m for m in found if _ours(m)}


def _ours(module: str) -> bool:
    return module == PACKAGE or module.startswith(PACKAGE + ".")


@cache
def _closure(names: tuple[str, ...], transitive: bool) -> tuple[tuple[str, bytes], ...]:
    """(module name, source bytes) of the named modules and the package modules they import."""
    seen: dict[str, bytes] = {}
    todo = list(names)
    first = set(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _source(name)
        if path is None:
            if name in first:
                raise ValueError(f"no source file for module {name!r}")
            continue
        seen[name] = path.read_bytes()
        if transitive or name in first:
            todo.extend(_imports(name, path) - seen.keys())
    return tuple(sorted(seen.items()))


def _digest(files: tuple[tuple[str, bytes], ...]) -> str:
    h = hashlib.sha256()
    for name, data in files:
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:32]


def _qualified(module: str) -> str:
    return module if _ours(module) else f"{PACKAGE}.{module}"


def code_key(*modules: str) -> str:
    """A hash of the source of ``modules`` (e.g. ``"blackjack_env.solver.ceiling"``, or relative to the
    package: ``"solver.ceiling"``) and of every module of this package they import, directly or through
    others: put it in the key of anything those modules cache on disk, so changed code never reads a
    result the old code computed. Computed once per process."""
    if not modules:
        raise ValueError("code_key needs at least one module name")
    return _digest(_closure(tuple(sorted(_qualified(m) for m in modules)), True))


@cache
def compiled_modules() -> tuple[str, ...]:
    """Every module of the package whose source holds numba-compiled functions (found by their
    decorators, so a new compiled module needs no list kept by hand)."""
    found = set()
    for package in (PACKAGE, *(f"{PACKAGE}.{name}" for name in ELSEWHERE)):
        spec = _spec(package)
        for folder in (spec.submodule_search_locations or []) if spec is not None else []:
            for path in Path(folder).rglob("*.py"):
                if _NJIT.search(path.read_text(encoding="utf-8")):
                    parts = path.relative_to(folder).with_suffix("").parts
                    found.add(".".join([package, *parts[: -1 if parts[-1] == "__init__" else None]]))
    return tuple(sorted(found))


def compiled_files() -> list[str]:
    """The modules behind numba's compiled code: :func:`compiled_modules` and what each imports from
    this package (constants and inlined functions come from there)."""
    return [name for name, _ in _closure(compiled_modules(), False)]


def compiled_key() -> str:
    """A hash of :func:`compiled_files`' sources: the name of numba's cache folder for this code."""
    return _digest(_closure(compiled_modules(), False))


def cache_root() -> Path:
    """The user's cache folder for this package: $XDG_CACHE_HOME/blackjack-env, else ~/.cache/blackjack-env."""
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "blackjack-env"


def touch(path: Path) -> None:
    """Mark a cache entry used now (its modification time), so :func:`prune` keeps it; a read-only
    cache is left as it is."""
    with contextlib.suppress(OSError):
        os.utime(path)


def last_used(path: Path) -> float:
    """When an entry was last used: written or :func:`touch`-ed, or read where the file system
    keeps access times (a folder's access time moves when it is listed, so a folder's is not);
    now for an entry gone meanwhile (nothing to prune)."""
    try:
        st = path.stat()
    except OSError:
        return time.time()
    return st.st_mtime if stat.S_ISDIR(st.st_mode) else max(st.st_mtime, st.st_atime)


def prune(
    folder: Path, current: str, names: re.Pattern[str], keep: int | None = None, now: float | None = None
) -> list[Path]:
    """Remove the entries of ``folder`` whose whole name matches ``names``, other than ``current``:
    those unused for :data:`MAX_IDLE_DAYS`, and (``keep`` given) those beyond the ``keep`` most
    recently used that are idle for :data:`MIN_IDLE_S`. Returns what was removed.

    Never raises: the cache is a convenience, so a read-only cache, an entry another process removes
    or replaces meanwhile, or anything else that fails leaves that entry where it is."""
    now = time.time() if now is None else now
    try:
        entries = [(last_used(e), e) for e in folder.iterdir() if e.name != current and names.fullmatch(e.name)]
    except OSError:
        return []
    entries.sort(reverse=True)  # most recently used first
    removed = []
    for rank, (used, entry) in enumerate(entries):
        idle = now - used
        if idle > MAX_IDLE_DAYS * 86400.0 or (keep is not None and rank >= keep and idle > MIN_IDLE_S):
            try:
                if entry.is_dir():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
            except OSError:
                continue
            removed.append(entry)
    return removed


def package_folders() -> tuple[Path, ...]:
    """The folders holding this package's source: its own and those installed from elsewhere."""
    folders = []
    for package in (PACKAGE, *(f"{PACKAGE}.{name}" for name in ELSEWHERE)):
        spec = _spec(package)
        folders += [Path(f).resolve() for f in (spec.submodule_search_locations or [])] if spec is not None else []
    return tuple(folders)


def use_numba_cache() -> str | None:
    """Cache this package's compiled kernels in ``cache_root()/numba/<compiled_key()>`` unless the user
    set NUMBA_CACHE_DIR (then numba's own per-file keying applies to every kernel, as numba documents);
    returns the folder chosen, or None where the user's setting stands.

    Done with a cache locator that numba asks first and that answers only for files of this package
    (numba's ``CacheImpl._locator_classes``, the hook numba's own locators use): nothing is written to
    the process environment or to numba's settings, so the user's own kernels, and every child process,
    keep numba's default cache places. A child process that imports this package installs the same
    locator and reaches the same folder (the key is a hash of the same source)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    path = cache_root() / "numba" / compiled_key()
    if path.is_dir():
        touch(path)
    else:  # new code: this is when old folders pile up
        prune(path.parent, path.name, NUMBA_FOLDER, keep=NUMBA_KEEP)
    _install_locator(str(path), package_folders())
    return str(path)


def _install_locator(folder: str, sources: tuple[Path, ...]) -> None:
    """Put the package's cache locator (for files under ``sources``, caching in ``folder``) first in
    numba's list of locators, replacing one installed before."""
    from numba.core import caching, config  # start-up time: `import blackjack_env` loads no numba

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # type: ignore[attr-defined]  # before numba 0.62
    roots = tuple(str(root) + os.sep for root in sources)

    class PackageCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """numba's locator for a cache folder of the user's, for this package's files, in ``folder``."""

        package_locator = True

        def __init__(self, py_func: object, py_file: str) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno  # type: ignore[attr-defined]
            self._cache_path = os.path.join(folder, self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self) -> str:
            return self._cache_path

        @classmethod
        def from_function(cls, py_func: object, py_file: str) -> Any:
            # numba's config sets its attributes when it reads the environment: mypy cannot see them
            user_folder = config.CACHE_DIR  # type: ignore[attr-defined]
            if user_folder or not os.path.realpath(py_file).startswith(roots):
                return None  # the user's NUMBA_CACHE_DIR, or not this package's file: numba's own locators
            return super().from_function(py_func, py_file)

    locators = impl._locator_classes
    locators[:] = [c for c in locators if not getattr(c, "package_locator", False)]
    locators.insert(0, PackageCacheLocator)
