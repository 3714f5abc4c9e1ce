"""The SB3 VecEnv over the compiled vector env (``blackjack_env.sb3``): the same run as SB3's
DummyVecEnv of single envs on the same seed (observations, rewards, dones, terminal observations,
masks), both games and the shoe seen round by round; masks hold through MaskablePPO's learning;
same seed, same run; the VecEnv API answers honestly; a checkpoint pickles mid-stream."""

from __future__ import annotations

import pickle
import subprocess
import sys
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import blackjack_env

pytest.importorskip("stable_baselines3")
torch = pytest.importorskip("torch")
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.vec_env import VecCheckNan  # noqa: E402

from blackjack_env.agents.shoe_ppo import RoundEpisodes  # noqa: E402
from blackjack_env.sb3 import BlackjackSB3VecEnv, make_sb3_vec_env  # noqa: E402
from blackjack_env.vector import BlackjackVectorEnv  # noqa: E402

SMALL_SHOE = {"rules": {"decks": 1, "penetration": 0.5}}
GAMES = [
    pytest.param(blackjack_env.ENV_ID, {}, None, id="round"),
    pytest.param(blackjack_env.ENV_ID, {"reward": "expected", "rules": "vegas-strip"}, None, id="round-expected"),
    pytest.param(blackjack_env.SHOE_ENV_ID, SMALL_SHOE, None, id="shoe"),
    pytest.param(blackjack_env.SHOE_ENV_ID, SMALL_SHOE, "round", id="shoe-by-round"),
    pytest.param(
        blackjack_env.SHOE_ENV_ID,
        {"rules": {"decks": 2, "penetration": 0.75}, "count_obs": "composition", "seats": 3, "seat": 1},
        "round",
        id="shoe-3-seats-composition",
    ),
]


def dummy(env_id: str, kwargs: dict[str, Any], episode: str | None, n: int, seed: int) -> Any:
    """SB3's make_vec_env of single envs: what --algo ppo learned on before the compiled VecEnv."""

    def make() -> gym.Env:
        env = gym.make(env_id, **kwargs).unwrapped
        return RoundEpisodes(env) if episode == "round" else env

    return make_vec_env(make, n_envs=n, seed=seed)


def masks_of(env: Any) -> np.ndarray:
    from sb3_contrib.common.maskable.utils import get_action_masks

    return get_action_masks(env)


@pytest.mark.parametrize(("env_id", "kwargs", "episode"), GAMES)
def test_same_run_as_dummy_vec_env_of_single_envs(env_id: str, kwargs: dict[str, Any], episode: str | None) -> None:
    fast = make_sb3_vec_env(env_id, n_envs=5, seed=11, episode=episode, **kwargs)
    slow = dummy(env_id, kwargs, episode, 5, seed=11)
    np.testing.assert_array_equal(fast.reset(), slow.reset())
    rng = np.random.default_rng(0)
    dones = 0
    for _ in range(1500):
        mask = masks_of(fast)
        np.testing.assert_array_equal(mask, masks_of(slow))
        assert mask.shape == (5, fast.action_space.n) and mask.any(axis=1).all()
        actions = np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1)
        obs, rewards, done, infos = fast.step(actions)
        obs_s, rewards_s, done_s, infos_s = slow.step(actions)
        np.testing.assert_array_equal(obs, obs_s)
        np.testing.assert_array_equal(rewards, rewards_s)
        np.testing.assert_array_equal(done, done_s)
        assert rewards.dtype == rewards_s.dtype and done.dtype == done_s.dtype
        for i in np.flatnonzero(done):
            np.testing.assert_array_equal(infos[i]["terminal_observation"], infos_s[i]["terminal_observation"])
            assert infos[i]["TimeLimit.truncated"] is False
            assert (infos[i]["episode"]["r"], infos[i]["episode"]["l"]) == (
                infos_s[i]["episode"]["r"],
                infos_s[i]["episode"]["l"],
            )
        dones += int(done.sum())
    assert dones > 100


def test_the_shoe_by_round_continues_the_shoe() -> None:
    """Round episodes: a settled round is done, its terminal observation the next bet, and the
    returned observation that same bet (the shoe goes on); a fresh shoe only at the cut card."""
    env = make_sb3_vec_env(blackjack_env.SHOE_ENV_ID, n_envs=3, seed=2, episode="round", monitor=False, **SMALL_SHOE)
    obs = env.reset()
    rng = np.random.default_rng(1)
    settled = 0
    for _ in range(300):
        mask = env.action_masks()
        obs, _, done, infos = env.step(np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1))
        for i in np.flatnonzero(done):
            last = infos[i]["terminal_observation"]
            if last[blackjack_env.engine.O_PHASE] == blackjack_env.engine.P_BET:  # the shoe goes on
                np.testing.assert_array_equal(obs[i], last)
                settled += 1
            else:  # the cut card's round: a fresh shoe, its first bet
                assert obs[i][blackjack_env.engine.O_PHASE] == blackjack_env.engine.P_BET
    assert settled > 50


def test_maskable_ppo_learns_and_same_seed_is_the_same_run() -> None:
    """A few thousand steps of MaskablePPO: every action legal (the env raises on an illegal one),
    no NaN anywhere, and the weights equal those learned on DummyVecEnv with the same seed."""
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)

    def learn(env: Any) -> dict[str, Any]:
        model = MaskablePPO(
            "MlpPolicy", env, n_steps=128, batch_size=256, n_epochs=2, policy_kwargs={"net_arch": [32]}, seed=3
        )
        model.learn(2048)
        assert model.num_timesteps == 2048
        return model.policy.state_dict()

    kwargs = {"reward": "expected"}
    fast = learn(VecCheckNan(make_sb3_vec_env(blackjack_env.ENV_ID, n_envs=8, **kwargs), raise_exception=True))
    again = learn(make_sb3_vec_env(blackjack_env.ENV_ID, n_envs=8, **kwargs))
    slow = learn(dummy(blackjack_env.ENV_ID, kwargs, None, 8, seed=3))
    assert all(torch.equal(fast[k], again[k]) for k in fast)
    assert all(torch.equal(fast[k], slow[k]) for k in fast)
    shoe = make_sb3_vec_env(blackjack_env.SHOE_ENV_ID, n_envs=8, episode="round", **SMALL_SHOE)
    MaskablePPO("MlpPolicy", VecCheckNan(shoe, raise_exception=True), n_steps=128, batch_size=512, seed=0).learn(1024)


def test_an_illegal_action_raises_and_changes_nothing() -> None:
    env = make_sb3_vec_env(n_envs=4, seed=0)
    obs = env.reset()
    actions = np.where(env.action_masks(), np.arange(7), 99).min(axis=1)
    bad = actions.copy()
    bad[2] = int(np.flatnonzero(~env.action_masks()[2])[0])
    with pytest.raises(ValueError, match=r"illegal action \d+ at table 2"):
        env.step(bad)
    np.testing.assert_array_equal(env.venv._obs, obs)
    env.step(actions)


def test_the_vec_env_api_answers_honestly() -> None:
    venv = BlackjackVectorEnv(4, rules="vegas-strip")
    env = BlackjackSB3VecEnv(venv)
    env.seed(7)
    env.reset()
    assert env.num_envs == 4 and env.action_space == gym.spaces.Discrete(7)
    assert env.observation_space == venv.single_observation_space
    assert env.has_attr("action_masks") and not env.has_attr("no_such_thing")
    assert env.get_attr("rules", indices=[1, 3]) == [venv.rules, venv.rules]
    assert env.get_attr("observation_space", indices=0) == [venv.single_observation_space]
    rows = env.env_method("action_masks", indices=[2])
    np.testing.assert_array_equal(rows[0], env.action_masks()[2])
    np.testing.assert_array_equal(env.get_attr("action_masks", indices=1)[0](), env.action_masks()[1])
    assert env.env_is_wrapped(Monitor) == [True] * 4  # its infos are Monitor's
    assert env.env_is_wrapped(gym.wrappers.TimeLimit, indices=[0]) == [False]
    assert BlackjackSB3VecEnv(BlackjackVectorEnv(2), monitor=False).env_is_wrapped(Monitor) == [False, False]
    with pytest.raises(AttributeError, match="only action_masks"):
        env.env_method("reset")
    with pytest.raises(IndexError, match=r"0\.\.3"):
        env.get_attr("rules", indices=[4])
    with pytest.raises(ValueError, match="every table"):
        env.set_attr("reward", "expected", indices=[0])
    env.set_attr("label", "x")
    assert env.get_attr("label") == ["x"] * 4
    env.set_options({"anything": 1})
    with pytest.raises(ValueError, match="no reset options"):
        env.reset()


def test_bad_arguments_are_one_clear_line() -> None:
    with pytest.raises(ValueError, match="env_id must be one of"):
        make_sb3_vec_env("Blackjack-v1")
    with pytest.raises(ValueError, match="episode must be 'round'"):
        make_sb3_vec_env(blackjack_env.ENV_ID, episode="shoe")
    with pytest.raises(ValueError, match="'round' or 'shoe'"):
        make_sb3_vec_env(blackjack_env.SHOE_ENV_ID, episode="hand", **SMALL_SHOE)
    with pytest.raises(TypeError, match="BlackjackVectorEnv"):
        BlackjackSB3VecEnv(gym.make(blackjack_env.ENV_ID))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="reset"):
        BlackjackSB3VecEnv(BlackjackVectorEnv(2)).step(np.zeros(2, np.int64))


def test_a_pickled_env_goes_on_where_it_stopped() -> None:
    """What a --resume checkpoint keeps: the tables mid-round, their card streams, the monitor."""
    env = make_sb3_vec_env(blackjack_env.SHOE_ENV_ID, n_envs=3, seed=4, episode="round", **SMALL_SHOE)
    env.reset()
    rng = np.random.default_rng(5)
    for _ in range(20):
        mask = env.action_masks()
        env.step(np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1))
    copy = pickle.loads(pickle.dumps(env))
    assert isinstance(copy, BlackjackSB3VecEnv) and copy.monitor
    for _ in range(200):
        mask = env.action_masks()
        np.testing.assert_array_equal(mask, copy.env_method("action_masks"))
        actions = np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1)
        a, b = env.step(actions), copy.step(actions)
        for x, y in zip(a[:3], b[:3], strict=True):
            np.testing.assert_array_equal(x, y)
        assert [i.get("episode", {}).get("r") for i in a[3]] == [i.get("episode", {}).get("r") for i in b[3]]


def test_the_core_package_does_not_import_sb3_and_the_module_names_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['stable_baselines3'] = None  # as if the train extra were not installed\n"
        "import blackjack_env, blackjack_env.vector\n"
        "try:\n"
        "    import blackjack_env.sb3\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "pip install 'blackjack-env[train]'" in done.stdout
