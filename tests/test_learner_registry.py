"""The learners by name: the registry drives blackjack-train's --algo and --env, a learner registered
outside the command trains through the one training loop, and the older spellings name the same learners."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from blackjack_env.rules import Rules
from blackjack_env.train import registry
from blackjack_env.train.cli import build_parser, resolve_args
from blackjack_env.train.cli import main as train_main
from blackjack_env.train.learner import Learner
from blackjack_env.train.settings import Args
from blackjack_env.train.shoe import COUNT_TABLE_SYSTEM


def resolved(*argv: str) -> Args:
    return resolve_args(build_parser().parse_args(list(argv)))


def test_the_registry_is_the_commands_algo_choices() -> None:
    parser = build_parser()
    (algo,) = [a for a in parser._actions if a.dest == "algo"]
    (env,) = [a for a in parser._actions if a.dest == "env"]
    assert tuple(algo.choices or ()) == registry.algo_choices()
    names = {e.name for e in registry.entries()}
    assert {"tabular", "count-table", "composition", "ppo", "shoe-ppo", "batch-ppo"} <= names
    assert {"linear"} <= set(algo.choices or ())  # an older spelling is a choice too
    assert tuple(env.choices or ()) == ("round", "shoe")


@pytest.mark.parametrize(
    ("old", "new", "learner"),
    [
        (["--algo", "tabular"], ["--algo", "tabular"], "tabular"),
        (["--env", "shoe"], ["--algo", "count-table"], "count-table"),
        (["--env", "shoe", "--algo", "tabular"], ["--algo", "count-table", "--env", "shoe"], "count-table"),
        (["--env", "shoe", "--algo", "linear"], ["--algo", "composition"], "composition"),
        (["--env", "shoe", "--algo", "ppo"], ["--algo", "shoe-ppo"], "shoe-ppo"),
        (["--algo", "batch-ppo"], ["--algo", "batch-ppo", "--env", "round"], "batch-ppo"),
        (["--env", "shoe", "--algo", "batch-ppo"], ["--algo", "shoe-batch-ppo"], "shoe-batch-ppo"),
    ],
)
def test_old_spellings_name_the_same_learners(old: list[str], new: list[str], learner: str) -> None:
    if "batch-ppo" in learner:
        pytest.importorskip("torch")
    a, b = resolved(*old), resolved(*new)
    assert registry.find(a.algo, a.env).name == registry.find(b.algo, b.env).name == learner
    assert (a.env, a.steps, a.reward, a.eval_every) == (b.env, b.steps, b.reward, b.eval_every)
    assert a.algo == (old[old.index("--algo") + 1] if "--algo" in old else "tabular")  # config.json as before


def test_the_games_a_learner_plays_are_its_entrys(capsys: pytest.CaptureFixture[str]) -> None:
    assert train_main(["--algo", "count-table", "--env", "round", "--out", "unused"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "blackjack-train: error: --algo count-table learns the shoe game (playing and betting by the count): "
        "add --env shoe"
    )
    assert train_main(["--algo", "tabular", "--kelly", "0.5", "--out", "unused"]) == 2
    assert "--kelly only with --env shoe --algo linear" in capsys.readouterr().err


# ---------------------------------------------------------------------------- a learner of the test's own
@dataclass(frozen=True)
class CountingConfig:
    seed: int


class CountingLearner:
    """Counts to the target in chunks of 10 steps; its 'policy' scores the steps it has learned."""

    columns: tuple[str, ...] = ("step", "score", "wall_s")
    scalar_keys: tuple[str, ...] = ("score",)

    def __init__(self, config: CountingConfig, rules: Rules, out: Path, resume: bool) -> None:
        self.count = json.loads((out / "count.json").read_text()) if resume else 0
        self.seed = config.seed
        self.closed = False

    @property
    def steps(self) -> int:
        return self.count

    def advance(self, target: int, stop: Callable[[], bool], progress: Callable[[int], None]) -> None:
        while self.count < target and not stop():
            self.count += 10
            progress(10)

    def evaluate(self, rounds: int, seed: int) -> dict[str, float]:
        return {"score": float(self.count * 1000 + seed)}

    def train_scalars(self) -> dict[str, float]:
        return {}

    def postfix(self, row: Mapping[str, float]) -> dict[str, str]:
        return {"score": f"{row['score']:g}"}

    def plan(self, total: int) -> str:
        return ""

    def save(self, out: Path) -> None:
        (out / "count.json").write_text(json.dumps(self.count))

    def close(self) -> None:
        self.closed = True

    def summary(self, last: Mapping[str, float], wall_s: float, out: Path) -> str:
        return f"counting: {self.count} steps, score {last['score']:g}"


@pytest.fixture
def counting() -> Iterator[registry.LearnerEntry]:
    entry = registry.register(
        registry.LearnerEntry(
            "counting",
            ("round",),
            "counting to the budget",
            lambda args, rules: CountingConfig(args.seed),
            CountingLearner,
            default_steps=lambda args: 100,
        )
    )
    yield entry
    registry.unregister("counting")


def test_a_registered_learner_trains_through_the_one_loop(
    counting: registry.LearnerEntry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    learner: Learner = CountingLearner(CountingConfig(0), Rules(), tmp_path, False)  # the protocol holds
    assert learner.steps == 0
    whole, part = tmp_path / "whole", tmp_path / "part"
    argv = ["--algo", "counting", "--eval-every", "30", "--no-progress", "--seed", "4"]
    assert train_main([*argv, "--out", str(whole)]) == 0
    assert "counting: 100 steps, score 100005" in capsys.readouterr().out
    with (whole / "metrics.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["step"]) for r in rows] == [0, 30, 60, 90, 100]
    assert json.loads((whole / "config.json").read_text())["args"]["algo"] == "counting"
    # an option it does not read is refused from its entry, in one line
    assert train_main([*argv, "--epsilon", "0.2", "--out", str(tmp_path / "bad")]) == 2
    assert "--epsilon only with --algo tabular or --env shoe --algo linear" in capsys.readouterr().err
    # resumed with a larger budget, it continues from its checkpoint
    assert train_main([*argv, "--steps", "50", "--out", str(part)]) == 0
    assert train_main(["--resume", "--out", str(part), "--steps", "100"]) == 0
    with (part / "metrics.csv").open(newline="") as f:
        resumed = list(csv.DictReader(f))
    assert [int(r["step"]) for r in resumed] == [0, 30, 50, 60, 90, 100]
    assert json.loads((part / "state.json").read_text())["steps"] == 100


@pytest.mark.parametrize(
    ("argv", "system"),
    [
        (["--env", "shoe"], COUNT_TABLE_SYSTEM),
        (["--algo", "count-table"], COUNT_TABLE_SYSTEM),
        (["--algo", "count-table", "--system", "hilo"], "hilo"),
        (["--algo", "shoe-ppo"], "hilo"),
        (["--env", "shoe", "--algo", "batch-ppo"], "hilo"),
    ],
)
def test_the_count_table_learner_has_its_own_default_system(argv: list[str], system: str) -> None:
    """The count-table learner counts with its own default unless told; the networks observe Hi-Lo."""
    assert COUNT_TABLE_SYSTEM != "hilo"
    assert resolve_args(build_parser().parse_args(argv)).system == system
