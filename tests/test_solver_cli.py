"""BasicStrategyAgent playing the env, and the blackjack-strategy command."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import blackjack_env  # noqa: F401  (registers the env)
from blackjack_env import engine as E
from blackjack_env.agents import BasicStrategyAgent
from blackjack_env.evaluate.strategy import main
from blackjack_env.rules import Rules
from blackjack_env.solver import solve
from blackjack_env.strategy import CHART_CODES, hand_row


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BLACKJACK_ENV_CACHE", str(tmp_path / "cache"))


# --------------------------------------------------------------------------- agent
def _play(env, agent, cards):
    """Deal the stacked cards and return the (observation, mask, action) of each decision."""
    obs, _ = env.reset(seed=3, options={"cards": cards})
    decisions = []
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        action = agent.act(obs, mask)
        assert mask[action]
        decisions.append((obs.copy(), mask.copy(), action))
        obs, _, done, _, _ = env.step(action)
    return decisions


def test_agent_plays_the_chart_with_fallbacks():
    rules = Rules.preset("ultimatebet")  # 6 decks H17 DAS split to 3 hands, late surrender
    agent = BasicStrategyAgent(rules)
    env = gym.make("blackjack_env/Blackjack-v0", rules=rules)
    # 10,6 v 10: surrender
    assert _play(env, agent, ["10", "10", "6", "7"])[0][2] == E.SURRENDER
    # 8,8 v 6: split, then 8,3 = 11 v 6 after a split with DAS: double
    decisions = _play(env, agent, ["8", "6", "8", "10", "3", "10", "9"])
    assert [d[2] for d in decisions[:2]] == [E.SPLIT, E.DOUBLE]
    # 6,5 v 6: double
    assert _play(env, agent, ["6", "6", "5", "10"])[0][2] == E.DOUBLE
    # A,2 v 3: hit; then A,2,5 = soft 18 with three cards: the Ds cell falls back to stand
    decisions = _play(env, agent, ["A", "3", "2", "10", "5", "10"])
    assert [d[2] for d in decisions] == [E.HIT, E.STAND]
    assert agent.table.to_chart()["soft"]["18"]["3"] == "Ds"
    # ace up: decline insurance
    assert _play(env, agent, ["10", "A", "7", "9"])[0][2] == E.NO_INSURANCE


def test_agent_first_decisions_are_the_best_legal_action_by_exact_ev():
    rules = Rules(decks=6, hit_soft_17=True, surrender="late", split_to=4)
    agent = BasicStrategyAgent(rules)
    solution = agent.solution
    env = gym.make("blackjack_env/Blackjack-v0", rules=rules)
    obs, _ = env.reset(seed=7)
    checked = 0
    for _ in range(600):
        done = False
        first = True
        while not done:
            mask = env.unwrapped.action_masks()
            action = agent.act(obs, mask)
            if obs[E.O_PHASE] == E.P_PLAY and first and obs[E.O_NUM_HANDS] == 1:
                row = hand_row(obs[E.O_TOTAL], obs[E.O_SOFT], obs[E.O_PAIR], obs[E.O_CAN_SPLIT])
                evs = solution.action_ev[row, obs[E.O_UP] - 1]
                legal = [a for a in range(5) if mask[a] and not math.isnan(evs[a])]
                if row < 18 or obs[E.O_PAIR]:  # hard totals and pairs: one population per cell
                    assert action == max(legal, key=lambda a: evs[a]), (obs, mask, evs)
                    checked += 1
                first = False
            obs, _, done, _, _ = env.step(action)
        obs, _ = env.reset()
    assert checked > 300


def test_agent_batch_and_predict_agree_with_act():
    agent = BasicStrategyAgent("infinite-deck")
    env = gym.make("blackjack_env/Blackjack-v0", rules="infinite-deck")
    observations, masks = [], []
    obs, _ = env.reset(seed=1)
    for _ in range(200):
        mask = env.unwrapped.action_masks()
        observations.append(obs.copy())
        masks.append(mask.copy())
        obs, _, done, _, _ = env.step(agent.act(obs, mask))
        if done:
            obs, _ = env.reset()
    obs_arr, mask_arr = np.array(observations), np.array(masks)
    single = [agent.act(o, m) for o, m in zip(obs_arr, mask_arr, strict=True)]
    assert agent.act_batch(obs_arr, mask_arr).tolist() == single
    batch, _ = agent.predict(obs_arr, action_masks=mask_arr)
    assert batch.tolist() == single
    one, _ = agent.predict(obs_arr[0], action_masks=mask_arr[0])
    assert one == single[0]
    assert agent.ev == solve("infinite-deck").ev
    with pytest.raises(ValueError):
        agent.predict(obs_arr[0])


# --------------------------------------------------------------------------- CLI
def test_cli_json(capsys):
    assert main(["--rules", "infinite-deck", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"rules", "ev", "chart", "action_ev"}
    assert data["rules"] == Rules.preset("infinite-deck").to_dict()
    assert data["ev"] == pytest.approx(solve("infinite-deck").ev)
    assert -0.01 < data["ev"] < 0
    assert data["chart"]["hard"]["16"]["10"] == "H"
    assert data["chart"]["pairs"]["A"]["6"] == "P"
    codes = {code for section in data["chart"].values() for row in section.values() for code in row.values()}
    assert codes <= set(CHART_CODES)
    assert data["action_ev"]["hard"]["11"]["6"]["double"] > data["action_ev"]["hard"]["11"]["6"]["hit"]


def test_cli_settings_chart_and_csv(capsys):
    assert main(["--rules", "infinite-deck", "--set", "surrender=late", "--set", "hit_soft_17=yes"]) == 0
    chart = capsys.readouterr().out
    assert "infinite deck H17" in chart and "HARD" in chart and "Rh" in chart
    assert main(["--rules", "infinite-deck", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("section,hand,up,code,stand,hit,double,split,surrender")
    assert len(lines) == 1 + 38 * 10


@pytest.mark.parametrize(
    "argv",
    [["--set", "decks=x"], ["--rules", "nosuch"], ["--set", "nokey=1"], ["--format", "xml"], ["--bogus"]],
)
def test_cli_bad_input_is_one_line_exit_2(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error" in err and "Traceback" not in err


def test_cli_runs_as_a_module(tmp_path):
    env = {"BLACKJACK_ENV_CACHE": str(tmp_path), "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-m", "blackjack_env.evaluate.strategy", "--rules", "infinite-deck", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rules"]["decks"] == 0
