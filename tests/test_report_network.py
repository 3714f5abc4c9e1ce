"""``blackjack-evaluate report`` of a network of the shoe game: played in the vector env beside basic
strategy on the same shoes, its rounds filed by the Hi-Lo true count from the unseen cards
(``CountTally``, ``BlackjackVectorEnv.unseen_cards``), with the counter's pages and its run's learning
curve; what cannot apply to it is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("matplotlib")
pytest.importorskip("jinja2")

from blackjack_env import Rules  # noqa: E402
from blackjack_env import engine as E  # noqa: E402
from blackjack_env.agents import load_agent  # noqa: E402
from blackjack_env.counting import SYSTEMS  # noqa: E402
from blackjack_env.evaluate.report import main as report_main  # noqa: E402
from blackjack_env.evaluate.shoe_agents import CountTally, paired_evaluation  # noqa: E402
from blackjack_env.simulate import TC_HIGH, TC_LOW  # noqa: E402
from blackjack_env.train.cli import main as train_main  # noqa: E402
from blackjack_env.vector import BlackjackShoeVectorEnv  # noqa: E402

SHOE_RUN = [
    *("--algo", "batch-ppo", "--env", "shoe", "--set", "penetration=0.75", "--n-envs", "256", "--n-steps", "8"),
    *("--batch-size", "1024", "--steps", "4096", "--eval-every", "4096", "--eval-rounds", "2000", "--no-progress"),
]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("network") / "shoe"
    assert train_main([*SHOE_RUN, "--seed", "3", "--out", str(out)]) == 0
    return out


def test_the_report_plays_a_shoe_network_beside_basic_strategy(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert report_main(["--policy", str(run), "--rounds", "3000", "--seed", "5", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    row = paired_evaluation(load_agent(run), 3000, 5)  # the same shoes: the same numbers
    assert summary["ev"]["policy"]["value"] == row["ev"]
    assert summary["ev"]["flat"]["value"] == row["ev_flat"] and summary["ev"]["basic"]["value"] == row["ev_basic"]
    assert summary["gap_to_basic"]["value"] == row["gain_vs_basic"]
    assert summary["gap_to_basic"]["paired_rounds"] == row["rounds"]
    network = summary["network"]
    assert network["kind"] == "batch-ppo" and network["bets"] == [1.0, 2.0, 4.0, 8.0]
    assert network["flat_gain"]["value"] == row["flat_gain"] and (network["seats"], network["seat"]) == (1, 0)
    assert [r["step"] for r in network["learning_curve"]] == [0, 4096]
    buckets = summary["counting"]["by_true_count"]
    assert sum(b["rounds"] for b in buckets) == summary["rounds"] == summary["counting"]["rounds_played"]
    bet = sum(b["avg_bet"] * b["rounds"] for b in buckets) / summary["rounds"]
    assert bet == pytest.approx(row["avg_bet"])  # the tally's bets are the play's
    assert summary["counting"]["win_per_100"] == pytest.approx(100 * row["ev"])
    assert {"learner_curve.png", "true_count.png", "bankroll.png", "ev.png"} <= set(summary["figures"])
    assert not {"rates.png", "chart.png"} & set(summary["figures"])  # no outcome rates, no index plays
    text = (out / "report.md").read_text()
    assert "What the batch-PPO network learned" in text and "paired per shoe" in text


def test_run_gives_the_learning_curve_of_another_folder(run: Path, tmp_path: Path) -> None:
    """--run DIR: the curve is DIR's metrics.csv (here one row of it), not the policy's own."""
    other = tmp_path / "other"
    other.mkdir()
    lines = (run / "metrics.csv").read_text().splitlines()
    (other / "metrics.csv").write_text("\n".join(lines[:2]) + "\n")
    out = tmp_path / "report"
    assert report_main(["--policy", str(run), "--run", str(other), "--rounds", "500", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert [r["step"] for r in summary["network"]["learning_curve"]] == [0]


def test_a_maskable_ppo_shoe_network_gets_its_report(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    run, out = tmp_path / "ppo", tmp_path / "report"
    argv = ["--algo", "ppo", "--env", "shoe", "--set", "penetration=0.75", "--n-envs", "8", "--n-steps", "64"]
    argv += ["--batch-size", "256", "--steps", "512", "--eval-every", "512", "--eval-rounds", "2000", "--no-progress"]
    assert train_main([*argv, "--seed", "4", "--out", str(run)]) == 0
    assert report_main(["--policy", str(run), "--rounds", "2000", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["network"]["kind"] == "ppo-shoe" and "learner_curve.png" in summary["figures"]
    assert "What the MaskablePPO network learned" in (out / "report.md").read_text()


@pytest.mark.parametrize(
    ("argv", "says"),
    [(["--spread", "1-8"], "leave out --spread"), (["--seats", "3"], "leave out --seats and --seat")],
)
def test_what_cannot_apply_to_a_network_is_one_line(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    out = tmp_path / "report"
    assert report_main(["--policy", str(run), *argv, "--rounds", "100", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err and not out.exists()


def test_unseen_cards_are_what_the_composition_observation_shows() -> None:
    """The composition observation counts the shoe's rest and a face-down hole card: so does
    ``unseen_cards``, at every step of random play (a shoe starts whole)."""
    rules = Rules(decks=2, penetration=0.75)
    env = BlackjackShoeVectorEnv(16, rules, count_obs="composition")
    obs, info = env.reset(seed=list(range(16)))
    whole = np.array([4] * 9 + [16]) * rules.decks
    assert (env.unseen_cards() == whole).all()
    rng = np.random.default_rng(0)
    for _ in range(300):
        assert (env.unseen_cards() == obs[:, E.OBS_BASE : E.OBS_BASE + 10]).all()
        legal = info["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in legal])
        obs, _, _, _, info = env.step(actions)


def test_a_tally_files_rounds_by_the_floored_hilo_true_count() -> None:
    whole = np.array([4] * 9 + [16], np.float64) * 6
    seen_low = whole.copy()
    seen_low[1:6] -= 2  # ten low cards seen: running count +10 over 302 unseen cards, true count 1.72
    seen_high = whole.copy()
    seen_high[9] -= 100  # a hundred tens seen: -100 over 212 cards, beyond the low end
    buckets = CountTally.bucket(np.stack([whole, seen_low, seen_high]))
    assert list(buckets + TC_LOW) == [0, 1, TC_LOW]
    assert (-(seen_low @ np.asarray(SYSTEMS["hilo"].tags))) == 10
    tally = CountTally()
    tally.start(2)
    tally.bet(np.stack([whole, seen_low]), np.array([True, True]), np.array([1.0, 4.0]))
    tally.paid(np.array([-1.0, 6.0]))  # a loss at a bet of 1, a natural paid 3:2 on a bet of 4
    tally.close(np.array([True, True]))
    assert tally.rounds[-TC_LOW] == tally.rounds[1 - TC_LOW] == 1 and tally.total_rounds == 2
    assert tally.unit[1 - TC_LOW] == 1.5 and tally.total == 5.0 and tally.bets.sum() == 5.0
    figures = tally.figures(None)
    assert figures["avg_bet"] == 2.5 and figures["advantage"] == 1.0 and figures["win_per_100"] == 250.0
    assert len(figures["by_true_count"]) == TC_HIGH - TC_LOW + 1
    # a bet of 0 sits the round out: counted among the rounds, not the rounds played
    tally.start(1)
    tally.bet(whole[None], np.array([True]), np.array([0.0]))
    tally.close(np.array([True]))
    zero = tally.by_count()[-TC_LOW]
    assert (zero["rounds"], zero["rounds_played"], zero["ev_per_unit_bet"]) == (2, 1, -1.0)
    assert tally.figures(None)["rounds_played"] == 2 and tally.total_rounds == 3
