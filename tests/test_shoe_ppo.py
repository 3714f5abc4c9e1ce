"""MaskablePPO on the shoe game (``blackjack-train --env shoe --algo ppo``): the learner sees each
round as an episode of the same shoe, a tiny run writes its curve and resumes exactly, the saved
agent loads and plays legal bets, and bad input is one line, exit 2, nothing written."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import blackjack_env
from blackjack_env import engine as E
from blackjack_env.agents.shoe_ppo import RoundEpisodes
from blackjack_env.train.cli import main as train_main

SHOE = ["--env", "shoe", "--algo", "ppo", "--set", "penetration=0.75", "--no-progress"]
TINY = ["--n-envs", "2", "--n-steps", "250", "--batch-size", "250", "--n-epochs", "2", "--lr-schedule", "constant"]
TINY += ["--eval-every", "1000", "--eval-rounds", "2000", "--seed", "5"]


def rows(run: Path) -> list[dict[str, str]]:
    with (run / "metrics.csv").open(newline="") as f:
        return [{k: v for k, v in r.items() if k != "wall_s"} for r in csv.DictReader(f)]


def test_each_round_is_an_episode_of_the_same_shoe() -> None:
    """A settled round terminates the learner's episode; reset() continues the shoe, and only the
    cut card's round brings a fresh one."""
    rules = blackjack_env.Rules.preset("ultimatebet").replace(decks=1, penetration=0.5)
    env = RoundEpisodes(gym.make(blackjack_env.SHOE_ENV_ID, rules=rules).unwrapped)
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(0)
    dealt: list[int] = []
    fresh_shoes = 0
    for _ in range(40):  # rounds
        assert obs[E.O_PHASE] == E.P_BET
        terminated = False
        steps = 0
        while not terminated:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, reward, terminated, truncated, info = env.step(action)
            steps += 1
            assert not truncated
        assert "round_result" in info and reward == info["round_result"]
        dealt.append(info["cards_dealt"])
        shoe_over = info["cards_dealt"] >= 26
        obs, _ = env.reset()
        fresh_shoes += shoe_over
        assert (env.unwrapped.hilo_count()[1] == 52) == shoe_over  # a fresh shoe exactly after the cut card
    assert fresh_shoes >= 3 and any(b > a for a, b in itertools.pairwise(dealt))


def test_tiny_run_writes_its_curve_resumes_exactly_and_loads(tmp_path: Path, capsys) -> None:
    pytest.importorskip("sb3_contrib")
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    from blackjack_env.agents import load_agent
    from blackjack_env.agents.shoe_ppo import ShoePPOAgent
    from blackjack_env.evaluate.cli import main as evaluate_main

    whole, halves = tmp_path / "whole", tmp_path / "halves"
    assert train_main([*SHOE, *TINY, "--steps", "2000", "--out", str(whole)]) == 0
    assert "ppo (shoe): 2000 steps" in capsys.readouterr().out
    assert train_main([*SHOE, *TINY, "--steps", "1000", "--out", str(halves)]) == 0
    assert train_main(["--out", str(halves), "--resume", "--steps", "2000", "--no-progress"]) == 0
    curve = rows(whole)
    assert [int(r["step"]) for r in curve] == [0, 1000, 2000] and curve == rows(halves)
    start = {k: float(v) for k, v in curve[0].items()}
    assert start["flat_gain_low"] <= start["flat_gain"] <= start["flat_gain_high"]
    assert start["ev_basic"] == float(curve[-1]["ev_basic"])  # the same shoes at every evaluation
    a, b = ShoePPOAgent.load(whole).model.policy.state_dict(), ShoePPOAgent.load(halves).model.policy.state_dict()
    assert all(torch.equal(a[key], b[key]) for key in a)

    agent = load_agent(whole)
    assert isinstance(agent, ShoePPOAgent) and agent.shoe["bets"] == [1.0, 2.0, 4.0, 8.0]
    env = gym.make(blackjack_env.SHOE_ENV_ID, rules=agent.rules, **agent.shoe)
    obs, info = env.reset(seed=0)
    for _ in range(200):
        action = int(agent.act_batch(obs[None], info["action_mask"][None])[0])
        assert info["action_mask"][action]
        obs, _, terminated, _, info = env.step(action)
        if terminated:
            obs, info = env.reset()
    with pytest.raises(ValueError, match="plays by the count"):
        agent.to_table()
    capsys.readouterr()  # blackjack-evaluate plays it in the vector env, beside basic strategy on the same shoes
    assert evaluate_main(["--policy", str(whole), "--rounds", "1e4", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "played in the vector env at seat 0 of 1" in text and "difference (policy - baseline, same shoes)" in text


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--system", "zen"], "observes hilo"),
        (["--seats", "3", "--seat", "all"], "--seat all is for the count-table learner"),
        (["--bets", "1,4,2"], "must increase"),
        (["--bets", "0,1,2"], "only with other seats"),
        (["--set", "penetration=0"], "needs a cut card"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path: Path, capsys, argv: list[str], says: str) -> None:
    pytest.importorskip("sb3_contrib")
    out = tmp_path / "run"
    assert train_main([*SHOE, *argv, "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and says in error, error
    assert not out.exists()
