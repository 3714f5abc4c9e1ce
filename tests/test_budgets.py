"""The shoe learners' default budget follows what is learned: 2e9 rounds per learning seat (one seat
keeps exactly 2e9 rounds, the README's measured runs), and a run starts with one line giving its
budget and the time it is expected to take."""

from __future__ import annotations

from pathlib import Path

import pytest

from blackjack_env.train.cli import build_parser, resolve_args
from blackjack_env.train.cli import main as train_main
from blackjack_env.train.shoe import budget_line, default_rounds, expected_seconds


def resolved(*argv: str):
    return resolve_args(build_parser().parse_args(list(argv)))


@pytest.mark.parametrize("algo", ["tabular", "linear"])
def test_one_seat_keeps_2e9_rounds_and_every_learning_seat_shares_them(algo: str) -> None:
    one = resolved("--env", "shoe", "--algo", algo)
    assert one.steps == 2_000_000_000 and one.eval_every == 100_000_000
    everyone = resolved("--env", "shoe", "--algo", algo, "--seats", "3", "--seat", "all")
    assert everyone.steps == 666_666_667 == default_rounds(3, "all")
    assert everyone.eval_every == everyone.steps // 20
    # one learning seat at a table of three learns from one seat's decisions: the full 2e9
    assert resolved("--env", "shoe", "--algo", algo, "--seats", "3", "--seat", "1").steps == 2_000_000_000
    # --steps is taken as given
    assert resolved("--env", "shoe", "--algo", algo, "--seats", "3", "--seat", "all", "--steps", "1e8").steps == 10**8
    # the other learners keep their own defaults
    assert resolved("--algo", "tabular").steps == 500_000_000
    assert resolved("--env", "shoe", "--algo", "ppo").steps == 30_000_000


def test_the_expected_time_follows_the_readme_rates() -> None:
    """One seat: the README's whole runs (1,332 s and 550 s for 2e9 rounds); more seats cost more per
    round; two workers about 1.9 times as fast."""
    assert expected_seconds("count-table", 2 * 10**9, 1, "0") == pytest.approx(1332)
    assert expected_seconds("composition", 2 * 10**9, 1, "0") == pytest.approx(550)
    three = expected_seconds("count-table", 666_666_667, 3, "all")
    assert 1332 < three < 3 * 1332  # the same decisions; each rollout finishes a longer round
    assert expected_seconds("count-table", 10**8, 3, "all", workers=2) == pytest.approx(
        expected_seconds("count-table", 10**8, 3, "all") / 1.9
    )
    args = resolved("--env", "shoe", "--seats", "3", "--seat", "all")
    line = budget_line("count-table", args.steps, args.seats, args.seat)
    assert line.startswith("666,666,667 rounds (default: 2e9 per learning seat, 3 learning)"), line
    assert "expected about 35 minutes on 1 worker" in line, line


def test_a_run_starts_with_its_budget_and_expected_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["--env", "shoe", "--set", "penetration=0.75", "--seats", "2", "--seat", "all", "--steps", "4000"]
    argv += ["--chunk-steps", "2000", "--eval-every", "1e9", "--eval-rounds", "2000", "--no-progress"]
    assert train_main([*argv, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "blackjack-train: 4,000 rounds (--steps); expected about 1 s on 1 worker" in err, err
