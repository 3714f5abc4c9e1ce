"""``blackjack-evaluate --policy RUN_DIR`` plays a shoe learner's run in the game it was trained in.

A count-table and a composition run are trained here (tiny) in a game other than the default (2 decks,
a cut card at 75%): without --rules/--set evaluate plays that game, so it gives the same figures as the
same command with the run's rules spelt out; given rules that make another game are one line, exit 2,
nothing printed; a --baseline file and a policy that is no learner's run play the given game as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blackjack_env.evaluate.cli import main
from blackjack_env.rules import Rules
from blackjack_env.train.cli import main as train_main

GAME = ["--rules", "ultimatebet", "--set", "decks=2", "--set", "penetration=0.75"]
TRAIN = [*GAME, "--env", "shoe", "--steps", "20000", "--chunk-steps", "20000", "--eval-every", "20000"]
TRAIN += ["--eval-rounds", "5000", "--seed", "5", "--no-progress"]
PLAY = ["--rounds", "20000", "--seed", "3", "--workers", "1", "--no-progress", "--json"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A count-table run and a composition run, one chunk each, trained in GAME."""
    root = tmp_path_factory.mktemp("runs")
    for algo in ("tabular", "linear"):
        assert train_main([*TRAIN, "--algo", algo, "--out", str(root / algo)]) == 0
    return {"count": root / "tabular", "linear": root / "linear", "model": root / "linear" / "linear-model.json"}


def evaluate(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main([*argv, *PLAY]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("kind", ["count", "linear", "model"])
def test_a_learner_run_plays_in_its_own_game(
    runs: dict[str, Path], kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """No --rules/--set: the run's game (not the default 6 decks without a cut card), the same figures as
    that game given in full or by a matching --set, and the file it came from in the JSON and the text."""
    policy = str(runs[kind])
    game = json.loads((runs["linear" if kind == "model" else kind] / "rules.json").read_text())
    assert game["decks"] == 2 and game["penetration"] == 0.75 and game != Rules().to_dict()
    own = evaluate(capsys, "--policy", policy)
    assert own["rules"] == game and own["rules_source"].endswith("rules.json")
    for given in (GAME, ["--set", "decks=2", "--set", "penetration=0.75"]):
        same = evaluate(capsys, "--policy", policy, *given)
        assert (same["ev"], same["avg_bet"], same["rules"]) == (own["ev"], own["avg_bet"], game)
    assert main(["--policy", policy, *PLAY[:-1]]) == 0
    text = capsys.readouterr().out
    assert f"played in the game the run was trained in: {Rules.from_dict(game).describe()}" in text, text


@pytest.mark.parametrize(
    ("kind", "given", "differ"),
    [
        ("count", ["--set", "penetration=0.8", "--set", "decks=2"], "penetration=0.75"),
        ("linear", ["--rules", "ultimatebet"], "decks=2"),
        ("model", [*GAME, "--set", "hit_soft_17=no"], "hit_soft_17=True"),
    ],
)
def test_other_rules_are_one_line_exit_2_nothing_printed(
    runs: dict[str, Path], kind: str, given: list[str], differ: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run's game and the given one both named (a field that differs, the run's file); no result."""
    capsys.readouterr()
    assert main(["--policy", str(runs[kind]), *given, *PLAY]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert err.startswith("blackjack-evaluate: error: --policy ") and "was trained in" in err, err
    assert differ in err and "rules.json" in err and "leave them out" in err, err


def test_baselines_and_other_policies_play_the_given_game(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A learner run as --baseline only, or a counting file from a run's folder, plays the game
    --rules/--set give, as before."""
    given = Rules().with_settings(["penetration=0.8"]).to_dict()
    hilo = str(runs["count"] / "hilo-i18-fab4-ev-max.json")
    for argv in (["--policy", hilo], ["--policy", "basic", "--baseline", str(runs["count"])]):
        summary = evaluate(capsys, *argv, "--set", "penetration=0.8")
        assert summary["rules"] == given and summary["rules_source"] is None
