"""The metrics.csv columns of a ``blackjack-train --env shoe`` run (count-table and composition learners).

Its evaluation's EVs and paired gains: the trainer (``train/shoe.py``, a layer above evaluate) writes
them and the report's learner pages (``evaluate/report/learner.py``) read them, both from here, so the
two cannot drift apart (the PPO run's columns, in ``train/shoe_ppo.py``, take their CI names from
``with_ci``).
"""

from __future__ import annotations


def with_ci(name: str) -> tuple[str, str, str]:
    """A figure's column and its 95% CI's: ``name``, ``name_low``, ``name_high``."""
    return name, f"{name}_low", f"{name}_high"


#: The evaluation's EVs and paired gains (each with its 95% CI), in the order metrics.csv holds them.
GAIN_COLUMNS = (
    "step",
    "ev",
    "ev_hilo",
    "ev_basic",
    *with_ci("gain_vs_hilo"),
    *with_ci("gain_vs_basic"),
    *with_ci("flat_gain"),
    "flat_gain_hilo",
)
#: Every column a shoe run writes (``--ceiling`` appends ``train/ceiling.py``'s ``CEILING_COLUMNS``).
SHOE_COLUMNS = (*GAIN_COLUMNS, "deviations", "max_bet_from", "wall_s")
#: Every column a network's shoe run writes (``--algo ppo`` or ``batch-ppo``: ``train/shoe_ppo.py``): the paired
#: gains over basic strategy, Hi-Lo I18 + Fab 4's EV (simulated apart, so its gain is unpaired), the average bet.
NET_COLUMNS = (
    "step",
    "ev",
    "ev_basic",
    "ev_hilo",
    *with_ci("gain_vs_basic"),
    *with_ci("flat_gain"),
    *with_ci("gain_vs_hilo"),
    "avg_bet",
    "rounds",
    "wall_s",
)
#: The columns the report's learning curve needs: the gains against rounds and against wall time.
CURVE_COLUMNS = (*GAIN_COLUMNS, "wall_s")
