"""Old cache entries are removed (blackjack_env/_source.py's prune): every code change makes a new numba
folder and new solver files, and nothing else would ever delete the old ones.

Each test runs on its own temporary cache folder; "used" times are set with os.utime.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from blackjack_env import _source
from blackjack_env.rules import Rules
from blackjack_env.solver import solution as S
from blackjack_env.solver import solve

DAY = 86400.0
HOUR = 3600.0


def _entry(folder: Path, name: str, idle_s: float, now: float, is_dir: bool = True) -> Path:
    """A cache entry last used ``idle_s`` seconds before ``now``."""
    path = folder / name
    if is_dir:
        path.mkdir(parents=True)
        (path / "kernel.nbi").write_bytes(b"index")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"data")
    os.utime(path, (now - idle_s, now - idle_s))
    return path


def _hex(i: int) -> str:
    return f"{i:032x}"


def test_prune_keeps_the_current_the_recent_and_the_newest_and_nothing_else_of_its_names(tmp_path: Path) -> None:
    now = time.time()
    current = _entry(tmp_path, _hex(0), 400 * DAY, now)  # the one in use is never removed, however old
    newest = [_entry(tmp_path, _hex(i), i * 2 * HOUR, now) for i in range(1, 4)]  # the 3 most recently used
    busy = _entry(tmp_path, _hex(4), 0.5 * HOUR, now)  # the most recently used
    beyond = [_entry(tmp_path, _hex(i), i * 2 * HOUR, now) for i in range(5, 8)]  # idle hours, beyond keep
    ancient = _entry(tmp_path, _hex(8), _source.MAX_IDLE_DAYS * DAY + HOUR, now)
    foreign = [_entry(tmp_path, "notes", 400 * DAY, now), _entry(tmp_path, "abc.npz", 400 * DAY, now, False)]

    removed = _source.prune(tmp_path, current.name, _source.NUMBA_FOLDER, keep=4, now=now)

    # by last use: busy (0.5 h) and newest (2, 4, 6 h) are the four kept; beyond (10-14 h) and ancient go
    assert sorted(removed) == sorted([*beyond, ancient])
    assert all(p.exists() for p in [current, *newest, busy, *foreign])
    assert not any(p.exists() for p in [*beyond, ancient])


def test_prune_without_a_count_removes_only_what_is_unused_for_a_month(tmp_path: Path) -> None:
    now = time.time()
    month = _source.MAX_IDLE_DAYS * DAY
    kept = [_entry(tmp_path, f"{_hex(i)}.npz", month - HOUR, now, False) for i in range(20)]
    old = _entry(tmp_path, f"removal-{_hex(99)}.json", month + HOUR, now, False)
    assert _source.prune(tmp_path, "x", S.CACHE_FILE) == [old]
    assert all(p.exists() for p in kept)


def test_an_entry_used_within_the_hour_is_kept_beyond_the_count(tmp_path: Path) -> None:
    """A process started from an older folder may still be running and compiling into it."""
    now = time.time()
    entries = [_entry(tmp_path, _hex(i), i * 60.0, now) for i in range(1, 6)]
    assert _source.prune(tmp_path, "none", _source.NUMBA_FOLDER, keep=1, now=now) == []
    assert all(p.exists() for p in entries)


def test_prune_never_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing cache, an entry that cannot be removed (read-only, or another process's), an entry
    another process removed meanwhile: each is passed over, the rest still pruned."""
    assert _source.prune(tmp_path / "missing", "x", _source.NUMBA_FOLDER, keep=0) == []
    now = time.time()
    stuck = _entry(tmp_path, _hex(1), 400 * DAY, now)
    gone = _entry(tmp_path, f"{_hex(2)}.npz", 400 * DAY, now, False)
    old = _entry(tmp_path, f"{_hex(3)}.npz", 400 * DAY, now, False)

    def refuse(path: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "read-only file system", str(path))

    real_unlink = Path.unlink

    def vanish(self: Path, missing_ok: bool = False) -> None:
        if self == gone:
            real_unlink(self)  # another process got there first
            raise FileNotFoundError(2, "no such file", str(self))
        real_unlink(self, missing_ok)

    monkeypatch.setattr(shutil, "rmtree", refuse)
    monkeypatch.setattr(Path, "unlink", vanish)
    names = re.compile(rf"{_source.NUMBA_FOLDER.pattern}|{S.CACHE_FILE.pattern}")
    assert _source.prune(tmp_path, "x", names) == [old]
    assert stuck.exists() and not gone.exists() and not old.exists()


def test_numba_s_folder_for_new_code_prunes_its_old_siblings_and_a_used_one_is_touched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    # use_numba_cache installs numba's locator for the package's files: the one in use is restored
    monkeypatch.setattr(_source, "_install_locator", lambda folder, sources: None)
    root = tmp_path / "blackjack-env" / "numba"
    now = time.time()
    keep = _source.NUMBA_KEEP
    old = [_entry(root, _hex(i), (i + 1) * 2 * HOUR, now) for i in range(keep + 3)]
    ancient = _entry(root, _hex(99), 40 * DAY, now)

    folder = Path(_source.use_numba_cache() or "")

    assert folder.parent == root and not folder.exists()  # new code: numba fills it when it compiles
    assert [p.exists() for p in old] == [True] * keep + [False] * 3
    assert not ancient.exists()
    folder.mkdir()
    os.utime(folder, (now - 5 * DAY, now - 5 * DAY))
    assert Path(_source.use_numba_cache() or "") == folder
    assert folder.stat().st_mtime > now - 60  # used now: the most recent, kept by the next prune
    assert sum(p.exists() for p in old) == keep  # an existing folder prunes nothing


def test_the_solver_cache_prunes_month_old_files_and_keeps_those_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BLACKJACK_ENV_CACHE", str(tmp_path))
    rules = Rules(decks=0)
    solve(rules)
    (mine,) = tmp_path.glob("*.npz")
    now = time.time()
    month = _source.MAX_IDLE_DAYS * DAY
    os.utime(mine, (now - month - DAY, now - month - DAY))
    stale = [
        _entry(tmp_path, f"{_hex(1)}.npz", month + DAY, now, False),  # a solution by older code
        _entry(tmp_path, f"indices-{_hex(2)}.npz", month + DAY, now, False),
        _entry(tmp_path, "tmpab_12cd.tmp", month + DAY, now, False),  # left by a killed process
    ]
    users = [_entry(tmp_path, "my-results.npz", 400 * DAY, now, False), _entry(tmp_path, "notes", 400 * DAY, now)]

    assert solve(rules).ev == S.Solution.load(mine).ev  # read from the cache...
    assert mine.stat().st_mtime > now - 60  # ...and so marked used
    solve(rules.replace(blackjack_pays=1.2))  # a new file written: its old siblings go

    assert mine.exists() and len(list(tmp_path.glob("*.npz"))) == 3  # mine, the new one, the user's
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in users)
