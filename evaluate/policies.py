"""Turn a ``--policy`` argument into something the simulator runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from blackjack_env.agents import load_agent
from blackjack_env.agents.shoe_game import spread_bets
from blackjack_env.counting import BUILT_IN_STRATEGIES, CountingStrategy, built_in_strategy, spread_ramp
from blackjack_env.linear_policy import KIND as LINEAR_KIND
from blackjack_env.linear_policy import LinearModel
from blackjack_env.rules import Rules
from blackjack_env.simulate import Policy
from blackjack_env.solver import solve
from blackjack_env.strategy import StrategyTable

#: Manifest of a saved agent directory (see ``blackjack_env.agents.base``).
AGENT_FILE = "agent.json"

POLICY_CHOICES = (
    "basic, random, a counting strategy (hilo-i18-fab4, a system name such as hilo, or a counting-strategy "
    "JSON), or a path to a saved agent or strategy table"
)

#: File name of a strategy table inside a saved agent's directory.
TABLE_FILE = "strategy.json"
#: File name of the learned counting strategy in a ``blackjack-train --env shoe`` run directory.
COUNTING_FILE = "counting-strategy.json"
#: File name of the composition model in a ``blackjack-train --env shoe --algo linear`` run directory.
LINEAR_FILE = "linear-model.json"
#: File name of the game a ``blackjack-train`` run was trained in, in its run directory.
RULES_FILE = "rules.json"


def basic_strategy_table(rules: Rules) -> StrategyTable:
    """The exact total-dependent basic strategy for these rules (cached on disk by the solver)."""
    return solve(rules).table


def load_policy(spec: str, rules: Rules, spread: str | None = None) -> Policy:
    """basic | random | a counting strategy | PATH (a saved agent directory, a strategy-table
    JSON, a counting-strategy JSON, or a directory holding strategy.json).

    A counting strategy is built in (``hilo-i18-fab4``; a system's name: that count with no index
    plays), a JSON file with a "system" key, or a directory holding ``counting-strategy.json``
    (a ``blackjack-train --env shoe`` run); ``spread`` ("1-8") replaces its ramp with the
    usual one (:func:`blackjack_env.counting.spread_ramp`). A composition model (a
    ``blackjack-train --env shoe --algo linear`` run directory, or its ``linear-model.json``) plays
    and bets by its weights; ``spread`` replaces its allowed bets (MIN, doubling, up to MAX: ``1-1``
    is a flat bet of 1). Other policies take no spread.

    A saved agent (a directory with agent.json, as ``blackjack-train`` writes) is loaded and
    tabulated afresh: a tabular agent's table is its policy exactly; a PPO agent's is its greedy
    play per cell (exact for a policy that sees only the table's state, see ``blackjack_env.agents.ppo``); a
    random agent runs as the simulator's own random play."""
    model = _linear_model(spec)
    if model is not None:
        if spread is not None:  # its bets: MIN, doubling, up to MAX, chosen by its value as before
            model = model.with_bets(spread_bets(spread))
        return Policy.from_linear(model, rules, basic_strategy_table(rules))
    counting = _counting_strategy(spec, rules)
    if counting is not None:
        if spread is not None:
            counting = counting.with_ramp(spread_ramp(spread))
        return Policy.from_counting(counting, rules, basic_strategy_table(rules))
    if spread is not None:
        raise ValueError(f"--spread needs a counting strategy; --policy {spec!r} is not one")
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


def is_counting(spec: str, rules: Rules) -> bool:
    """Whether ``spec`` names a counting strategy (a bad counting-strategy file counts: loading it
    then reports its problem)."""
    try:
        return _linear_model(spec) is not None or _counting_strategy(spec, rules) is not None
    except ValueError:
        return True


def learner_run(spec: str) -> Path | None:
    """The training run folder of a shoe learner named by ``--policy spec``: a folder holding a count-table
    run's COUNTING_FILE or a composition run's LINEAR_FILE, a network's of the shoe game
    (``shoe_agent_run``), or the folder of a composition model's file; else None."""
    path = Path(spec)
    if path.is_dir():
        learned = (path / COUNTING_FILE).is_file() or (path / LINEAR_FILE).is_file()
        return path if learned or shoe_agent_run(spec) is not None else None
    return path.parent if _linear_model(spec) is not None else None


def shoe_agent_run(spec: str) -> Path | None:
    """The folder of a saved agent of the shoe game that plays from the count in its observation (a
    network: its AGENT_FILE names the shoe env's arguments), which the vector env plays
    (``shoe_agents``) since the compiled simulator cannot; else None."""
    path = Path(spec)
    try:
        manifest = json.loads((path / AGENT_FILE).read_text()) if path.is_dir() else None
    except (OSError, ValueError):
        return None  # reported when it is loaded as an agent
    return path if isinstance(manifest, dict) and isinstance(manifest.get("shoe"), dict) else None


def run_rules(spec: str) -> tuple[Rules, Path] | None:
    """The game a shoe learner's run (``learner_run``) was trained in and the file that says so: its
    RULES_FILE, else the "rules" of its AGENT_FILE; None where ``spec`` names no learner's run or its
    folder keeps neither. (What a run learned is its own game's: played in another, its pages would set it
    beside that game's basic strategy and indices.)"""
    folder = learner_run(spec)
    if folder is None:
        return None
    for name in (RULES_FILE, AGENT_FILE):
        path = folder / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text())
            return Rules.from_dict(data if name == RULES_FILE else data["rules"]), path
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path}: not the rules of a training run ({error})") from None
    return None


def _linear_model(spec: str) -> LinearModel | None:
    """The composition model ``spec`` names (a run directory holding LINEAR_FILE, or such a
    file: a JSON object whose "kind" is a composition model's), else None."""
    path = Path(spec)
    if path.is_dir():
        path = path / LINEAR_FILE
    if path.suffix != ".json" or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None  # reported by the other readers
    if not isinstance(data, dict) or data.get("kind") != LINEAR_KIND:
        return None
    return LinearModel.load(path)


def _counting_strategy(spec: str, rules: Rules) -> CountingStrategy | None:
    """The counting strategy ``spec`` names (built in, or a JSON object with a "system" key), else None."""
    if spec in BUILT_IN_STRATEGIES:
        return built_in_strategy(spec, rules.hit_soft_17)
    path = Path(spec)
    if path.is_dir() and (path / COUNTING_FILE).is_file():  # a count-table learner's run directory
        path = path / COUNTING_FILE
    if path.suffix != ".json" or not path.is_file():
        return None
    try:
        text = path.read_text()
        data = json.loads(text)
    except OSError:
        return None  # reported as what it is not when read as a strategy table
    except json.JSONDecodeError:
        if '"system"' in text:  # meant as a counting strategy: its load names the file and where the JSON breaks
            return CountingStrategy.load(path)
        return None
    if not isinstance(data, dict) or "system" not in data:
        return None
    return CountingStrategy.load(path)


def load_agent_of(spec: str) -> Any:
    """The saved agent ``--policy spec`` names, or a ValueError in one line (the training extra missing,
    or a folder that does not load)."""
    try:
        return load_agent(spec)
    except ImportError as error:
        raise ValueError(
            f"--policy {spec!r} needs the training extra to load ({error}); pip install 'blackjack-env[train]'"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"--policy {spec!r} is not a loadable saved agent ({error})") from None


def _agent_policy(path: Path, spec: str) -> Policy:
    agent = load_agent_of(spec)
    table = agent.to_table()
    return Policy.random() if table is None else Policy.from_table(table)
