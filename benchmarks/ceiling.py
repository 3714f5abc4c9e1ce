"""The ceiling's must-show table: 6 decks H17 DAS LS split to 4 hands, 75% penetration.

    python benchmarks/ceiling.py [--minutes 30] [--minutes-table 30] [--workers 2] [--rounds 2e7]

For one seat and for seat 1 of 3: the ceiling (``blackjack_env.solver.ceiling``) from sampled
round-start shoes, beside simulations of the same game: basic strategy's cut-card EV, the paired
flat-bet gains over basic strategy on identical cards of Hi-Lo I18 + Fab 4 and of all the
generated Hi-Lo indices of the game (each as a share of the ceiling's gain), and the perfect
bettor's win per 100 rounds beside Hi-Lo I18 + Fab 4 betting the same bets the EV-maximising way
(the maximum from the lowest whole true count whose flat-bet EV, and the next one's, are
positive; the minimum below). Each configuration's figures are written to
benchmarks/results/ceiling/<config>.json as soon as they are done (an interrupted run keeps the
finished ones), and the README table to benchmarks/results/ceiling/table.md, with the ceiling's
sampling (strata, its gain's standard error beside plain sampling's of as many shoes) and the shoes
+-0.02 per 100 rounds would need at the measured rate. The shoes are drawn for ``--samples``; a
budget stops the run early, keeping the first ones in analysis order (a stratified sample still).
Timings on a shared machine are noise; the samples per second are reported.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from pathlib import Path
from typing import Any

from blackjack_env import Rules
from blackjack_env.counting import CountingStrategy, built_in_strategy
from blackjack_env.evaluate.runner import simulate
from blackjack_env.simulate import Policy, Table, interval
from blackjack_env.solver import ceiling, generate_indices, solve
from blackjack_env.solver.ceiling import share_of_ceiling

#: The must-show game.
GAME = Rules(decks=6, hit_soft_17=True, double_after_split=True, split_to=4, surrender="late", penetration=0.75)
CONFIGS = {"one-seat": (1, 0), "seat-1-of-3": (3, 1)}
BETS = {"one-seat": ((1.0, 8.0),), "seat-1-of-3": ((1.0, 8.0), (1.0, 3.0), (0.0, 3.0))}
LABELS = {"one-seat": "one seat", "seat-1-of-3": "seat 1 of 3 (the second dealt)"}
OUT = Path(__file__).parent / "results" / "ceiling"


def per_100(ci: list[float]) -> list[float]:
    return [100.0 * x for x in ci]


def break_even_count(by_tc: list[dict[str, Any]]) -> int:
    """The lowest whole true count whose flat-bet EV per unit bet, and the next one's, are positive."""
    rows = [r for r in by_tc if r["rounds_played"] > 0]
    for a, b in itertools.pairwise(rows):
        if a["ev_per_unit_bet"] > 0 and b["ev_per_unit_bet"] > 0:
            return int(a["true_count"])
    return int(rows[-1]["true_count"])


class _Budget:
    """Stops a ceiling run after ``seconds`` (its progress callback raises KeyboardInterrupt, which
    the run answers like a Ctrl-C: the shoes begun are finished, the rest dropped, so the finished
    shoes are the first ones in sample order)."""

    def __init__(self, seconds: float) -> None:
        self.end = time.perf_counter() + seconds

    def __call__(self, done: int) -> None:
        if time.perf_counter() > self.end:
            raise KeyboardInterrupt


def run_config(name: str, samples: int, rounds: int, seed: int, workers: int, minutes: float) -> dict[str, Any]:
    seats, seat = CONFIGS[name]
    basic = Policy.from_table(solve(GAME).table)
    table = Table(seats, seat, basic if seats > 1 else None)
    hilo = Policy.from_counting(built_in_strategy("hilo-i18-fab4", GAME.hit_soft_17), GAME, basic.table)
    generated = CountingStrategy.from_dict(
        {"system": "hilo", "indices": generate_indices(GAME, "hilo").entries}, "hilo-generated"
    )
    hilo_gen = Policy.from_counting(generated, GAME, basic.table)
    start = time.perf_counter()
    run = simulate(GAME, basic, rounds, seed=seed, baseline=hilo, others=[hilo_gen], workers=workers, table=table)
    res = run.result
    sim_seconds = time.perf_counter() - start
    start = time.perf_counter()
    ceil = ceiling(
        GAME, seats=seats, seat=seat, samples=samples, seed=seed, workers=workers, bets=BETS[name][0],
        progress=_Budget(60.0 * minutes), cache=False,  # timed: never read shoes a previous run analysed
    )  # fmt: skip
    ceil_seconds = time.perf_counter() - start
    summary = ceil.to_json()
    out: dict[str, Any] = {"config": name, "seats": seats, "seat": seat, "ceiling": summary}
    out["ceiling_samples_per_second"] = summary["samples"] / ceil_seconds
    out["ceiling_workers"] = workers
    out["ceiling_budget_minutes"] = minutes
    out["simulated"] = {
        "rounds": res.rounds,
        "seconds": sim_seconds,
        "basic_ev": res.ev(0),
        "basic_ev_ci95": interval(res.ev(0), res.stderr(0)),
    }
    gains = {}
    for index, label in ((1, "hilo-i18-fab4"), (2, "hilo-generated")):
        diff, stderr, _ = res.diff(index)
        gain, ci = -diff, interval(-diff, stderr)
        gains[label] = {
            "gain": gain,
            "gain_ci95": ci,
            "share": share_of_ceiling(gain, ci, summary["gain"], summary["gain_ci95"]),
        }
    out["gains"] = gains
    out["generated_indices"] = len(generated.indices)
    threshold = break_even_count(res.by_true_count(1))
    bettors = []
    for bets in BETS[name]:
        low, high = bets
        ramp_strategy = built_in_strategy("hilo-i18-fab4", GAME.hit_soft_17).with_ramp(
            [(threshold - 1.0, low), (float(threshold), high)]
        )
        policy = Policy.from_counting(ramp_strategy, GAME, basic.table)
        ramp_run = simulate(GAME, policy, rounds, seed=seed, workers=workers, table=table).result
        bettors.append(
            {
                "bets": list(bets),
                "perfect": ceil.bettor(bets),
                "hilo_threshold": threshold,
                "hilo_win_per_100": 100.0 * ramp_run.ev(0),
                "hilo_win_per_100_ci95": per_100(interval(ramp_run.ev(0), ramp_run.stderr(0))),
            }
        )
    out["bettors"] = bettors
    return out


def fmt_ci(ci: list[float], scale: float = 100.0, digits: int = 3) -> str:
    return f"{scale * ci[0]:+.{digits}f} .. {scale * ci[1]:+.{digits}f}"


def table_md(results: list[dict[str, Any]]) -> str:
    """The README table (per 100 rounds, units of the initial bet, 95% CIs)."""
    lines = [
        "| per 100 rounds, 95% CIs | " + " | ".join(LABELS[r["config"]] for r in results) + " |",
        "|---|" + "---|" * len(results),
    ]

    def row(label: str, cells: list[str]) -> None:
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    row("sampled shoes (exact analyses)", [f"{r['ceiling']['samples']:,}" for r in results])
    row("basic strategy, exact mean over the shoes", [fmt_ci(r["ceiling"]["basic_ev_ci95"]) for r in results])
    row(
        "basic strategy, simulated cut-card EV",
        [f"{fmt_ci(r['simulated']['basic_ev_ci95'])} ({r['simulated']['rounds']:,.0f} rounds)" for r in results],
    )
    row("**ceiling: perfect player's flat-bet gain**", [fmt_ci(r["ceiling"]["gain_ci95"]) for r in results])
    for label, key in (("Hi-Lo I18 + Fab 4", "hilo-i18-fab4"), ("Hi-Lo, all generated indices", "hilo-generated")):
        cells = []
        for r in results:
            g = r["gains"][key]
            share = g["share"]
            cells.append(
                f"{fmt_ci(g['gain_ci95'])}; {100 * share['share']:.0f}% of the ceiling "
                f"({100 * share['ci95'][0]:.0f} .. {100 * share['ci95'][1]:.0f}%)"
            )
        row(f"{label}: paired flat-bet gain", cells)
    row("round's own cards (not in the ceiling)", [fmt_ci(r["ceiling"]["in_round_gain"]["ci95"]) for r in results])
    for bets in sorted({tuple(b["bets"]) for r in results for b in r["bettors"]}):
        cells = []
        for r in results:
            match = [b for b in r["bettors"] if tuple(b["bets"]) == bets]
            if not match:
                cells.append("")
                continue
            b = match[0]
            cells.append(
                f"perfect {fmt_ci(b['perfect']['ci95'])}; Hi-Lo I18 + Fab 4 (max from TC {b['hilo_threshold']:+d}) "
                f"{fmt_ci(b['hilo_win_per_100_ci95'], 1.0)}"
            )
        row(f"win per 100 rounds, bets {bets[0]:g} or {bets[1]:g}", cells)
    row(
        "ceiling: seconds, samples per second",
        [f"{r['ceiling']['seconds']:.0f} s, {r['ceiling_samples_per_second']:.3f}/s" for r in results],
    )
    cells = []
    for r in results:
        d = r["ceiling"]["sampling"]
        cells.append(
            f"{d['strata']} strata from {d['pool']:,} recorded rounds; gain SE {100 * d['gain_stderr']:.4f} "
            f"(plain sampling of as many shoes: {100 * d['gain_stderr_plain']:.4f}), variance / "
            f"{d['variance_reduction']:.1f}"
        )
    row("ceiling: sampling", cells)
    cells = []
    for r in results:
        c = r["ceiling"]
        half = 100 * (c["gain_ci95"][1] - c["gain_ci95"][0]) / 2
        needed = c["samples"] * (half / 0.02) ** 2
        cells.append(
            f"+-{half:.3f}; +-0.02 needs ~{needed:,.0f} shoes, ~{needed / r['ceiling_samples_per_second'] / 60:.0f} "
            "min at this rate"
        )
    row("ceiling: gain CI half-width reached; projection", cells)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3000, help="most sampled shoes at one seat")
    parser.add_argument("--samples-table", type=int, default=3000, help="most sampled shoes at seat 1 of 3")
    parser.add_argument("--minutes", type=float, default=30.0, help="time budget of the ceiling at one seat")
    parser.add_argument("--minutes-table", type=float, default=30.0, help="time budget of the ceiling at seat 1 of 3")
    parser.add_argument("--rounds", type=float, default=2e7, help="rounds of each simulation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--only", choices=tuple(CONFIGS), default=None, help="run one configuration")
    parser.add_argument("--table-only", action="store_true", help="rebuild table.md from the saved JSON")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if not args.table_only:
        for name in CONFIGS:
            if args.only not in (None, name):
                continue
            one = name == "one-seat"
            samples, minutes = (args.samples, args.minutes) if one else (args.samples_table, args.minutes_table)
            result = run_config(name, samples, int(args.rounds), args.seed, args.workers, minutes)
            (OUT / f"{name}.json").write_text(json.dumps(result, indent=1))
            print(f"{name}: gain {100 * result['ceiling']['gain']:+.4f} per 100, {result['ceiling']['seconds']:.0f} s")
    results = [json.loads((OUT / f"{n}.json").read_text()) for n in CONFIGS if (OUT / f"{n}.json").exists()]
    text = table_md(results)
    (OUT / "table.md").write_text(text + "\n")
    print(text)
    if any(math.isnan(r["ceiling"]["gain"]) for r in results):
        raise SystemExit("a configuration has no finished samples")


if __name__ == "__main__":
    main()
