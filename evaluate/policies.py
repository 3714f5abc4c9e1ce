"""Turn a ``--policy`` argument into something the simulator runs."""

from __future__ import annotations

from pathlib import Path

from blackjack_env.rules import Rules
from blackjack_env.simulate import Policy
from blackjack_env.strategy import StrategyTable

#: Manifest of a saved agent directory (see ``agents.base``).
AGENT_FILE = "agent.json"

POLICY_CHOICES = "basic, random, or a path to a saved agent or strategy table"

#: File name of a strategy table inside a saved agent's directory.
TABLE_FILE = "strategy.json"


def basic_strategy_table(rules: Rules) -> StrategyTable:
    """The exact total-dependent basic strategy for these rules (cached on disk by the solver)."""
    from blackjack_env.solver import solve

    return solve(rules).table


def load_policy(spec: str, rules: Rules) -> Policy:
    """basic | random | PATH (a saved agent directory, a strategy-table JSON, or a directory
    holding strategy.json).

    A saved agent (a directory with agent.json, as ``blackjack-train`` writes) is loaded and
    tabulated afresh: a tabular agent's table is its policy exactly; a PPO agent's is its greedy
    play per cell (exact for a policy that sees only the table's state, see ``agents.ppo``); a
    random agent runs as the simulator's own random play."""
    if spec == "basic":
        return Policy.from_table(basic_strategy_table(rules))
    if spec == "random":
        return Policy.random()
    path = Path(spec)
    if path.is_dir() and (path / AGENT_FILE).is_file():
        return _agent_policy(path, spec)
    if path.is_dir():
        path = path / TABLE_FILE
    if not path.is_file():
        raise ValueError(f"--policy {spec!r}: no such file or agent directory; use {POLICY_CHOICES}")
    try:
        table = StrategyTable.load(path)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"--policy {spec!r} is not a saved strategy table ({error})") from None
    return Policy.from_table(table)


def _agent_policy(path: Path, spec: str) -> Policy:
    from agents.base import load_agent

    try:
        agent = load_agent(path)
    except ImportError as error:
        raise ValueError(
            f"--policy {spec!r} needs the training extra to load ({error}); pip install 'blackjack-env[train]'"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"--policy {spec!r} is not a loadable saved agent ({error})") from None
    table = agent.to_table()
    return Policy.random() if table is None else Policy.from_table(table)
