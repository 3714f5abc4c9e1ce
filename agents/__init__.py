"""Agents: one small protocol (observation + mask in, action out; save/load; strategy-table export).

``PPOAgent`` needs the ``train`` extra (torch, sb3-contrib); it is imported on first use.
"""

from typing import Any

from .base import Agent
from .basic_strategy import BasicStrategyAgent
from .loading import load_agent
from .random_agent import RandomAgent
from .tabular import TabularAgent

__all__ = ["Agent", "BasicStrategyAgent", "PPOAgent", "RandomAgent", "TabularAgent", "load_agent"]


def __getattr__(name: str) -> Any:
    """``PPOAgent``, imported on first use. Optional dependency: it is the ``train`` extra's."""
    if name == "PPOAgent":
        from .ppo import PPOAgent  # optional dependency: the train extra's agent

        return PPOAgent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
