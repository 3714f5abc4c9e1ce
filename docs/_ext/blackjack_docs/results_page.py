"""The results pages' tables, from the measurements kept in ``benchmarks/results/``.

Each table is a Markdown file ``docs/generated/results/<name>.inc`` (not a page of its own: the
hand-written pages under ``docs/results/`` include it), built by one function of the results folder
(``TABLES``), so a page shows what the results files hold and nothing else; ``tests/test_docs_results.py``
holds the tables to the files read independently.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any

from .write import write_text

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "benchmarks" / "results"


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def read_csv(path: Path) -> list[dict[str, float]]:
    with path.open(newline="") as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown pipe table ("|" in a cell escaped)."""
    cells = [[str(c).replace("|", "\\|") for c in row] for row in [header, *rows]]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in cells[1:]]
    return "\n".join(lines) + "\n"


def signed(x: float, digits: int = 3) -> str:
    return f"{x:+.{digits}f}"


def interval(low: float, high: float, digits: int = 3) -> str:
    return f"{low:+.{digits}f} .. {high:+.{digits}f}"


def with_ci(x: float, ci: list[float] | tuple[float, float], digits: int = 3, scale: float = 1.0) -> str:
    return f"{signed(scale * x, digits)} ({interval(scale * ci[0], scale * ci[1], digits)})"


def percent(share: float, ci: list[float]) -> str:
    return f"{100 * share:.0f}% ({100 * ci[0]:.0f} .. {100 * ci[1]:.0f}%)"


def count(n: float) -> str:
    return f"{int(n):,}"


def published_percent(ev: float) -> str:
    """A published EV as a house edge in percent, digit for digit (no digit added or dropped)."""
    edge = -Decimal(repr(ev)) * 100
    return format(edge.normalize(), "f")


# --- exact house edges ---------------------------------------------------------------------------


def house_edges(results: Path) -> str:
    data = read_json(results / "house-edges" / "house-edges.json")
    rows = []
    for game in data["games"]:
        diff = f"{-100 * (game['exact_ev'] - game['published_ev']):+.5f}".replace("-0.00000", "0.00000")
        basic = f"{-100 * game['basic_ev']:.5f}" if game["kind"] == "composition-dependent" else ""
        rows.append(
            [
                game["name"],
                game["game"],
                game["kind"],
                published_percent(game["published_ev"]),
                f"{-100 * game['exact_ev']:.5f}",
                diff,
                basic,
                game["source"],
            ]
        )
    header = [
        "published game",
        "rules here",
        "strategy",
        "published house edge, %",
        "exact here, %",
        "here minus published, pp",
        "basic strategy here, %",
        "source",
    ]
    return table(header, rows)


def cut_card(results: Path) -> str:
    cut = read_json(results / "house-edges" / "house-edges.json")["cut_card"]
    published = cut["published_house_edge_percent"]
    low, high = cut["simulated_house_edge_percent_ci95"]
    rows = [
        ["game", cut["game"]],
        ["cut card", cut["cut_card"]],
        ["published: qfit.com", f"{published['qfit']}%"],
        [
            "published: Hoppe's simulation",
            f"{published['hoppe_simulation']}% +- {published['hoppe_simulation_stderr']}% (standard error)",
        ],
        ["published: Wizard of Odds calculator", f"{published['wizard_of_odds_calculator']}%"],
        [
            "simulated here, basic strategy to the cut card",
            f"{cut['simulated_house_edge_percent']:.4f}% (95% CI {low:.4f} .. {high:.4f}%), "
            f"{count(cut['rounds'])} rounds, seed {cut['seed']}",
        ],
        [
            "exact here, off the top of a fresh shoe (no cut card)",
            f"{cut['exact_off_the_top_house_edge_percent']:.4f}%",
        ],
    ]
    return table(["", "house edge"], rows)


# --- one-round learners --------------------------------------------------------------------------

TABULAR_RUNS = ("tabular-sampled-default", "tabular-expected")


def tabular(results: Path) -> str:
    rows = []
    for name in TABULAR_RUNS:
        s = read_json(results / name / "summary.json")
        final = s["final_pp"]
        first = s["first_within"]["0.05 pp"]
        rows.append(
            [
                f"`{name}`",
                s["config"]["reward"],
                count(s["steps"]),
                f"{s['wall_s']:.1f}",
                f"{final['exact_ev_gap']:+.4f}",
                f"{final['ev_gap']:+.4f} ({final['ev_gap_low']:+.4f} .. {final['ev_gap_high']:+.4f}), "
                f"{count(s['final_rounds'])} rounds",
                f"{100 * s['final_agreement']:.2f}%",
                f"{count(first['exact']['step'])} steps, {first['exact']['wall_s']} s",
                f"{count(first['paired_ci_low']['step'])} steps, {first['paired_ci_low']['wall_s']} s",
            ]
        )
    header = [
        "run",
        "reward",
        "steps",
        "wall s",
        "exact gap, pp",
        "paired gap, pp (95% CI)",
        "agreement",
        "first within 0.05 pp, exact",
        "first within 0.05 pp, paired CI",
    ]
    return table(header, rows)


PPO_SETTINGS = (
    "reward",
    "n_envs",
    "n_steps",
    "batch_size",
    "n_epochs",
    "learning_rate",
    "lr_schedule",
    "gamma",
    "gae_lambda",
    "ent_coef",
    "net_arch",
)


#: The run whose settings the others are told apart from (the four seeds' settings).
PPO_REFERENCE = "ppo-rollout16k-seed0"


def ppo_defaults(results: Path = RESULTS) -> dict[str, Any]:
    """The reference run's PPO settings."""
    args = read_json(results / PPO_REFERENCE / "config.json")["args"]
    return {name: args[name] for name in PPO_SETTINGS}


def ppo_runs(results: Path) -> list[Path]:
    """The one-round PPO runs (a metrics.csv, no shoe), those on the reference settings first."""
    runs = [p.parent for p in sorted(results.glob("ppo-*/metrics.csv"))]
    runs = [run for run in runs if read_json(run / "config.json")["args"].get("env", "round") == "round"]
    defaults = ppo_defaults(results)
    return sorted(runs, key=lambda run: (len(ppo_changes(run, defaults)), run.name))


#: A setting a run's config.json lacks: the run is older than the option, and ran as this says.
BEFORE_OPTION = {"lr_schedule": "constant"}


def ppo_changes(run: Path, defaults: dict[str, Any]) -> list[str]:
    args = {**BEFORE_OPTION, **read_json(run / "config.json")["args"]}
    return [f"`{k}` {args[k]}" for k in PPO_SETTINGS if k in args and args[k] != defaults[k]]


def last_evaluation(curve: list[dict[str, float]]) -> list[str]:
    """A run's last evaluation as table cells: its steps, exact gap, paired gap (95% CI) and agreement."""
    last = curve[-1]
    return [
        count(last["step"]),
        f"{100 * last['exact_ev_gap']:+.3f}",
        f"{100 * last['ev_gap']:+.3f} ({100 * last['ev_gap_low']:+.3f} .. {100 * last['ev_gap_high']:+.3f})",
        f"{100 * last['agreement']:.1f}%",
    ]


def ppo(results: Path) -> str:
    defaults = ppo_defaults(results)
    rows = []
    for run in ppo_runs(results):
        args = read_json(run / "config.json")["args"]
        curve = read_csv(run / "metrics.csv")
        last = curve[-1]
        within = next((row["step"] for row in curve if 100 * row["exact_ev_gap"] >= -0.15), None)
        rows.append(
            [
                f"`{run.name}`",
                ", ".join(ppo_changes(run, defaults)) or "the reference settings",
                str(args["seed"]),
                *last_evaluation(curve),
                count(within) if within is not None else "not reached",
                f"{last['wall_s']:.0f}",
            ]
        )
    eval_rounds = read_json(ppo_runs(results)[0] / "config.json")["args"]["eval_rounds"]
    header = [
        "run",
        "settings other than the reference",
        "seed",
        "steps",
        "exact gap, pp",
        f"paired gap, pp (95% CI, {count(eval_rounds)} rounds)",
        "agreement",
        "first within 0.15 pp (exact), step",
        "wall s",
    ]
    return table(header, rows)


BATCH_PPO_GLOB = "batch-ppo-*"
#: The run on batch-PPO's first defaults (entropy bonus 0.01, the dealt result, 3e7 steps) that the others
#: are told apart from.
BATCH_PPO_REFERENCE = "batch-ppo-seed101"
FIRST_DEFAULTS = "the first defaults"


@dataclass(frozen=True)
class Paired:
    """Two settings run on the same seeds: each side's label and run folder (``{seed}`` filled in)."""

    before: tuple[str, str]
    after: tuple[str, str]
    seeds: tuple[int, ...]


#: The paired comparisons of batch-PPO settings, each a table of the results page.
BATCH_PPO_PAIRED = {
    "batch-ppo-paired": Paired(
        ("the first defaults", "batch-ppo-seed{seed}"),
        ("expected, entropy 0.02", "batch-ppo-expected-ent0.02-seed{seed}"),
        (301, 302, 303, 304, 305),
    ),
    "batch-ppo-paired-ent0.04": Paired(
        ("expected, entropy 0.02", "batch-ppo-expected-ent0.02-seed{seed}"),
        ("expected, entropy 0.04", "batch-ppo-expected-ent0.04-seed{seed}"),
        (302, 303, 304, 305, 306),
    ),
    "batch-ppo-paired-steps": Paired(
        ("2e7 steps", "batch-ppo-expected-ent0.04-seed{seed}"),
        ("2.5e7 steps", "batch-ppo-expected-ent0.04-2.5e7-seed{seed}"),
        (401, 402, 403),
    ),
    "batch-ppo-paired-3e7": Paired(
        ("2e7 steps", "batch-ppo-expected-ent0.04-seed{seed}"),
        ("3e7 steps", "batch-ppo-expected-ent0.04-3e7-seed{seed}"),
        (801, 802, 803, 804, 805),
    ),
    "batch-ppo-paired-explore": Paired(
        ("the defaults", "batch-ppo-expected-ent0.04-seed{seed}"),
        ("exploring starts 0.25", "batch-ppo-expected-ent0.04-explore0.25-seed{seed}"),
        (302, 305, 406, 801, 802),
    ),
}
#: The comparison whose second side is batch-PPO's one-round defaults today.
BATCH_PPO_DEFAULTS_PAIRED = "batch-ppo-paired-3e7"
BATCH_PPO_SETTINGS = (
    "steps",
    "reward",
    "ent_coef",
    "explore_starts",
    "n_envs",
    "n_steps",
    "batch_size",
    "n_epochs",
    "learning_rate",
    "lr_schedule",
    "gae_lambda",
    "net_arch",
)


def batch_ppo_changes(run: Path, results: Path) -> str:
    """The settings in which a run differs from the first defaults' run, or "the first defaults"."""
    defaults = read_json(results / BATCH_PPO_REFERENCE / "config.json")["args"]
    args = read_json(run / "config.json")["args"]
    changed = [
        f"`{key}` {args[key]:g}" if isinstance(args[key], float) else f"`{key}` {args[key]}"
        for key in BATCH_PPO_SETTINGS
        if args[key] != defaults[key]
    ]
    return ", ".join(changed) or FIRST_DEFAULTS


def batch_ppo_runs(results: Path) -> list[Path]:
    """The batch-PPO runs kept (each a metrics.csv and config.json): the first defaults', then by change and seed."""
    changes = {p.parent: batch_ppo_changes(p.parent, results) for p in results.glob(f"{BATCH_PPO_GLOB}/metrics.csv")}
    return sorted(changes, key=lambda run: (changes[run] != FIRST_DEFAULTS, changes[run], run.name))


def first_step_within(curve: list[dict[str, float]], target_pp: float) -> str:
    """The first evaluation whose exact gap is within target_pp points: its step and wall time."""
    row = next((row for row in curve if 100 * row["exact_ev_gap"] >= -target_pp), None)
    return "not reached" if row is None else f"{count(row['step'])} ({row['wall_s'] / 60:.1f} min)"


def batch_ppo(results: Path) -> str:
    rows = []
    for run in batch_ppo_runs(results):
        args = read_json(run / "config.json")["args"]
        curve = read_csv(run / "metrics.csv")
        rows.append(
            [
                f"`{run.name}`",
                batch_ppo_changes(run, results),
                str(args["seed"]),
                *last_evaluation(curve),
                first_step_within(curve, 0.15),
                first_step_within(curve, 0.05),
                f"{curve[-1]['wall_s'] / 60:.1f}",
            ]
        )
    eval_rounds = read_json(batch_ppo_runs(results)[0] / "config.json")["args"]["eval_rounds"]
    header = [
        "run",
        "settings other than the first defaults",
        "seed",
        "steps",
        "exact gap, pp",
        f"paired gap, pp (95% CI, {count(eval_rounds)} rounds)",
        "agreement",
        "first within 0.15 pp (exact): step (time)",
        "first within 0.05 pp (exact): step (time)",
        "wall min",
    ]
    return table(header, rows)


def batch_ppo_paired(paired: Paired, results: Path) -> str:
    """Two settings on the same seeds: each seed's final exact gaps and wall times, then the mean
    difference with its standard error over the seeds, and on how many seeds the second was closer."""
    rows, differences = [], []
    for seed in paired.seeds:
        before, after = (
            read_csv(results / side[1].format(seed=seed) / "metrics.csv")[-1] for side in (paired.before, paired.after)
        )
        difference = 100 * (after["exact_ev_gap"] - before["exact_ev_gap"])
        differences.append(difference)
        rows.append(
            [
                str(seed),
                f"{100 * before['exact_ev_gap']:+.3f}",
                f"{before['wall_s'] / 60:.1f}",
                f"{100 * after['exact_ev_gap']:+.3f}",
                f"{after['wall_s'] / 60:.1f}",
                f"{difference:+.3f}",
            ]
        )
    n = len(differences)
    mean = sum(differences) / n
    sd = (sum((d - mean) ** 2 for d in differences) / (n - 1)) ** 0.5
    won = sum(d > 0 for d in differences)
    rows.append(["mean", "", "", "", "", f"{mean:+.3f} (standard error {sd / n**0.5:.3f}; closer on {won} of {n})"])
    header = [
        "seed",
        f"{paired.before[0]}: exact gap, pp",
        "wall min",
        f"{paired.after[0]}: exact gap, pp",
        "wall min",
        "second minus first, pp",
    ]
    return table(header, rows)


#: Seeds run on batch-PPO's one-round settings at 2e7 and at 3e7 steps, by the run folder's name: at 2e7
#: none chose a setting; at 3e7 seeds 1001-1005 are fresh, 305 (the one beyond the mark at 2e7) and
#: 801-805 (the earlier comparison of steps) are not.
BATCH_PPO_EXPORTED = {
    "batch-ppo-exported": (
        "batch-ppo-expected-ent0.04-seed{seed}",
        (302, 303, 304, 305, 306, 401, 402, 403, 404, 405, 406, 801, 802, 803, 804, 805),
    ),
    "batch-ppo-exported-3e7": (
        "batch-ppo-expected-ent0.04-3e7-seed{seed}",
        (1001, 1002, 1003, 1004, 1005, 305, 801, 802, 803, 804, 805),
    ),
}
#: The mark of the one-round game: the exported policy within this many points of basic strategy.
ROUND_MARK_PP = 0.02


def batch_ppo_exported(runs: str, seeds: tuple[int, ...], results: Path) -> str:
    """Runs of one setting on many seeds: each run's last evaluation beside its best one, whose network
    the run exports (both priced exactly), and how many of each are within the mark."""
    rows, last_within, best_within = [], 0, 0
    for seed in seeds:
        curve = read_csv(results / runs.format(seed=seed) / "metrics.csv")
        last, best = curve[-1], max(curve, key=lambda row: row["exact_ev_gap"])
        last_within += 100 * last["exact_ev_gap"] >= -ROUND_MARK_PP
        best_within += 100 * best["exact_ev_gap"] >= -ROUND_MARK_PP
        rows.append(
            [
                str(seed),
                f"{100 * last['exact_ev_gap']:+.3f}",
                f"{100 * best['exact_ev_gap']:+.3f}",
                count(best["step"]),
                f"{last['wall_s'] / 60:.1f}",
            ]
        )
    n = len(rows)
    rows.append([f"within {ROUND_MARK_PP} pp", f"{last_within} of {n}", f"{best_within} of {n}", "", ""])
    header = ["seed", "last evaluation: exact gap, pp", "exported (best evaluation): exact gap, pp", "its step"]
    header.append("wall min")
    return table(header, rows)


# --- learning to count ---------------------------------------------------------------------------

LEARNERS = {
    "count-table": "count-table learner (Hi-Lo)",
    "composition": "composition learner",
    "hilo-i18-fab4": "Hi-Lo I18 + Fab 4",
}


def learning_to_count_flat(results: Path) -> str:
    data = read_json(results / "learning-to-count" / "results.json")
    flat = data["flat"]
    rows = []
    for key, label in LEARNERS.items():
        one, zero = flat["seat 1 of 3"][key], flat["seat 0 of 3"][key]
        share = one["share_of_ceiling"]
        rows.append(
            [
                label,
                with_ci(one["vs_reference_per_100"], one["ci95"]),
                percent(share["share"], share["ci95"]),
                with_ci(zero["vs_reference_per_100"], zero["ci95"]),
            ]
        )
    ceiling = data["ceiling"]
    header = [
        "flat bet of 1: gain over basic strategy per 100 rounds (95% CI)",
        "seat 1 of 3",
        f"share of the ceiling at seat 1 of 3 ({signed(ceiling['gain_per_100'])})",
        "seat 0 of 3",
    ]
    return table(header, rows)


def learning_to_count_bets(results: Path) -> str:
    data = read_json(results / "learning-to-count" / "results.json")
    bets = data["bets"]
    ramp = ", ".join(f"{bet:g} from {tc:+g}" for tc, bet in data["hilo_ev_max_ramp"])
    rows = [
        [
            "Hi-Lo I18 + Fab 4, bets EV-maximised (" + ramp + ")",
            signed(bets["hilo-i18-fab4-ev-max"]["ev_per_100"]),
            f"{bets['hilo-i18-fab4-ev-max']['avg_bet']:.3f}",
            "",
        ]
    ]
    for key, label in (
        ("count-table", LEARNERS["count-table"]),
        ("composition", LEARNERS["composition"]),
        ("basic", "basic strategy, flat"),
    ):
        row = bets[key]
        rows.append(
            [
                label,
                signed(row["ev_per_100"]),
                f"{row['avg_bet']:.3f}",
                with_ci(row["vs_reference_per_100"], row["ci95"]),
            ]
        )
    header = ["bets 1, 2, 4, 8, one seat", "EV per 100 rounds", "average bet", "minus Hi-Lo I18 + Fab 4 (95% CI)"]
    return table(header, rows)


def learning_to_count_runs(results: Path) -> str:
    data = read_json(results / "learning-to-count" / "results.json")
    rows = []
    for key in ("count-table", "composition"):
        run = data["training"][key]
        rows.append(
            [
                LEARNERS[key],
                f"`{run['run']}`",
                count(run["rounds"]),
                f"{run['wall_s']:,.0f}",
                count(run["rounds_per_s"]),
                str(run["train_seed"]),
            ]
        )
    return table(["learner", "run", "rounds learned", "wall s (one core)", "rounds/s", "seed"], rows)


def learning_to_count_game(results: Path) -> dict[str, Any]:
    data = read_json(results / "learning-to-count" / "results.json")
    return {
        "game": data["game"],
        "seed": data["seed"],
        "rounds": data["rounds"],
        "entries": data["count_table_entries"],
    }


CEILINGS = (("one-seat", "one seat"), ("seat-1-of-3", "seat 1 of 3"))


def ceiling(results: Path) -> str:
    runs = [read_json(results / "ceiling" / f"{name}.json") for name, _ in CEILINGS]
    c = [run["ceiling"] for run in runs]

    def per100(x: float) -> str:
        return signed(100 * x)

    def both(f: Callable[[dict[str, Any]], str]) -> list[str]:
        return [f(run) for run in runs]

    rows = [
        ["game", *(run["ceiling"]["description"] for run in runs)],
        ["shoes analysed exactly (stratified sample)", *(count(x["samples"]) for x in c)],
        [
            "basic strategy, exact mean over the shoes",
            *(with_ci(x["basic_ev"], x["basic_ev_ci95"], scale=100) for x in c),
        ],
        [
            "basic strategy, simulated to the cut card",
            *(
                f"{with_ci(run['simulated']['basic_ev'], run['simulated']['basic_ev_ci95'], scale=100)}, "
                f"{count(run['simulated']['rounds'])} rounds"
                for run in runs
            ),
        ],
        [
            "**ceiling: the perfect player's flat-bet gain**",
            *(f"**{with_ci(x['gain_per_100'], x['gain_per_100_ci95'])}**" for x in c),
        ],
        *[
            [
                label + ": paired flat-bet gain; share of the ceiling",
                *both(
                    lambda run, key=key: (
                        with_ci(run["gains"][key]["gain"], run["gains"][key]["gain_ci95"], scale=100)
                        + "; "
                        + percent(run["gains"][key]["share"]["share"], run["gains"][key]["share"]["ci95"])
                    )
                ),
            ]
            for key, label in (
                ("hilo-i18-fab4", "Hi-Lo I18 + Fab 4"),
                ("hilo-generated", f"Hi-Lo with all {runs[0]['generated_indices']} generated indices"),
            )
        ],
        [
            "the round's own cards (not in the ceiling)",
            *(with_ci(x["in_round_gain"]["mean"], x["in_round_gain"]["ci95"], scale=100) for x in c),
        ],
    ]
    bets = sorted({tuple(b["bets"]) for run in runs for b in run["bettors"]})
    for pair in bets:
        cells = []
        for run in runs:
            found = [b for b in run["bettors"] if tuple(b["bets"]) == pair]
            if not found:
                cells.append("")
                continue
            b = found[0]
            cells.append(
                f"perfect bettor {interval(*b['perfect']['win_per_100_ci95'])}; Hi-Lo I18 + Fab 4 (top bet from "
                f"true count {b['hilo_threshold']:+d}) {interval(*b['hilo_win_per_100_ci95'])}"
            )
        rows.append([f"win per 100 rounds, bets {pair[0]:g} or {pair[1]:g}", *cells])
    rows += [
        [
            "sampling: strata, recorded rounds; gain's standard error (plain sampling of as many shoes)",
            *(
                f"{x['sampling']['strata']} strata of {count(x['sampling']['pool'])} rounds; "
                f"{100 * x['sampling']['gain_stderr']:.4f} ({100 * x['sampling']['gain_stderr_plain']:.4f}), "
                f"variance / {x['sampling']['variance_reduction']:.1f}"
                for x in c
            ),
        ],
        [
            "time (2 workers)",
            *(
                f"{x['seconds']:,.0f} s, {run['ceiling_samples_per_second']:.3f} shoes/s"
                for x, run in zip(c, runs, strict=True)
            ),
        ],
    ]
    return table(["per 100 rounds, 95% CIs", *(label for _, label in CEILINGS)], rows)


LINEAR_EVALUATIONS = (
    ("evaluate-flat-seat1.json", "flat bet, against basic strategy, seat 1 of 3"),
    ("evaluate-flat-seat0.json", "flat bet, against basic strategy, seat 0 of 3"),
    (
        "evaluate-bets-seat0.json",
        "bets 1, 2, 4, 8 against Hi-Lo I18 + Fab 4 with the same bets EV-maximised, seat 0 of 3",
    ),
    ("evaluate-bets-one-seat.json", "bets 1, 2, 4, 8 against the same Hi-Lo, one seat"),
)


def linear_every_seat(results: Path) -> str:
    rows = []
    for name, label in LINEAR_EVALUATIONS:
        e = read_json(results / "linear-s1" / name)
        rows.append(
            [
                label,
                signed(100 * e["ev"]),
                signed(100 * e["baseline_ev"]),
                f"**{with_ci(e['ev_diff'], e['ev_diff_ci95'], scale=100)}**",
                f"{count(e['paired_rounds'])}, seed {e['seed']}",
            ]
        )
    return table(["per 100 rounds, 95% CIs", "learned", "other", "difference", "paired rounds"], rows)


#: The columns of a shoe learner's evaluation, per 100 rounds, after its steps.
SHOE_EVALUATION_HEADER = [
    "EV with its bets",
    "average bet",
    "its bets and play minus basic strategy (paired)",
    "its play at a flat bet minus basic strategy (paired)",
    "minus Hi-Lo I18 + Fab 4, EV-maximised bets (other shoes)",
]


def shoe_evaluation(r: dict[str, float]) -> list[str]:
    """One evaluation row of a shoe learner's metrics.csv as table cells (SHOE_EVALUATION_HEADER)."""
    return [
        f"{100 * r['ev']:+.2f}",
        f"{r['avg_bet']:.3f}",
        *(
            with_ci(r[key], [r[f"{key}_low"], r[f"{key}_high"]], 2, 100)
            for key in ("gain_vs_basic", "flat_gain", "gain_vs_hilo")
        ),
    ]


def ppo_shoe(results: Path) -> str:
    rows = [[count(r["step"]), *shoe_evaluation(r)] for r in read_csv(results / "ppo-shoe-1e7" / "metrics.csv")]
    return table(["steps", *SHOE_EVALUATION_HEADER], rows)


def shoe_batch_ppo(results: Path) -> str:
    """Each kept shoe batch-PPO run's last evaluation, with its reward and entropy bonus."""
    rows = []
    for run in sorted(p.parent for p in results.glob("shoe-batch-ppo-*/metrics.csv")):
        args = read_json(run / "config.json")["args"]
        last = read_csv(run / "metrics.csv")[-1]
        settings = f"reward {args['reward']}, entropy bonus {args['ent_coef']:g}"
        cells = [f"`{run.name}`", settings, str(args["seed"]), count(last["step"]), *shoe_evaluation(last)]
        rows.append([*cells, f"{last['wall_s'] / 60:.1f}"])
    return table(["run", "settings", "seed", "steps", *SHOE_EVALUATION_HEADER, "wall min"], rows)


#: Folders of shoe batch-PPO runs scored on their own shoes (``blackjack-evaluate --policy RUN_DIR --json``,
#: one file a run, named by its training run): the marks (fresh seeds on the defaults, beside Hi-Lo I18 +
#: Fab 4's ``hilo.json``) and the steps compared on the seeds that chose the defaults (the same Hi-Lo).
SHOE_MARKS = "shoe-batch-ppo-marks"
SHOE_STEPS = "shoe-batch-ppo-steps"
#: MaskablePPO on the shoe with batched PPO's settings, scored as the batch-PPO runs are.
SHOE_PPO_SCORED = "shoe-ppo-scored"


def scored_shoe_runs(name: str, results: Path) -> str:
    """Each shoe network's run scored in folder ``name``, per 100 rounds with 95% CIs: its EV with its bets,
    its gains over basic strategy on the same shoes, and its EV minus Hi-Lo I18 + Fab 4's with the same
    bets (other shoes: the intervals combined)."""
    folder = results / name
    hilo = read_json(results / SHOE_MARKS / "hilo.json")
    rows = []
    for path in sorted(p for p in folder.glob("*.json") if p.name != "hilo.json"):
        e = read_json(path)
        run = results / path.stem
        last = read_csv(run / "metrics.csv")[-1]
        vs_hilo = e["ev"] - hilo["ev"]
        half = 1.96 * math.hypot(e["stderr"], hilo["stderr"])
        rows.append(
            [
                f"`{path.stem}`",
                str(read_json(run / "config.json")["args"]["seed"]),
                count(last["step"]),
                f"{last['wall_s'] / 60:.1f}",
                f"{count(e['rounds'])}, seed {e['seed']}",
                with_ci(e["ev"], e["ci95"], 2, 100),
                f"{e['avg_bet']:.2f}",
                with_ci(e["ev_diff"], e["ev_diff_ci95"], 2, 100),
                with_ci(e["flat_ev_diff"], e["flat_ev_diff_ci95"], 3, 100),
                with_ci(vs_hilo, [vs_hilo - half, vs_hilo + half], 2, 100),
            ]
        )
    header = [
        "run",
        "seed",
        "steps",
        "training min",
        "rounds scored",
        "EV with its bets",
        "average bet",
        "minus basic strategy (paired)",
        "its play at a flat bet minus basic strategy (paired)",
        f"minus Hi-Lo I18 + Fab 4 ({signed(100 * hilo['ev'], 2)}; other shoes)",
    ]
    return table(header, rows)


#: Every generated table: its file name (without ``.inc``) and the function that builds it.
TABLES: dict[str, Callable[[Path], str]] = {
    "house-edges": house_edges,
    "cut-card": cut_card,
    "tabular": tabular,
    "ppo": ppo,
    "batch-ppo": batch_ppo,
    **{name: partial(batch_ppo_paired, paired) for name, paired in BATCH_PPO_PAIRED.items()},
    **{name: partial(batch_ppo_exported, *runs) for name, runs in BATCH_PPO_EXPORTED.items()},
    "learning-to-count-flat": learning_to_count_flat,
    "learning-to-count-bets": learning_to_count_bets,
    "learning-to-count-runs": learning_to_count_runs,
    "ceiling": ceiling,
    "linear-every-seat": linear_every_seat,
    "ppo-shoe": ppo_shoe,
    "shoe-batch-ppo": shoe_batch_ppo,
    **{name: partial(scored_shoe_runs, name) for name in (SHOE_MARKS, SHOE_STEPS, SHOE_PPO_SCORED)},
}


def write_results(folder: Path, results: Path = RESULTS) -> set[Path]:
    """Write every table into ``folder``; the paths written (or kept unchanged)."""
    paths = set()
    for name, build in TABLES.items():
        path = folder / f"{name}.inc"
        write_text(path, build(results))
        paths.add(path)
    return paths
