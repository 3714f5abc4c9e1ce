"""Exact analysis: optimal total-dependent basic strategy and house edge for any rule set.

    from blackjack_env.solver import solve
    sol = solve(rules)                 # cached on disk, keyed by the rules
    sol.ev, sol.table, sol.action_ev   # EV per round, StrategyTable, EVs per cell and action
    sol.evaluate(table)                # exact EV of any table and its deviations' costs
    hand_ev(rules, [10, 6], 10)        # one exact hand's EVs (composition-dependent play)
    effects_of_removal(rules).eor      # EV change per card removed; system_efficiencies: BC/PE/IC
    generate_indices(rules, "hilo")    # index plays and their gains at the rules' penetration
    ceiling(rules, samples=600)        # what knowing the shoe before every round is worth

Pure math (no simulation); the model and its one approximation (splits) are described in
``blackjack_env.solver._analysis``.
"""

from ._analysis import clear_dealer_caches
from .ceiling import CeilingResult, ceiling
from .indices import IndexTable, generate_indices
from .removal import Decision, Removal, effects_of_removal, playing_efficiency, system_efficiencies
from .solution import (
    ACTION_NAMES,
    OUTCOMES,
    Deviation,
    Evaluation,
    Solution,
    cache_dir,
    dealer_probabilities,
    evaluate,
    hand_ev,
    rules_key,
    solve,
)

__all__ = [
    "ACTION_NAMES",
    "OUTCOMES",
    "CeilingResult",
    "Decision",
    "Deviation",
    "Evaluation",
    "IndexTable",
    "Removal",
    "Solution",
    "cache_dir",
    "ceiling",
    "clear_dealer_caches",
    "dealer_probabilities",
    "effects_of_removal",
    "evaluate",
    "generate_indices",
    "hand_ev",
    "playing_efficiency",
    "rules_key",
    "solve",
    "system_efficiencies",
]
