"""The vector env: Gymnasium's vector API, and the very same rounds as the single env."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from conftest import step_vector_beside_singles
from gymnasium.vector import VectorEnv

import blackjack_env  # noqa: F401
from blackjack_env import Rules
from blackjack_env import engine as E
from blackjack_env.vector import BlackjackVectorEnv

ENV_ID = "blackjack_env/Blackjack-v0"


def make_vec(num_envs: int, **kwargs) -> VectorEnv:
    return gym.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)


def random_legal(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per table (0 where a round just ended: it is ignored)."""
    scores = rng.random(masks.shape) * masks
    return np.argmax(scores, axis=1)


def test_make_vec_returns_a_vector_env_with_batched_spaces() -> None:
    envs = make_vec(5, rules="european")
    assert isinstance(envs.unwrapped, BlackjackVectorEnv)
    assert envs.num_envs == 5
    obs, info = envs.reset(seed=1)
    assert obs.shape == (5, 12)
    assert info["action_mask"].shape == (5, 7)
    assert envs.unwrapped.action_masks().shape == (5, 7)
    assert obs in envs.observation_space


@pytest.mark.parametrize("reward", ["sampled", "expected"])
@pytest.mark.parametrize("rules", ["ultimatebet", "european", "single-deck", "infinite-deck", {"penetration": 0.5}])
def test_vector_env_deals_what_single_envs_deal(rules, reward) -> None:
    """Table i seeded with seed + i plays exactly like BlackjackEnv seeded with seed + i."""
    n = 6
    envs = make_vec(n, rules=rules, reward=reward)
    singles = [gym.make(ENV_ID, rules=rules, reward=reward) for _ in range(n)]
    obs, info = envs.reset(seed=40)
    single_obs = np.array([env.reset(seed=40 + i)[0] for i, env in enumerate(singles)])
    np.testing.assert_array_equal(obs, single_obs)
    assert step_vector_beside_singles(envs, singles, info, 600, seed=0) > 300


def test_illegal_action_names_the_table_and_changes_nothing() -> None:
    envs = make_vec(3, rules="ultimatebet")
    _, info = envs.reset(seed=2)
    masks = info["action_mask"]
    actions = np.argmax(masks, axis=1)
    illegal_table = 1
    actions[illegal_table] = int(np.flatnonzero(~masks[illegal_table])[0])
    before = envs.unwrapped._st.copy()
    with pytest.raises(ValueError, match="table 1"):
        envs.step(actions)
    np.testing.assert_array_equal(envs.unwrapped._st, before)


def test_reset_mask_resets_only_the_chosen_tables() -> None:
    envs = make_vec(4)
    envs.reset(seed=3)
    rounds_before = envs.unwrapped._st[:, E.S_ROUNDS].copy()
    envs.reset(options={"reset_mask": np.array([True, False, False, True])})
    rounds_after = envs.unwrapped._st[:, E.S_ROUNDS]
    assert list(rounds_after - rounds_before) == [1, 0, 0, 1]


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        BlackjackVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="count_obs"):
        BlackjackVectorEnv(num_envs=2, count_obs="bogus")
    envs = BlackjackVectorEnv(num_envs=2, rules=Rules(decks=2))
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(2, int))
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        envs.step(np.zeros(3, int))


def test_action_space_sample_draws_legal_actions_at_every_table() -> None:
    """envs.action_space.sample() is legal everywhere (the single env's sample() is too), and
    covers every legal action; a finished table (autoreset next) gets STAND."""
    envs = make_vec(64, rules="ultimatebet")
    envs.action_space.seed(3)
    _, info = envs.reset(seed=5)
    seen = np.zeros(E.N_ACTIONS, bool)
    finished = np.zeros(64, bool)
    for _ in range(300):
        actions = envs.action_space.sample()
        assert actions.shape == (64,)
        assert info["action_mask"][np.arange(64), actions].all()
        assert (actions[finished] == E.STAND).all()
        seen[actions[~finished]] = True
        _, _, finished, _, info = envs.step(actions)  # raises ValueError on an illegal action
    assert seen.all()


def test_finished_tables_mask_stand_alone_so_sampling_from_the_mask_works() -> None:
    """A finished table's mask is STAND alone (the autoreset step ignores it), so the
    natural rng.choice(np.flatnonzero(mask)) works on every step; the autoreset takes any id."""
    envs = make_vec(16, rules="ultimatebet")
    rng = np.random.default_rng(0)
    _, info = envs.reset(seed=2)
    finishes = 0
    for _ in range(200):
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in info["action_mask"]])
        _, _, terminated, _, info = envs.step(actions)
        stand_only = np.zeros(E.N_ACTIONS, bool)
        stand_only[E.STAND] = True
        assert (info["action_mask"][terminated] == stand_only).all()
        assert (envs.unwrapped.action_masks() == info["action_mask"]).all()
        finishes += int(terminated.sum())
        if terminated.any():  # the autoreset step ignores the action, even one the mask holds not
            ids = np.array([rng.choice(np.flatnonzero(mask)) for mask in info["action_mask"]])
            restarted = terminated
            ids[restarted] = E.SURRENDER
            _, rewards, terminated, _, info = envs.step(ids)
            assert (rewards[restarted] == 0).all() and not terminated[restarted].any()
    assert finishes > 50


def test_action_space_sample_with_an_explicit_mask_is_multidiscrete_sampling() -> None:
    envs = make_vec(3)
    envs.reset(seed=0)
    only_hit = tuple(np.array([0, 1, 0, 0, 0, 0, 0], np.int8) for _ in range(3))
    assert (envs.action_space.sample(mask=only_hit) == E.HIT).all()
