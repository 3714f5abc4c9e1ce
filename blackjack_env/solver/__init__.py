"""Exact analysis: optimal total-dependent basic strategy and house edge for any rule set.

    from blackjack_env.solver import solve
    sol = solve(rules)                 # cached on disk, keyed by the rules
    sol.ev, sol.table, sol.action_ev   # EV per round, StrategyTable, EVs per cell and action
    sol.evaluate(table)                # exact EV of any table and its deviations' costs
    hand_ev(rules, [10, 6], 10)        # one exact hand's EVs (composition-dependent play)

Pure math (no simulation); the model and its one approximation (splits) are described in
:mod:`blackjack_env.solver._analysis`.
"""

from ._analysis import clear_dealer_caches
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
    "Deviation",
    "Evaluation",
    "Solution",
    "cache_dir",
    "clear_dealer_caches",
    "dealer_probabilities",
    "evaluate",
    "hand_ev",
    "rules_key",
    "solve",
]
