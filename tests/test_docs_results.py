"""The results pages (docs/results/) say what benchmarks/results/ holds.

Their tables are generated from the results files at build time (docs/_ext/blackjack_docs/results_page.py);
here each table is built as the build does and held to the files read independently, every table a page
includes exists, the figures written in the pages' prose are the files' (or, for the speed page, those the
the recorded speed measurements give), and every picture is there and small.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RESULTS = ROOT / "benchmarks" / "results"
PAGES = sorted((DOCS / "results").glob("*.md"))
sys.path.insert(0, str(DOCS / "_ext"))

from blackjack_docs import results_page as R  # noqa: E402


@pytest.fixture(scope="module")
def tables() -> dict[str, str]:
    return {name: build(RESULTS) for name, build in R.TABLES.items()}


def rows(text: str) -> list[list[str]]:
    """A Markdown table's body rows as cells."""
    lines = [line for line in text.splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]


def last_row(path: Path) -> dict[str, float]:
    with path.open(newline="") as f:
        return {k: float(v) for k, v in list(csv.DictReader(f))[-1].items()}


def test_every_included_table_is_generated_and_every_table_is_shown() -> None:
    included = set()
    for page in PAGES:
        for name in re.findall(r"```\{include\} \.\./generated/results/([\w.-]+)\.inc", page.read_text()):
            assert name in R.TABLES, f"{page.name} includes {name}, which no function builds"
            included.add(name)
    assert included == set(R.TABLES)


def test_pictures_exist_and_are_small() -> None:
    for page in PAGES:
        for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page.read_text()):
            picture = (page.parent / target).resolve()
            assert picture.is_file(), f"{page.name}: {target}"
            assert picture.stat().st_size < 200_000, f"{target}: {picture.stat().st_size} bytes"


def test_house_edges_are_the_published_figures_and_the_solvers(tables: dict[str, str]) -> None:
    published = json.loads((ROOT / "tests" / "data" / "published_game_ev.json").read_text())
    stored = json.loads((RESULTS / "house-edges" / "house-edges.json").read_text())
    cases = published["composition_dependent"] + published["basic_strategy"]
    assert [(g["name"], g["published_ev"]) for g in stored["games"]] == [(c["name"], c["ev"]) for c in cases]
    table = rows(tables["house-edges"])
    assert len(table) == len(cases)
    for row, game in zip(table, stored["games"], strict=True):
        assert row[0] == game["name"]
        assert float(row[3]) == -100 * game["published_ev"] or abs(float(row[3]) + 100 * game["published_ev"]) < 1e-12
        assert float(row[4]) == pytest.approx(-100 * game["exact_ev"], abs=5e-6)
        assert abs(float(row[5])) < 0.001  # the agreement the page states: within 0.001 points
    # the stored exact values are the solver's (one basic-strategy case, seconds)
    from blackjack_env import Rules
    from blackjack_env.solver import solve

    game = next(g for g in stored["games"] if g["kind"] == "basic strategy")
    assert solve(Rules.from_dict(game["rules"])).ev == pytest.approx(game["exact_ev"], abs=1e-12)
    cut = stored["cut_card"]
    assert f"{cut['simulated_house_edge_percent']:.4f}%" in tables["cut-card"]


def test_tabular_and_ppo_tables_are_the_runs_last_evaluations(tables: dict[str, str]) -> None:
    for row in rows(tables["tabular"]):
        run = row[0].strip("`")
        summary = json.loads((RESULTS / run / "summary.json").read_text())
        assert row[4] == f"{summary['final_pp']['exact_ev_gap']:+.4f}"
        assert float(row[4]) == pytest.approx(100 * last_row(RESULTS / run / "metrics.csv")["exact_ev_gap"], abs=5e-5)
    ppo = rows(tables["ppo"])
    assert {row[0].strip("`") for row in ppo} == {
        p.parent.name for p in RESULTS.glob("ppo-*/metrics.csv") if p.parent.name != "ppo-shoe-1e7"
    }
    for row in ppo:
        last = last_row(RESULTS / row[0].strip("`") / "metrics.csv")
        assert row[3] == f"{int(last['step']):,}"
        assert row[4] == f"{100 * last['exact_ev_gap']:+.3f}"
    defaults = [row for row in ppo if row[1] == "the reference settings"]
    assert len(defaults) >= 4 and all(abs(float(row[4])) <= 0.15 for row in defaults)  # the page says so


def test_batch_ppo_table_is_the_runs_last_evaluations(tables: dict[str, str]) -> None:
    table = rows(tables["batch-ppo"])
    assert {row[0].strip("`") for row in table} == {p.parent.name for p in RESULTS.glob("batch-ppo-*/metrics.csv")}
    for row in table:
        run = RESULTS / row[0].strip("`")
        curve = R.read_csv(run / "metrics.csv")
        config = json.loads((run / "config.json").read_text())["args"]
        defaults = json.loads((RESULTS / R.BATCH_PPO_REFERENCE / "config.json").read_text())["args"]
        changed = [key for key in R.BATCH_PPO_SETTINGS if config[key] != defaults[key]]
        assert row[2] == str(config["seed"])
        assert row[1] == "the first defaults" if not changed else all(f"`{key}`" in row[1] for key in changed)
        assert row[3] == f"{int(curve[-1]['step']):,}" and row[4] == f"{100 * curve[-1]['exact_ev_gap']:+.3f}"
        first = next((r for r in curve if 100 * r["exact_ev_gap"] >= -0.05), None)
        assert row[8] == (f"{int(first['step']):,} ({first['wall_s'] / 60:.1f} min)" if first else "not reached")


@pytest.mark.parametrize("name", sorted(R.BATCH_PPO_PAIRED))
def test_batch_ppo_paired_tables_are_each_seeds_two_runs(tables: dict[str, str], name: str) -> None:
    paired = R.BATCH_PPO_PAIRED[name]
    table = rows(tables[name])
    differences = []
    for row, seed in zip(table, paired.seeds, strict=False):
        before, after = (RESULTS / side[1].format(seed=seed) for side in (paired.before, paired.after))
        assert all(json.loads((run / "config.json").read_text())["args"]["seed"] == seed for run in (before, after))
        gaps = [100 * last_row(run / "metrics.csv")["exact_ev_gap"] for run in (before, after)]
        assert (row[0], row[1], row[3]) == (str(seed), f"{gaps[0]:+.3f}", f"{gaps[1]:+.3f}")
        differences.append(gaps[1] - gaps[0])
    assert len(table) == len(paired.seeds) + 1
    assert table[-1][5].startswith(f"{sum(differences) / len(differences):+.3f} ")


def test_the_first_paired_comparison_is_the_first_defaults_change() -> None:
    """Its sides are the first defaults and the first change: the expected reward, 0.02 and 2e7 steps."""
    paired = R.BATCH_PPO_PAIRED["batch-ppo-paired"]
    for seed in paired.seeds:
        before, after = (
            json.loads((RESULTS / side[1].format(seed=seed) / "config.json").read_text())["args"]
            for side in (paired.before, paired.after)
        )
        assert (before["ent_coef"], before["reward"], before["steps"]) == (0.01, "sampled", 30_000_000)
        assert (after["ent_coef"], after["reward"], after["steps"]) == (0.02, "expected", 20_000_000)


def test_the_defaults_paired_comparison_ends_on_todays_defaults() -> None:
    """The comparison the results page names for the one-round defaults ends on what they are now: its
    second side's runs differ from `blackjack-train --algo batch-ppo` in no setting but the seed."""
    pytest.importorskip("torch")
    from blackjack_env.train.cli import build_parser, resolve_args

    defaults = vars(resolve_args(build_parser().parse_args(["--algo", "batch-ppo"])))
    paired = R.BATCH_PPO_PAIRED[R.BATCH_PPO_DEFAULTS_PAIRED]
    for seed in paired.seeds:
        args = json.loads((RESULTS / paired.after[1].format(seed=seed) / "config.json").read_text())["args"]
        assert {key: args[key] for key in R.BATCH_PPO_SETTINGS} == {key: defaults[key] for key in R.BATCH_PPO_SETTINGS}


def test_learning_to_count_tables_are_the_results_files(tables: dict[str, str]) -> None:
    data = json.loads((RESULTS / "learning-to-count" / "results.json").read_text())
    flat = {row[0]: row for row in rows(tables["learning-to-count-flat"])}
    for key, label in R.LEARNERS.items():
        assert flat[label][1].startswith(f"{data['flat']['seat 1 of 3'][key]['vs_reference_per_100']:+.3f} ")
    bets = rows(tables["learning-to-count-bets"])
    assert bets[1][3].startswith(f"{data['bets']['count-table']['vs_reference_per_100']:+.3f} ")
    ceiling = json.loads((RESULTS / "ceiling" / "seat-1-of-3.json").read_text())["ceiling"]
    assert f"**{ceiling['gain_per_100']:+.3f} (" in tables["ceiling"]
    assert data["ceiling"]["gain_per_100"] == ceiling["gain_per_100"]  # the share's ceiling is this one
    flat1 = json.loads((RESULTS / "linear-s1" / "evaluate-flat-seat1.json").read_text())
    assert f"**{100 * flat1['ev_diff']:+.3f} (" in tables["linear-every-seat"]
    shoe = rows(tables["ppo-shoe"])
    last = last_row(RESULTS / "ppo-shoe-1e7" / "metrics.csv")
    assert shoe[-1][0] == f"{int(last['step']):,}" and shoe[-1][4].startswith(f"{100 * last['flat_gain']:+.2f} ")
    batch = rows(tables["shoe-batch-ppo"])
    runs = sorted(p.parent for p in RESULTS.glob("shoe-batch-ppo-*/metrics.csv"))
    assert [row[0] for row in batch] == [f"`{run.name}`" for run in runs] and runs
    for row, run in zip(batch, runs, strict=True):
        last = last_row(run / "metrics.csv")
        assert row[5] == f"{last['avg_bet']:.3f}" and row[7].startswith(f"{100 * last['flat_gain']:+.2f} ")


def test_the_shoe_marks_are_todays_defaults_scored_as_the_table_says(tables: dict[str, str]) -> None:
    """The shoe's batch-PPO marks table: a row per scored run, its EV the file's, and every scored run
    trained on today's shoe defaults (``--env shoe --algo batch-ppo``) at bets 1, 2, 4, 8, 75% dealt."""
    pytest.importorskip("torch")
    from blackjack_env.train.cli import build_parser, resolve_args

    defaults = vars(resolve_args(build_parser().parse_args(["--env", "shoe", "--algo", "batch-ppo"])))
    files = sorted(p for p in (RESULTS / R.SHOE_MARKS).glob("*.json") if p.name != "hilo.json")
    marks = rows(tables[R.SHOE_MARKS])
    assert [row[0] for row in marks] == [f"`{path.stem}`" for path in files] and len(files) >= 5
    for row, path in zip(marks, files, strict=True):
        scored = json.loads(path.read_text())
        assert row[5].startswith(f"{100 * scored['ev']:+.2f} ") and scored["rounds"] >= 10_000_000
        assert scored["bets"] == [1.0, 2.0, 4.0, 8.0] and scored["rules"]["penetration"] == 0.75
        args = json.loads((RESULTS / path.stem / "config.json").read_text())["args"]
        assert {key: args[key] for key in R.BATCH_PPO_SETTINGS} == {key: defaults[key] for key in R.BATCH_PPO_SETTINGS}


def test_the_prose_figures_are_the_files() -> None:
    """Figures written by hand in the pages' prose, each against the file it comes from."""
    data = json.loads((RESULTS / "learning-to-count" / "results.json").read_text())
    text = (DOCS / "results" / "learning-to-count.md").read_text()
    assert f"exports {data['count_table_entries']} index entries" in text
    assert "stopped after 586,940,416\nrounds" in text
    assert "interrupted at step 586940416" in (RESULTS / "linear-s1" / "train.log").read_text()
    flat = data["flat"]["seat 1 of 3"]
    ratio = flat["count-table"]["vs_reference_per_100"] / flat["hilo-i18-fab4"]["vs_reference_per_100"]
    assert f"{ratio:.1f} times Hi-Lo I18 + Fab 4" in text
    assert data["bets"]["count-table"]["ev_per_100"] / data["bets"]["hilo-i18-fab4-ev-max"]["ev_per_100"] < 1.1
    behind = [-100 * row["gain_vs_hilo"] for row in R.read_csv(RESULTS / "ppo-shoe-1e7" / "metrics.csv")[1:]]
    assert f"between {min(behind):.1f} and {max(behind):.1f} units" in text
    wall = last_row(RESULTS / "ppo-shoe-1e7" / "metrics.csv")["wall_s"]
    assert 1.5 * 3600 < wall < 2.5 * 3600  # "about 2 hours"


def test_speed_figures_are_measured_ones() -> None:
    """Every figure on the speed page is in the recorded measurements or a speed file of benchmarks/results."""
    sources = (RESULTS / "speed" / "measurements.md").read_text()
    sources += "".join(p.read_text() for p in RESULTS.glob("**/speed.txt"))
    text = (DOCS / "results" / "speed.md").read_text()
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # the commands
    figures = re.findall(
        r"(?<![\w.])\d[\d,]*\.\d+(?:-\d[\d,]*\.\d+)?|(?<![\w.])\d{1,3}(?:,\d{3})+(?:-\d{1,3}(?:,\d{3})+)?", text
    )
    assert len(figures) > 20
    missing = [figure for figure in figures if figure not in sources]
    assert not missing, missing
