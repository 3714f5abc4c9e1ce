"""The envs' class docstrings, read as documentation.

An env's docstring is written in Gymnasium's sections (``## Description``, ``## Action Space`` ...)
with reST inline markup and Markdown tables. :func:`gym_sections` splits it into its sections;
:func:`to_rest` turns a section's Markdown tables into reST ``list-table`` directives, and
:func:`rest_lines` a whole docstring's headings into rubrics, so that autodoc (the API reference)
and the env cards render the same text.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence

HEADING = re.compile(r"^## (?P<title>.+?)\s*$")
SEPARATOR = re.compile(r"^:?-{3,}:?$")


def gym_sections(doc: str | None) -> tuple[str, dict[str, str]]:
    """(the summary before the first section, {section title: its text}) of a docstring."""
    text = inspect.cleandoc(doc or "")
    summary: list[str] = []
    sections: dict[str, list[str]] = {}
    current = summary
    for line in text.splitlines():
        match = HEADING.match(line)
        if match:
            current = sections.setdefault(match["title"], [])
            continue
        current.append(line)
    return "\n".join(summary).strip(), {title: "\n".join(lines).strip() for title, lines in sections.items()}


def split_row(line: str) -> list[str]:
    """The cells of one Markdown table row (``| a | b |``)."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def markdown_tables(text: str) -> list[list[list[str]]]:
    """Every Markdown table of a text, as rows of cells (the header row first, no separator)."""
    tables: list[list[list[str]]] = []
    rows: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.lstrip().startswith("|"):
            cells = split_row(line)
            if not all(SEPARATOR.match(cell) for cell in cells):
                rows.append(cells)
        elif rows:
            tables.append(rows)
            rows = []
    return tables


def list_table(
    rows: Sequence[Sequence[str]],
    header_rows: int = 1,
    widths: Sequence[int] | None = None,
    stub_columns: int = 0,
    indent: str = "",
    css_class: str | None = None,
) -> list[str]:
    """A reST ``list-table`` of rows of cells (reST inline markup); an empty cell shows a dash."""
    lines = [f"{indent}.. list-table::"]
    if header_rows:
        lines.append(f"{indent}   :header-rows: {header_rows}")
    if stub_columns:
        lines.append(f"{indent}   :stub-columns: {stub_columns}")
    if widths:
        lines.append(f"{indent}   :widths: {' '.join(str(w) for w in widths)}")
    if css_class:
        lines.append(f"{indent}   :class: {css_class}")
    lines.append("")
    for row in rows:
        for j, cell in enumerate(row):
            text = str(cell).strip() or "\u2014"
            cell_lines = text.splitlines()
            lead = "* - " if j == 0 else "  - "
            lines.append(f"{indent}   {lead}{cell_lines[0]}")
            lines.extend(f"{indent}       {more}" for more in cell_lines[1:])
    lines.append("")
    return lines


def to_rest(text: str, drop_tables: bool = False) -> str:
    """A section's text with its Markdown tables as reST list-tables (or left out)."""
    out: list[str] = []
    block: list[str] = []
    for line in [*text.splitlines(), None]:
        if line is not None and line.lstrip().startswith("|"):
            block.append(line)
            continue
        if block:
            if not drop_tables:
                rows = [split_row(row) for row in block if not all(SEPARATOR.match(c) for c in split_row(row))]
                out.extend(["", *list_table(rows)])
            block = []
        if line is not None:
            out.append(line)
    return "\n".join(out).strip()


def rest_lines(lines: list[str]) -> list[str]:
    """A docstring's lines (as autodoc hands them over) with ``## Title`` headings as rubrics and
    Markdown tables as list-tables; a docstring without headings comes back unchanged."""
    if not any(HEADING.match(line) for line in lines):
        return lines
    out: list[str] = []
    for line in to_rest("\n".join(lines)).splitlines():
        match = HEADING.match(line)
        if match:
            out.extend(["", f".. rubric:: {match['title']}", ""])
        else:
            out.append(line)
    return [*out, ""]
