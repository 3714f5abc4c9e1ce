"""blackjack-env: casino blackjack with the full rule set as a Gymnasium environment.

``import blackjack_env`` registers ``blackjack_env/Blackjack-v0``; ``gymnasium.make`` returns the
:class:`BlackjackEnv` itself (no wrappers), so ``env.action_masks()`` works on what it returns.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from .env import Action, BlackjackEnv, Phase
from .rules import DEFAULT_PRESET, PRESETS, Rules

ENV_ID = "blackjack_env/Blackjack-v0"

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

__all__ = ["DEFAULT_PRESET", "ENV_ID", "PRESETS", "Action", "BlackjackEnv", "Phase", "Rules"]
__version__ = "0.1.0"
