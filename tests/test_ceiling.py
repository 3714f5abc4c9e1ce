"""The ceiling (``blackjack_env.solver.ceiling``): sampling, exact values per shoe, determinism
across workers and backends, and ``blackjack-strategy --ceiling``'s bad input.

Each exact shoe analysis takes seconds, so the runs here are tiny (a single-deck game, split to 2
hands, half the deck dealt); the statistical agreement at full size is the benchmark's
(benchmarks/ceiling.py, README "The ceiling").
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from blackjack_env import engine as E
from blackjack_env.evaluate.strategy import main as strategy_main
from blackjack_env.rules import Rules
from blackjack_env.solver import ceiling, solve
from blackjack_env.solver.ceiling import (
    V_BASIC,
    V_BEST,
    V_CELLS,
    check_bets,
    record_chunk,
    record_shoes,
    share_of_ceiling,
    shoe_values,
)
from blackjack_env.strategy import StrategyTable
from blackjack_env.table import POLICY_TABLE

GAME = Rules(decks=1, split_to=2, penetration=0.5)
JSON_KEYS = {"samples", "basic_ev", "basic_ev_ci95", "gain", "gain_ci95", "in_round_gain", "round_ev", "seconds"}


@pytest.fixture(scope="module")
def basic() -> StrategyTable:
    return solve(GAME).table


@pytest.fixture(scope="module")
def serial(basic: StrategyTable):
    return ceiling(GAME, samples=3, seed=5, workers=1, bets=(1, 4), in_round_every=2, basic=basic)


def test_full_shoe_is_the_solvers_basic_strategy_exactly(basic: StrategyTable) -> None:
    """On the full shoe basic strategy is the best table: both EVs are solve()'s, no cell changes."""
    full = np.array([4.0] * 9 + [16.0])
    values = shoe_values(GAME, full, basic)
    assert values[V_BASIC] == pytest.approx(solve(GAME).ev, abs=1e-12)
    assert values[V_BEST] == pytest.approx(values[V_BASIC], abs=1e-15)
    assert values[V_CELLS] == 0


def _all_rounds_mean_unseen(rules: Rules, basic: StrategyTable, rounds: int, seed: int) -> tuple[float, float]:
    """Mean and standard error of the unseen cards before every round (stride 1), the reference
    the sampled rounds must reproduce."""
    words = E.seed_words(np.random.SeedSequence(seed), 2)
    work = (
        np.zeros(E.ST_SIZE, np.int64),
        E.new_hands(1),
        E.new_shoe(rules.decks),
        E.new_res(1),
        np.zeros(E.N_ACTIONS, np.bool_),
        np.zeros((1, 4), np.int64),
    )
    comps = np.zeros((rounds, 10))
    kinds = np.array([POLICY_TABLE], np.int64)
    record_chunk(
        rules.to_array(), kinds, basic.actions[None].copy(), basic.insurance[None].copy(), words, rounds, 1, 1, 0,
        work, comps, np.zeros(rounds), np.zeros(4), E.table_kind(1),
    )  # fmt: skip
    n = comps.sum(axis=1)
    return float(n.mean()), float(n.std() / math.sqrt(rounds))


def test_samples_are_spread_over_every_round_of_every_shoe(basic: StrategyTable) -> None:
    """The sampled rounds' mean unseen cards equal every round's (so a fresh shoe is not
    over-sampled), each sample is a possible shoe, and a seed fixes the samples."""
    rec = record_shoes(GAME, basic, 4000, seed=1, min_rounds=1)
    assert rec.stride > 26  # longer than any shoe of this game: no two samples share one
    n = rec.shoes.sum(axis=1)
    assert (rec.shoes >= 0).all() and (rec.shoes <= np.array([4] * 9 + [16])).all()
    assert n.min() > 52 - 26  # a round starts before the cut card (else the shoe is shuffled: full)
    reference, ref_se = _all_rounds_mean_unseen(GAME, basic, 200_000, seed=2)
    se = math.hypot(n.std() / math.sqrt(len(n)), ref_se)
    assert abs(n.mean() - reference) < 4 * se
    again = record_shoes(GAME, basic, 4000, seed=1, min_rounds=1)
    np.testing.assert_array_equal(rec.shoes, again.shoes)


def test_basic_mean_matches_the_simulated_cut_card_ev(serial) -> None:
    """Basic strategy's exact mean over the sampled shoes and its simulated EV agree within their
    CIs (tiny sample: the full-size check is the benchmark's); the gain is never negative."""
    out = serial.to_json()
    assert set(out) >= JSON_KEYS and out["samples"] == 3
    lo, hi = out["basic_ev_ci95"]
    slo, shi = out["simulated_ev_ci95"]
    assert lo <= shi and slo <= hi
    assert (serial.gains >= 0).all() and out["gain_ci95"][0] <= out["gain"] <= out["gain_ci95"][1]
    assert out["in_round_gain"]["samples"] == 2
    bettor = out["perfect_bettor"]
    assert bettor["bets"] == [1.0, 4.0]
    expected = np.mean(np.where(serial.best > 0, 4.0, 1.0) * serial.best)
    assert bettor["ev"] == pytest.approx(expected, abs=1e-15)
    assert sum(out["round_ev"]["histogram"]["best"]) == 3
    json.dumps(out)  # plain Python types only


def test_same_seed_same_result_for_any_workers(serial, basic: StrategyTable) -> None:
    """Two worker processes give the very values one does (shoes fixed by the seed, put in order;
    fewer samples are the same first shoes)."""
    parallel = ceiling(GAME, samples=2, seed=5, workers=2, bets=(1, 4), in_round_every=2, basic=basic)
    np.testing.assert_array_equal(parallel.values, serial.values[:2])


def test_ray_backend_equals_local(serial, basic: StrategyTable) -> None:
    """The one local-Ray test (Ray is slow to start): Ray tasks give the local values."""
    pytest.importorskip("ray")
    remote = ceiling(GAME, samples=2, seed=5, workers=2, backend="ray", bets=(1, 4), in_round_every=2, basic=basic)
    np.testing.assert_array_equal(remote.values, serial.values[:2])


def test_bets_and_share_checks() -> None:
    assert check_bets([0, 3], seats=3) == (0.0, 3.0)
    for bets, seats in (([1, 1], 1), ([2, 1], 1), ([0, 3], 1), ([0], 3), ([-1, 2], 1)):
        with pytest.raises(ValueError):
            check_bets(bets, seats)
    share = share_of_ceiling(0.001, [0.0009, 0.0011], 0.002, [0.0018, 0.0022])
    assert share["share"] == pytest.approx(0.5)
    assert share["ci95"][0] < 0.5 < share["ci95"][1]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--set", "decks=0", "--set", "penetration=0.5"], "infinite deck"),
        ([], "cut card"),
        (["--set", "penetration=0.75", "--bets", "1,8,4"], "increasing"),
        (["--set", "penetration=0.75", "--spread", "8-1"], "increasing"),
        (["--set", "penetration=0.75", "--samples", "0"], "samples"),
        (["--set", "penetration=0.75", "--bets", "0,3"], "seats"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(args: list[str], says: str, capsys) -> None:
    assert strategy_main(["--ceiling", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and says in lines[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["--policy", "hilo-i18-fab4", "--ceiling"],  # no cut card
        ["--policy", "basic", "--ceiling", "--set", "penetration=0.75", "--ceiling-samples", "0"],
        ["--policy", "basic", "--ceiling", "--set", "penetration=0.75", "--baseline", "random"],
        ["sweep", "--ceiling", "--ceiling-samples", "0", "--no-plot"],
    ],
)
def test_evaluate_ceiling_bad_input_before_any_work(argv: list[str], capsys) -> None:
    """blackjack-evaluate --ceiling (and sweep's) refuses bad input before simulating: one line, exit 2."""
    from blackjack_env.evaluate.cli import main as evaluate_main

    assert evaluate_main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1


def test_interruption_keeps_the_finished_shoes(serial, basic: StrategyTable) -> None:
    """Ctrl-C (here raised as the first shoe is done) keeps that shoe and says the run was interrupted."""

    def stop(done: int) -> None:
        raise KeyboardInterrupt

    cut = ceiling(GAME, samples=3, seed=5, workers=1, in_round_every=2, basic=basic, progress=stop)
    assert cut.interrupted and cut.samples == 1
    np.testing.assert_array_equal(cut.values, serial.values[:1])
    assert cut.to_json()["interrupted"] is True
