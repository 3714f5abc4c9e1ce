"""The guides' pictures (docs/guides/*.md), drawn from the package and from benchmarks/results/.

    python docs/_static/guides/make_pictures.py          # every picture, about a minute on 2 cores

Writes, beside this file:

* ``basic-strategy-chart.png``: the default game's basic strategy (the solver's table), coloured by
  action, as a report's ``chart.png`` draws it.
* ``learning-curves.png``: the exact EV gap to basic strategy against env steps of two runs kept in
  ``benchmarks/results/`` (``tabular-sampled-default``: ``blackjack-train --algo tabular
  --eval-every 2.5e7 --eval-rounds 1e7``; ``ppo-vecenv-defaults-seed921``: ``blackjack-train --algo ppo
  --seed 921``), with the paired 95% intervals of their evaluations.
* ``report-ev.png``, ``report-chart.png``: figures of ``blackjack-evaluate
  report --policy my_table.json --rounds 1e7`` (basic strategy that stands on hard 16 against a ten).
* ``indices-hilo.png``: ``blackjack-strategy --indices hilo --set penetration=0.75 --plot``.
"""

from __future__ import annotations

import csv
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from blackjack_env import Rules
from blackjack_env.evaluate.report import main as report
from blackjack_env.evaluate.report.figures import ACTION_COLOURS, CHART_COLUMNS, CHART_ROWS
from blackjack_env.evaluate.strategy import main as strategy
from blackjack_env.solver import solve
from blackjack_env.strategy import StrategyTable, row_of_label

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parents[2] / "benchmarks" / "results"


def basic_chart() -> None:
    """The chart as a report draws a policy's, without the report's marks of differing cells."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, Rectangle

    rules = Rules()
    table = solve(rules).table
    fig = Figure(figsize=(12, 7.6), dpi=100, layout="constrained")
    for ax, (section, keys) in zip(fig.subplots(1, 3), CHART_ROWS.items(), strict=True):
        for i, key in enumerate(keys):
            row = row_of_label(section, key)
            for j, up in enumerate((2, 3, 4, 5, 6, 7, 8, 9, 10, 1)):
                code = table.cell_code(row, up)
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor=ACTION_COLOURS[code[0]][0], edgecolor="white"))
                ax.text(j + 0.5, i + 0.5, code, ha="center", va="center", fontsize=10)
        ax.set_xlim(0, 10)
        ax.set_ylim(len(keys), 0)
        ax.set_xticks(np.arange(10) + 0.5, CHART_COLUMNS)
        ax.set_yticks(np.arange(len(keys)) + 0.5, [f"{k},{k}" if section == "pairs" else k for k in keys])
        ax.set_title(section)
        ax.set_aspect("equal")
        ax.set_anchor("N")
        ax.tick_params(length=0)
        ax.set_xlabel("dealer up card")
    handles = [Patch(facecolor=colour, label=name) for colour, name in ACTION_COLOURS.values()]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles))
    fig.suptitle(f"basic strategy, {rules.describe()}: the second letter is the play where the first is not allowed")
    fig.savefig(HERE / "basic-strategy-chart.png", format="png")


def learning_curves() -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.8), dpi=100, layout="constrained")
    axes = fig.subplots(1, 2)
    runs = [
        ("tabular-sampled-default", "tabular (Monte Carlo control)"),
        ("ppo-vecenv-defaults-seed921", "MaskablePPO"),
    ]
    for ax, (run, title) in zip(axes, runs, strict=True):
        with open(RESULTS / run / "metrics.csv") as file:
            rows = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(file)][1:]  # after the start
        steps = [r["step"] / 1e6 for r in rows]
        ax.fill_between(
            steps,
            [100 * r["ev_gap_low"] for r in rows],
            [100 * r["ev_gap_high"] for r in rows],
            alpha=0.25,
            label="paired simulation, 95% CI",
        )
        ax.plot(steps, [100 * r["exact_ev_gap"] for r in rows], marker=".", label="exact (the solver)")
        ax.axhline(0, color="black", lw=0.8)
        ax.set_title(f"{title}: benchmarks/results/{run}", fontsize=9)
        ax.set_xlabel("env steps (millions)")
        ax.set_ylabel("EV gap to basic strategy (% of the bet)")
        ax.legend(fontsize=8, loc="lower right")
    fig.savefig(HERE / "learning-curves.png", format="png")


def report_figures(folder: Path) -> None:
    chart = solve(Rules()).table.to_chart()
    chart["hard"]["16"]["10"] = "S"
    os.chdir(folder)  # the policy's name in the figures is the path as given
    StrategyTable.from_chart(chart, name="stand-16-v-10").save("my_table.json")
    assert report(["--policy", "my_table.json", "--rounds", "1e7", "--out", "report"]) == 0
    for name in ("ev", "chart"):
        shutil.copy(Path("report") / f"{name}.png", HERE / f"report-{name}.png")


def indices(folder: Path) -> None:
    plot = folder / "indices.png"
    assert strategy(["--indices", "hilo", "--set", "penetration=0.75", "--plot", str(plot), "--format", "csv"]) == 0
    shutil.copy(plot, HERE / "indices-hilo.png")


def main() -> None:
    basic_chart()
    learning_curves()
    with tempfile.TemporaryDirectory() as folder:
        report_figures(Path(folder))
        indices(Path(folder))


if __name__ == "__main__":
    main()
