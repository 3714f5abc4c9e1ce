"""``blackjack-train --algo batch-ppo`` (train/batch_ppo.py): masks hold in the batched rollout, a
short run learns, resumes equal to an uninterrupted run, the same seed is the same run, the agent
exports and plays (``blackjack-evaluate --policy RUN_DIR``), the shoe game trains, plays legal
bets and is evaluated by ``blackjack-evaluate --policy RUN_DIR`` in the vector env, and bad input is
one line."""

from __future__ import annotations

import csv
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from blackjack_env import Rules  # noqa: E402
from blackjack_env.agents import load_agent  # noqa: E402
from blackjack_env.agents.batch_ppo import BatchPPOAgent, network  # noqa: E402
from blackjack_env.evaluate.cli import main as evaluate_main  # noqa: E402
from blackjack_env.evaluate.shoe_agents import paired_evaluation  # noqa: E402
from blackjack_env.solver import solve  # noqa: E402
from blackjack_env.train.batch_ppo import (  # noqa: E402
    TRAINING_FILE,
    BatchPPOConfig,
    EpisodeStats,
    advantages,
    collect,
    make_tables,
)
from blackjack_env.train.cli import main as train_main  # noqa: E402

SMALL = ["--algo", "batch-ppo", "--n-envs", "256", "--n-steps", "8", "--batch-size", "1024", "--no-progress"]


@pytest.fixture(autouse=True)
def one_thread() -> None:
    torch.set_num_threads(1)  # results are reproducible for one thread count


def metrics(run: Path) -> list[dict[str, str]]:
    with (run / "metrics.csv").open(newline="") as f:
        return [{k: v for k, v in r.items() if k != "wall_s"} for r in csv.DictReader(f)]


@pytest.mark.parametrize("shoe", [None, {"bets": [1.0, 2.0, 4.0, 8.0], "seats": 1, "seat": 0, "count_obs": "hilo"}])
def test_masks_hold_and_episodes_end_where_the_env_says(shoe: dict | None) -> None:
    """Every sampled action is legal (the vector env would raise otherwise), and a done step's
    successor is a fresh round: its first decision, or on the shoe the next bet."""
    from blackjack_env import engine as E

    rules = Rules().replace(penetration=0.75) if shoe else Rules()
    config = BatchPPOConfig(num_tables=64, num_steps=40, seed=1)
    torch.manual_seed(0)
    net = network(rules, (16,), shoe)
    tables = make_tables(rules, config, shoe)
    stats = EpisodeStats(np.zeros(config.num_tables))
    r = collect(net, tables, config.num_steps, torch.Generator().manual_seed(0), stats)
    assert r.mask.gather(2, r.actions[..., None]).all()
    assert stats.episodes == float(r.dones.sum()) > 64
    after = r.obs[1:][r.dones[:-1].bool()]
    phases = {E.P_BET} if shoe else {E.P_INSURANCE, E.P_PLAY, E.P_SETTLE}
    assert set(after[:, E.O_PHASE].tolist()) <= phases
    adv = advantages(r, torch.zeros(64), 1.0, 1.0)
    last = r.dones[-1].bool()
    assert torch.allclose(adv[-1][last], r.rewards[-1][last] - r.values[-1][last])


def test_a_short_run_learns_and_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    argv = [*SMALL, "--steps", "3e5", "--eval-every", "1e5", "--eval-rounds", "20000", "--learning-rate", "3e-3"]
    assert train_main([*argv, "--out", str(run)]) == 0
    rows = metrics(run)
    assert [int(r["step"]) for r in rows] == [0, 100352, 200704, 301056]  # whole rollouts of 256 x 8
    start, end = (float(r["exact_ev_gap"]) for r in (rows[0], rows[-1]))
    assert end > start / 2  # a random network plays ~15% of the bet worse than basic strategy
    agent = load_agent(run)
    solution = solve(Rules())
    exported = solution.evaluate(agent.to_table()).ev - solution.ev
    assert exported == max(float(r["exact_ev_gap"]) for r in rows)  # the best evaluation's network
    assert isinstance(agent, BatchPPOAgent) and agent.config["hidden"] == [128, 128]
    assert json.loads((run / "agent.json").read_text())["kind"] == "batch-ppo"
    capsys.readouterr()
    assert evaluate_main(["--policy", str(run), "--rounds", "1e4", "--json", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["rounds"] == 10_000


def test_resume_equals_an_uninterrupted_run_and_same_seed_same_run(tmp_path: Path) -> None:
    whole, again, halves = tmp_path / "whole", tmp_path / "again", tmp_path / "halves"
    argv = [*SMALL, "--eval-every", "4096", "--eval-rounds", "5000", "--seed", "7", "--lr-schedule", "constant"]
    assert train_main([*argv, "--steps", "8192", "--out", str(whole)]) == 0
    assert train_main([*argv, "--steps", "8192", "--out", str(again)]) == 0
    assert train_main([*argv, "--steps", "4096", "--out", str(halves)]) == 0
    assert train_main(["--out", str(halves), "--resume", "--steps", "8192", "--no-progress"]) == 0
    assert metrics(whole) == metrics(again) == metrics(halves)
    nets = [BatchPPOAgent.load(run).net.state_dict() for run in (whole, again, halves)]
    assert all(torch.equal(nets[0][k], other[k]) for other in nets[1:] for k in nets[0])
    # and the network learning goes on from (the exported one is the best evaluation's)
    states = [pickle.loads((run / TRAINING_FILE).read_bytes()) for run in (whole, halves)]
    assert all(torch.equal(states[0]["weights"][k], states[1]["weights"][k]) for k in states[0]["weights"])


def test_the_shoe_game_trains_and_plays_legal_bets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import gymnasium as gym

    import blackjack_env

    run = tmp_path / "shoe"
    argv = [*SMALL, "--env", "shoe", "--set", "penetration=0.75", "--steps", "4096", "--eval-every", "4096"]
    assert train_main([*argv, "--eval-rounds", "2000", "--out", str(run)]) == 0
    assert "batch-ppo (shoe): 4096 steps" in capsys.readouterr().out
    assert [int(r["step"]) for r in metrics(run)] == [0, 4096]
    agent = load_agent(run)
    assert agent.shoe["bets"] == [1.0, 2.0, 4.0, 8.0] and not (run / "strategy.json").exists()
    env = gym.make(blackjack_env.SHOE_ENV_ID, rules=agent.rules, **agent.shoe)
    obs, info = env.reset(seed=0)
    for _ in range(100):
        action = int(agent.act_batch(obs[None], info["action_mask"][None])[0])
        obs, _, terminated, _, info = env.step(action)
        if terminated:
            obs, info = env.reset()
    with pytest.raises(ValueError, match="plays by the count"):
        agent.to_table()
    # blackjack-evaluate plays it in the vector env: the paired evaluation the run uses, on the rounds asked
    capsys.readouterr()
    assert evaluate_main(["--policy", str(run), "--rounds", "3000", "--seed", "5", "--json", "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    row = paired_evaluation(agent, 3000, 5)
    assert out["played_in"] == "vector env" and out["rounds"] == row["rounds"] >= 3000
    assert (out["ev"], out["ev_diff"], out["flat_ev_diff"]) == (row["ev"], row["gain_vs_basic"], row["flat_gain"])
    assert out["ev_diff_ci95"][0] < out["ev_diff"] < out["ev_diff_ci95"][1] and not out["interrupted"]
    assert out["rules_source"] == str(run / "rules.json") and (out["seats"], out["seat"]) == (1, 0)
    # --ceiling: the ceiling of its own game, seat and bets, beside its paired gain
    argv = ["--policy", str(run), "--rounds", "2000", "--ceiling", "--ceiling-samples", "2", "--json", "--no-progress"]
    assert evaluate_main(argv) == 0
    ceiling = json.loads(capsys.readouterr().out)["ceiling"]
    assert ceiling["bets"] == [1.0, 2.0, 4.0, 8.0] and ceiling["samples"] == 2 and "share" in ceiling
    refused = [
        (["--baseline", "hilo-i18-fab4"], "give --baseline basic or none"),
        (["--seats", "3"], "leave out --seats and --seat"),
        (["--spread", "1-8"], "leave out --spread"),
    ]
    for argv, says in refused:
        assert evaluate_main(["--policy", str(run), *argv, "--rounds", "100"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and says in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--net-arch", "wide"], "--net-arch must be layer widths"),
        (["--n-envs", "0"], "--n-envs must be >= 1"),
        (["--env", "shoe", "--set", "penetration=0.75", "--seat", "all"], "--seat all is for the count-table learner"),
        (["--explore-starts", "1.5"], "--explore-starts must be a share from 0 to 1"),
        (["--env", "shoe", "--set", "penetration=0.75", "--explore-starts", "0.5"], "is for the one-round game"),
    ],
)
def test_bad_input_is_one_line_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    run = tmp_path / "bad"
    assert train_main([*SMALL, *argv, "--out", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err
    assert not run.exists()


def test_explore_starts_is_batch_ppos_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert train_main(["--algo", "tabular", "--explore-starts", "0.5", "--out", str(tmp_path / "t")]) == 2
    assert "--explore-starts only with --algo batch-ppo" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_exploring_starts_deal_up_cards_alike(share: float) -> None:
    """An exploring start draws its up card uniformly (a ten one time in ten); as cards fall, four
    ranks of thirteen are ten-valued. Read at the first decisions after each round's end."""
    from blackjack_env import engine as E

    rules = Rules()
    config = BatchPPOConfig(num_tables=256, num_steps=60, seed=3, explore_starts=share)
    torch.manual_seed(0)
    tables = make_tables(rules, config, None)
    stats = EpisodeStats(np.zeros(config.num_tables))
    r = collect(network(rules, (16,), None), tables, config.num_steps, torch.Generator().manual_seed(0), stats)
    first = r.obs[1:][r.dones[:-1].bool()]
    first = first[first[:, E.O_PHASE] == E.P_PLAY]
    tens = float((first[:, E.O_UP] == 10).float().mean())
    assert len(first) > 2000
    assert (tens < 0.14) if share else (tens > 0.25), tens
