"""The shoe game's command-line values (``--system``, ``--bets``/``--spread``, ``--seat``), read and
checked in one place for every learner of ``blackjack-train --env shoe`` (count-table, composition,
PPO) and for ``--ceiling``."""

from __future__ import annotations

import json
from pathlib import Path

from blackjack_env.agents.count_table import parse_bets, spread_bets
from blackjack_env.counting import CountingSystem, parse_system


def load_system(spec: str) -> CountingSystem:
    """--system: a built-in name, or a JSON file holding a system ({"tags": ..., "balanced": ...})
    or a counting strategy (its system is taken)."""
    path = Path(spec)
    if path.suffix != ".json":
        return parse_system(spec)
    try:
        data = json.loads(path.read_text())
    except OSError as error:
        raise ValueError(f"--system {spec!r}: cannot read it ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"--system {spec!r}: not JSON ({error})") from None
    try:
        return parse_system(data["system"] if isinstance(data, dict) and "system" in data else data)
    except ValueError as error:
        raise ValueError(f"--system {spec!r}: {error}") from None


def bets_of(bets: str, spread: str) -> tuple[float, ...]:
    """The allowed bets from --bets or --spread (not both); default 1, 2, 4, 8."""
    if bets and spread:
        raise ValueError("give --bets or --spread, not both")
    if spread:
        return spread_bets(spread)
    return parse_bets(bets or "1,2,4,8")


def seat_of(text: str, seats: int) -> int:
    """--seat K (0..seats-1) or all (-1)."""
    if text == "all":
        return -1
    try:
        seat = int(text)
    except ValueError:
        raise ValueError(f"--seat must be 0..{seats - 1} or all, got {text!r}") from None
    if not 0 <= seat < seats:
        raise ValueError(f"--seat must be 0..{seats - 1} (seat 0 is dealt first) or all, got {text!r}")
    return seat
