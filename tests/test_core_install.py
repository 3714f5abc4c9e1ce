"""The core install (``pip install blackjack-env``, no extras) passes Gymnasium's and SB3's env checkers
for both envs, every advertised render mode included.

CI runs this file in an environment with the core dependencies and pytest alone (then again with
stable-baselines3 added), so a checker step that needs an extra shows up here; it needs nothing but
Gymnasium, numpy and the package itself.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import blackjack_env

ENVS = [
    (blackjack_env.ENV_ID, {}),
    (blackjack_env.SHOE_ENV_ID, {"rules": {"decks": 1, "penetration": 0.5}}),
    (blackjack_env.SHOE_ENV_ID, {"seats": 3, "seat": 1, "count_obs": "hilo"}),
]


@pytest.mark.parametrize(("env_id", "kwargs"), ENVS)
@pytest.mark.parametrize("render_mode", ["rgb_array", "ansi"])
def test_gymnasium_check_env_with_every_render_mode(env_id: str, kwargs: dict, render_mode: str) -> None:
    env = gym.make(env_id, render_mode=render_mode, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)
    env.close()


@pytest.mark.parametrize(("env_id", "kwargs"), ENVS)
def test_every_advertised_render_mode_renders(env_id: str, kwargs: dict) -> None:
    """render_modes lists only what the install can draw ("human" falls back to text without a display)."""
    for mode in gym.make(env_id, **kwargs).unwrapped.metadata["render_modes"]:
        env = gym.make(env_id, render_mode=mode, **kwargs)
        env.reset(seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "human" without a display prints the text
            picture = env.render()
        if mode == "rgb_array":
            assert isinstance(picture, np.ndarray) and picture.ndim == 3 and picture.dtype == np.uint8
        elif mode == "ansi":
            assert isinstance(picture, str) and picture
        env.close()


@pytest.mark.parametrize(("env_id", "kwargs"), ENVS)
def test_sb3_check_env(env_id: str, kwargs: dict) -> None:
    pytest.importorskip("stable_baselines3", reason="SB3's checker: pip install stable-baselines3")
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(gym.make(env_id, **kwargs).unwrapped, warn=True)
