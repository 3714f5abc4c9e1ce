"""The ceiling's stratified sampling against plain sampling, on the same budget, in a small game.

    python benchmarks/ceiling_sampling.py [--samples 40] [--workers 1]

A two-deck game (split to 2 hands, half the shoe dealt: seconds an exact analysis; the extreme
shoes a stratified design picks from a deep single deck can hold fewer tens than the solver takes)
is priced twice with as many analysed shoes: by plain sampling (``strata=1``: the first recorded
rounds) and by the two-phase stratified design (``strata=8``), on independent seeds. Printed and
written to benchmarks/results/ceiling/sampling.json: both gain estimates with their 95% CIs, their
difference with its CI (the stratified design's bias, measured: it should cover 0), the ratio of
their variances (each run's own), and the stratified run's estimate of what plain sampling of as
many shoes would have given (from its strata).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from blackjack_env import Rules
from blackjack_env.simulate import Z95, interval
from blackjack_env.solver import ceiling

GAME = Rules(decks=2, split_to=2, penetration=0.5)
OUT = Path(__file__).parent / "results" / "ceiling" / "sampling.json"


def stderr(ci: list[float]) -> float:
    return (ci[1] - ci[0]) / (2 * Z95)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    runs = {}
    for name, strata, seed in (("plain", 1, 1), ("stratified", 8, 2)):
        start = time.perf_counter()
        result = ceiling(GAME, samples=args.samples, seed=seed, workers=args.workers, strata=strata, cache=False)
        out = result.to_json()
        runs[name] = {
            "seed": seed,
            "samples": out["samples"],
            "gain": out["gain"],
            "gain_ci95": out["gain_ci95"],
            "basic_ev": out["basic_ev"],
            "basic_ev_ci95": out["basic_ev_ci95"],
            "simulated_ev_ci95": out["simulated_ev_ci95"],
            "sampling": out["sampling"],
            "seconds": time.perf_counter() - start,
        }
        print(f"{name}: gain {100 * out['gain']:+.4f} per 100 (95% CI {100 * out['gain_ci95'][0]:+.4f} .. "
              f"{100 * out['gain_ci95'][1]:+.4f}), {out['samples']} shoes")  # fmt: skip
    plain, strat = runs["plain"], runs["stratified"]
    se_p, se_s = stderr(plain["gain_ci95"]), stderr(strat["gain_ci95"])
    diff = strat["gain"] - plain["gain"]
    summary = {
        "game": GAME.describe(),
        "runs": runs,
        "difference": diff,
        "difference_ci95": interval(diff, math.hypot(se_p, se_s)),
        "variance_ratio_measured": (se_p / se_s) ** 2,
        "variance_reduction_from_strata": strat["sampling"]["variance_reduction"],
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(summary, indent=1))
    lo, hi = summary["difference_ci95"]
    print(f"stratified - plain: {100 * diff:+.4f} per 100 (95% CI {100 * lo:+.4f} .. {100 * hi:+.4f})")
    print(f"variance: plain / stratified {summary['variance_ratio_measured']:.1f} (the two runs' own); "
          f"the stratified run's strata say {summary['variance_reduction_from_strata']:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
