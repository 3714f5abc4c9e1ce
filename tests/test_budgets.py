"""The shoe learners' default budget follows what is learned: 2e9 rounds per learning seat (one seat
keeps exactly 2e9 rounds, the README's measured runs), and a run starts with one line giving its
budget and the time it is expected to take."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from blackjack_env.train.cli import build_parser, resolve_args
from blackjack_env.train.cli import main as train_main
from blackjack_env.train.shoe import budget_line, budget_scale, count_spread, default_rounds, expected_seconds


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
    """One seat: the README's whole runs (1,332 s and 550 s for 2e9 rounds, the composition learner's
    20% more with its depth bands); more seats cost more per round; two workers about 1.9 times as fast."""
    assert expected_seconds("count-table", 2 * 10**9, 1, "0") == pytest.approx(1332)
    assert expected_seconds("composition", 2 * 10**9, 1, "0") == pytest.approx(660)
    three = expected_seconds("count-table", 666_666_667, 3, "all")
    assert 1332 < three < 3 * 1332  # the same decisions; each rollout finishes a longer round
    assert expected_seconds("count-table", 10**8, 3, "all", workers=2) == pytest.approx(
        expected_seconds("count-table", 10**8, 3, "all") / 1.9
    )
    args = resolved("--env", "shoe", "--seats", "3", "--seat", "all")
    line = budget_line("count-table", args.steps, args.seats, args.seat)
    assert line.startswith(
        "666,666,667 rounds (default: 2e9 per learning seat for 6 decks dealt to 75%, 3 learning)"
    ), line
    assert "expected about 35 minutes on 1 worker" in line, line


def test_a_run_starts_with_its_budget_and_expected_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["--env", "shoe", "--set", "penetration=0.75", "--seats", "2", "--seat", "all", "--steps", "4000"]
    argv += ["--chunk-steps", "2000", "--eval-every", "1e9", "--eval-rounds", "2000", "--no-progress"]
    assert train_main([*argv, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "blackjack-train: 4,000 rounds (--steps); expected about 1 s on 1 worker" in err, err


def test_the_budget_follows_the_game() -> None:
    """The reference game keeps 2e9 rounds; a shoe whose composition strays further from a full shoe's
    (fewer decks, dealt deeper) takes fewer rounds, one dealt shallower more; --seat all shares them."""
    assert default_rounds(1, 0, 6, 0.75) == 2_000_000_000
    assert default_rounds(1, 0, 1, 0.65) == 460_000_000
    assert default_rounds(1, 0, 2, 0.65) == 920_000_000
    assert default_rounds(1, 0, 8, 0.75) == 2_600_000_000
    assert default_rounds(1, 0, 6, 0.5) == 4_400_000_000
    assert default_rounds(3, "all", 1, 0.65) == 153_333_334
    assert budget_scale(6, 0.85) < 1 < budget_scale(8, 0.75)
    one_deck = resolved("--env", "shoe", "--algo", "tabular", "--set", "decks=1", "--set", "penetration=0.65")
    assert one_deck.steps == 460_000_000 and one_deck.eval_every == 23_000_000
    line = budget_line("count-table", one_deck.steps, 1, 0, (1, 0.65))
    assert line.startswith("460,000,000 rounds (default: 4.6e8 per learning seat for 1 deck dealt to 65%)"), line
    with pytest.raises(ValueError, match="decks >= 1 and 0 < penetration < 1"):
        count_spread(6, 0.0)


@pytest.mark.parametrize(("decks", "penetration"), [(1, 0.65), (2, 0.5), (8, 0.8)])
def test_the_spread_is_the_true_counts_variance_over_the_rounds_dealt(decks: int, penetration: float) -> None:
    """count_spread against shuffled shoes: Hi-Lo's true count at a depth drawn evenly up to the
    penetration, its variance over its tags' (10/13 per card) equal to the formula's (times 52)."""
    rng = np.random.default_rng(7)
    values = np.tile(np.repeat(np.arange(1, 14), 4), decks)
    tags = np.where((values >= 2) & (values <= 6), 1, np.where((values >= 10) | (values == 1), -1, 0))
    cards, shoes = len(tags), 40_000
    order = rng.permuted(np.broadcast_to(tags, (shoes, cards)), axis=1)
    seen = rng.integers(0, int(penetration * cards) + 1, shoes)
    running = np.cumsum(order, axis=1)[np.arange(shoes), np.maximum(seen - 1, 0)] * (seen > 0)
    true_count = running * 52.0 / (cards - seen)
    assert np.var(true_count) / (10 / 13) == pytest.approx(52 * count_spread(decks, penetration), rel=0.06)


def test_the_guides_budget_table_is_the_rules() -> None:
    """The training guide's table of budgets by shoe is what default_rounds gives."""
    page = (Path(__file__).parents[1] / "docs" / "guides" / "learners-that-count.md").read_text()
    lines = page.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("| shoe |")))
    header, rounds = lines[start], lines[start + 2]
    shoes = [cell.strip() for cell in header.strip("|").split("|")[1:]]
    stated = [float(cell) for cell in rounds.strip("|").split("|")[1:]]
    for shoe, budget in zip(shoes, stated, strict=True):
        decks, penetration = shoe.split(" deck")[0], shoe.split(", ")[1].rstrip("%")
        assert default_rounds(1, 0, int(decks), int(penetration) / 100) == pytest.approx(budget, rel=0.03), shoe
