"""blackjack-evaluate sweep: the grid's cells and their figures, the paired property (every policy of a
penetration dealt the same shoes), JSON, CSV, text and plot, bad input as one line writing nothing,
Ctrl-C keeping the finished cells, and Ray equal to local."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

from blackjack_env.evaluate import runner, sweep
from blackjack_env.evaluate.cli import main

ROUNDS = "1e5"
PENETRATIONS = (0.7, 0.8)
GRID = (
    "--systems",
    "hilo,hilo-i18-fab4",
    "--spreads",
    "1-1,1-8",
    "--penetrations",
    ",".join(map(str, PENETRATIONS)),
)
#: Per penetration: the flat basic baseline, then system x spread in the order given.
CELLS = [
    ("basic", "flat"),
    ("hilo", "1-1"),
    ("hilo", "1-8"),
    ("hilo-i18-fab4", "1-1"),
    ("hilo-i18-fab4", "1-8"),
]


def run_sweep(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["sweep", *GRID, "--rounds", ROUNDS, "--workers", "1", "--no-progress", *args]) == 0
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One JSON sweep of the 2 x 2 x 2 grid, with its plot."""
    plot = tmp_path_factory.mktemp("sweep") / "score.png"
    capture = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdout", capture)
        assert (
            main(["sweep", *GRID, "--rounds", ROUNDS, "--workers", "1", "--no-progress", "--json", "--plot", str(plot)])
            == 0
        )
    return json.loads(capture.getvalue())


def test_every_cell_of_the_grid_with_its_figures(swept: dict[str, Any]) -> None:
    assert [(c["penetration"], c["system"], c["spread"]) for c in swept["cells"]] == [
        (p, system, spread) for p in PENETRATIONS for system, spread in CELLS
    ]
    assert swept["penetrations"] == list(PENETRATIONS)
    assert swept["systems"] == ["hilo", "hilo-i18-fab4"] and swept["spreads"] == ["1-1", "1-8"]
    assert swept["rounds"] == 100_000 and swept["seed"] == 0 and not swept["interrupted"]
    assert swept["rules"]["penetration"] == 0.0  # the rules as given; each cell has its own penetration
    for cell in swept["cells"]:
        assert cell["rounds"] == 100_000
        di = 1000 * cell["ev"] / cell["sd"]
        assert cell["di"] == pytest.approx(di)
        assert cell["score"] == pytest.approx(di * abs(di))
        assert cell["win_per_100"] == pytest.approx(100 * cell["ev"])
        assert cell["sd_per_100"] == pytest.approx(10 * cell["sd"])
        assert cell["n0"] == pytest.approx((cell["sd"] / cell["ev"]) ** 2)
        low, high = cell["ci95"]
        assert low < cell["ev"] < high
    by_spread = {(c["penetration"], c["system"], c["spread"]): c for c in swept["cells"]}
    for p in PENETRATIONS:
        assert by_spread[p, "basic", "flat"]["score"] < 0  # a losing game's SCORE is negative
        assert by_spread[p, "basic", "flat"]["by_true_count"] is None
        assert by_spread[p, "hilo", "1-8"]["avg_bet"] > 1.0
        assert by_spread[p, "hilo", "1-8"]["by_true_count"] is not None


def test_the_policies_of_a_penetration_are_dealt_the_same_shoes(swept: dict[str, Any]) -> None:
    for p in PENETRATIONS:
        cells = {(c["system"], c["spread"]): c for c in swept["cells"] if c["penetration"] == p}
        baseline = cells["basic", "flat"]
        # Hi-Lo with no index plays at a flat bet plays basic strategy: on the same shoes, the same result
        same = cells["hilo", "1-1"]
        for key in ("ev", "sd", "score", "n0", "advantage", "rounds_played"):
            assert same[key] == baseline[key], key
        assert same["gain_vs_basic"] == 0.0 and same["gain_ci95"] == [0.0, 0.0]
        # index plays at a flat bet differ from basic strategy in few rounds: the paired gap is far tighter
        indices = cells["hilo-i18-fab4", "1-1"]
        assert indices["ev"] != baseline["ev"]
        gap_width = indices["gain_ci95"][1] - indices["gain_ci95"][0]
        assert gap_width < 0.3 * (indices["ci95"][1] - indices["ci95"][0])
        assert indices["gain_vs_basic"] == pytest.approx(indices["ev"] - baseline["ev"])
    # another penetration deals other shoes
    first, second = (next(c for c in swept["cells"] if c["penetration"] == p) for p in PENETRATIONS)
    assert first["ev"] != second["ev"]


def test_the_plot_is_a_png(swept: dict[str, Any]) -> None:
    plot = Path(swept["plot"])
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in plot.parent.iterdir()] == [plot.name]  # no temporary file left beside it


def test_csv_and_text_hold_the_json_cells(swept: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    rows = list(csv.DictReader(io.StringIO(run_sweep(capsys, "--csv", "--no-plot"))))
    assert list(rows[0]) == list(sweep.CSV_COLUMNS)
    assert len(rows) == len(swept["cells"])
    for row, cell in zip(rows, swept["cells"], strict=True):
        assert (float(row["penetration"]), row["system"], row["spread"]) == (
            cell["penetration"],
            cell["system"],
            cell["spread"],
        )
        assert float(row["score"]) == pytest.approx(cell["score"])  # the same seed: the same cells
        assert float(row["ev_low"]) == pytest.approx(cell["ci95"][0])
    text = run_sweep(capsys, "--no-plot", "--bankroll", "1000")
    lines = text.splitlines()
    assert lines[1].split()[:4] == ["pen", "system", "spread", "SCORE"] and lines[1].split()[-1] == "RoR"
    assert len(lines) == 2 + len(swept["cells"])
    assert "SCORE plot" not in text


def test_json_with_a_bankroll_has_the_risk_of_ruin(capsys: pytest.CaptureFixture[str]) -> None:
    cells = json.loads(run_sweep(capsys, "--json", "--no-plot", "--bankroll", "500"))["cells"]
    for cell in cells:
        expected = math.exp(-2 * 500 * cell["ev"] / cell["sd"] ** 2) if cell["ev"] > 0 else 1.0
        assert cell["ror"] == pytest.approx(expected)


def test_an_existing_plot_is_kept_unless_overwrite(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    plot = tmp_path / "sweep.png"
    plot.write_bytes(b"mine")
    assert main(["sweep", *GRID, "--rounds", "100", "--plot", str(plot), "--no-progress"]) == 2
    assert "exists; pass --overwrite" in capsys.readouterr().err
    assert plot.read_bytes() == b"mine"
    run_sweep(capsys, "--plot", str(plot), "--overwrite")
    assert plot.read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.png"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--systems", "hilo,nope"], "unknown system 'nope'"),
        (["--systems", "basic"], "unknown system 'basic'"),
        (["--systems", "hilo,hilo"], "lists 'hilo' twice"),
        (["--spreads", "0-8"], "'0-8' is not MIN-MAX"),
        (["--spreads", "x"], "'x' is not MIN-MAX"),
        (["--spreads", "1-8,"], "empty entry"),
        (["--penetrations", "0"], "needs a cut card"),
        (["--penetrations", "0.75,1"], "'1' is not a fraction"),
        (["--penetrations", "deep"], "'deep' is not a number"),
        (["--set", "decks=0"], "not an infinite deck"),
        (["--rules", "infinite-deck"], "not an infinite deck"),
        (["--systems", "{bad_ramp}"], "ramp: true counts must increase"),
        (["--systems", "{bad_index}"], "indices[0].hand must be"),
        (["--systems", "{sits_out}", "--spreads", "own"], "use seats >= 2"),
        (["--seats", "2", "--seat", "2"], "--seat must be a box 0..1"),
        (["--plot", "{folder}"], "is a folder"),
        (["--plot", "{missing}/x.png"], "no such folder"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    args: list[str],
    message: str,
) -> None:
    strategies = tmp_path / "strategies"
    strategies.mkdir()
    files = {
        "bad_ramp": {"system": "hilo", "ramp": [[1, 1], [0, 2]]},
        "bad_index": {"system": "hilo", "indices": [{"hand": "hard 33", "up": "10", "index": 0, "action": "S"}]},
        "sits_out": {"system": "hilo", "ramp": [[-100, 0], [1, 1], [3, 4]]},
    }
    names = {"folder": str(strategies), "missing": str(tmp_path / "missing")}
    for name, data in files.items():
        path = strategies / f"{name}.json"
        path.write_text(json.dumps(data))
        names[name] = str(path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # the default plot would land here
    assert main(["sweep", "--rounds", "1000", "--no-progress", *(a.format(**names) for a in args)]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1 and "Traceback" not in captured.err
    assert list(work.iterdir()) == []
    assert sorted(p.name for p in strategies.iterdir()) == ["bad_index.json", "bad_ramp.json", "sits_out.json"]


def test_ctrl_c_keeps_the_penetrations_finished(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = runner.simulate  # what every command's simulation calls (RunFeedback.simulate)
    calls: list[float] = []

    def simulate(rules, *args, **kwargs):  # Ctrl-C as the second penetration's run starts
        calls.append(rules.penetration)
        if len(calls) % 2 == 0:
            raise KeyboardInterrupt
        return real(rules, *args, **kwargs)

    monkeypatch.setattr(runner, "simulate", simulate)
    summary = json.loads(run_sweep(capsys, "--json", "--no-plot"))
    assert summary["interrupted"]
    assert {c["penetration"] for c in summary["cells"]} == {PENETRATIONS[0]}
    assert len(summary["cells"]) == len(CELLS)
    text = run_sweep(capsys, "--no-plot").splitlines()
    assert "interrupted" in text[-1] and " up to " in text[0]  # the header claims no more rounds than ran


def test_ray_backend_equals_local(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ray")
    grid = ["--systems", "hilo-i18-fab4", "--spreads", "1-8", "--penetrations", "0.75", "--rounds", "30000"]
    common = [*grid, "--workers", "2", "--json", "--no-plot", "--no-progress"]
    assert main(["sweep", *common]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["sweep", *common, "--backend", "ray"]) == 0
    on_ray = json.loads(capsys.readouterr().out)
    assert on_ray["backend"] == "ray"
    assert on_ray["cells"] == local["cells"]
