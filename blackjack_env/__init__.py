"""blackjack-env: casino blackjack with the full rule set as a Gymnasium environment.

``import blackjack_env`` registers ``blackjack_env/Blackjack-v0`` (one round) and
``blackjack_env/BlackjackShoe-v0`` (a shoe dealt to the cut card, a bet before every round);
``gymnasium.make`` returns the env itself (no wrappers), so ``env.action_masks()`` works on it.
``sample_legal(info["action_mask"], rng)`` draws a legal action per table of any vector env of them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from gymnasium.envs.registration import register, registry

from .rules import DEFAULT_PRESET, PRESETS, Rules

if TYPE_CHECKING:  # loaded on first use (``__getattr__``): importing the package compiles and loads nothing
    from .env import Action, BlackjackEnv, Phase
    from .shoe_env import BlackjackShoeEnv
    from .vector import sample_legal

#: The package's names that live in compiled modules, and their module: imported when first used, so
#: ``import blackjack_env`` registers the envs without importing numba or any kernel.
_LAZY = {
    "Action": ".env",
    "BlackjackEnv": ".env",
    "Phase": ".env",
    "BlackjackShoeEnv": ".shoe_env",
    "sample_legal": ".vector",
}


def __getattr__(name: str) -> Any:
    """A lazy name's value, its module imported on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


ENV_ID = "blackjack_env/Blackjack-v0"
SHOE_ENV_ID = "blackjack_env/BlackjackShoe-v0"

if SHOE_ENV_ID not in registry:
    register(
        id=SHOE_ENV_ID,
        entry_point="blackjack_env.shoe_env:BlackjackShoeEnv",
        vector_entry_point="blackjack_env.vector:BlackjackShoeVectorEnv",
        order_enforce=False,  # as Blackjack-v0: make returns the env itself
        disable_env_checker=True,
    )

if ENV_ID not in registry:
    register(
        id=ENV_ID,
        entry_point="blackjack_env.env:BlackjackEnv",
        vector_entry_point="blackjack_env.vector:BlackjackVectorEnv",
        # ``make`` returns the env itself, so ``env.action_masks()`` and every attribute work on
        # it (Gymnasium 1.x wrappers do not forward attributes). Nothing is lost: the env enforces
        # its own order (step or render before reset raise RuntimeError) and passes Gymnasium's
        # and SB3's checkers (tests/test_properties.py).
        order_enforce=False,
        disable_env_checker=True,
    )

__all__ = [
    "DEFAULT_PRESET",
    "ENV_ID",
    "PRESETS",
    "SHOE_ENV_ID",
    "Action",
    "BlackjackEnv",
    "BlackjackShoeEnv",
    "Phase",
    "Rules",
    "sample_legal",
]
__version__ = "0.1.0"
