"""Masks and legal sampling in every vector mode: Gymnasium's "sync" and "async" (single envs
stepped by Gymnasium) and "vector_entry_point" (the compiled vector env), for both env ids.

A finished episode's mask is STAND alone everywhere, so a masked rollout never meets an empty
mask, and ``sample_legal`` draws legal actions from the batch mask of any mode."""

from __future__ import annotations

from functools import cache

import gymnasium as gym
import numpy as np
import pytest

import blackjack_env
from blackjack_env import ENV_ID, SHOE_ENV_ID, Action, sample_legal

MODES = ("sync", "async", "vector_entry_point")
ENV_IDS = (ENV_ID, SHOE_ENV_ID)
N_ENVS = 4
STEPS = 2_000
SEED = 11


def stand_alone(n_actions: int) -> np.ndarray:
    mask = np.zeros(n_actions, np.bool_)
    mask[Action.STAND] = True
    return mask


@cache
def masked_rollout(env_id: str, mode: str) -> tuple[np.ndarray, ...]:
    """``STEPS`` steps of N_ENVS tables, every action drawn by ``sample_legal`` from the batch mask
    with one seeded generator, checking every mask on the way; returns (actions, observations,
    rewards, terminations), the whole trace."""
    envs = gym.make_vec(env_id, num_envs=N_ENVS, vectorization_mode=mode)
    rng = np.random.default_rng(SEED)
    actions, observations, rewards, terminations = [], [], [], []
    try:
        obs, info = envs.reset(seed=SEED)
        n_actions = info["action_mask"].shape[1]
        finished = stand_alone(n_actions)
        for _ in range(STEPS):
            masks = info["action_mask"]
            assert masks.shape == (N_ENVS, n_actions) and masks.dtype == np.bool_
            assert masks.any(axis=1).all(), f"an empty mask in mode {mode}: {masks}"
            if "_action_mask" in info:  # Gymnasium's batched info: every table reported its mask
                assert info["_action_mask"].all()
            action = sample_legal(masks, rng)
            assert masks[np.arange(N_ENVS), action].all()
            obs, reward, terminated, truncated, info = envs.step(action)  # ValueError on an illegal action
            assert not truncated.any()
            assert (info["action_mask"][terminated] == finished).all(), "a finished table's mask is STAND alone"
            actions.append(action)
            observations.append(obs)
            rewards.append(reward)
            terminations.append(terminated)
    finally:
        envs.close()
    return tuple(np.array(trace) for trace in (actions, observations, rewards, terminations))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_masked_random_rollout_never_meets_an_empty_mask_nor_an_illegal_action(env_id: str, mode: str) -> None:
    _, _, rewards, terminated = masked_rollout(env_id, mode)
    assert terminated.sum() >= 20  # many finished tables were met (and their autoreset steps)
    assert (rewards != 0).any()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_mode_plays_the_same_game_from_the_same_seeds(env_id: str) -> None:
    """Table i is seeded seed + i in every mode and autoresets on the next step, so the same
    generator drawing from the same masks gives the same actions, cards and results."""
    reference = masked_rollout(env_id, "vector_entry_point")
    for mode in ("sync", "async"):
        for name, ours, theirs in zip(
            ("actions", "observations", "rewards", "terminations"), masked_rollout(env_id, mode), reference, strict=True
        ):
            np.testing.assert_array_equal(ours, theirs, err_msg=f"{name} differ in mode {mode}")


@pytest.mark.parametrize("mode", MODES)
def test_gymnasium_masked_sampling_draws_legal_actions_in_every_mode(mode: str) -> None:
    """Gymnasium's own route, ``action_space.sample(mask=...)`` with one int8 mask per table, works
    on the same batch masks (the action space's generator, seeded)."""
    envs = gym.make_vec(SHOE_ENV_ID, num_envs=N_ENVS, vectorization_mode=mode)
    try:
        _, info = envs.reset(seed=3)
        envs.action_space.seed(3)
        finishes = 0
        for _ in range(300):
            actions = envs.action_space.sample(mask=tuple(info["action_mask"].astype(np.int8)))
            assert info["action_mask"][np.arange(N_ENVS), actions].all()
            _, _, terminated, _, info = envs.step(actions)
            finishes += int(terminated.sum())
        assert finishes > 0
    finally:
        envs.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_single_env_reports_stand_alone_on_the_step_that_ends_the_episode(env_id: str) -> None:
    env = gym.make(env_id)
    rng = np.random.default_rng(5)
    _, info = env.reset(seed=5)
    for _ in range(3):
        terminated = False
        while not terminated:
            mask = info["action_mask"]
            np.testing.assert_array_equal(mask, env.action_masks())
            _, _, terminated, _, info = env.step(sample_legal(mask, rng))
        finished = stand_alone(env.action_space.n)
        np.testing.assert_array_equal(info["action_mask"], finished)
        np.testing.assert_array_equal(env.action_masks(), finished)
        assert env.action_space.sample() == Action.STAND  # LegalActions: the finished mask's one id
        # the finished env itself is not stepped on: it must be reset (a vector env's autoreset does)
        for action in (Action.STAND, Action.HIT, env.action_space.n - 1):
            with pytest.raises(RuntimeError, match=r"call reset\(\)"):
                env.step(action)
        np.testing.assert_array_equal(env.action_masks(), finished)  # the refused steps changed nothing
        _, info = env.reset()
        assert info["action_mask"].any()


def test_sample_legal_draws_uniformly_among_the_legal_ids_and_refuses_an_empty_row() -> None:
    masks = np.array([[1, 0, 1, 0, 0, 0, 1], [0, 0, 0, 0, 0, 1, 1], [1, 0, 0, 0, 0, 0, 0]], np.int8)
    draws = np.array([sample_legal(masks, np.random.default_rng(k)) for k in range(3000)])
    for row, mask in enumerate(masks):
        ids, counts = np.unique(draws[:, row], return_counts=True)
        assert ids.tolist() == np.flatnonzero(mask).tolist()
        assert counts.min() > 0.85 * 3000 / len(ids)  # uniform: each legal id about equally often
    assert draws.dtype == np.int64
    again = [sample_legal(masks, np.random.default_rng(k)) for k in range(5)]
    np.testing.assert_array_equal(again, draws[:5])  # same generator seed, same draws
    single = sample_legal(masks[0].astype(bool), np.random.default_rng(0))  # a single env's mask: one id
    assert single.shape == () and masks[0][single]
    with pytest.raises(ValueError, match="row 1 of the mask has no legal action"):
        sample_legal(np.array([[True, False], [False, False]]), np.random.default_rng(0))
    with pytest.raises(ValueError, match="shape"):
        sample_legal(np.zeros((2, 3, 4), bool), np.random.default_rng(0))
    assert blackjack_env.sample_legal is sample_legal
