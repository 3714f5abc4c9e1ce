"""The pictures of the counting, ceiling and table guides (docs/guides/), written beside this file.

    python docs/_static/guides/make_counting_pictures.py

* ``counting-by-true-count.png``: Hi-Lo I18 + Fab 4 with a 1-8 spread, the default game at 75%
  penetration, 1e7 rounds of seed 0: the share of rounds, the bet and the EV per unit bet at each
  true count (``by_true_count`` of ``blackjack-evaluate --json``).
* ``ceiling-round-ev.png``: the round-start EV of basic strategy and of the best strategy for the
  shoe, over the 552 sampled shoes of ``benchmarks/results/ceiling/one-seat.json``.
* ``ceiling-shares.png``: the flat-bet gains over basic strategy at seat 1 of 3 in
  ``benchmarks/results/ceiling/seat-1-of-3.json``: the ceiling and two Hi-Lo counters.
* ``table-frame.png``: one ``rgb_array`` frame of a 3-seat PettingZoo shoe table.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parents[2] / "benchmarks" / "results" / "ceiling"


def by_true_count(out: Path) -> None:
    from blackjack_env import Rules
    from blackjack_env.counting import built_in_strategy, spread_ramp
    from blackjack_env.evaluate.counting_stats import counting_figures
    from blackjack_env.evaluate.runner import simulate
    from blackjack_env.simulate import Policy
    from blackjack_env.solver import solve

    rules = Rules(penetration=0.75)
    strategy = built_in_strategy("hilo-i18-fab4", rules.hit_soft_17).with_ramp(spread_ramp("1-8"))
    counter = Policy.from_counting(strategy, rules, solve(rules).table)
    result = simulate(rules, counter, 10_000_000, seed=0).result
    rows = counting_figures(result, bankroll=None)["by_true_count"]
    x = np.arange(len(rows))
    labels = [row["label"] for row in rows]
    ev = np.array([100 * row["ev_per_unit_bet"] for row in rows])
    low = np.array([100 * row["ci95"][0] for row in rows])
    high = np.array([100 * row["ci95"][1] for row in rows])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True, height_ratios=(1, 1.6))
    top.bar(x, [100 * row["share"] for row in rows], color="#9bb7d4")
    top.set_ylabel("% of rounds")
    twin = top.twinx()
    twin.step(x, [row["avg_bet"] for row in rows], where="mid", color="#c0392b")
    twin.set_ylabel("bet (units)", color="#c0392b")
    twin.set_ylim(0, 9)
    bottom.axhline(0, color="grey", lw=0.8)
    bottom.errorbar(x, ev, yerr=[ev - low, high - ev], fmt="o", color="#2c3e50", capsize=3)
    bottom.set_ylabel("EV per unit bet, %")
    bottom.set_xlabel("Hi-Lo true count before the round (floored)")
    bottom.set_xticks(x, labels)
    top.set_title(f"Hi-Lo I18 + Fab 4, spread 1-8: {rules.describe()}, 1e7 rounds")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def round_ev(out: Path) -> None:
    ceiling = json.loads((RESULTS / "one-seat.json").read_text())["ceiling"]
    hist = ceiling["round_ev"]["histogram"]
    edges = 100 * np.array(hist["edges"])
    centres, width = (edges[:-1] + edges[1:]) / 2, edges[1] - edges[0]
    fig, ax = plt.subplots(figsize=(8, 3.8))
    ax.bar(
        centres - width / 5, 100 * np.array(hist["basic"]), width=width * 0.4, label="basic strategy", color="#9bb7d4"
    )
    ax.bar(centres + width / 5, 100 * np.array(hist["best"]), width=width * 0.4, label="best strategy for the shoe",
           color="#c0392b")  # fmt: skip
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_xlabel("EV of the round, % of the initial bet (ends pooled at -6% and +6%)")
    ax.set_ylabel("% of rounds")
    ax.set_title(f"Round-start EV over {ceiling['samples']} sampled shoes: {ceiling['description']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def shares(out: Path) -> None:
    data = json.loads((RESULTS / "seat-1-of-3.json").read_text())
    ceiling = data["ceiling"]
    names = ["Hi-Lo I18 + Fab 4", "Hi-Lo, all generated indices", "ceiling (perfect player)"]
    gains = [data["gains"]["hilo-i18-fab4"], data["gains"]["hilo-generated"],
             {"gain": ceiling["gain"], "gain_ci95": ceiling["gain_ci95"]}]  # fmt: skip
    mean = np.array([100 * g["gain"] for g in gains])
    low = np.array([100 * g["gain_ci95"][0] for g in gains])
    high = np.array([100 * g["gain_ci95"][1] for g in gains])
    fig, ax = plt.subplots(figsize=(8, 2.8))
    y = np.arange(len(names))
    ax.barh(y, mean, color=["#9bb7d4", "#9bb7d4", "#c0392b"])
    ax.errorbar(mean, y, xerr=[mean - low, high - mean], fmt="none", color="black", capsize=4)
    for i, g in enumerate(gains[:2]):
        ax.text(high[i] + 0.004, i, f"{100 * g['share']['share']:.0f}% of the ceiling", va="center")
    ax.set_yticks(y, names)
    ax.set_xlabel("flat-bet gain over basic strategy, units per 100 rounds (95% CI)")
    ax.set_title(f"Seat 1 of 3: {ceiling['description']}")
    ax.set_xlim(0, 0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def table_frame(out: Path) -> None:
    from blackjack_env import Action
    from blackjack_env.multiagent import raw_env

    table = raw_env(seats=3, game="shoe", bets=(1, 2, 4, 8), render_mode="rgb_array")
    # seats 0-2 bet 1, 8, 2; deal 9,7 / 10,A / 5,5 against a 10 (8 in the hole)
    table.reset(seed=0, options={"cards": ["9", "10", "5", "10", "7", "A", "5", "8", "4", "K"]})
    for bet in (7, 10, 8):
        table.step(bet)
    table.step(Action.HIT)  # seat 0's 16 takes the 4: 20, still to act
    Image.fromarray(table.render()).save(out)


def main() -> None:
    by_true_count(HERE / "counting-by-true-count.png")
    round_ev(HERE / "ceiling-round-ev.png")
    shares(HERE / "ceiling-shares.png")
    table_frame(HERE / "table-frame.png")
    print(f"wrote the pictures in {HERE}")


if __name__ == "__main__":
    main()
