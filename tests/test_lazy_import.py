"""``import blackjack_env`` registers the envs and loads nothing heavy: numba, the compiled
modules, the solver, matplotlib, torch and Ray wait until something uses them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
import gymnasium as gym
import blackjack_env
loaded = sorted(m for m in sys.modules if m.split('.')[0] in {'numba', 'matplotlib', 'torch', 'ray', 'scipy'}
                or m.startswith(('blackjack_env.engine', 'blackjack_env.solver')))
ids = sorted(k for k in gym.registry if k.startswith('blackjack_env/'))
print(json.dumps({'loaded': loaded, 'ids': ids}))
"""


def test_importing_the_package_registers_the_envs_and_loads_nothing_heavy() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["loaded"] == []
    assert seen["ids"] == ["blackjack_env/Blackjack-v0", "blackjack_env/BlackjackShoe-v0"]


def test_the_env_names_load_on_first_use() -> None:
    import blackjack_env
    from blackjack_env.env import Action, BlackjackEnv

    assert blackjack_env.BlackjackEnv is BlackjackEnv
    assert blackjack_env.Action.HIT is Action.HIT
    assert callable(blackjack_env.sample_legal)
    assert blackjack_env.BlackjackShoeEnv.__name__ == "BlackjackShoeEnv"
    assert set(blackjack_env.__all__) <= set(dir(blackjack_env)) | set(blackjack_env._LAZY)


def test_an_unknown_name_is_an_attribute_error() -> None:
    import blackjack_env

    with pytest.raises(AttributeError, match="no_such_name"):
        blackjack_env.no_such_name  # noqa: B018
