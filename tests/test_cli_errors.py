"""Errors a newcomer meets first: each is one line naming what is wrong (the file, the line and column
of bad JSON, the option), exit status 2, no usage block and nothing written; and a sweep labels a
strategy by its name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blackjack_env.evaluate.cli import main as evaluate_main
from blackjack_env.train.cli import main as train_main

MY_COUNT = {"name": "hilo-1-6", "system": "hilo", "ramp": [[0, 1], [1, 2], [2, 4], [3, 6]]}


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "usage:" not in err and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--rounds", "-5"], "blackjack-evaluate: error: argument --rounds: rounds must be a whole number >= 1"),
        (["--rounds", "abc"], "blackjack-evaluate: error: argument --rounds: rounds must be a number such as"),
        (["sweep", "--rounds", "0"], "blackjack-evaluate sweep: error: argument --rounds:"),
        (["report", "--out", "x", "--seats", "0"], "blackjack-evaluate report: error: argument --seats:"),
    ],
)
def test_a_bad_number_is_one_line_without_the_usage(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        evaluate_main(argv)
    assert exit_.value.code == 2
    assert one_line_error(capsys).startswith(expected)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--steps", "-1"], "blackjack-train: error: argument --steps: must be a whole number >= 1, got '-1'"),
        (["--algo", "dqn"], "blackjack-train: error: argument --algo: invalid choice: 'dqn' (choose from"),
    ],
)
def test_training_arguments_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        train_main(argv)
    assert exit_.value.code == 2
    assert one_line_error(capsys).startswith(expected)


def test_a_sweep_of_a_missing_file_says_no_such_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert evaluate_main(["sweep", "--systems", "my_count.json", "--rounds", "100", "--no-plot"]) == 2
    assert one_line_error(capsys) == (
        "blackjack-evaluate sweep: error: --systems: no such file 'my_count.json' (a counting-strategy JSON)"
    )


def test_malformed_counting_json_names_the_file_line_and_column(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "system": "hilo"\n  "ramp": [[0, 1]]\n}\n')  # a comma missing on line 2
    argv = ["--policy", str(path), "--set", "penetration=0.75", "--rounds", "100", "--no-progress"]
    assert evaluate_main(argv) == 2
    err = one_line_error(capsys)
    assert f"counting strategy {str(path)!r}: not JSON" in err
    assert "line 3 column 3" in err and "Expecting ',' delimiter" in err


def test_report_of_a_missing_run_folder_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "report"
    argv = ["report", "--run", str(tmp_path / "runs" / "nope"), "--out", str(out), "--rounds", "100"]
    assert evaluate_main(argv) == 2
    assert "no such folder" in one_line_error(capsys)
    assert not out.exists()  # nothing written


def test_a_sweep_labels_a_strategy_by_its_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("my_count.json").write_text(json.dumps(MY_COUNT))
    Path("unnamed.json").write_text(json.dumps({"system": "ko"}))
    argv = ["sweep", "--systems", "my_count.json,unnamed.json", "--spreads", "own", "--rounds", "3000"]
    assert evaluate_main([*argv, "--no-plot", "--json", "--no-progress", "--workers", "1"]) == 0
    sweep = json.loads(capsys.readouterr().out)
    assert sweep["systems"] == ["hilo-1-6", "unnamed"]  # its "name", else the file's stem
    assert [cell["system"] for cell in sweep["cells"]] == ["basic", "hilo-1-6", "unnamed"]


def test_a_bad_bankroll_says_bankroll_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from blackjack_env.evaluate.play import main as play_main

    with pytest.raises(SystemExit) as exit_:
        play_main(["--bankroll", "-10"])
    assert exit_.value.code == 2
    assert one_line_error(capsys) == (
        "blackjack-play: error: argument --bankroll: a bankroll is a positive number of chips such as 1000 "
        "or 250.5, got '-10'"
    )
