"""The one place a report reaches the disk: every file is built in a temporary folder beside
``--out``, then moved in. A new ``--out`` appears whole (one rename); in an existing one only the
report's own files are replaced, each by an atomic rename, and only with ``--overwrite``; other
files stay. An error or Ctrl-C while building leaves ``--out`` as it was and no temporary folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ..options import CliError
from .documents import render_documents
from .figures import FIGURE_FILES, draw_figures
from .model import Report

#: Every file a report may write (checked against --out before any work is done).
REPORT_FILES = ("report.html", "report.md", "summary.json", *FIGURE_FILES)


def check_out(out: Path, overwrite: bool) -> None:
    """Refuse, before any work, an --out that is a file or holds report files (unless overwrite)."""
    if out.exists() and not out.is_dir():
        raise CliError(f"--out {out} exists and is not a folder")
    clashes = [name for name in REPORT_FILES if (out / name).exists()]
    if clashes and not overwrite:
        raise CliError(
            f"--out {out} already holds {', '.join(clashes)}; pass --overwrite to replace them "
            "(other files there are left alone) or choose another --out"
        )


def write_report(report: Report, out: Path, overwrite: bool = False) -> list[Path]:
    """Draw the figures and render the documents in a temporary folder beside ``out``, then move
    them in (see the module docstring); returns the files written."""
    out = out.resolve()
    check_out(out, overwrite)
    out.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temp, 0o777 & ~umask)  # mkdtemp's 0700 would make a new --out private
    try:
        draw_figures(report, temp)
        render_documents(report, temp)
        names = sorted(p.name for p in temp.iterdir())
        if not out.exists():
            os.rename(temp, out)
            return [out / name for name in names]
        check_out(out, overwrite)  # again: files may have appeared while the report was built
        for name in names:
            os.replace(temp / name, out / name)
        return [out / name for name in names]
    finally:
        if temp.exists():
            shutil.rmtree(temp, ignore_errors=True)
