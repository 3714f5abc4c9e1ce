"""agents package."""

from .basic_strategy import BasicStrategyAgent

__all__ = ["BasicStrategyAgent"]
