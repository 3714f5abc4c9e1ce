"""Learning to count over a grid of games: each learner's defaults against the ceiling and Hi-Lo.

    python benchmarks/learning_grid.py --list                    # the games of the grid
    python benchmarks/learning_grid.py --games 2d 6d --workers 2  # run some (or all: no --games)
    python benchmarks/learning_grid.py --table                    # table.md and grid.png from what is done

Each game (``GRID``: settings over the default rules, and the learner's seat) is run in steps, each
written to OUT/GAME.json as soon as it is done, so an interrupted or later run goes on
from the first step missing:

1. ``training``: the count-table learner (``--algo tabular``, counting ``--system`` if given) and the
   composition learner (``--algo linear``) trained with ``blackjack-train``'s defaults in the game, at
   the learner's seat, on ``--train-seed`` and ``--workers`` processes (runs in OUT/runs/GAME-ALGO; a
   finished run is reused, an interrupted one resumed), with their wall times;
2. ``ceiling``: the round-start ceiling of the game at that seat (``blackjack_env.solver.ceiling``,
   ``--ceiling-samples`` shoes on ``--seed``), its gain per 100 rounds with a 95% CI;
3. ``flat``: basic strategy, both learners at a flat bet and Hi-Lo I18 + Fab 4 on identical shoes
   (``--rounds`` paired rounds, seed ``--seed``, not a training seed), each learner's gain over basic
   strategy per 100 rounds with its 95% CI and its share of the ceiling;
4. ``bets``: with bets 1, 2, 4, 8 at the same seat, each learner beside Hi-Lo I18 + Fab 4 with the
   EV-maximising use of the same bets (its bets chosen on a calibration run on seed + 2), paired.

``--table`` gathers every game's JSON into OUT/table.md and OUT/grid.png (each player's flat-bet share of
the ceiling by game, beside the marks). The timings are wall times on the machine that ran them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import learning_to_count as ltc

from blackjack_env.counting import built_in_strategy
from blackjack_env.rules import Rules
from blackjack_env.simulate import Policy, Table
from blackjack_env.solver import ceiling, solve
from blackjack_env.solver.ceiling import share_of_ceiling
from blackjack_env.train.shoe import CALIBRATION_FACTOR, COUNT_TABLE_SYSTEM, hilo_ev_max

OUT = ltc.ROOT / "results" / "learning-grid"
BETS = ltc.BETS
#: The marks on the flat-bet share of the round-start ceiling (the issue's aims are 100% and 75%).
MARKS = {"composition": 0.90, "count-table": 0.65}


@dataclass(frozen=True)
class Game:
    """One game of the grid: settings over the default rules (6 decks, H17, DAS, late surrender,
    splits to 3 hands: the ``ultimatebet`` preset) and the learner's seat at the table."""

    settings: tuple[str, ...]
    seats: int = 3
    seat: int = 1

    def rules(self) -> Rules:
        return Rules.preset("ultimatebet").with_settings(list(self.settings))

    def table(self, rules: Rules) -> Table:
        """The learner's seat; the others play basic strategy."""
        return Table(self.seats, self.seat, Policy.from_table(solve(rules).table) if self.seats > 1 else None)


#: The grid: every deck count, each rule varied from a base game of its deck count, the depth of the
#: shoe, and one seat. Penetrations are those the casino texts deal at each deck count.
GRID: dict[str, Game] = {
    "1d": Game(("decks=1", "penetration=0.65")),
    "1d-6to5": Game(("decks=1", "penetration=0.65", "blackjack_pays=1.2")),
    "2d": Game(("decks=2", "penetration=0.65")),
    "2d-s17": Game(("decks=2", "penetration=0.65", "hit_soft_17=false")),
    "2d-plain": Game(("decks=2", "penetration=0.65", "surrender=none", "double_after_split=false", "split_to=2")),
    "6d": Game(("penetration=0.75",)),
    "6d-s17": Game(("penetration=0.75", "hit_soft_17=false")),
    "6d-pen50": Game(("penetration=0.5",)),
    "6d-pen85": Game(("penetration=0.85",)),
    "6d-one-seat": Game(("penetration=0.75",), seats=1, seat=0),
    "8d": Game(("decks=8", "penetration=0.75")),
    "8d-s17": Game(("decks=8", "penetration=0.75", "hit_soft_17=false")),
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="print the grid's games and exit")
    parser.add_argument("--table", action="store_true", help="write table.md and grid.png from what is done")
    parser.add_argument("--games", nargs="*", default=None, help="games to run (default: every game of the grid)")
    parser.add_argument("--ceiling-samples", type=int, default=600, help="round-start shoes analysed (default 600)")
    parser.add_argument(
        "--system",
        default=None,
        help="the count-table learner's counting system (default: its own, as blackjack-train's)",
    )
    ltc.add_run_arguments(parser, OUT)
    args = parser.parse_args(argv)
    unknown = [g for g in args.games or () if g not in GRID]
    if unknown:
        parser.error(f"unknown game(s) {', '.join(unknown)}; the grid's: {', '.join(GRID)}")
    if args.train_seed in (args.seed, args.seed + 2):
        parser.error(f"--seed {args.seed} is the training seed (--train-seed); evaluate on another")
    if args.rounds < 1e4 or args.calibration_rounds < CALIBRATION_FACTOR * 1e3 or args.ceiling_samples < 1:
        parser.error("--rounds must be >= 1e4, --calibration-rounds >= 1e4 and --ceiling-samples >= 1")
    if args.workers < 1:
        parser.error(f"--workers must be >= 1, got {args.workers}")
    return args


def finished(run: Path) -> bool:
    """Whether a run's folder holds a run that reached its steps (its state.json and config.json agree)."""
    if not (run / "state.json").is_file():
        return False
    steps = json.loads((run / "config.json").read_text())["args"]["steps"]
    return int(json.loads((run / "state.json").read_text())["steps"]) >= int(steps)


def check_system(run: Path, algo: str, system: str) -> None:
    """A count-table run already there must count ``system``: a game's row is one system's."""
    config = run / "config.json"
    if algo == "tabular" and config.is_file():
        counted = json.loads(config.read_text())["args"]["system"]
        if counted != system:
            raise SystemExit(f"{run} counts {counted}, not {system}: move it away or pass --system {counted}")


def run_game(name: str, game: Game, args: argparse.Namespace) -> dict[str, Any]:
    """Every step of one game (module docstring) not yet in OUT/NAME.json, each written when done."""
    path = args.out / f"{name}.json"
    results: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    rules = game.rules()
    results.update(game=rules.describe(), settings=list(game.settings), seats=game.seats, seat=game.seat)
    ltc._write_json(path, results)
    if {"ceiling", "flat", "bets"} <= set(results):
        return results  # done: its runs are not needed again
    runs: dict[str, Path] = {}
    for learner, algo in ltc.LEARNERS.items():
        run = args.out / "runs" / f"{name}-{algo}"
        check_system(run, algo, args.system or COUNT_TABLE_SYSTEM)
        if not finished(run):
            print(f"{name}: training {learner}", file=sys.stderr)
            settings = list(game.settings)
            seats = (game.seats, game.seat)
            ltc.train(
                algo, args.out, args.train_seed, args.train_steps, settings, seats, run.name, args.workers, args.system
            )
        runs[learner] = run
    results["training"] = {learner: ltc.run_figures(run) for learner, run in runs.items()}
    ltc._write_json(path, results)
    table = game.table(rules)
    if "ceiling" not in results:
        print(f"{name}: the ceiling ({args.ceiling_samples} shoes)", file=sys.stderr)
        start = time.perf_counter()
        result = ceiling(
            rules, seats=game.seats, seat=game.seat, samples=args.ceiling_samples, seed=args.seed, workers=args.workers
        )
        results["ceiling"] = {
            "gain": result.gain,
            "gain_ci95": result.gain_ci95,
            "gain_per_100": 100 * result.gain,
            "gain_per_100_ci95": [100 * c for c in result.gain_ci95],
            "samples": result.samples,
            "wall_s": round(time.perf_counter() - start, 1),
        }
        ltc._write_json(path, results)
    rounds, basic_table = int(args.rounds), solve(rules).table
    basic = Policy.from_table(basic_table)
    if "flat" not in results:
        print(f"{name}: flat bets, {rounds:,} rounds", file=sys.stderr)
        hilo = Policy.from_counting(built_in_strategy("hilo-i18-fab4", rules.hit_soft_17), rules, basic_table)
        flat = {"basic": basic, **ltc.learners(runs, rules, flat=True), "hilo-i18-fab4": hilo}
        rows = ltc.paired(rules, flat, "basic", table, rounds, args.seed, args.workers)
        top = results["ceiling"]
        for row in rows.values():
            if "ci95" in row:
                gain = (row["vs_reference_per_100"] / 100, [c / 100 for c in row["ci95"]])
                row["share_of_ceiling"] = share_of_ceiling(*gain, top["gain"], top["gain_ci95"])
        results["flat"] = rows
        ltc._write_json(path, results)
    if "bets" not in results:
        print(f"{name}: bets {', '.join(f'{b:g}' for b in BETS)}", file=sys.stderr)
        calibration = int(args.calibration_rounds) // CALIBRATION_FACTOR
        folder = args.out / "runs" / name
        folder.mkdir(parents=True, exist_ok=True)
        ev_max = hilo_ev_max(rules, BETS, basic_table, table, calibration, args.seed, folder)
        policies = {"hilo-i18-fab4-ev-max": ev_max, **ltc.learners(runs, rules, flat=False), "basic": basic}
        results["bets"] = ltc.paired(rules, policies, "hilo-i18-fab4-ev-max", table, rounds, args.seed, args.workers)
        ltc._write_json(path, results)
    return results


def _share(row: dict[str, Any]) -> str:
    share = row["share_of_ceiling"]
    low, high = share["ci95"]
    return f"{100 * share['share']:.0f}% ({100 * low:.0f} .. {100 * high:.0f})"


def table_md(games: dict[str, dict[str, Any]]) -> str:
    """Every finished game as a row: the ceiling, each player's flat-bet gain and share of it, the
    learners' EV with bets beside Hi-Lo's EV-maximising bets, and the training times."""
    lines = [
        "Per 100 rounds with 95% CIs, at the learner's seat; shares of the round-start ceiling "
        f"(marks: composition {MARKS['composition']:.0%}, count-table {MARKS['count-table']:.0%}).",
        "",
        "| game | seat | ceiling | count-table: flat gain, share, system | composition: flat gain, share, depth bands "
        "| Hi-Lo I18 + Fab 4: flat gain, share | EV with bets 1-8: count-table, composition, Hi-Lo EV-max "
        "| training min: count-table, composition |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, g in games.items():
        if not {"ceiling", "flat", "bets"} <= set(g):
            continue
        top, flat, bets, train = g["ceiling"], g["flat"], g["bets"], g["training"]
        low, high = top["gain_per_100_ci95"]
        cells = [
            f"{flat[p]['vs_reference_per_100']:+.3f}, {_share(flat[p])}"
            for p in ("count-table", "composition", "hilo-i18-fab4")
        ]
        cells[0] += f", {train['count-table']['system']}"
        cells[1] += f", {train['composition'].get('depth_bands', 1)}"  # (runs before depth bands: one)
        ev = ", ".join(f"{bets[p]['ev_per_100']:+.3f}" for p in ("count-table", "composition", "hilo-i18-fab4-ev-max"))
        minutes = ", ".join(f"{train[p]['wall_s'] / 60:.0f}" for p in ("count-table", "composition"))
        lines.append(
            f"| {name}: {g['game']} | {g['seat']} of {g['seats']} | {top['gain_per_100']:+.3f} ({low:+.3f} .. "
            f"{high:+.3f}) | {' | '.join(cells)} | {ev} | {minutes} |"
        )
    return "\n".join(lines) + "\n"


def grid_figure(games: dict[str, dict[str, Any]], path: Path) -> None:
    """Each player's flat-bet share of the ceiling by game, with 95% CIs, beside the marks."""
    from matplotlib.figure import Figure

    done = {name: g for name, g in games.items() if "flat" in g}
    fig = Figure(figsize=(10, 4), dpi=100, layout="constrained")
    ax = fig.subplots()
    players = (("count-table", "#4c72b0"), ("composition", "#55a868"), ("hilo-i18-fab4", "#dd8452"))
    for i, (player, colour) in enumerate(players):
        x = [k + (i - 1) * 0.25 for k in range(len(done))]
        shares = [g["flat"][player]["share_of_ceiling"] for g in done.values()]
        y = [100 * s["share"] for s in shares]
        err = [[100 * (s["share"] - s["ci95"][0]) for s in shares], [100 * (s["ci95"][1] - s["share"]) for s in shares]]
        ax.bar(x, y, width=0.25, color=colour, yerr=err, capsize=2, label=player)
    for learner, mark in MARKS.items():
        ax.axhline(100 * mark, ls="--", lw=1, color="#55a868" if learner == "composition" else "#4c72b0")
    ax.axhline(100, color="black", lw=0.8)
    ax.set_xticks(range(len(done)), list(done), fontsize=8)
    ax.set_ylabel("flat-bet share of the ceiling (%)")
    ax.legend(fontsize=8, loc="upper right")
    fig.savefig(path, format="png")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        for name, game in GRID.items():
            print(f"{name:<12} {game.rules().describe()}, seat {game.seat} of {game.seats}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.table:
        for name in args.games or GRID:
            run_game(name, GRID[name], args)
    games = {
        name: json.loads((args.out / f"{name}.json").read_text())
        for name in GRID
        if (args.out / f"{name}.json").is_file()
    }
    (args.out / "table.md").write_text(table_md(games))
    grid_figure(games, args.out / "grid.png")
    print((args.out / "table.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
