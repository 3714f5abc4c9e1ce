"""Learning benchmarks  how fast each learner closes the gap to basic strategy.

    python benchmarks/learning.py --algo tabular --steps 2e9 --eval-every 1e8 --out runs/bench-tabular
    python benchmarks/learning.py --algo ppo --steps 2e6 --eval-every 1e5 --eval-rounds 4e5 --out runs/bench-ppo
    python benchmarks/learning.py --summarize runs/bench-ppo          # a finished blackjack-train run
    python benchmarks/learning.py --plot curves.png runs/a runs/b     # exact-gap curves (steps, wall time)
    python benchmarks/learning.py --plot-shoe ppo.png runs/ppo-shoe   # a --env shoe --algo ppo run's curve

Trains with ``blackjack-train`` (any of its flags after ``--``), then plays the final policy
against basic strategy on the same cards for ``--final-rounds`` rounds, and prints the curve and
the first step and wall time at which the gap came within each target: by the exact analysis of
the tabulated policy, and by the paired 95% interval's far end . Gaps are
in percentage points of the initial bet (policy minus basic strategy). Writes summary.json.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from blackjack_env.agents import load_agent
from blackjack_env.evaluate.columns import with_ci
from blackjack_env.rules import Rules
from blackjack_env.solver import solve
from blackjack_env.train.cli import main as train_main
from blackjack_env.train.evaluation import evaluate_table

TARGETS_PP = (0.02, 0.05, 0.15)


def first_within(rows: list[dict[str, float]], key: str, target_pp: float) -> dict[str, float] | None:
    """The first row whose gap (key) is no worse than -target_pp percentage points."""
    for row in rows:
        if 100 * row[key] >= -target_pp:
            return {"step": int(row["step"]), "wall_s": round(row["wall_s"], 1)}
    return None


def summarize(run: Path, final_rounds: int, seed: int) -> dict:
    rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader((run / "metrics.csv").open())]
    rules = Rules.from_dict(json.loads((run / "rules.json").read_text()))
    solution = solve(rules)
    table = load_agent(run).to_table()
    final = evaluate_table(rules, table, solution, final_rounds, seed=seed)
    summary = {
        "run": str(run),
        "rules": rules.describe(),
        "config": json.loads((run / "config.json").read_text())["args"],
        "steps": int(rows[-1]["step"]),
        "wall_s": round(rows[-1]["wall_s"], 1),
        "final_rounds": final_rounds,
        "final_pp": {k: 100 * v for k, v in final.items() if k != "agreement"},
        "final_agreement": final["agreement"],
        "deviations": [
            f"{d.section} {d.key} vs {d.up}: {d.played} for {d.basic} ({100 * d.cost_per_round:.4f} pp)"
            for d in sorted(solution.deviations(table), key=lambda d: -d.cost_per_round)[:10]
        ],
        "first_within": {
            f"{t} pp": {
                "exact": first_within(rows, "exact_ev_gap", t),
                "paired_ci_low": first_within(rows, "ev_gap_low", t),
            }
            for t in TARGETS_PP
        },
        "curve": [
            {
                "step": int(r["step"]),
                "wall_s": round(r["wall_s"], 1),
                "gap_pp": round(100 * r["ev_gap"], 4),
                "ci_pp": [round(100 * r["ev_gap_low"], 4), round(100 * r["ev_gap_high"], 4)],
                "exact_gap_pp": round(100 * r["exact_ev_gap"], 4),
                "agreement": round(r["agreement"], 4),
            }
            for r in rows
        ],
    }
    (run / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def print_summary(s: dict) -> None:
    print(f"run {s['run']}: {s['rules']}; {s['steps']:,} steps in {s['wall_s']} s")
    print("     step   wall s   gap pp (paired 95% CI)          exact gap pp   agreement")
    for r in s["curve"]:
        ci = f"[{r['ci_pp'][0]:+.4f}, {r['ci_pp'][1]:+.4f}]"
        gaps = f"{r['gap_pp']:+.4f} {ci:<24} {r['exact_gap_pp']:+.4f}"
        print(f"{r['step']:>10,} {r['wall_s']:>7} {gaps} {r['agreement']:>10}")
    f = s["final_pp"]
    print(
        f"final, {s['final_rounds']:,} paired rounds: gap {f['ev_gap']:+.4f} pp "
        f"[{f['ev_gap_low']:+.4f}, {f['ev_gap_high']:+.4f}], exact {f['exact_ev_gap']:+.5f} pp, "
        f"agreement {s['final_agreement']:.4f}"
    )
    for target, hit in s["first_within"].items():
        print(f"first within {target}: exact {hit['exact']}; paired CI's low end {hit['paired_ci_low']}")
    print("largest deviations left:", *s["deviations"], sep="\n  ")


def run_label(run: Path) -> str:
    """What sets a run apart: its learner and the settings that differ from that learner's defaults (a
    folder without config.json: its name)."""
    from blackjack_env.train.cli import build_parser, resolve_args

    if not (run / "config.json").is_file():
        return run.name
    config = json.loads((run / "config.json").read_text())["args"]
    game = ["--env", config["env"]] if "env" in config else []
    defaults = dataclasses.asdict(resolve_args(build_parser().parse_args(["--algo", config["algo"], *game])))
    always = ["reward", "ent_coef"] + (["lr_schedule"] if config["algo"] == "ppo" else [])
    skip = {"algo", "out", "eval_every", "eval_rounds", "progress", "torch_threads", "seed", "chunk_steps"}
    changed = [k for k, v in config.items() if k not in skip and k not in always and v != defaults.get(k)]
    shown = [f"{k}={config.get(k, 'sampled' if k == 'reward' else defaults[k])}" for k in always + changed]
    return " ".join([config["algo"], *shown, f"seed {config['seed']}"])


def plot_curves(runs: list[Path], out: Path) -> None:
    """The exact gap to basic strategy against env steps and against wall time, one line per run, with
    the targets."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (by_steps, by_time) = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    for run in runs:
        rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader((run / "metrics.csv").open())]
        gaps = [-100 * r["exact_ev_gap"] for r in rows]
        line = by_steps.plot([r["step"] / 1e6 for r in rows], gaps, marker="o", markersize=3, label=run_label(run))
        by_time.plot([r["wall_s"] / 60 for r in rows], gaps, marker="o", markersize=3, color=line[0].get_color())
    for ax, label in ((by_steps, "env steps (millions)"), (by_time, "wall time (minutes)")):
        for target in TARGETS_PP:
            ax.axhline(target, color="grey", linestyle=":", linewidth=1)
        ax.set_yscale("log")
        ax.set_ylim(0.003, 1)  # the first evaluations, a point or more behind, are left off
        ax.set_xlabel(label)
        ax.grid(True, which="both", alpha=0.3)
    by_steps.set_ylabel("exact EV gap to basic strategy (pp, log)")
    by_steps.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    to_palette(out)
    print(f"wrote {out}")


#: What ``--plot-shoe`` reads from a ``blackjack-train --env shoe --algo ppo`` run's metrics.csv (written by
#: train/shoe_ppo.py; fractions of a unit per round, plotted per 100 rounds).
SHOE_PPO_COLUMNS = ("step", "ev", "ev_basic", "ev_hilo", *with_ci("flat_gain"), "avg_bet", "wall_s")


def shoe_rows(run: Path) -> list[dict[str, float]]:
    """A PPO shoe run's evaluations (``SHOE_PPO_COLUMNS``); a last row still being written is left out, as
    a running run's metrics.csv may be read. A ValueError names a run that is not one."""
    path = run / "metrics.csv"
    try:
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in SHOE_PPO_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{path}: no column(s) {', '.join(missing)}: not a --env shoe --algo ppo run")
            rows = [r for r in reader if all(r.get(c) not in (None, "") for c in SHOE_PPO_COLUMNS)]
        rows_read = [{c: float(r[c]) for c in SHOE_PPO_COLUMNS} for r in rows]
    except OSError as error:
        raise ValueError(f"{path}: cannot be read ({error.strerror})") from None
    if not rows_read:
        raise ValueError(f"{path}: no evaluation yet")
    return rows_read


def _scale_to_later_rows(ax: Any, x0: float, values: list[list[float]], marked: list[list[float]]) -> None:
    """Y limits that fit every evaluation after the first (``values``): an untrained net's first one (the
    maximum bet on random play: -500 per 100 rounds) would flatten the curve; a ``marked`` line's first
    point (one line per run, in its colour), at step ``x0``, is written beside the edge instead."""
    later = [v for series in values for v in series[1:]]
    if not later:
        return
    low, high = min(later), max(later)
    pad = 0.08 * (high - low or 1.0)
    ax.set_ylim(low - pad, high + pad)
    for i, series in enumerate(marked):  # one line per run, stacked
        first = series[0]
        if not low - pad <= first <= high + pad:
            ax.annotate(
                f"{first:+.1f} (off scale)",
                xy=(x0, low - pad if first < low else high + pad),
                xytext=(4, 6 + 10 * i if first < low else -12 - 10 * i),
                textcoords="offset points",
                fontsize=7,
                color=f"C{i}",
            )


def to_palette(path: Path | str) -> None:
    """Rewrite a PNG with 256 colours: the overlapping translucent bands of many runs otherwise make a
    picture several times the size the docs take (their tests keep each under 200 kB)."""
    from PIL import Image  # matplotlib's own dependency

    with Image.open(path) as picture:
        small = picture.convert("RGB").quantize(256)
    small.save(path, optimize=True)


def plot_shoe(runs: list[Path], out: Path) -> None:
    """A PPO run on the shoe game (``--env shoe --algo ppo``) against env steps, one colour per run: its EV
    per 100 rounds with its bets beside Hi-Lo I18 + Fab 4 with the EV-maximising use of the same bets
    (unpaired) and basic strategy at a flat bet; its play at a flat bet against basic strategy on the same
    shoes, with the 95% band; its average bet. Every run is read before anything is written."""
    data = {run: shoe_rows(run) for run in runs}
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ev_ax, flat_ax, bet_ax) = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    ev_values: list[list[float]] = []
    flat_values: list[list[float]] = []
    for i, (run, rows) in enumerate(data.items()):
        color = f"C{i}"
        steps = [r["step"] / 1e6 for r in rows]
        per_100 = {c: [100 * r[c] for r in rows] for c in SHOE_PPO_COLUMNS if c not in ("step", "avg_bet", "wall_s")}
        hours = rows[-1]["wall_s"] / 3600
        label = f"{run.name}: {run_label(run)}, {hours:.1f} h"
        ev_ax.plot(steps, per_100["ev"], color=color, marker="o", markersize=3, label=label)
        ev_ax.plot(steps, per_100["ev_hilo"], color=color, linestyle="--", linewidth=1)
        ev_ax.plot(steps, per_100["ev_basic"], color=color, linestyle=":", linewidth=1)
        flat_ax.plot(steps, per_100["flat_gain"], color=color, marker="o", markersize=3)
        flat_ax.fill_between(steps, per_100["flat_gain_low"], per_100["flat_gain_high"], color=color, alpha=0.2)
        bet_ax.plot(steps, [r["avg_bet"] for r in rows], color=color, marker="o", markersize=3)
        ev_values += [per_100[c] for c in ("ev", "ev_hilo", "ev_basic")]
        flat_values += [per_100[c] for c in ("flat_gain", "flat_gain_low", "flat_gain_high")]
    ev_ax.plot(
        [], [], color="grey", linestyle="--", linewidth=1, label="Hi-Lo I18 + Fab 4, EV-maximising bets (other shoes)"
    )
    ev_ax.plot([], [], color="grey", linestyle=":", linewidth=1, label="basic strategy, flat bet of 1")
    ev_ax.set_ylabel("EV per 100 rounds (units)")
    ev_ax.set_title("its EV with its bets", fontsize=9)
    flat_ax.axhline(0, color="grey", linewidth=0.8)
    flat_ax.set_ylabel("gain per 100 rounds (units)")
    flat_ax.set_title("its play at a flat bet of 1 minus basic strategy's (same shoes, 95% CI)", fontsize=9)
    bet_ax.set_ylabel("average bet (units)")
    bet_ax.set_title("its average bet", fontsize=9)
    bet_ax.set_xlabel("env steps (millions)")
    x0 = min(rows[0]["step"] for rows in data.values()) / 1e6
    _scale_to_later_rows(ev_ax, x0, ev_values, ev_values[::3])
    _scale_to_later_rows(flat_ax, x0, flat_values, flat_values[::3])
    for ax in (ev_ax, flat_ax, bet_ax):
        ax.grid(True, alpha=0.3)
    handles, labels = ev_ax.get_legend_handles_labels()  # below the panels, clear of the curves
    legend = fig.legend(handles, labels, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout()
    fig.savefig(out, dpi=110, bbox_extra_artists=[legend], bbox_inches="tight")
    to_palette(out)
    plt.close(fig)
    print(f"wrote {out}")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--summarize", default=None, help="only summarize this finished run")
    p.add_argument("--plot", default=None, metavar="PNG", help="only plot the curves of the runs given after it")
    p.add_argument(
        "--plot-shoe",
        default=None,
        metavar="PNG",
        help="only plot the --env shoe --algo ppo runs given after it (finished or running): EV, flat-bet gain, bet",
    )
    p.add_argument("runs", nargs="*", type=Path, help="runs (with --plot or --plot-shoe)")
    p.add_argument("--algo", choices=("tabular", "ppo"), default="tabular")
    p.add_argument("--steps", default="2e9")
    p.add_argument("--eval-every", default="1e8")
    p.add_argument("--eval-rounds", default="1e7")
    p.add_argument("--final-rounds", type=float, default=1e8)
    p.add_argument("--seed", default="0")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    if args.plot:
        plot_curves(args.runs, Path(args.plot))
        return 0
    if args.plot_shoe:
        if not args.runs:
            p.error("--plot-shoe PNG needs one or more run folders after it")
        try:
            plot_shoe(args.runs, Path(args.plot_shoe))
        except ValueError as error:
            print(f"learning.py: error: {error}", file=sys.stderr)
            return 2
        return 0
    run = Path(args.summarize or args.out or f"runs/bench-{args.algo}")
    if not args.summarize:
        status = train_main(
            [
                *("--algo", args.algo, "--steps", args.steps, "--eval-every", args.eval_every),
                *("--eval-rounds", args.eval_rounds, "--seed", args.seed, "--out", str(run), *extra),
            ]
        )
        if status != 0:
            return status
    print_summary(summarize(run, int(args.final_rounds), seed=int(args.seed) + 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
