"""The Dict-observation wrappers: RLlib's and TorchRL's mask conventions over every env."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import blackjack_env
from blackjack_env import engine as E
from blackjack_env.wrappers import DictObservation, DictObservationVector


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        (blackjack_env.ENV_ID, {}),
        (blackjack_env.SHOE_ENV_ID, {"seats": 2, "seat": 1, "bets": (0, 1, 2)}),
    ],
)
@pytest.mark.parametrize("encoding", ["multidiscrete", "one_hot"])
@pytest.mark.filterwarnings("ignore:.*different from the unwrapped version")  # check_env on the wrapper, on purpose
def test_dict_observation_carries_the_mask_and_passes_gymnasiums_checker(
    env_id: str, kwargs: dict[str, Any], encoding: str
) -> None:
    env = DictObservation(gym.make(env_id, **kwargs), encoding=encoding)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(200):
        assert env.observation_space.contains(obs)
        assert set(obs) == {"observations", "action_mask"}
        assert obs["action_mask"].dtype == np.float32
        np.testing.assert_array_equal(obs["action_mask"], env.action_masks())
        if encoding == "one_hot":  # one 1 per component, at the component's value
            assert obs["observations"].sum() == len(env.unwrapped.observation_space.nvec)
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, _, terminated, _, _ = env.step(action)
        if terminated:  # a finished episode's mask: STAND alone
            assert np.flatnonzero(obs["action_mask"]).tolist() == [0]
            obs, _ = env.reset()


def test_one_hot_is_the_multidiscrete_observation_encoded() -> None:
    plain = DictObservation(gym.make(blackjack_env.ENV_ID))
    hot = DictObservation(gym.make(blackjack_env.ENV_ID), encoding="one_hot")
    a, _ = plain.reset(seed=9)
    b, _ = hot.reset(seed=9)
    nvec = plain.unwrapped.observation_space.nvec
    offsets = np.concatenate([[0], np.cumsum(nvec)[:-1]])
    assert np.flatnonzero(b["observations"]).tolist() == (offsets + a["observations"]).tolist()


def test_torchrl_keys_and_bool_mask() -> None:
    env = DictObservation(gym.make(blackjack_env.ENV_ID), obs_key="observation", mask_key="mask", mask_dtype=bool)
    obs, _ = env.reset(seed=1)
    assert set(obs) == {"observation", "mask"} and obs["mask"].dtype == np.bool_
    assert env.observation_space.contains(obs)


def test_vector_wrapper_batches_and_keeps_finished_tables_sampleable() -> None:
    envs = DictObservationVector(
        gym.make_vec(blackjack_env.ENV_ID, num_envs=8, vectorization_mode="vector_entry_point")
    )
    obs, _ = envs.reset(seed=2)
    rng = np.random.default_rng(1)
    for _ in range(50):
        assert envs.observation_space.contains(obs)
        assert obs["action_mask"].shape == (8, E.N_ACTIONS)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
        obs, _, _, _, _ = envs.step(actions)
    np.testing.assert_array_equal(obs["action_mask"], envs.action_masks())


def test_vector_wrapper_over_gymnasiums_sync_vector_env_matches_the_native_one() -> None:
    """Any vectorization mode: over a SyncVectorEnv of single envs each env's own mask is read, and the
    same seeds and actions give the same batches as over the native vector env."""
    wrapped = {
        mode: DictObservationVector(gym.make_vec(blackjack_env.ENV_ID, num_envs=4, vectorization_mode=mode))
        for mode in ("sync", "vector_entry_point")
    }
    batches = {mode: envs.reset(seed=5)[0] for mode, envs in wrapped.items()}
    rng = np.random.default_rng(3)
    for _ in range(40):
        np.testing.assert_array_equal(batches["sync"]["observations"], batches["vector_entry_point"]["observations"])
        np.testing.assert_array_equal(batches["sync"]["action_mask"], batches["vector_entry_point"]["action_mask"])
        assert (batches["sync"]["action_mask"].sum(axis=1) > 0).all()  # a finished env's: STAND alone
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in batches["sync"]["action_mask"]])
        batches = {mode: envs.step(actions)[0] for mode, envs in wrapped.items()}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"encoding": "image"}, r"encoding must be one of multidiscrete, one_hot, got 'image'"),
        ({"obs_key": "x", "mask_key": "x"}, r"obs_key and mask_key must be two different names"),
    ],
)
def test_bad_wrapper_arguments(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        DictObservation(gym.make(blackjack_env.ENV_ID), **kwargs)


@pytest.mark.slow
def test_the_rllib_example_trains_ppo_with_action_masking() -> None:
    """benchmarks/examples/rllib_ppo.py: RLlib's PPO with its action-masking module, 2 iterations."""
    pytest.importorskip("ray.rllib", reason="the rllib extra (pip install 'blackjack-env[rllib]')")
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "examples" / "rllib_ppo.py"
    result = subprocess.run(
        [sys.executable, str(script), "--iterations", "2", "--batch", "1000"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line for line in result.stdout.splitlines() if line.startswith("iteration")]
    assert [line.split(":")[0] for line in lines] == ["iteration 1", "iteration 2"]
    assert "2000" in lines[-1] and "mean return per shoe" in lines[-1]


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [(blackjack_env.ENV_ID, {}), (blackjack_env.SHOE_ENV_ID, {"seats": 2, "seat": 1, "bets": (0, 1, 2)})],
)
def test_torchrl_reads_the_mask_and_a_masked_policy_plays_only_legal_actions(
    env_id: str, kwargs: dict[str, Any]
) -> None:
    """TorchRL's convention (README "Using other RL libraries"): its GymWrapper over DictObservation with
    TorchRL's key names and a boolean mask, its ActionMask transform, and a MaskedCategorical actor."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchrl", reason="the torchrl extra (pip install 'blackjack-env[torchrl]')")
    from tensordict.nn import TensorDictModule
    from torchrl.envs import GymWrapper, TransformedEnv
    from torchrl.envs.transforms import ActionMask
    from torchrl.envs.utils import ExplorationType, set_exploration_type
    from torchrl.modules import MaskedCategorical, ProbabilisticActor

    base = DictObservation(
        gym.make(env_id, **kwargs), obs_key="observation", mask_key="action_mask", mask_dtype=bool, encoding="one_hot"
    )
    env = TransformedEnv(GymWrapper(base, categorical_action_encoding=True), ActionMask())
    env.set_seed(0)
    torch.manual_seed(0)  # the random actions and the actor's draws come from torch's generator
    size = base.observation_space["observation"].shape[0]
    linear = torch.nn.Linear(size, int(base.action_space.n))
    net = TensorDictModule(linear, in_keys=["observation"], out_keys=["logits"])
    actor = ProbabilisticActor(
        net, in_keys={"logits": "logits", "mask": "action_mask"}, distribution_class=MaskedCategorical
    )
    steps = 300
    for policy in (None, actor):  # the masked action spec's random actions, then the masked network's
        # the actor samples its masked distribution (its mode would repeat one action: an untrained net
        # can make that "sit out" in the shoe game, where no reward is then ever earned)
        with set_exploration_type(ExplorationType.RANDOM):
            rollout = env.rollout(steps, policy=policy, break_when_any_done=False)
        masks, actions = rollout["action_mask"], rollout["action"]
        assert masks.dtype == torch.bool and masks.shape == (steps, base.action_space.n)
        assert bool(masks[torch.arange(steps), actions].all()), "an action the mask forbids was taken"
        assert int(rollout["next", "done"].sum()) > 0  # episodes ended and were reset inside the rollout
        assert float(rollout["next", "reward"].abs().sum()) > 0
