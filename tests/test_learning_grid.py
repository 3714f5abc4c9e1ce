"""``python benchmarks/learning_grid.py``: the grid's games are valid rules, bad input is refused, a
finished game is not run again, and the table and chart are written from the games' JSON files."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def grid() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))  # it imports learning_to_count beside it, as a script does
    try:
        spec = importlib.util.spec_from_file_location("learning_grid", BENCHMARKS / "learning_grid.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["learning_grid"] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


def test_every_game_is_a_game_the_solver_and_ceiling_take(grid: ModuleType, capsys: pytest.CaptureFixture) -> None:
    from blackjack_env.solver.ceiling import check_rules

    assert grid.main(["--list"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(grid.GRID) >= 12
    decks = {game.rules().decks for game in grid.GRID.values()}
    assert decks == {1, 2, 6, 8}
    for game in grid.GRID.values():
        check_rules(game.rules(), 600, game.seats, game.seat)  # a shoe dealt to a cut card, a seat there


@pytest.mark.parametrize(
    ("argv", "says"),
    [(["--games", "3d"], "unknown game(s) 3d"), (["--train-seed", "2026"], "is the training seed")],
)
def test_bad_input_is_refused(grid: ModuleType, capsys: pytest.CaptureFixture, argv: list[str], says: str) -> None:
    with pytest.raises(SystemExit) as stop:
        grid.main(argv)
    assert stop.value.code == 2 and says in capsys.readouterr().err


def share(value: float) -> dict:
    return {"share": value, "ci95": [value - 0.1, value + 0.1]}


def test_a_finished_game_is_read_not_run_and_tabled(
    grid: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a finished game was run again")

    monkeypatch.setattr(grid.ltc, "train", refuse)
    monkeypatch.setattr(grid, "ceiling", refuse)
    flat = {
        "basic": {"ev_per_100": -0.5, "avg_bet": 1.0},
        **{
            p: {
                "ev_per_100": 0.0,
                "avg_bet": 1.0,
                "vs_reference_per_100": g,
                "ci95": [g - 0.1, g + 0.1],
                "share_of_ceiling": share(s),
            }
            for p, g, s in (("count-table", 0.2, 0.6), ("composition", 0.3, 0.9), ("hilo-i18-fab4", 0.15, 0.45))
        },
    }
    bets = {
        p: {"ev_per_100": e, "avg_bet": 3.0}
        for p, e in (("count-table", 1.5), ("composition", 2.0), ("hilo-i18-fab4-ev-max", 1.7))
    }
    done = {
        "ceiling": {
            "gain": 0.0033,
            "gain_ci95": [0.003, 0.0036],
            "gain_per_100": 0.33,
            "gain_per_100_ci95": [0.3, 0.36],
        },
        "flat": flat,
        "bets": bets,
        "training": {"count-table": {"wall_s": 600.0, "system": "omega2"}, "composition": {"wall_s": 600.0}},
        # (a composition run from before depth bands: tabled as one band)
    }
    (tmp_path / "2d.json").write_text(json.dumps(done))
    assert grid.main(["--games", "2d", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "table.md").read_text()
    assert "| 2d: 2D H17 DAS SP3 LS BJ 3:2 pen 0.65 | 1 of 3 | +0.330 (+0.300 .. +0.360) |" in table
    assert ", omega2 | +0.300, 90% (80 .. 100), 1 |" in table and "+1.500, +2.000, +1.700 | 10, 10 |" in table
    assert (tmp_path / "grid.png").stat().st_size > 0


def test_a_game_counts_one_system(grid: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--system reaches the count-table learner's training; a count-table run of another system already in
    the grid's folder is refused in one line rather than mixed into the game's row."""
    trained: list[tuple[str, str | None]] = []

    def train(algo: str, *args: object) -> None:
        trained.append((algo, args[-1]))  # type: ignore[arg-type]  # the system, last
        raise SystemExit("stop after training")

    monkeypatch.setattr(grid.ltc, "train", train)
    with pytest.raises(SystemExit, match="stop after training"):
        grid.main(["--games", "2d", "--system", "hilo", "--out", str(tmp_path)])
    assert trained == [("tabular", "hilo")]
    run = tmp_path / "runs" / "2d-tabular"
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"args": {"algo": "tabular", "system": "hilo"}}))
    with pytest.raises(SystemExit, match=f"counts hilo, not {grid.COUNT_TABLE_SYSTEM}: move it away"):
        grid.main(["--games", "2d", "--out", str(tmp_path)])


def test_an_interrupted_training_run_is_resumed(
    grid: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run folder with a checkpoint but short of its steps goes on with --resume (blackjack-train refuses
    to start a new run over it), on the run's own config."""
    calls: list[list[str]] = []
    monkeypatch.setattr(grid.ltc, "train_main", lambda argv: calls.append(list(argv)) or 0)
    run = tmp_path / "runs" / "2d-tabular"
    run.mkdir(parents=True)
    (run / "state.json").write_text(json.dumps({"steps": 10}))
    assert grid.ltc.train("tabular", tmp_path, 1, None, ["decks=2"], (3, 1), "2d-tabular", 2) == run
    assert calls == [["--out", str(run), "--resume", "--workers", "2", "--no-progress"]]
    grid.ltc.train("linear", tmp_path, 1, 1e6, ["decks=2"], (3, 1), "2d-linear", 1)
    assert "--resume" not in calls[1] and calls[1][-2:] == ["--steps", "1000000"]
