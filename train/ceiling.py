"""``blackjack-train --env shoe ... --ceiling``: the learner's share of the ceiling at every evaluation.

The ceiling (:func:`blackjack_env.solver.ceiling.ceiling`: round-start shoes of the run's game,
seats and seat, each priced exactly) is computed once when the run starts, before its clock does
(a resumed run reads it back from the solver's disk cache), on seed + 3, so its shoes are none of
the evaluation's (seed + 1) or the Hi-Lo calibration's (seed + 2). Each ``--eval-every`` row of
metrics.csv then gains (``CEILING_COLUMNS``) the ceiling's flat-bet gain over basic strategy and
the learner's flat-bet gain as a share of it, and the same with the learner's bets (the perfect
bettor placing the largest where a shoe's best EV is positive, else the smallest, against the
learner's paired gain with its bets), each with its 95% CI (``share_of_ceiling``: the delta
method, the simulation and the sampled shoes being independent). The ceiling's own summary is
written to ``CEILING_FILE`` in the run folder. Without ``--ceiling`` nothing of this runs.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blackjack_env.agents.base import ChunkAgent
from blackjack_env.evaluate.options import CEILING_SAMPLES
from blackjack_env.rules import Rules
from blackjack_env.solver.ceiling import STRATA, CeilingResult, check_rules, share_of_ceiling
from blackjack_env.solver.ceiling import ceiling as analyse_ceiling

CEILING_FILE = "ceiling.json"
#: The seed offset of the ceiling's shoes (module docstring).
CEILING_SEED_OFFSET = 3
CEILING_COLUMNS = (
    "ceiling_gain",
    "ceiling_gain_low",
    "ceiling_gain_high",
    "flat_share",
    "flat_share_low",
    "flat_share_high",
    "ceiling_bets_gain",
    "ceiling_bets_gain_low",
    "ceiling_bets_gain_high",
    "bets_share",
    "bets_share_low",
    "bets_share_high",
)


@dataclass(frozen=True)
class CeilingConfig:
    """--ceiling's analysis: how many round-start shoes, in how many strata."""

    samples: int = CEILING_SAMPLES
    strata: int = STRATA


def check_ceiling(config: CeilingConfig, rules: Rules, seats: int, seat: int) -> None:
    """--ceiling's game and --ceiling-samples, refused in one line before anything is written."""
    if config.samples < 1:
        raise ValueError(f"--ceiling-samples must be >= 1, got {config.samples}")
    try:
        check_rules(rules, config.samples, seats, max(seat, 0))
    except ValueError as error:
        raise ValueError(f"--ceiling: {error}") from None


class TrainCeiling:
    """The run's ceiling (module docstring) and the share columns it gives an evaluation row."""

    def __init__(self, result: CeilingResult, bets: tuple[float, ...]) -> None:
        self.result = result
        self.bets = bets
        self.gain, self.gain_ci = result.gain_over_basic(None)
        self.bets_gain, self.bets_gain_ci = result.gain_over_basic(bets)

    @classmethod
    def of(cls, config: CeilingConfig, seed: int, rules: Rules, out: Path, agent: ChunkAgent) -> TrainCeiling:
        """Analyse (or read from the solver's cache) the ceiling of the learner's game (the run's
        ``seed`` + ``CEILING_SEED_OFFSET``) and write ``CEILING_FILE``; the learner's seat for --seat
        all is seat 0, where it is evaluated."""
        print(
            f"blackjack-train: the ceiling: {config.samples:,} round-start shoes, each analysed exactly "
            "(seconds per shoe; kept on disk, so a resumed run reads them back)...",
            file=sys.stderr,
            flush=True,
        )
        result = analyse_ceiling(
            rules,
            seats=agent.seats,
            seat=max(agent.seat, 0),
            samples=config.samples,
            strata=config.strata,
            seed=seed + CEILING_SEED_OFFSET,
            workers=None,
            backend="local",
            ray_address=None,
        )
        if result.interrupted:  # before any round was learned: nothing of the run is lost
            raise ValueError(
                f"interrupted while analysing the ceiling ({result.samples} of {config.samples} shoes done, "
                "kept on disk): run the same command again to continue"
            )
        ceiling = cls(result, tuple(agent.bets))
        tmp = out / (CEILING_FILE + ".tmp")
        tmp.write_text(json.dumps(ceiling.to_json(), indent=1))
        tmp.replace(out / CEILING_FILE)
        return ceiling

    def to_json(self) -> dict[str, Any]:
        """The ceiling's summary (``blackjack-strategy --ceiling --json``'s keys), with the bets' gain."""
        return {
            **self.result.to_json(),
            "seed": self.result.seed,
            "learner_bets": list(self.bets),
            "bets_gain": self.bets_gain,
            "bets_gain_ci95": self.bets_gain_ci,
        }

    def columns(self, row: dict[str, float]) -> dict[str, float]:
        """The share columns of an evaluation row (its flat_gain and gain_vs_basic, with their CIs)."""
        flat = share_of_ceiling(
            row["flat_gain"], [row["flat_gain_low"], row["flat_gain_high"]], self.gain, self.gain_ci
        )
        bets = share_of_ceiling(
            row["gain_vs_basic"],
            [row["gain_vs_basic_low"], row["gain_vs_basic_high"]],
            self.bets_gain,
            self.bets_gain_ci,
        )
        return {
            "ceiling_gain": self.gain,
            "ceiling_gain_low": self.gain_ci[0],
            "ceiling_gain_high": self.gain_ci[1],
            "flat_share": flat["share"],
            "flat_share_low": flat["ci95"][0],
            "flat_share_high": flat["ci95"][1],
            "ceiling_bets_gain": self.bets_gain,
            "ceiling_bets_gain_low": self.bets_gain_ci[0],
            "ceiling_bets_gain_high": self.bets_gain_ci[1],
            "bets_share": bets["share"],
            "bets_share_low": bets["ci95"][0],
            "bets_share_high": bets["ci95"][1],
        }
