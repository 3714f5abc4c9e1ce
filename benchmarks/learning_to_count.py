"""The must-show figures of the learners that count, on the game: 6 decks, H17,
DAS, late surrender, splits to 4 hands, 75% penetration, 3 seats (the default rules at 75%).

    python benchmarks/learning_to_count.py --run-tabular benchmarks/results/count-table-hilo-s1 \
        --run-linear benchmarks/results/linear-default-s1
    python benchmarks/learning_to_count.py            # trains both first, with blackjack-train's defaults

Without ``--run-tabular``/``--run-linear`` it trains the learner that is missing with blackjack-train's
defaults on the game (``blackjack-train --env shoe --algo tabular|linear --set penetration=0.75``:
Hi-Lo, bets 1, 2, 4, 8, one seat; seed ``--train-seed``, default steps unless ``--train-steps``) into
OUT/runs/. Then, on a seed not
used in training (``--seed``; refused when it is a run's training seed), ``--rounds`` paired rounds
per table (default 1e8), every policy on identical shoes with the others at the table playing basic
strategy:

* flat bet of 1, the learner at seat 1 of 3 and at seat 0 of 3: each learner's gain over basic
  strategy per 100 rounds with its 95% CI (Hi-Lo I18 + Fab 4 beside them), and at seat 1 of 3 its
  share of the ceiling (``benchmarks/results/ceiling/seat-1-of-3.json``, ``share_of_ceiling``);
* bets 1, 2, 4, 8 at one seat: each learner with its own bets against Hi-Lo I18 + Fab 4 with the
  EV-maximising use of the same bets (``train.shoe.hilo_ev_max``: its bets chosen on a calibration
  run of ``--calibration-rounds`` on seed + 2, scored on ``--seed``);
* each run's learning wall time and rounds per second (its ``state.json``: evaluations included).

Writes OUT/table.md and OUT/results.json (OUT: ``--out``, default
benchmarks/results/learning-to-count). The flat simulator's speed beside the learners' is
``benchmarks/count_table_speed.py`` (one process, one core).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from blackjack_env.counting import CountingStrategy, built_in_strategy
from blackjack_env.evaluate.policies import COUNTING_FILE, load_policy
from blackjack_env.evaluate.runner import simulate
from blackjack_env.rules import Rules
from blackjack_env.simulate import Z95, Policy, Table
from blackjack_env.solver import solve
from blackjack_env.solver.ceiling import share_of_ceiling
from blackjack_env.train.cli import main as train_main
from blackjack_env.train.registry import find
from blackjack_env.train.shoe import CALIBRATION_FACTOR, hilo_ev_max

ROOT = Path(__file__).resolve().parent
CEILING_FILE = ROOT / "results" / "ceiling" / "seat-1-of-3.json"
SETTINGS = ["penetration=0.75"]
BETS = (1.0, 2.0, 4.0, 8.0)
LEARNERS = {"count-table": "tabular", "composition": "linear"}
#: The marks, per 100 rounds: apicquot's learned Hi-Lo table and its linear composition model.
MARKS = {"count-table": 0.121, "composition": 0.200}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-tabular", type=Path, help="a count-table run directory (else one is trained)")
    parser.add_argument("--run-linear", type=Path, help="a composition-learner run directory (else one is trained)")
    add_run_arguments(parser, ROOT / "results" / "learning-to-count")
    args = parser.parse_args(argv)
    if args.rounds < 1e4 or args.calibration_rounds < CALIBRATION_FACTOR * 1e3:
        parser.error("--rounds must be >= 1e4 and --calibration-rounds >= 1e4")
    if args.workers < 1:
        parser.error(f"--workers must be >= 1, got {args.workers}")
    for flag, run in (("--run-tabular", args.run_tabular), ("--run-linear", args.run_linear)):
        if run is not None and not (run / "config.json").is_file():
            parser.error(f"{flag} {run}: not a blackjack-train run directory (no config.json)")
        if run is not None and training_seed(run) in (args.seed, args.seed + 2):
            parser.error(f"--seed {args.seed}: {run} was trained on seed {training_seed(run)}; evaluate on another")
    if None in (args.run_tabular, args.run_linear) and args.train_seed in (args.seed, args.seed + 2):
        parser.error(f"--seed {args.seed} is the training seed (--train-seed); evaluate on another")
    return args


def add_run_arguments(parser: argparse.ArgumentParser, out: Path) -> None:
    """The options of a run that trains learners and scores them on paired rounds (this script's and
    learning_grid.py's)."""
    parser.add_argument("--rounds", type=float, default=1e8, help="paired rounds per table (default 1e8)")
    parser.add_argument("--seed", type=int, default=2026, help="evaluation seed, not a training seed (default 2026)")
    parser.add_argument("--calibration-rounds", type=float, default=2e7, help="Hi-Lo EV-max bets' run (default 2e7)")
    parser.add_argument("--train-seed", type=int, default=1, help="seed of the runs trained here (default 1)")
    parser.add_argument("--train-steps", type=float, help="rounds of the runs trained here (default: the CLI's)")
    parser.add_argument("--workers", type=int, default=1, help="simulation workers (default 1)")
    parser.add_argument("--out", type=Path, default=out)


def training_seed(run: Path) -> int:
    return int(json.loads((run / "config.json").read_text())["args"]["seed"])


def train(
    algo: str,
    out: Path,
    seed: int,
    steps: float | None,
    settings: list[str] = SETTINGS,
    seats: tuple[int, int] = (1, 0),
    name: str = "",
    workers: int = 1,
    system: str | None = None,
) -> Path:
    """A run of ``algo`` on the game (``settings`` over the default rules, the learner at seat
    ``seats[1]`` of ``seats[0]``) with blackjack-train's defaults (what the README measures), in
    OUT/runs/NAME (default ALGO-sSEED), on ``workers`` processes (the same run for any number); ``system``:
    the count-table learner's counting system (None: its default). A run already there with a checkpoint
    is resumed (``--resume``), so an interrupted benchmark loses at most a chunk of training."""
    run = out / "runs" / (name or f"{algo}-s{seed}")
    if (run / "state.json").is_file():  # an interrupted run goes on from its last checkpoint, on its own config
        argv = ["--out", str(run), "--resume", "--workers", str(workers), "--no-progress"]
        if train_main(argv + ([] if steps is None else ["--steps", str(int(steps))])) != 0:
            raise SystemExit(f"resuming {run} failed")
        return run
    argv = ["--env", "shoe", "--algo", algo, *(w for kv in settings for w in ("--set", kv))]
    argv += ["--seed", str(seed), "--out", str(run)]
    argv += ["--seats", str(seats[0]), "--seat", str(seats[1]), "--workers", str(workers), "--no-progress"]
    if steps is not None:
        argv += ["--steps", str(int(steps))]
    if system is not None and algo == "tabular":
        argv += ["--system", system]
    if train_main(argv) != 0:
        raise SystemExit(f"training {algo} failed")
    return run


def run_figures(run: Path) -> dict[str, Any]:
    state = json.loads((run / "state.json").read_text())
    args = json.loads((run / "config.json").read_text())["args"]
    options = find(args["algo"], args["env"]).options
    return {
        **({"system": args["system"]} if "system" in options else {}),
        **({"depth_bands": args.get("depth_bands", 1)} if "depth_bands" in options else {}),  # (1 before the option)
        "run": str(run.resolve().relative_to(ROOT.parent)) if run.resolve().is_relative_to(ROOT.parent) else str(run),
        "train_seed": training_seed(run),
        "rounds": state["steps"],
        "wall_s": round(state["wall_s"], 1),
        "rounds_per_s": round(state["steps"] / state["wall_s"]),
    }


def paired(
    rules: Rules, policies: dict[str, Policy], reference: str, table: Table, rounds: int, seed: int, workers: int
) -> dict[str, dict[str, float]]:
    """Every policy on identical shoes: its EV, average bet, and its paired difference from
    ``reference`` per 100 rounds with a 95% CI."""
    names = [reference] + [n for n in policies if n != reference]
    start = time.perf_counter()
    result = simulate(
        rules, policies[reference], rounds, seed, others=[policies[n] for n in names[1:]], table=table, workers=workers
    ).result
    print(f"  {rounds:,} rounds in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    out: dict[str, dict[str, float]] = {}
    for i, name in enumerate(names):
        row = {"ev_per_100": 100 * result.ev(i), "avg_bet": result.avg_bet(i)}
        if i:
            mean, stderr, _ = result.diff(i)  # reference minus this one
            row.update(
                {
                    "vs_reference_per_100": -100 * mean,
                    "ci95": [-100 * (mean + Z95 * stderr), -100 * (mean - Z95 * stderr)],
                }
            )
        out[name] = row
    return out


def learners(runs: dict[str, Path], rules: Rules, flat: bool) -> dict[str, Policy]:
    """Each learner as ``blackjack-evaluate --policy RUN`` plays it (``--spread 1-1``: flat)."""
    return {name: load_policy(str(run), rules, "1-1" if flat else None) for name, run in runs.items()}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rules = Rules.preset("ultimatebet").with_settings(SETTINGS)
    args.out.mkdir(parents=True, exist_ok=True)
    runs = {"count-table": args.run_tabular, "composition": args.run_linear}
    for name, run in runs.items():
        if run is None:
            runs[name] = train(LEARNERS[name], args.out, args.train_seed, args.train_steps)
    rounds = int(args.rounds)
    basic_table = solve(rules).table
    basic = Policy.from_table(basic_table)
    hilo = Policy.from_counting(built_in_strategy("hilo-i18-fab4", rules.hit_soft_17), rules, basic_table)
    ceiling = json.loads(CEILING_FILE.read_text())["ceiling"]
    results: dict[str, Any] = {
        "command": "python benchmarks/learning_to_count.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "game": rules.describe(),
        "seed": args.seed,
        "rounds": rounds,
        "training": {name: run_figures(run) for name, run in runs.items()},
        "flat": {},
    }
    results["ceiling"] = {"file": str(CEILING_FILE.relative_to(ROOT.parent)), "gain_per_100": ceiling["gain_per_100"]}
    results["ceiling"]["gain_per_100_ci95"] = ceiling["gain_per_100_ci95"]
    results["count_table_entries"] = len(CountingStrategy.load(runs["count-table"] / COUNTING_FILE).indices)
    flat = {"basic": basic, **learners(runs, rules, flat=True), "hilo-i18-fab4": hilo}
    for step in ("seat 1 of 3", "bets", "seat 0 of 3"):  # the main figure first
        print(step, file=sys.stderr)
        if step == "bets":
            one = Table(1, 0, None)
            calibration = int(args.calibration_rounds) // CALIBRATION_FACTOR
            ev_max = hilo_ev_max(rules, BETS, basic_table, one, calibration, args.seed, args.out)
            policies = {"hilo-i18-fab4-ev-max": ev_max, **learners(runs, rules, flat=False), "basic": basic}
            results["bets"] = paired(rules, policies, "hilo-i18-fab4-ev-max", one, rounds, args.seed, args.workers)
            ramp = CountingStrategy.load(args.out / "hilo-i18-fab4-ev-max.json").to_dict()["ramp"]
            results["hilo_ev_max_ramp"] = ramp
        else:
            seat = int(step.split()[1])
            rows = paired(rules, flat, "basic", Table(3, seat, basic), rounds, args.seed, args.workers)
            for row in rows.values():
                if seat == 1 and "ci95" in row:
                    gain = (row["vs_reference_per_100"] / 100, [c / 100 for c in row["ci95"]])
                    row["share_of_ceiling"] = share_of_ceiling(*gain, ceiling["gain"], ceiling["gain_ci95"])
            results["flat"][step] = rows
        _write_json(args.out / "results.json", results)  # each table kept as it is done
    _write_json(args.out / "results.json", results)
    (args.out / "table.md").write_text(table_md(results))
    print((args.out / "table.md").read_text())
    return 0


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)


def _ci(row: dict[str, Any]) -> str:
    low, high = row["ci95"]
    return f"**{row['vs_reference_per_100']:+.3f}** ({low:+.3f} .. {high:+.3f})"


def table_md(results: dict[str, Any]) -> str:
    """The figures as a Markdown table (per 100 rounds, 95% CIs)."""
    ceiling = results["ceiling"]
    lines = [
        f"Per 100 rounds, 95% CIs; {results['rounds']:,} paired rounds per table on seed {results['seed']} "
        f"(not a training seed); the game: {results['game']}, 3 seats.",
        "",
        "| flat bet of 1, gain over basic strategy | seat 1 of 3 | share of the ceiling "
        f"({ceiling['gain_per_100']:+.3f}) | seat 0 of 3 | the mark |",
        "|---|---|---|---|---|",
    ]
    seat1, seat0 = results["flat"]["seat 1 of 3"], results["flat"]["seat 0 of 3"]
    for name in ("count-table", "composition", "hilo-i18-fab4"):
        share = seat1[name]["share_of_ceiling"]
        mark = f"+{MARKS[name]:.3f}" if name in MARKS else ""
        lines.append(
            f"| {name} | {_ci(seat1[name])} | {100 * share['share']:.0f}% "
            f"({100 * share['ci95'][0]:.0f} .. {100 * share['ci95'][1]:.0f}%) | {_ci(seat0[name])} | {mark} |"
        )
    bets = results["bets"]
    lines += [
        "",
        "| bets 1, 2, 4, 8, one seat | EV | average bet | against Hi-Lo I18 + Fab 4 EV-max |",
        "|---|---|---|---|",
        f"| hilo-i18-fab4-ev-max (ramp {results['hilo_ev_max_ramp']}) | "
        f"{bets['hilo-i18-fab4-ev-max']['ev_per_100']:+.3f} | {bets['hilo-i18-fab4-ev-max']['avg_bet']:.3f} | |",
    ]
    for name in ("count-table", "composition", "basic"):
        lines.append(f"| {name} | {bets[name]['ev_per_100']:+.3f} | {bets[name]['avg_bet']:.3f} | {_ci(bets[name])} |")
    lines += ["", "| learning run | rounds | wall time | rounds/s | train seed |", "|---|---|---|---|---|"]
    for name, run in results["training"].items():
        lines.append(
            f"| {name} (`{run['run']}`) | {run['rounds']:,} | {run['wall_s']:,.0f} s | {run['rounds_per_s']:,} "
            f"| {run['train_seed']} |"
        )
    lines += ["", f"Count-table export: {results['count_table_entries']} index entries.", "", f"`{results['command']}`"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
