"""blackjack-env: casino blackjack with the full rule set as a Gymnasium environment.

``import blackjack_env`` registers ``blackjack_env/Blackjack-v0``.
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
    )

__all__ = ["DEFAULT_PRESET", "ENV_ID", "PRESETS", "Action", "BlackjackEnv", "Phase", "Rules"]
__version__ = "0.1.0"
