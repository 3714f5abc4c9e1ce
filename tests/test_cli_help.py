"""Every command and subcommand answers ``--help`` and ``--version`` (argparse %-formats help text, so
a stray percent sign in one help string is enough to make ``--help`` raise)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from importlib.metadata import distribution

import pytest

import blackjack_env

#: Subcommands dispatched by a command's first argument.
SUBCOMMANDS = {"blackjack-evaluate": ("report", "sweep")}


def _commands() -> dict[str, str]:
    """The console scripts the installed project declares: name -> "module:function"."""
    points = distribution("blackjack-env").entry_points
    return {point.name: point.value for point in points if point.group == "console_scripts"}


def _main(target: str) -> Callable[[list[str]], int]:
    module, _, function = target.partition(":")
    return getattr(import_module(module), function)


INVOCATIONS = [(name, [*([sub] if sub else [])]) for name in _commands() for sub in (None, *SUBCOMMANDS.get(name, ()))]


@pytest.mark.parametrize(("command", "prefix"), INVOCATIONS, ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_help_prints_and_exits_0(command: str, prefix: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        _main(_commands()[command])([*prefix, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ") and " ".join([command, *prefix]) in out


@pytest.mark.parametrize(("command", "prefix"), INVOCATIONS, ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_version_names_the_package_version(command: str, prefix: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        _main(_commands()[command])([*prefix, "--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"{' '.join([command, *prefix])} {blackjack_env.__version__}"


def test_evaluate_help_names_its_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _main(_commands()["blackjack-evaluate"])(["--help"])
    out = capsys.readouterr().out
    for sub in SUBCOMMANDS["blackjack-evaluate"]:
        assert f"blackjack-evaluate {sub}" in out
