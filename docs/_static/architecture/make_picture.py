"""The architecture page's picture (docs/architecture.md): the package's layers, each using the ones below.

python docs/_static/architecture/make_picture.py     # writes layers.png beside this file
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

HERE = Path(__file__).resolve().parent

#: Bottom to top: (layer, colour, [(box title, modules)]). A layer imports only the layers below it.
LAYERS: list[tuple[str, str, list[tuple[str, str]]]] = [
    (
        "foundations",
        "#dbe9f6",
        [("Rules, presets", "rules.py"), ("cards", "cards.py"), ("one parallel map", "parallel.py, ray_cluster.py")],
    ),
    (
        "compiled\nkernels\n(numba)",
        "#fde2c4",
        [
            ("one table's round", "engine.py: state, hands, shoe"),
            ("seats and policies", "table.py: play_until"),
            ("strategies", "strategy.py, count_policy.py,\nlinear_policy.py"),
            ("simulator", "simulate.py"),
            ("exact analysis", "solver/: basic strategy, EV,\nremoval, indices, ceiling"),
        ],
    ),
    (
        "adapters",
        "#d5efd5",
        [
            ("Gymnasium envs", "env.py, shoe_env.py"),
            ("vector env", "vector.py, sb3.py"),
            ("PettingZoo table", "multiagent.py"),
            ("pictures, wrappers", "render.py, wrappers.py"),
        ],
    ),
    (
        "agents",
        "#eadcf4",
        [
            ("fixed", "basic strategy, random,\ncounting strategies"),
            ("learners", "tabular, count-table,\ncomposition, PPO, batch PPO"),
        ],
    ),
    (
        "train, evaluate",
        "#f6dada",
        [
            ("training loops", "train/: chunks, checkpoints,\nmetrics"),
            ("evaluation", "evaluate/: runner, report,\nsweep, counting stats"),
        ],
    ),
    (
        "commands",
        "#eeeeee",
        [
            ("blackjack-strategy", "exact analysis, charts"),
            ("blackjack-evaluate", "EV, CIs, reports"),
            ("blackjack-train", "learners"),
            ("blackjack-play", "by hand"),
            ("blackjack-compile", "warm the cache"),
        ],
    ),
]

WIDTH, BAND, GAP = 15.0, 1.15, 0.35


def draw() -> None:
    fig, ax = plt.subplots(figsize=(12, 7.2), dpi=110)
    ax.set_xlim(-2.6, WIDTH + 0.1)
    ax.set_ylim(-0.2, len(LAYERS) * (BAND + GAP))
    ax.axis("off")
    for level, (name, colour, boxes) in enumerate(LAYERS):
        y = level * (BAND + GAP)
        ax.text(-2.5, y + BAND / 2, name, ha="left", va="center", fontsize=10, fontweight="bold")
        box_width = (WIDTH - 0.2 * (len(boxes) - 1)) / len(boxes)
        for i, (title, modules) in enumerate(boxes):
            x = i * (box_width + 0.2)
            ax.add_patch(
                FancyBboxPatch(
                    (x, y), box_width, BAND, boxstyle="round,pad=0.02,rounding_size=0.12", fc=colour, ec="#555555"
                )
            )
            ax.text(x + box_width / 2, y + BAND * 0.7, title, ha="center", va="center", fontsize=9.5, fontweight="bold")
            ax.text(
                x + box_width / 2, y + BAND * 0.32, modules, ha="center", va="center", fontsize=8, family="monospace"
            )
        if level:
            ax.annotate(
                "", xy=(WIDTH / 2, y - GAP + 0.03), xytext=(WIDTH / 2, y - 0.03),
                arrowprops={"arrowstyle": "->", "color": "#333333", "lw": 1.4},
            )  # fmt: skip
    ax.set_title("blackjack_env: each layer imports only the layers below it", fontsize=12)
    fig.tight_layout()
    fig.savefig(HERE / "layers.png")
    plt.close(fig)


if __name__ == "__main__":
    draw()
