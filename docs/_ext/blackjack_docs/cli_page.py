"""The command-line reference: every console script and subcommand, from its argparse parser.

The commands are the ``[project.scripts]`` of pyproject.toml; each command's module has a
``build_parser()``, which sphinx-argparse's ``argparse`` directive documents (every option, its
default and its help). A command that dispatches subcommands names them in its usage
(``blackjack-evaluate [report | sweep] [options]``), each the module of that name beside the
command's own.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Command:
    prog: str  # as typed: "blackjack-evaluate report"
    module: str  # the module holding build_parser
    func: str = "build_parser"

    def parser(self):
        return getattr(importlib.import_module(self.module), self.func)()


def console_scripts() -> dict[str, str]:
    """{command: "module:function"} of pyproject.toml's [project.scripts]."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: the installed metadata says the same
        from importlib.metadata import entry_points

        return {
            ep.name: ep.value for ep in entry_points(group="console_scripts") if ep.value.startswith("blackjack_env")
        }
    with open(ROOT / "pyproject.toml", "rb") as file:
        return dict(tomllib.load(file)["project"]["scripts"])


def subcommands(usage: str) -> list[str]:
    """The subcommands a usage line names: ``prog [report | sweep] [options]`` -> report, sweep."""
    match = re.search(r"\[((?:[a-z][\w-]*\s*\|\s*)+[a-z][\w-]*)\]", usage)
    return [word.strip() for word in match[1].split("|")] if match else []


def commands() -> list[Command]:
    """Every command and subcommand, in pyproject's order, each command's subcommands after it."""
    out = []
    for prog, target in console_scripts().items():
        module = target.split(":")[0]
        command = Command(prog, module)
        out.append(command)
        package = module.rsplit(".", 1)[0]
        for word in subcommands(command.parser().usage or ""):
            out.append(Command(f"{prog} {word}", f"{package}.{word}"))
    return out


def cli_rest() -> str:
    title = "Command-line reference"
    lines = [".. _cli:", "", title, "=" * len(title), ""]
    lines += [
        "Every command the package installs, with every option, its default and its help, as ``--help`` "
        "prints them. Each command also answers ``--version``. Errors are one line on stderr and exit "
        "status 2.",
        "",
    ]
    for command in commands():
        lines += [f".. _cli-{command.prog.replace(' ', '-')}:", "", command.prog, "-" * len(command.prog), ""]
        lines += [
            ".. argparse::",
            f"   :module: {command.module}",
            f"   :func: {command.func}",
            f"   :prog: {command.prog}",
            "",
        ]
    return "\n".join(lines) + "\n"


def write_cli(folder: Path) -> None:
    from .write import write_text

    write_text(folder / "cli.rst", cli_rest())
