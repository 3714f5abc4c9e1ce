"""``blackjack-compile`` compiles every part it names, says each part's time, and a part that fails is
one line and exit code 1 while the other parts still compile."""

from __future__ import annotations

import pytest

from blackjack_env.evaluate import compile as compile_command


def test_every_part_compiles_and_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    assert compile_command.main([]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(compile_command.PARTS) + 1
    for (name, _), line in zip(compile_command.PARTS, lines, strict=False):
        assert line.startswith(f"blackjack-compile: {name}...") and line.endswith(" s CPU")
    assert lines[-1].startswith("blackjack-compile: done in ")


def test_a_failing_part_is_one_line_and_the_rest_still_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("no compiler")

    parts = [("broken part", broken), ("next part", lambda: ran.append("next"))]
    monkeypatch.setattr(compile_command, "PARTS", parts)
    assert compile_command.main([]) == 1
    err = capsys.readouterr().err
    assert "blackjack-compile: broken part... failed: RuntimeError: no compiler" in err
    assert ran == ["next"] and "Traceback" not in err
