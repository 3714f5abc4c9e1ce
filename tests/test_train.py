"""blackjack-train: runs that learn, the run directory, resume equals an uninterrupted run, Ctrl-C."""

from __future__ import annotations

import csv
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from blackjack_env.evaluate.cli import main as evaluate_main
from blackjack_env.train.cli import main as train_main
from blackjack_env.train.evaluation import METRIC_COLUMNS

TABULAR = ["--algo", "tabular", "--chunk-steps", "65536", "--eval-rounds", "100000", "--no-progress"]


def metrics(run: Path) -> list[dict[str, float]]:
    with (run / "metrics.csv").open(newline="") as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def without_wall_time(rows: list[dict[str, float]]) -> list[dict[str, float]]:
    return [{k: v for k, v in row.items() if k != "wall_s"} for row in rows]


def test_tabular_run_learns_and_keeps_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "tab"
    assert train_main([*TABULAR, "--steps", "4e6", "--eval-every", "1e6", "--out", str(run), "--seed", "3"]) == 0
    for name in ("agent.json", "strategy.json", "q.npz", "rules.json", "config.json", "state.json", "metrics.csv"):
        assert (run / name).is_file(), name
    assert any((run / "tb").iterdir())
    rows = metrics(run)
    assert list(rows[0]) == list(METRIC_COLUMNS)
    assert rows[0]["step"] == 0 and rows[-1]["step"] >= 4_000_000 and len(rows) == 5
    first, last = rows[0], rows[-1]
    assert first["exact_ev_gap"] < -0.1 and last["exact_ev_gap"] > -0.01  # from far behind to within 1 pp
    assert last["ev_gap_low"] <= last["ev_gap"] <= last["ev_gap_high"]
    assert last["agreement"] > 0.9 > first["agreement"]
    assert json.loads((run / "config.json").read_text())["args"]["seed"] == 3
    capsys.readouterr()
    assert (
        evaluate_main(["--policy", str(run), "--baseline", "basic", "--rounds", "1e5", "--json", "--no-progress"]) == 0
    )
    assert json.loads(capsys.readouterr().out)["paired_rounds"] > 0


def test_expected_reward_learns_faster_on_the_same_seed(tmp_path: Path) -> None:
    """Paying each round's expected result removes the dealer's noise: same seed, same steps,
    a much smaller exact gap (measured: -0.32 pp against -1.05 pp at 1e6 steps)."""
    gaps = {}
    for reward in ("sampled", "expected"):
        run = tmp_path / reward
        command = [*TABULAR, "--steps", "1e6", "--eval-every", "1e6", "--seed", "3", "--reward", reward]
        assert train_main([*command, "--out", str(run)]) == 0
        gaps[reward] = metrics(run)[-1]["exact_ev_gap"]
        assert json.loads((run / "agent.json").read_text())["reward"] == reward
    assert gaps["sampled"] < 2 * gaps["expected"] < 0


def test_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    whole, halves = tmp_path / "whole", tmp_path / "halves"
    common = [*TABULAR, "--eval-every", "5e5", "--seed", "11"]
    assert train_main([*common, "--steps", "1e6", "--out", str(whole)]) == 0
    assert train_main([*common, "--steps", "5e5", "--out", str(halves)]) == 0
    assert train_main(["--out", str(halves), "--resume", "--steps", "1e6", "--no-progress"]) == 0
    with np.load(whole / "q.npz") as a, np.load(halves / "q.npz") as b:
        for key in a.files:
            assert np.array_equal(a[key], b[key]), key
    assert without_wall_time(metrics(whole)) == without_wall_time(metrics(halves))
    assert (whole / "strategy.json").read_text() == (halves / "strategy.json").read_text()


def test_existing_run_needs_resume_and_resume_keeps_its_config(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    assert train_main([*TABULAR, "--steps", "65536", "--out", str(run)]) == 0
    assert train_main([*TABULAR, "--steps", "65536", "--out", str(run)]) == 2
    assert "--resume" in capsys.readouterr().err
    assert train_main(["--out", str(run), "--resume", "--seed", "9"]) == 2
    assert "seed" in capsys.readouterr().err
    assert train_main(["--out", str(tmp_path / "none"), "--resume"]) == 2


def test_ctrl_c_saves_a_checkpoint_that_resumes(tmp_path: Path) -> None:
    run = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "blackjack_env.train",
        *TABULAR,
        "--steps",
        "1e10",
        "--eval-every",
        "1e6",
        "--out",
        str(run),
    ]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 60
    while not (run / "state.json").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "--resume" in err and "Traceback" not in err
    state = json.loads((run / "state.json").read_text())
    assert json.loads((run / "agent.json").read_text())["kind"] == "tabular"
    with np.load(run / "q.npz") as q:
        assert int(q["counters"][0]) == state["steps"] > 0
    assert train_main(["--out", str(run), "--resume", "--steps", str(state["steps"] + 65536), "--no-progress"]) == 0
    assert json.loads((run / "state.json").read_text())["steps"] > state["steps"]


def test_ppo_run_learns_resumes_and_evaluates(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("torch").set_num_threads(1)  # two test workers on two cores: no thread pool spinning
    run = tmp_path / "ppo"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where SB3's default logger would write
    ppo = ["--algo", "ppo", "--n-envs", "4", "--n-steps", "512", "--batch-size", "1024", "--n-epochs", "5"]
    ppo += [
        "--learning-rate",
        "1e-3",
        "--lr-schedule",
        "constant",
        "--ent-coef",
        "0",
        "--eval-rounds",
        "100000",
        "--no-progress",
        "--out",
        str(run),
    ]
    assert train_main([*ppo, "--steps", "8192", "--eval-every", "8192"]) == 0
    assert train_main(["--out", str(run), "--resume", "--steps", "16384", "--no-progress"]) == 0
    rows = metrics(run)
    assert [int(r["step"]) for r in rows] == [0, 8192, 16384]  # the step count carried over
    assert rows[-1]["exact_ev_gap"] > rows[0]["exact_ev_gap"] / 2  # learning happened
    assert (run / "ppo.zip").is_file() and any((run / "tb" / "ppo").iterdir())
    assert not list(scratch.glob("SB3-*"))  # no SB3-* folder: SB3's logger writes into the run
    capsys.readouterr()
    assert evaluate_main(["--policy", str(run), "--rounds", "1e5", "--json", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["rounds"] == 100_000


def test_ppo_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    """The checkpoint keeps the envs mid-stream and every random generator: same curve, same net."""
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("torch").set_num_threads(1)
    whole, halves = tmp_path / "whole", tmp_path / "halves"
    ppo = ["--algo", "ppo", "--n-envs", "2", "--n-steps", "256", "--batch-size", "256", "--n-epochs", "2"]
    ppo += ["--eval-every", "1024", "--eval-rounds", "20000", "--no-progress", "--seed", "9", "--reward", "expected"]
    ppo += ["--lr-schedule", "constant"]  # a linear rate follows --steps, which the halves change
    assert train_main([*ppo, "--steps", "2048", "--out", str(whole)]) == 0
    assert train_main([*ppo, "--steps", "1024", "--out", str(halves)]) == 0
    assert train_main(["--out", str(halves), "--resume", "--steps", "2048", "--no-progress"]) == 0
    assert without_wall_time(metrics(whole)) == without_wall_time(metrics(halves))
    torch = pytest.importorskip("torch")
    from blackjack_env.agents.ppo import PPOAgent

    a, b = PPOAgent.load(whole).model.policy.state_dict(), PPOAgent.load(halves).model.policy.state_dict()
    assert all(torch.equal(a[key], b[key]) for key in a)
    # the run exports its best evaluation's policy; the checkpoint keeps the one learning goes on from
    from blackjack_env import Rules
    from blackjack_env.agents.ppo import TRAINING_FILE
    from blackjack_env.solver import solve

    extras = [pickle.loads((run / TRAINING_FILE).read_bytes())["extra"] for run in (whole, halves)]
    assert all(torch.equal(extras[0]["weights"][key], extras[1]["weights"][key]) for key in a)
    best = extras[0]["best"]
    solution = solve(Rules())
    exported = solution.evaluate(PPOAgent.load(whole).to_table()).ev - solution.ev
    assert exported == best.exact_ev_gap == max(row["exact_ev_gap"] for row in metrics(whole))
    assert best.step < 2048 and all(torch.equal(a[key], best.weights[key]) for key in a)  # a tie keeps the first
    assert not all(torch.equal(a[key], extras[0]["weights"][key]) for key in a)


def test_linear_learning_rate_follows_the_runs_steps_across_learn_slices(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("torch").set_num_threads(1)
    from blackjack_env.agents.ppo import LinearDecay, PPOAgent

    schedule = LinearDecay(1e-3, total=1000, target=500)  # a slice ending at step 500
    assert schedule(1.0) == 1e-3  # progress 1: step 0 of the run
    assert schedule(0.5) == pytest.approx(0.75e-3)  # step 250
    assert LinearDecay(1e-3, total=1000, target=1000)(0.0) == 0.0
    ppo = ["--algo", "ppo", "--n-envs", "2", "--n-steps", "256", "--batch-size", "256", "--n-epochs", "1"]
    ppo += ["--steps", "2048", "--eval-every", "1024", "--eval-rounds", "10000", "--no-progress"]
    assert train_main([*ppo, "--lr-schedule", "linear", "--out", str(tmp_path / "run")]) == 0
    final_lr = PPOAgent.load(tmp_path / "run").model.policy.optimizer.param_groups[0]["lr"]
    assert final_lr == 0.0  # SB3 updates after each rollout: the last one comes at the run's last step


def test_ppo_same_seed_same_run(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("torch").set_num_threads(1)
    ppo = ["--algo", "ppo", "--n-envs", "2", "--n-steps", "512", "--batch-size", "512", "--n-epochs", "2"]
    ppo += ["--steps", "2048", "--eval-every", "1024", "--eval-rounds", "20000", "--no-progress", "--seed", "5"]
    assert train_main([*ppo, "--out", str(tmp_path / "a")]) == 0
    assert train_main([*ppo, "--out", str(tmp_path / "b")]) == 0
    assert without_wall_time(metrics(tmp_path / "a")) == without_wall_time(metrics(tmp_path / "b"))
    assert (tmp_path / "a" / "strategy.json").read_text() == (tmp_path / "b" / "strategy.json").read_text()


BLOCK_TRAIN_EXTRA = (
    "import sys\n"
    "for name in ('torch', 'tensorboard', 'stable_baselines3', 'sb3_contrib'):\n"
    "    sys.modules[name] = None  # as if the train extra were not installed\n"
    "from blackjack_env.train.cli import main\n"
)


def test_tabular_trains_with_the_core_install_alone(tmp_path: Path) -> None:
    """No torch, no tensorboard (pip install -e . only): the tabular learner still trains, says once
    that TensorBoard logging is off, and never imports torch."""
    run = tmp_path / "tab"
    code = BLOCK_TRAIN_EXTRA + (
        f"status = main({[*TABULAR, '--steps', '2e5', '--eval-every', '1e5', '--out', str(run)]!r})\n"
        "assert sys.modules.get('torch') is None\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "TensorBoard logging is off" in done.stderr
    assert len(metrics(run)) == 3 and (run / "agent.json").is_file()


def test_ppo_without_the_train_extra_is_one_line_before_anything_is_written(tmp_path: Path) -> None:
    run = tmp_path / "ppo"
    code = BLOCK_TRAIN_EXTRA + f"sys.exit(main(['--algo', 'ppo', '--out', {str(run)!r}]))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "blackjack-env[train]" in lines[0] and "torch" in lines[0], done.stderr
    assert not run.exists()


def test_each_learner_gets_its_measured_default_reward(tmp_path: Path) -> None:
    from blackjack_env.train.cli import build_parser, resolve_args

    for algo, reward in (("tabular", "sampled"), ("ppo", "expected")):
        assert resolve_args(build_parser().parse_args(["--algo", algo])).reward == reward
    assert resolve_args(build_parser().parse_args(["--algo", "tabular", "--reward", "expected"])).reward == "expected"


def test_batch_ppo_defaults_are_the_measured_ones_in_both_games() -> None:
    """Batch PPO is paid the expected reward with an entropy bonus of 0.04 in both games (on the shoe the
    first defaults, the dealt result and 0.01, learned to bet the minimum); both learn for 3e7 steps."""
    pytest.importorskip("torch")
    from blackjack_env.train.cli import build_parser, resolve_args

    round_args = resolve_args(build_parser().parse_args(["--algo", "batch-ppo"]))
    shoe_args = resolve_args(build_parser().parse_args(["--env", "shoe", "--algo", "batch-ppo"]))
    assert (round_args.ent_coef, round_args.reward, round_args.steps) == (0.04, "expected", 30_000_000)
    assert (shoe_args.ent_coef, shoe_args.reward, shoe_args.steps) == (0.04, "expected", 30_000_000)
    assert shoe_args.n_envs == round_args.n_envs == 4096  # the rest is shared
    given = resolve_args(build_parser().parse_args(["--env", "shoe", "--algo", "batch-ppo", "--ent-coef", "0.03"]))
    assert given.ent_coef == 0.03


def test_maskable_ppo_takes_batch_ppos_settings() -> None:
    """MaskablePPO's defaults are batch PPO's (BatchPPOConfig's, field by field) and its 2e7 steps: with
    them it ends within 0.02 pp of basic strategy, where its first ones ended 0.05-0.14 pp behind."""
    pytest.importorskip("torch")
    from blackjack_env.train.batch_ppo import BatchPPOConfig
    from blackjack_env.train.cli import build_parser, resolve_args
    from blackjack_env.train.registry import BATCH_PPO_FIELDS

    ppo = resolve_args(build_parser().parse_args(["--algo", "ppo"]))
    batch = BatchPPOConfig()
    for option, field in BATCH_PPO_FIELDS.items():
        if option not in ("explore_starts", "net_arch"):
            assert getattr(ppo, option) == getattr(batch, field), option
    assert ppo.net_arch == ",".join(map(str, batch.hidden)) and (ppo.steps, ppo.reward) == (20_000_000, "expected")


@pytest.mark.parametrize(("given", "threads"), [([], 1), (["--torch-threads", "3"], 3)])
def test_ppo_trains_on_one_torch_thread_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: list[str], threads: int
) -> None:
    """One thread is the measured fastest for this small network (a thread per core spins against
    any other busy process: 13x slower on a busy 2-core machine, the same results)."""
    pytest.importorskip("sb3_contrib")
    torch = pytest.importorskip("torch")
    set_to: list[int] = []
    monkeypatch.setattr(torch, "set_num_threads", set_to.append)
    from blackjack_env import Rules
    from blackjack_env.train.cli import build_parser, resolve_args
    from blackjack_env.train.registry import find

    args = resolve_args(build_parser().parse_args(["--algo", "ppo", "--out", str(tmp_path), *given]))
    entry = find("ppo", "round")
    entry.start(entry.config_of(args, Rules()), Rules(), tmp_path, False)
    assert set_to == [threads]


def test_negative_torch_threads_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert train_main(["--algo", "ppo", "--torch-threads", "-1", "--out", "unused"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "blackjack-train: error: --torch-threads must be >= 0 (0: one per core), got -1"
