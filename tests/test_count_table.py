"""The count-table learner (``blackjack-train --env shoe``): it learns to bet and play with the count,
its chunks merge exactly (resume = uninterrupted, same seed = same run), its export plays in
``blackjack-evaluate`` exactly as the learner's own strategy, and bad input is one line, exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from chunk_learners import (
    assert_cli_run_resumes_exactly,
    assert_refused_in_one_line,
    assert_resume_equals_uninterrupted,
)

from blackjack_env.agents.count_table import CountTableAgent, bucket_spec, parse_bets, spread_bets
from blackjack_env.counting import CountingStrategy, system
from blackjack_env.evaluate.runner import simulate
from blackjack_env.rules import Rules
from blackjack_env.simulate import Policy
from blackjack_env.train.cli import main as train_main
from blackjack_env.train.shoe import COUNT_TABLE_SYSTEM

RULES = Rules.preset("ultimatebet").with_settings(["penetration=0.75"])


@pytest.fixture(scope="module")
def learned() -> CountTableAgent:
    """Six million rounds of Hi-Lo buckets in one seat: a few seconds once compiled (the round
    values weigh the early chunks' poorer policies less, but fewer rounds leave the value at +4
    within noise of 0)."""
    agent = CountTableAgent(RULES, system("hilo"), bets=(1, 2, 4, 8), seed=3, chunk_rounds=1 << 18)
    while agent.rounds < 6_000_000:
        agent.learn_chunk()
    return agent


def test_bucket_rule_hilo_is_whole_true_counts() -> None:
    spec = bucket_spec(system("hilo"), RULES)
    assert spec.width == 1.0 and spec.lo == -spec.n / 2 and float(spec.lo).is_integer()
    wide = bucket_spec(system("hiopt2"), RULES)  # tags of 2: a wider true count, wider buckets
    assert wide.width > 1.5
    deeper = bucket_spec(system("hilo"), RULES.with_settings(["penetration=0.9"]))
    assert deeper.n > spec.n  # the true count spreads further with deeper play


@pytest.mark.parametrize("decks", [1, 2])
def test_few_decks_keep_half_true_counts_and_a_saved_run_keeps_its_buckets(decks: int, tmp_path: Path) -> None:
    """At one and two decks a balanced count's buckets are half a true count (an unbalanced count's
    stay whole units); a saved run loads with its own buckets, and a run saved before half units (no
    buckets_per_unit in agent.json) with whole ones."""
    rules = RULES.with_settings([f"decks={decks}", "penetration=0.65"])
    half = bucket_spec(system("hilo"), rules)
    assert (half.width, half.per_unit) == (0.5, 2) and float(2 * half.lo).is_integer()
    assert bucket_spec(system("hilo"), rules, fine=False).width == 1.0
    assert bucket_spec(system("ko"), rules).per_unit == 1
    agent = CountTableAgent(rules, system("hilo"), seed=1, chunk_rounds=1 << 12)
    agent.learn_chunk()
    agent.save(tmp_path / "run")
    loaded = CountTableAgent.load(tmp_path / "run")
    assert loaded.spec == half and np.array_equal(loaded.stats, agent.stats)
    manifest = json.loads((tmp_path / "run" / "agent.json").read_text())
    del manifest["buckets_per_unit"]
    whole = CountTableAgent._from_manifest(tmp_path / "run", manifest)
    assert whole.spec == bucket_spec(system("hilo"), rules, fine=False)


def test_learns_to_bet_with_the_count(learned: CountTableAgent) -> None:
    values, stderrs, _ = learned.round_values()
    spec = learned.spec
    low, high = spec.n // 2 - 4, spec.n // 2 + 4  # true counts -4 and +4
    assert values[high] - values[low] > 4 * np.hypot(stderrs[high], stderrs[low])
    bets = learned.bucket_bets()
    assert bets[low] == 1.0 and bets[high] == 8.0
    ramp = learned.ramp()
    assert ramp[0][1] == 1.0 and ramp[-1][1] == 8.0 and 0.0 <= ramp[-1][0] <= 4.0


def test_resume_equals_uninterrupted_and_same_seed_same_run(tmp_path: Path) -> None:
    assert_resume_equals_uninterrupted(
        lambda seed: CountTableAgent(RULES, system("hilo"), seed=seed, chunk_rounds=1 << 14), tmp_path
    )


def test_export_plays_in_evaluate_exactly(learned: CountTableAgent, tmp_path: Path, capsys) -> None:
    from blackjack_env.evaluate.cli import main as evaluate_main

    learned.save(tmp_path)
    saved = CountingStrategy.load(tmp_path / "counting-strategy.json")
    assert saved.ramp == learned.to_strategy().ramp
    assert saved.indices == learned.to_strategy().indices
    policy = Policy.from_counting(learned.to_strategy(), RULES, learned.basic_table())
    own = simulate(RULES, policy, 200_000, seed=11).result
    argv = ["--policy", str(tmp_path), "--set", "penetration=0.75", "--rounds", "2e5", "--seed", "11", "--json"]
    assert evaluate_main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["ev"] == pytest.approx(own.ev(), abs=1e-12)
    assert summary["avg_bet"] == pytest.approx(own.avg_bet(), abs=1e-12)
    assert summary["avg_bet"] > 1.0  # its ramp played


def test_load_agent_gives_the_count_table_learner_and_its_strategy(learned: CountTableAgent, tmp_path: Path) -> None:
    """load_agent(RUN_DIR) returns the learner (statistics and all), whose to_strategy() is the
    file blackjack-evaluate --policy RUN_DIR plays; asking it for one table is one readable line."""
    from blackjack_env.agents import load_agent

    learned.save(tmp_path)
    loaded = load_agent(tmp_path)
    assert isinstance(loaded, CountTableAgent) and loaded.rounds == learned.rounds
    assert np.array_equal(loaded.stats, learned.stats)
    assert loaded.to_strategy() == CountingStrategy.load(tmp_path / "counting-strategy.json")
    with pytest.raises(ValueError, match=r"plays by the count.*to_strategy\(\).*--policy RUN_DIR"):
        loaded.to_table()


def test_bets_parsing() -> None:
    assert parse_bets("1,2,4,8") == (1.0, 2.0, 4.0, 8.0)
    assert spread_bets("1-8") == (1.0, 2.0, 4.0, 8.0)
    assert spread_bets("1-12") == (1.0, 2.0, 4.0, 8.0, 12.0)
    for bad in ("1,1,2", "4,2", "x", "-1,2", "0"):
        with pytest.raises(ValueError):
            parse_bets(bad)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--system", "nosuch", "--set", "penetration=0.75"], "unknown counting system 'nosuch'"),
        ([], "cut card"),
        (["--bets", "1,4,2", "--set", "penetration=0.75"], "--bets must increase"),
        (["--bets", "0,1,2", "--seats", "3", "--seat", "all", "--set", "penetration=0.75"], "other players"),
        (["--bets", "0,1,2", "--set", "penetration=0.75"], "other players"),
        (["--seats", "3", "--seat", "3", "--set", "penetration=0.75"], "--seat must be a box 0..2"),
        (["--algo", "ppo", "--system", "ko", "--set", "penetration=0.75"], "--algo ppo observes hilo"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path: Path, capsys, argv: list[str], says: str) -> None:
    assert_refused_in_one_line(["--env", "shoe", *argv], says, tmp_path, capsys)


def test_shoe_options_need_env_shoe(tmp_path: Path, capsys) -> None:
    assert train_main(["--system", "hilo", "--out", str(tmp_path / "r")]) == 2
    assert "only with --env shoe" in capsys.readouterr().err


def test_cli_run_resumes_exactly_and_writes_its_strategies(tmp_path: Path) -> None:
    """A run in two halves (--resume) equals one uninterrupted run: statistics, strategy, curve."""
    common = ["--env", "shoe", "--set", "penetration=0.75", "--chunk-steps", "16384", "--seed", "2"]
    common += ["--eval-every", "32768", "--eval-rounds", "20000", "--no-progress"]
    whole = assert_cli_run_resumes_exactly(common, 32768, tmp_path, "count_table.npz", "counting-strategy.json")
    baseline = CountingStrategy.load(whole / "hilo-i18-fab4-ev-max.json")
    assert {bet for _, bet in baseline.ramp} <= {1.0, 8.0}  # the EV-maximising use of 1..8: its ends


def test_ctrl_c_keeps_a_checkpoint_that_resumes(tmp_path: Path) -> None:
    run = tmp_path / "run"
    command = [sys.executable, "-m", "blackjack_env.train", "--env", "shoe", "--set", "penetration=0.75"]
    command += ["--steps", "1e10", "--eval-every", "65536", "--eval-rounds", "20000", "--chunk-steps", "16384"]
    command += ["--no-progress", "--out", str(run)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 120
    while not (run / "state.json").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "--resume" in err and "Traceback" not in err
    state = json.loads((run / "state.json").read_text())
    with np.load(run / "count_table.npz") as stats:
        assert int(stats["counters"][0]) == state["steps"] > 0
    assert CountingStrategy.load(run / "counting-strategy.json").system.name == COUNT_TABLE_SYSTEM
    assert train_main(["--out", str(run), "--resume", "--steps", str(state["steps"] + 16384), "--no-progress"]) == 0
    assert json.loads((run / "state.json").read_text())["steps"] > state["steps"]


def _synthetic_stats(spec, diff, weight: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """Statistics of one cell and one pair of actions per bucket: the paired difference averages
    ``diff(count)`` (the count at the bucket's middle) with variance 1, ``weight`` differences per
    bucket; with ``rng``, each mean carries its sampling noise."""
    from blackjack_env.agents.count_table import bucket_counts

    x = bucket_counts(spec) * spec.width * spec.per_unit  # the bucket's middle, in true counts
    means = diff(x)
    if rng is not None:
        means = means + rng.normal(0.0, 1.0 / np.sqrt(weight), means.shape)
    stats = np.zeros((spec.n, 1, 1, 1, 3))
    stats[..., 0] = weight
    stats[..., 1] = weight * means[:, None, None, None]
    stats[..., 2] = weight * (means[:, None, None, None] ** 2 + 1.0)
    return stats


def _single(curves):
    return type(curves)(curves.beta[0, 0], curves.cov[0, 0], curves.design)


@pytest.mark.parametrize(
    ("decks", "slope", "crossing", "when", "index"),
    [
        (6, 0.02, 2.3, "at_or_above", 2.0),
        (6, -0.03, -1.6, "below", -2.0),
        (1, 0.02, 2.3, "at_or_above", 2.5),  # half true counts at one deck
        (2, -0.03, -1.6, "below", -1.5),
    ],
)
def test_fitted_index_is_where_a_known_linear_difference_crosses_zero(decks, slope, crossing, when, index) -> None:
    """A paired difference linear in the count, sampled with noise in every bucket: the fit pools
    the buckets, its line crosses zero where the difference does, and the exported threshold is
    the bucket edge that plays "yes" exactly in the buckets whose middle lies past the crossing
    (whole true counts at 6 decks, half ones at one and two)."""
    from blackjack_env.agents.count_table import fit_question, pair_curves

    spec = bucket_spec(system("hilo"), RULES.with_settings([f"decks={decks}", "penetration=0.65"]))
    stats = _synthetic_stats(spec, lambda x: slope * (x - crossing), 2e5, np.random.default_rng(0))
    curves = pair_curves(stats, spec)
    unit = spec.width * spec.per_unit  # the fits' count is in units: one true count
    assert curves.beta[0, 0, 0, 1] / unit == pytest.approx(slope, rel=0.1)
    assert -curves.beta[0, 0, 0, 0] / curves.beta[0, 0, 0, 1] == pytest.approx(crossing, abs=0.2)
    fit = fit_question(_single(curves), np.ones((spec.n, 1)), np.full(spec.n, 0.01), False, spec)
    assert fit is not None
    k, got_when, value, err = fit
    assert (got_when, spec.edge(k)) == (when, index) and value > 2 * err


def test_no_entry_without_a_gain_and_a_refused_curve_widens_its_errors() -> None:
    """A difference that never turns positive exports nothing; noise alone (no count dependence)
    rarely does; and data far from any line (a step) get a larger error than the same line's."""
    from blackjack_env.agents.count_table import fit_curves, fit_question, pair_curves

    spec = bucket_spec(system("hilo"), RULES)
    single = (np.ones((spec.n, 1)), np.full(spec.n, 0.01))
    curves = pair_curves(_synthetic_stats(spec, lambda x: -0.05 + 0.001 * x, 1e6), spec)
    assert fit_question(_single(curves), *single, False, spec) is None
    found = 0
    for seed in range(20):
        stats = _synthetic_stats(spec, lambda x: 0.0 * x - 0.002, 1e4, np.random.default_rng(seed))
        found += fit_question(_single(pair_curves(stats, spec)), *single, False, spec) is not None
    assert found <= 4
    x = np.arange(spec.n, dtype=float)
    var = np.full(spec.n, 1e-4)
    line = fit_curves(0.01 * x, var, spec)
    step = fit_curves(np.where(x > spec.n / 2, 1.0, 0.0), var, spec)
    assert np.all(step.cov[1, 1] > 10 * line.cov[1, 1])


def test_questions_are_answered_in_the_casino_order_from_paired_differences() -> None:
    """greedy_answers / ranking_of: stand or hit first, then double against that answer, split
    against the answer so far, surrender against the rest; the ranking plays the first legal."""
    from blackjack_env import engine as E
    from blackjack_env.agents.count_table import PAIR_ID, greedy_answers, ranking_of

    def values(pairs: dict[tuple[int, int], float]) -> np.ndarray:
        out = np.zeros(len(PAIR_ID[PAIR_ID >= 0]))
        for (a, c), v in pairs.items():
            out[PAIR_ID[a, c]] = v  # v_a - v_c, a < c
        return out[None]

    # hard 11 v 6: hit beats stand, double beats hit (but not stand: irrelevant), surrender worst
    eleven = values({(E.STAND, E.HIT): -0.3, (E.HIT, E.DOUBLE): -0.1, (E.STAND, E.DOUBLE): 0.05,
                     (E.HIT, E.SURRENDER): 0.6, (E.DOUBLE, E.SURRENDER): 0.7})  # fmt: skip
    answers = greedy_answers(eleven)
    assert not answers["S"][0] and answers["D"][0] and answers["D_no"][0] == E.HIT
    assert ranking_of(answers)[0].tolist()[:3] == [E.DOUBLE, E.HIT, E.STAND]
    # hard 16 v 10: stand beats hit, surrender beats stand
    sixteen = values({(E.STAND, E.HIT): 0.02, (E.STAND, E.SURRENDER): -0.03, (E.HIT, E.SURRENDER): -0.05,
                      (E.STAND, E.DOUBLE): 0.4, (E.HIT, E.DOUBLE): 0.4})  # fmt: skip
    answers = greedy_answers(sixteen)
    assert answers["S"][0] and not answers["D"][0] and answers["R"][0] and answers["R_no"][0] == E.STAND
    assert ranking_of(answers)[0].tolist()[:2] == [E.SURRENDER, E.STAND]


def test_rollouts_measure_every_near_answer_at_every_decision(learned: CountTableAgent) -> None:
    """16 v 10's stand and hit are both measured at every one of its decisions (no exploration
    needed), and doubling it, a far answer that is legal at most of them (first decisions), only
    at about one decision in FAR_EVERY."""
    from blackjack_env import engine as E
    from blackjack_env.agents.count_table import FAR_EVERY, PAIR_ID, W
    from blackjack_env.strategy import row_of_label

    sixteen = learned.stats[:, row_of_label("hard", "16"), 9].sum(axis=0)  # against a ten
    assert sixteen[PAIR_ID[E.STAND, E.HIT], W] == sixteen[:, W].max() > 10_000
    share = sixteen[PAIR_ID[E.STAND, E.DOUBLE], W] / sixteen[PAIR_ID[E.STAND, E.HIT], W]
    assert 0 < share < 2.0 / FAR_EVERY
    assert learned.decisions > learned.rounds and learned.rollouts > learned.rounds


def test_an_earlier_learners_run_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "agent.json").write_text(json.dumps({"kind": "count-table", "epsilon": 0.1}))
    with pytest.raises(ValueError, match=r"earlier count-table learner.*train it again"):
        CountTableAgent.load(tmp_path)
    argv = ["--env", "shoe", "--set", "penetration=0.75", "--epsilon", "0.2", "--out", str(tmp_path / "r")]
    assert train_main(argv) == 2
    assert "not used by the count-table learner" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_short_run_exports_insurance(learned: CountTableAgent) -> None:
    """Six million rounds from nothing: the fitted export holds insurance (the count's largest play
    gain, Hi-Lo's index about +3) with a significant learned gain."""
    found = {(d.entry.hand, d.entry.action): d for d in learned.deviations()}
    insurance = found[("insurance", "I")]
    assert insurance.entry.when == "at_or_above" and 0.0 <= insurance.entry.index <= 5.0
    assert insurance.gain_per_100 > 2 * insurance.stderr_per_100 > 0


def test_saved_run_exports_the_known_strong_deviations() -> None:
    """The committed Hi-Lo run (benchmarks/results/count-table-hilo-s1: blackjack-train --env shoe
    --system hilo --set penetration=0.75 --seed 1, 2e9 rounds in one seat, 22 minutes on one core): its export,
    recomputed from its statistics, is the counting JSON it wrote, and holds Hi-Lo's best-known
    indices where published tables put them (insurance +3, 16 v 10 stand 0, 15 v 10 surrender 0,
    14 v 10 surrender +3, 12 v 3 and 12 v 2 stand +2 and +3, within a bucket), learned from nothing."""
    run = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "count-table-hilo-s1"
    agent = CountTableAgent.load(run)
    assert agent.to_strategy() == CountingStrategy.load(run / "counting-strategy.json")
    found = {(d.entry.hand, d.entry.up, d.entry.action): d.entry for d in agent.deviations()}
    for key, index in {
        ("insurance", "A", "I"): 3.0,
        ("hard 16", "10", "S"): 0.0,
        ("hard 15", "10", "R"): 0.0,
        ("hard 14", "10", "R"): 3.0,
        ("hard 12", "3", "S"): 2.0,
        ("hard 12", "2", "S"): 3.0,
    }.items():
        assert found[key].when == "at_or_above" and abs(found[key].index - index) <= 1.0, found[key]


def test_a_totals_hands_of_three_cards_are_answered_apart_only_where_their_line_differs() -> None:
    """Noise-free statistics of stand minus hit: 16 v 10's line crosses 0 at +0 on two cards and at
    -3 on three or more (apart: two narrowed entries), 12 v 3's at +2 on both (pooled: one entry for
    any cards); each exported index is the bucket edge past the crossing."""
    from blackjack_env import engine as E
    from blackjack_env.agents.count_table import N_CELL_ROWS, PAIR_ID
    from blackjack_env.strategy import N_ROWS, row_of_label

    agent = CountTableAgent(RULES, system("hilo"))
    assert agent.stats.shape[1] == N_CELL_ROWS
    stand_hit = PAIR_ID[E.STAND, E.HIT]
    lines = {  # (row, up column): (two cards' crossing, later hands' crossing)
        (row_of_label("hard", "16"), 9): (0.0, -3.0),
        (row_of_label("hard", "12"), 2): (2.0, 2.0),
    }
    for (row, col), crossings in lines.items():
        for cell_row, crossing in zip((row, N_ROWS + row), crossings, strict=True):
            diff = lambda x, c=crossing: 0.02 * (x - c + 0.25)  # noqa: E731  # 0 a quarter below c
            agent.stats[:, cell_row, col, stand_hit] = _synthetic_stats(agent.spec, diff, 1e6)[:, 0, 0, 0]
    _, apart = agent.cell_stats()
    assert apart.sum() == 1 and apart[row_of_label("hard", "16"), 9]
    found = {(e.hand, e.up, e.cards): (e.action, e.when, e.index) for e in agent.to_strategy().indices}
    assert found == {
        ("hard 16", "10", "two"): ("S", "at_or_above", 0.0),
        ("hard 16", "10", "three_or_more"): ("S", "at_or_above", -3.0),
        ("hard 12", "3", "any"): ("S", "at_or_above", 2.0),
    }


def test_the_learner_measures_a_totals_later_hands_in_their_own_cells(learned: CountTableAgent) -> None:
    """Stand and hit on 16 v 10 are measured on two cards (the first row) and on three or more (the
    later row); a pair has no later row, and a run saved without later cells loads without them."""
    from blackjack_env import engine as E
    from blackjack_env.agents.count_table import PAIR_ID, W
    from blackjack_env.strategy import N_ROWS, PAIR_BASE, row_of_label

    row = row_of_label("hard", "16")
    first, later = (learned.stats[:, r, 9, PAIR_ID[E.STAND, E.HIT], W].sum() for r in (row, N_ROWS + row))
    assert first > 1000 and later > 1000
    assert learned.stats.shape[1] == N_ROWS + PAIR_BASE
    old = CountTableAgent.load(Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "count-table-hilo-s1")
    assert not old.later_apart and old.stats.shape[1] == N_ROWS


def test_where_the_data_refuse_a_line_the_answer_is_read_per_bucket() -> None:
    """Stand minus hit as a step (-0.01 below a true count of +3, +0.09 from it): a line through
    it is refused and the question reads each bucket's own value, so the exported index is the step
    (+3) and the policy stands exactly from there; a noisy line is not refused."""
    from blackjack_env import engine as E
    from blackjack_env.agents.count_table import PAIR_ID, pair_curves
    from blackjack_env.strategy import row_of_label

    agent = CountTableAgent(RULES, system("hilo"))
    row, col, stand_hit = row_of_label("hard", "13"), 9, PAIR_ID[E.STAND, E.HIT]
    step = _synthetic_stats(agent.spec, lambda x: np.where(x >= 3, 0.09, -0.01), 1e6)[:, 0, 0, 0]
    agent.stats[:, row, col, stand_hit] = step
    curves = pair_curves(agent.cell_stats()[0], agent.spec)
    assert curves.refuses(row, col, stand_hit)
    entries = {(e.hand, e.up): e for e in agent.to_strategy().indices}
    assert (entries[("hard 13", "10")].when, entries[("hard 13", "10")].index) == ("at_or_above", 3.0)
    stands = agent.policy()[0][:, row, col, 0] == E.STAND
    assert np.array_equal(stands, bucket_middles(agent.spec) >= 3)
    for seed in range(10):
        noisy = _synthetic_stats(agent.spec, lambda x: 0.02 * (x - 1), 1e4, np.random.default_rng(seed))
        assert not pair_curves(noisy, agent.spec).refuses(0, 0, 0)


def bucket_middles(spec) -> np.ndarray:
    from blackjack_env.agents.count_table import bucket_counts

    return bucket_counts(spec) * spec.width * spec.per_unit
