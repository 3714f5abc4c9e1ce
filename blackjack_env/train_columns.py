"""The metrics.csv columns of a ``blackjack-train --env shoe`` run (count-table and composition learners).

The trainer (``train/shoe.py``) writes them and the report's learner pages (``evaluate/report/learner.py``)
read them; they live here, beside neither, so the two cannot drift apart and the report need not import
the trainer.
"""

from __future__ import annotations

#: The evaluation's EVs and paired gains (each with its 95% CI), in the order metrics.csv holds them.
GAIN_COLUMNS = (
    "step",
    "ev",
    "ev_hilo",
    "ev_basic",
    "gain_vs_hilo",
    "gain_vs_hilo_low",
    "gain_vs_hilo_high",
    "gain_vs_basic",
    "gain_vs_basic_low",
    "gain_vs_basic_high",
    "flat_gain",
    "flat_gain_low",
    "flat_gain_high",
    "flat_gain_hilo",
)
#: Every column a shoe run writes (``--ceiling`` appends ``train/ceiling.py``'s ``CEILING_COLUMNS``).
SHOE_COLUMNS = (*GAIN_COLUMNS, "deviations", "max_bet_from", "wall_s")
#: The columns the report's learning curve needs: the gains against rounds and against wall time.
CURVE_COLUMNS = (*GAIN_COLUMNS, "wall_s")
