"""The report of a network of the shoe game: ``--policy`` a ``blackjack-train --env shoe --algo ppo`` or
``--algo batch-ppo`` run folder.

The compiled simulator cannot run a network, so the vector env plays it (``evaluate.shoe_agents``) on
identical shoes (the first shoe of tables seeded alike) three ways: with its own bets, its play at a
flat bet, and basic strategy at a flat bet; the gains are paired per shoe. Its own play's rounds are
filed by the Hi-Lo true count when the bet is made (``CountTally``: counted from the unseen cards,
whatever the network observes), so the counter's pages (SCORE, N0, EV by count, bankroll paths) read
as a counting strategy's do. The run's ``metrics.csv`` is its learning curve.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blackjack_env.counting import CountingStrategy
from blackjack_env.counting import system as counting_system
from blackjack_env.simulate import Z95
from blackjack_env.solver import solve

from ..columns import NET_COLUMNS
from ..options import RunFeedback, policy_rules, shoe_agent_for
from ..shoe_agents import CountTally, paired_evaluation
from .learner import METRICS_FILE, read_run_metrics
from .model import (
    DEFAULT_BANKROLL,
    PROG,
    BankrollPaths,
    Counting,
    Estimate,
    Report,
    add_ceiling,
    check_ceiling,
    note_default_bankroll,
)

#: The agent's kind (agent.json) and what the report calls it.
KINDS = {"ppo-shoe": "the MaskablePPO network", "batch-ppo": "the batch-PPO network"}
#: What the network observes of the shoe (the shoe env's ``count_obs``), as the report says it.
OBSERVES = {
    "hilo": "Hi-Lo's true count (rounded)",
    "composition": "the unseen cards of each value",
    "none": "no count",
}


@dataclass
class Network:
    """What the network's pages show (``to_dict`` is summary.json's ``network``)."""

    kind: str  # the agent's (agent.json): "ppo-shoe" (MaskablePPO) or "batch-ppo"
    source: str
    observes: str  # the shoe env's count_obs
    bets: tuple[float, ...]
    seats: int
    seat: int
    flat_gain: Estimate  # that minus basic strategy's at a flat bet, paired per shoe
    curve: list[dict[str, float]] | None
    has_share = False  # a network's run prices no ceiling (the learner curve's share panel)
    trained = "env steps trained"  # what the learning curve's steps count: decisions, bets included

    @property
    def title(self) -> str:
        return kind_title(self.kind)

    @property
    def observes_text(self) -> str:
        return OBSERVES.get(self.observes, self.observes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "observes": self.observes,
            "bets": list(self.bets),
            "seats": self.seats,
            "seat": self.seat,
            "flat_gain": self.flat_gain.to_dict(),
            "learning_curve": self.curve,
        }


def kind_title(kind: str) -> str:
    """What the report calls a network of this kind (agent.json's)."""
    return KINDS.get(kind, f"the {kind} network")


def gain_estimate(row: dict[str, Any], key: str) -> Estimate:
    """A paired gain of ``paired_evaluation`` with its 95% interval as an Estimate."""
    low, high = row[f"{key}_low"], row[f"{key}_high"]
    return Estimate(row[key], low, high, (high - low) / (2 * Z95))


def build_network_report(args: argparse.Namespace) -> Report:
    """Play the network of ``--policy`` (module docstring) in its own game and collect every number of its
    report. A Ctrl-C is a KeyboardInterrupt: a report of part of a run is not the report asked for."""
    rules, _ = policy_rules(args)
    refused = {"--spread": args.spread is not None, "--backend ray": args.backend == "ray"}
    agent = shoe_agent_for(args, refused)
    if args.ceiling:
        check_ceiling(args, rules)
    tally = CountTally()
    feedback = RunFeedback(PROG, args.rounds, bar=sys.stderr.isatty())
    try:
        feedback.started()
        row = paired_evaluation(agent, args.rounds, args.seed, progress=feedback.update, tally=tally)
    finally:
        feedback.close()
    if row["interrupted"]:
        raise KeyboardInterrupt
    bets = tuple(float(b) for b in agent.shoe["bets"])
    bankroll = DEFAULT_BANKROLL if args.bankroll is None else args.bankroll
    figures = tally.figures(bankroll)
    report = Report(
        policy=args.policy,
        rules=rules,
        rounds=int(tally.total_rounds),
        seed=args.seed,
        interrupted=False,
        ev={
            "policy": Estimate.of(row["ev"], row["stderr_own"]),
            "flat": Estimate.of(row["ev_flat"], row["stderr_flat"]),
            "basic": Estimate.of(row["ev_basic"], row["stderr_basic"]),
        },
        gap_to_basic=gain_estimate(row, "gain_vs_basic"),
        paired_rounds=int(row["rounds"]),
        rates={},
        exact=None,
    )
    name = kind_title(agent.kind).removeprefix("the ")  # the counter pages' figure titles: short
    report.counting = Counting(
        CountingStrategy(counting_system("hilo"), name=name),
        solve(rules).table,
        figures,
        args.bankroll is not None,
        None,
        BankrollPaths.simulate(bankroll, row["ev"], figures["sd"], args.seed),
    )
    run = Path(args.policy)
    metrics = Path(args.run or run) / METRICS_FILE  # --run: the curve of another run's metrics.csv
    report.network = Network(
        kind=agent.kind,
        source=str(run),
        observes=agent.shoe.get("count_obs", "hilo"),
        bets=bets,
        seats=args.seats,
        seat=args.seat,
        flat_gain=gain_estimate(row, "flat_gain"),
        curve=read_run_metrics(metrics, NET_COLUMNS) if metrics.is_file() else None,
    )
    report.notes.append(
        "A network is played in the vector env, not the compiled simulator: on identical shoes (the first shoe of "
        "tables seeded alike) with its bets, its play at a flat bet of 1, and basic strategy at a flat bet of 1; "
        "the gains are paired per shoe. Random play is left out. Its rounds are filed by the Hi-Lo true count when "
        f"the bet is made (counted from the unseen cards; it observes {report.network.observes_text})."
    )
    note_default_bankroll(report)
    if report.network.curve is None:
        report.notes.append(f"No learning curve: {metrics} is not there.")
    if args.ceiling:
        add_ceiling(report, args, rules, bets)
    return report
