"""The rules page: every :class:`blackjack_env.Rules` field and every preset, from the code.

A field's type and default come from the dataclass, its meaning from the Attributes section of
the class docstring, what it accepts from ``FIELD_VALUES`` (the validators' rules); a preset's
changes from the default, its description and its source from ``PRESETS``.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blackjack_env import rules as R

from .sections import list_table


@dataclass
class FieldRow:
    name: str
    type: str
    default: Any
    allowed: str
    meaning: str


@dataclass
class PresetRow:
    name: str
    default: bool  # the default game (``Rules()``)
    changes: dict[str, Any]  # the fields that differ from Rules()
    shorthand: str
    description: str
    source: str


def attributes(doc: str | None) -> dict[str, str]:
    """The Google-style ``Attributes:`` section of a docstring: {name: its text, on one line}."""
    lines = inspect.cleandoc(doc or "").splitlines()
    out: dict[str, str] = {}
    inside, current = False, None
    for line in lines:
        if line.strip() == "Attributes:":
            inside = True
            continue
        if not inside:
            continue
        if line and not line.startswith(" "):
            break  # the next section (or text) begins
        entry = re.match(r"^ {4}(\w+): (.*)$", line)
        if entry:
            current = entry[1]
            out[current] = entry[2].strip()
        elif line.strip() and current:
            out[current] += " " + line.strip()
    return out


def field_rows() -> list[FieldRow]:
    meanings = attributes(R.Rules.__doc__)
    return [
        FieldRow(f.name, str(f.type), f.default, R.FIELD_VALUES[f.name], meanings[f.name])
        for f in dataclasses.fields(R.Rules)
    ]


def preset_rows() -> list[PresetRow]:
    base = R.Rules()
    rows = []
    for name, preset in R.PRESETS.items():
        changes = {
            f.name: getattr(preset.rules, f.name)
            for f in dataclasses.fields(R.Rules)
            if getattr(preset.rules, f.name) != getattr(base, f.name)
        }
        rows.append(
            PresetRow(
                name, name == R.DEFAULT_PRESET, changes, preset.rules.describe(), preset.description, preset.source
            )
        )
    return rows


def rules_rest() -> str:
    """The rules page (reST)."""
    title = "Rules and presets"
    base = R.Rules()
    lines = [".. _rules:", "", title, "=" * len(title), "", ".. currentmodule:: blackjack_env.rules", ""]
    lines += [
        "A game is a :class:`Rules`: a frozen, validated dataclass that every env, the solver, the simulator "
        "and the commands take. ``Rules()`` is the default game, "
        f"the ``{R.DEFAULT_PRESET}`` preset (``{base.describe()}``); ``Rules.preset(name)`` gives a preset, "
        "``rules.replace(**changes)`` and ``Rules.from_dict(fields)`` change fields, and the commands take "
        "``--rules PRESET`` and repeated ``--set field=value``. A value that is not allowed raises "
        "``ValueError`` naming the field and what it accepts. Money is counted in units of the initial bet.",
        "",
        "Fields",
        "------",
        "",
        "Given as text (``--set field=value``, a JSON string), a true or false field also takes "
        f"{', '.join(f'``{w}``' for w in sorted(R._TRUE_WORDS))} or "
        f"{', '.join(f'``{w}``' for w in sorted(R._FALSE_WORDS))}, and the others their numbers or choices "
        "as written.",
        "",
    ]
    rows = [["field", "default (type)", "allowed values", "meaning"]]
    for row in field_rows():
        rows.append([f"``{row.name}``", f"``{row.default!r}`` ({row.type})", row.allowed, row.meaning])
    lines += list_table(rows, widths=[20, 14, 26, 40], css_class="rules-fields")
    lines += [
        "Presets",
        "-------",
        "",
        "Every named game (:data:`PRESETS`), with the fields it changes from the default game and where it "
        "comes from: a rule text the project implements, a common casino game or an analysis baseline.",
        "",
    ]
    rows = [["preset", "changes from ``Rules()``", "game", "source"]]
    for row in preset_rows():
        changes = ", ".join(f"``{key}={value!r}``" for key, value in row.changes.items()) or "none (the default game)"
        name = f"``{row.name}``" + (" (default)" if row.default else "")
        rows.append([name, f"{changes}\n\n``{row.shorthand}``", row.description, row.source])
    lines += list_table(rows, widths=[16, 30, 38, 16], css_class="rules-presets")
    return "\n".join(lines) + "\n"


def write_rules(folder: Path) -> None:
    from .write import write_text

    write_text(folder / "rules.rst", rules_rest())
