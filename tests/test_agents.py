"""Agents: the protocol, legal play under masks, learning, save/load, and evaluation of saved agents."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import blackjack_env
from blackjack_env import Rules
from blackjack_env.agents import Agent, BasicStrategyAgent, RandomAgent, TabularAgent, load_agent
from blackjack_env.evaluate.cli import main as evaluate_main
from blackjack_env.evaluate.policies import load_policy
from blackjack_env.evaluate.runner import simulate
from blackjack_env.solver import solve

RULES = Rules()


def rollout(agent: Agent, rounds: int, seed: int = 3) -> float:
    """Mean reward of ``rounds`` rounds in the single env, checking every action is legal."""
    env = gym.make(blackjack_env.ENV_ID, rules=RULES)
    total = 0.0
    for k in range(rounds):
        obs, info = env.reset(seed=seed if k == 0 else None)
        done = False
        while not done:
            action = agent.act(obs, info["action_mask"])
            assert info["action_mask"][action], f"illegal action {action}"
            obs, reward, done, _, info = env.step(action)
        total += reward
    return total / rounds


def vector_batch(n: int = 256, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    envs = gym.make_vec(blackjack_env.ENV_ID, num_envs=n, vectorization_mode="vector_entry_point", rules=RULES)
    obs, info = envs.reset(seed=seed)
    return obs, info["action_mask"]


@pytest.fixture(scope="module")
def tabular() -> TabularAgent:
    agent = TabularAgent(RULES, seed=1)
    for _ in range(40):  # about 10 M env steps, a few seconds compiled
        agent.learn_chunk()
    return agent


def test_every_agent_follows_the_protocol(tabular: TabularAgent) -> None:
    for agent in (RandomAgent(RULES, seed=0), BasicStrategyAgent(RULES), tabular):
        assert isinstance(agent, Agent)
        obs, masks = vector_batch()
        actions = agent.act_batch(obs, masks)
        assert actions.dtype == np.int64 and actions.shape == (len(obs),)
        assert masks[np.arange(len(obs)), actions].all()
        assert [agent.act(o, m) for o, m in zip(obs[:20], masks[:20], strict=True)] == actions[:20].tolist() or (
            agent.kind == "random"
        )
        rollout(agent, 200)


def test_act_batch_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match="masks"):
        RandomAgent(RULES).act_batch(np.zeros((3, 12)), np.ones((2, 7)))


def test_tabular_learner_closes_the_gap_from_random(tabular: TabularAgent) -> None:
    solution = solve(RULES)
    random_ev = simulate(RULES, load_policy("random", RULES), 200_000, seed=2).result.ev()
    learnt_gap = solution.ev - solution.evaluate(tabular.to_table()).ev
    assert solution.ev - random_ev > 0.2  # random play gives up more than 20% of the bet
    assert 0 <= learnt_gap < 0.01  # ten million steps: within 1 pp of basic strategy


def test_tabular_chunks_are_reproducible() -> None:
    a, b = TabularAgent(RULES, seed=7, chunk_steps=1 << 14), TabularAgent(RULES, seed=7, chunk_steps=1 << 14)
    for _ in range(3):
        a.learn_chunk()
        b.learn_chunk()
    assert np.array_equal(a.q, b.q) and np.array_equal(a.c, b.c) and a.steps == b.steps


def test_saved_agents_reload_and_evaluate(tmp_path: Path, tabular: TabularAgent, capsys) -> None:
    for agent in (tabular, RandomAgent(RULES, seed=4), BasicStrategyAgent(RULES)):
        path = tmp_path / agent.kind
        agent.save(path)
        loaded = load_agent(path)
        assert type(loaded) is type(agent) and loaded.rules == agent.rules
        table, loaded_table = agent.to_table(), loaded.to_table()
        if table is None:
            assert loaded_table is None
        else:
            assert np.array_equal(table.actions, loaded_table.actions)
            assert np.array_equal(table.insurance, loaded_table.insurance)
        assert evaluate_main(["--policy", str(path), "--rounds", "1e5", "--json", "--no-progress"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["rounds"] == 100_000
    loaded = load_agent(tmp_path / "tabular")
    assert np.array_equal(loaded.q, tabular.q) and loaded.steps == tabular.steps


def test_ppo_agent_learns_and_reloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("torch").set_num_threads(1)  # two test workers on two cores: no thread pool spinning
    from blackjack_env.agents import PPOAgent
    from blackjack_env.agents.ppo import make_vec_env

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    solution = solve(RULES)
    env = make_vec_env(RULES, 4, 0)
    agent = PPOAgent.build(RULES, env, seed=0, n_steps=512, batch_size=1024, n_epochs=5, learning_rate=1e-3, gamma=1.0)
    before = solution.ev - solution.evaluate(agent.to_table()).ev
    agent.model.learn(16384)
    after = solution.ev - solution.evaluate(agent.to_table()).ev
    assert after < before / 3, (before, after)  # the untrained net gives up ~25%; 16k steps cut it to a few %
    obs, masks = vector_batch(64)
    assert masks[np.arange(64), agent.act_batch(obs, masks)].all()
    agent.save(tmp_path / "ppo")
    loaded = load_agent(tmp_path / "ppo")
    assert np.array_equal(loaded.to_table().actions, agent.to_table().actions)
    assert np.array_equal(loaded.act_batch(obs, masks), agent.act_batch(obs, masks))
    assert not list(scratch.glob("SB3-*"))  # learn() left no SB3-* log folder behind
    policy = load_policy(str(tmp_path / "ppo"), RULES)
    assert np.array_equal(policy.table.actions, agent.to_table().actions)


def test_unknown_agent_kind_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "agent.json").write_text(json.dumps({"kind": "dqn", "rules": RULES.to_dict()}))
    with pytest.raises(ValueError, match="unknown agent kind 'dqn'"):
        load_agent(tmp_path)
    with pytest.raises(ValueError, match="not a loadable saved agent"):
        load_policy(str(tmp_path), RULES)


def test_a_saved_agents_strategy_json_that_is_corrupt_or_edited_is_warned_about(
    tmp_path: Path, tabular: TabularAgent
) -> None:
    """The agent plays its own table, never strategy.json: a file that says otherwise is flagged."""
    import warnings

    from blackjack_env.agents.base import AgentFileWarning
    from blackjack_env.strategy import row_of_label

    tabular.save(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an intact directory loads without a word
        load_agent(tmp_path)
    table_file = tmp_path / "strategy.json"
    intact = table_file.read_text()
    table_file.write_text(intact[: len(intact) // 2])
    with pytest.warns(AgentFileWarning, match="cannot be read"):
        agent = load_agent(tmp_path)
    assert np.array_equal(agent.to_table().actions, tabular.to_table().actions)

    edited = json.loads(intact)
    table = tabular.to_table()
    row, col = row_of_label("hard", "16"), 9
    order = list(table.actions[row, col])
    order[0], order[1] = order[1], order[0]
    actions = np.array(edited["actions"])
    actions[row, col] = order
    edited["actions"] = actions.tolist()
    table_file.write_text(json.dumps(edited))
    with pytest.warns(AgentFileWarning, match="1 cells play another first action"):
        load_agent(tmp_path)


def test_blackjack_evaluate_names_a_disagreeing_strategy_json_in_one_line(
    tmp_path: Path, tabular: TabularAgent, capsys
) -> None:
    tabular.save(tmp_path)
    (tmp_path / "strategy.json").write_text("{not json")
    assert evaluate_main(["--policy", str(tmp_path), "--rounds", "1e4", "--json", "--no-progress"]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)
    warning_lines = [line for line in captured.err.splitlines() if "warning" in line]
    assert len(warning_lines) == 1 and warning_lines[0].startswith("blackjack-evaluate: warning: ")
    assert "strategy.json cannot be read" in warning_lines[0]


def test_tabular_agent_learns_from_rounds_played_elsewhere() -> None:
    """explore() / finish_round(): the learner's own epsilon-greedy choice and compiled update for
    rounds played outside its kernel (a seat of the PettingZoo table, a Gymnasium loop)."""
    agent = TabularAgent(RULES, epsilon=0.1, seed=2)
    env = gym.make(blackjack_env.ENV_ID, rules=RULES)
    obs, info = env.reset(seed=0, options={"cards": ["10", "10", "6", "7"]})  # hard 16 against a 10
    action = agent.explore(obs, info["action_mask"])
    assert action == blackjack_env.Action.STAND  # an untried cell: its first untried legal action
    _, reward, done, _, _ = env.step(action)
    assert done
    agent.finish_round(reward)
    visited = np.argwhere(agent.c > 0)  # one (row, up card, action) credited once, with the result
    assert len(visited) == 1 and visited[0][1] == 9 and visited[0][2] == blackjack_env.Action.STAND
    assert agent.q[tuple(visited[0])] == reward and agent.rounds == 1 and agent.steps == 1
    with pytest.raises(ValueError, match="at most 64 decisions; call finish_round"):
        for _ in range(65):
            agent.explore(obs, info["action_mask"])
    # rounds played through the loop teach it: the greedy table beats the untrained one
    agent = TabularAgent(RULES, epsilon=0.1, seed=2)
    obs, info = env.reset(seed=1)
    for _ in range(20_000):
        done = False
        while not done:
            obs, reward, done, _, info = env.step(agent.explore(obs, info["action_mask"]))
        agent.finish_round(reward)
        obs, info = env.reset()
    solution = solve(RULES)
    assert solution.evaluate(agent.to_table()).ev > solution.evaluate(TabularAgent(RULES).to_table()).ev + 0.03
