"""``python benchmarks/learning.py --plot-shoe PNG RUN...``: a PPO shoe run's curve (EV with its bets, its
play's flat-bet gain over basic strategy, its average bet) is written from a run's metrics.csv, a row
still being written is left out, and a folder that is no such run is one line, exit 2, no picture."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "learning.py"


@pytest.fixture(scope="module")
def learning() -> ModuleType:
    spec = importlib.util.spec_from_file_location("learning_benchmark", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_run(folder: Path, columns: tuple[str, ...], partial: bool = False) -> Path:
    """Three evaluations as train/shoe_ppo.py writes them (the first an untrained net's), and optionally
    the start of a fourth."""
    folder.mkdir()
    values = {"ev": (-5.2, -0.03, -0.02), "ev_basic": (-0.008,) * 3, "ev_hilo": (0.008,) * 3}
    values |= {"flat_gain": (-0.6, -0.03, -0.017), "avg_bet": (8.0, 1.0, 1.002), "wall_s": (5.0, 900.0, 1700.0)}
    values |= {"flat_gain_low": tuple(v - 0.005 for v in values["flat_gain"])}
    values |= {"flat_gain_high": tuple(v + 0.005 for v in values["flat_gain"])}
    with (folder / "metrics.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for i, step in enumerate((0, 100_000, 200_000)):
            writer.writerow([step if c == "step" else values.get(c, (0.0,) * 3)[i] for c in columns])
        if partial:
            f.write("300000,-0.01,")
    return folder


def test_the_shoe_plot_is_written_from_metrics_csv(
    learning: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    columns = (*learning.SHOE_PPO_COLUMNS, "gain_vs_basic", "rounds")
    run = write_run(tmp_path / "run", columns, partial=True)
    assert [row["step"] for row in learning.shoe_rows(run)] == [0.0, 100_000.0, 200_000.0]
    out = tmp_path / "curve.png"
    assert learning.main(["--plot-shoe", str(out), str(run)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"wrote {out}" in capsys.readouterr().out


def test_a_folder_that_is_no_ppo_shoe_run_is_one_line(
    learning: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_run(tmp_path / "good", learning.SHOE_PPO_COLUMNS)
    shoe = write_run(tmp_path / "count-table", tuple(c for c in learning.SHOE_PPO_COLUMNS if c != "avg_bet"))
    out = tmp_path / "curve.png"
    for runs, text in (([good, shoe], "no column(s) avg_bet"), ([good, tmp_path / "none"], "cannot be read")):
        assert learning.main(["--plot-shoe", str(out), *map(str, runs)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("learning.py: error: ") and text in err, err
        assert not out.exists()
