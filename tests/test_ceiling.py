"""The ceiling (``blackjack_env.solver.ceiling``): sampling, exact values per shoe, determinism
across workers and backends, and ``blackjack-strategy --ceiling``'s bad input.

Each exact shoe analysis takes seconds, so the runs here are tiny (a single-deck game, split to 2
hands, half the deck dealt); the statistical agreement at full size is the benchmark's
(benchmarks/ceiling.py, README "The ceiling"). The stratified design (strata, allocation, the
estimator, caching, resuming) is tested on synthetic populations and on runs whose per-shoe analysis
is replaced by a cheap function of the shoe, so its statistics can be checked over many runs.
"""

from __future__ import annotations

import importlib
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blackjack_env import engine as E
from blackjack_env.evaluate.strategy import main as strategy_main
from blackjack_env.rules import Rules
from blackjack_env.solver import ceiling, solve
from blackjack_env.solver._ceiling_strata import _allocate
from blackjack_env.solver.ceiling import (
    MIN_PER_STRATUM,
    N_VALUES,
    V_BASIC,
    V_BEST,
    V_CELLS,
    Design,
    check_bets,
    gain_proxy,
    record_chunk,
    record_shoes,
    share_of_ceiling,
    shoe_values,
    stratified_mean,
    weighted_percentiles,
)
from blackjack_env.strategy import PAIR_BASE, StrategyTable
from blackjack_env.table import POLICY_TABLE, Chunk, new_table, table_policies

ceiling_module = importlib.import_module("blackjack_env.solver.ceiling")  # the package's ``ceiling`` is the function

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
    comps = np.zeros((rounds, 10))
    out = (comps, np.zeros(rounds), np.zeros(4))
    table, policies = new_table(rules.to_array()), table_policies(POLICY_TABLE, basic)
    record_chunk(table, policies, Chunk(words, rounds, 1, 0, E.table_kind(1)), 1, out)
    n = comps.sum(axis=1)
    return float(n.mean()), float(n.std() / math.sqrt(rounds))


def _stacked_rounds_ev(rules: Rules, shoe: np.ndarray, rounds: int, seed: int) -> tuple[float, float]:
    """Basic strategy's mean result and its standard error over rounds each dealt from exactly ``shoe``
    (cards per value), shuffled anew every round and stacked in the env (no other card is dealt)."""
    import gymnasium as gym

    from blackjack_env.agents import BasicStrategyAgent

    agent = BasicStrategyAgent(rules)  # the solver's table: the one priced exactly
    cards = [("A", "2", "3", "4", "5", "6", "7", "8", "9")[v] for v in range(9) for _ in range(int(shoe[v]))]
    cards += [("T", "J", "Q", "K")[k % 4] for k in range(int(shoe[9]))]
    env = gym.make("blackjack_env/Blackjack-v0", rules=rules).unwrapped
    rng = np.random.default_rng(seed)
    results = np.empty(rounds)
    env.reset(seed=seed)
    for i in range(rounds):
        obs, info = env.reset(options={"cards": list(rng.permutation(cards))})
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info["action_mask"]))
            total, done = total + float(reward), terminated or truncated
        results[i] = total
    return float(results.mean()), float(results.std() / math.sqrt(rounds))


@pytest.mark.parametrize(("tens", "split_to"), [(0, 1), (3, 2)])
def test_a_shoe_with_few_tens_is_analysed_as_dealt(tens: int, split_to: int) -> None:
    """However few tens a shoe holds, the solver values it: basic strategy's exact EV on a 26-card
    shoe agrees with rounds dealt from exactly that shoe (hands that need a missing ten have no
    chance; with splits, the split model's approximation is inside the check's tolerance)."""
    from blackjack_env.solver._analysis import Model, analyse

    rules = Rules(decks=2, split_to=split_to, surrender="none", penetration=0.9)
    table = solve(rules).table
    shoe = np.array([3.0, 2, 3, 2, 3, 2, 3, 2, 3, tens])
    exact = analyse(rules, table, model=Model(rules, shoe)).ev
    simulated, se = _stacked_rounds_ev(rules, shoe, 60_000, seed=3)
    assert abs(simulated - exact) < 4 * se
    assert exact < analyse(rules, table, model=Model(rules, shoe + np.eye(10)[9] * 8)).ev  # tens help the player


def test_a_deep_small_shoe_has_a_ceiling(monkeypatch) -> None:
    """A single deck dealt to 80%: sampled shoes holding fewer than 8 tens are analysed too."""
    tens: list[float] = []
    analyse_shoe = ceiling_module._shoe_task

    def seen(rules, shoe, *args):
        tens.append(float(shoe[9]))
        return analyse_shoe(rules, shoe, *args)

    monkeypatch.setattr(ceiling_module, "_shoe_task", seen)
    game = GAME.replace(penetration=0.8)
    result = ceiling(game, samples=4, seed=3, workers=1, basic=solve(game).table)
    assert min(tens) < 8 and len(result.values) == 4
    assert np.isfinite(result.values[:, [V_BASIC, V_BEST]]).all() and (result.gains >= 0).all()


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
    assert sum(out["round_ev"]["histogram"]["best"]) == pytest.approx(1.0)  # shares of rounds
    assert sum(out["round_ev"]["samples"]["best"]) == 3
    assert out["sampling"]["strata"] == 1 and out["sampling"]["variance_reduction"] == 1.0
    json.dumps(out)  # plain Python types only


def test_same_seed_same_result_for_any_workers(serial, basic: StrategyTable) -> None:
    """Two worker processes give the very values one does (shoes fixed by the seed, put in order;
    fewer samples are the same first shoes)."""
    parallel = ceiling(
        GAME, samples=2, seed=5, workers=2, bets=(1, 4), in_round_every=2, basic=basic, cache=False
    )  # no cache: the Ray test's equal call (any order) must not hand these values over
    np.testing.assert_array_equal(parallel.values, serial.values[:2])
    assert not parallel.meta["cached"] and parallel.meta["from_cache"] == 0


def test_ray_backend_equals_local(serial, basic: StrategyTable) -> None:
    """The one local-Ray test (Ray is slow to start): Ray tasks give the local values."""
    pytest.importorskip("ray")
    remote = ceiling(
        GAME, samples=2, seed=5, workers=2, backend="ray", bets=(1, 4), in_round_every=2, basic=basic, cache=False
    )
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
        (["--set", "penetration=0.75", "--strata", "0"], "strata"),
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


@pytest.mark.parametrize(
    "argv",
    [
        ["--policy", "basic", "--ceiling", "--set", "penetration=0.75", "--strata", "0"],
        ["sweep", "--ceiling", "--set", "penetration=0.75", "--ceiling-strata", "x", "--no-plot"],
        ["report", "--ceiling", "--set", "penetration=0.75", "--strata", "-1", "--out", "never"],
    ],
)
def test_bad_strata_is_one_line_exit_2(argv: list[str], capsys) -> None:
    """A --strata that is not a whole number >= 1 stops the command as it parses (argparse's one line)."""
    from blackjack_env.evaluate.cli import main as evaluate_main

    with pytest.raises(SystemExit) as stopped:
        evaluate_main(argv)
    assert stopped.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert "--strata" in line and ">= 1" in line
    assert not Path("never").exists()


@pytest.mark.parametrize("command", ["evaluate", "sweep", "report"])
def test_strata_reach_the_ceiling_from_every_command(command: str, monkeypatch) -> None:
    """--strata K (alias of --ceiling-strata) in blackjack-evaluate, its sweep and its report is the
    ceiling's ``strata``; without it the ceiling's own default."""
    from blackjack_env.evaluate import cli, options, sweep
    from blackjack_env.evaluate.report import cli as report_cli

    parser = {"evaluate": cli.build_parser, "sweep": sweep.build_parser, "report": report_cli.build_parser}[command]()
    extra = ["--out", "x"] if command == "report" else []
    seen = []
    monkeypatch.setattr(options, "ceiling", lambda rules, **kwargs: seen.append(kwargs["strata"]))
    for argv, strata in ((["--strata", "3"], 3), (["--ceiling-strata", "1"], 1), ([], ceiling_module.STRATA)):
        options.game_ceiling(GAME, parser.parse_args(["--ceiling", *argv, *extra]))
        assert seen.pop() == strata


def test_interruption_keeps_the_finished_shoes(serial, basic: StrategyTable) -> None:
    """Ctrl-C (here raised as the first shoe is done) keeps that shoe and says the run was interrupted."""

    def stop(done: int) -> None:
        raise KeyboardInterrupt

    cut = ceiling(GAME, samples=3, seed=5, workers=1, in_round_every=2, basic=basic, progress=stop, cache=False)
    assert cut.interrupted and cut.samples == 1
    np.testing.assert_array_equal(cut.values, serial.values[:1])
    assert cut.to_json()["interrupted"] is True


# ============================================================================= the per-shoe cost
def _random_table(rng: np.random.Generator) -> np.ndarray:
    """A table of random preference orders in every cell (hits on 20, doubles on 4, ...), so the split
    hands' reads and the hands they reach differ from basic strategy's everywhere."""
    return np.array([[rng.permutation(5) for _ in range(10)] for _ in range(38)], np.int64)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_split_values_read_only_what_they_need_bit_for_bit(seed: int) -> None:
    """A split's value under a table, valuing only the hands its split hands reach and reused across
    tables that read alike on one model, is bit for bit the full backward passes' (over random rules,
    depleted shoes and random tables, each model asked in turn for several tables)."""
    from rule_sets import random_rules

    from blackjack_env.solver._analysis import Model

    rng = np.random.default_rng(seed)
    rules = random_rules(rng, decks=(1, 2)).replace(split_to=int(rng.integers(2, 5)))
    shoe = np.array([4.0] * 9 + [16.0]) * rules.decks - rng.integers(0, 3, 10)
    model = Model(rules, shoe)
    tables = [_random_table(rng) for _ in range(2)]
    tables.append(tables[0].copy())
    tables[2][:, :, :] = tables[2][:, :, ::-1]  # every order reversed: other reads, same model
    tables.append(tables[0].copy())
    tables[3][PAIR_BASE:] = _random_table(rng)[PAIR_BASE:]  # another resplit choice only
    for actions in tables:
        for up in range(1, 11):
            for pair in range(1, 11):
                fast = model.split_values(up, pair, actions)
                full = model._split_values(up, pair, actions, False, None)
                assert fast[0] == full[0] and np.array_equal(fast[1], full[1]), (up, pair)


def test_first_actions_kernel_is_the_tables_first_legal_action() -> None:
    """The compiled first_actions is the table read as the engine plays it: every hand's first legal
    action per role (a pair from its pair row with SPLIT legal), over random tables."""
    from blackjack_env.solver import _kernels as K
    from blackjack_env.solver._analysis import Model

    rng = np.random.default_rng(4)
    model = Model(Rules(decks=2, split_to=4, surrender="late"))
    sp = model.space
    for _ in range(2):
        actions = _random_table(rng)
        for up in (1, 6, 10):
            first = model.first_actions(up, actions)
            for h in range(0, sp.size, 7):
                order = actions[sp.row[h], up - 1]
                if sp.n_cards[h] > 2:
                    assert first[K.W_MULTI, h] == K.first_of(order, E.STAND, E.HIT)
                    continue
                legal2, legal_split = model.legal(up, int(sp.total[h]))
                assert first[K.W_SPLIT, h] == K.first_legal(order, legal_split)
                if model.split_frac[h] > 0:
                    order = actions[PAIR_BASE + model.pair_value[h] - 1, up - 1]
                    legal2[E.SPLIT] = True
                assert first[K.W_DEAL, h] == K.first_legal(order, legal2)


# ============================================================================= a round's second moment
def test_round_moments_first_moment_is_the_solvers_ev() -> None:
    """The second-moment pass walks the solver's recursion: its E[X] is the solver's EV of the same table
    on the same shoe, insured or not, basic strategy or a random table (so every action is priced)."""
    from blackjack_env.solver._analysis import Model, analyse
    from blackjack_env.solver.moments import round_moments

    rng = np.random.default_rng(5)
    rules = Rules(decks=2, split_to=1, surrender="late", hit_soft_17=True)
    shoe = np.array([8.0] * 9 + [32.0]) - rng.integers(0, 4, 10)
    basic = solve(rules).table
    for table in (basic, StrategyTable(_random_table(rng), np.array([True, True]))):
        model = Model(rules, shoe)
        ev, second = round_moments(rules, table, model=model)
        assert ev == pytest.approx(analyse(rules, table, model=model).ev, abs=1e-13)
        assert ev * ev < second < 4.5


@pytest.mark.parametrize("insure", [False, True])
def test_round_moments_second_moment_matches_the_simulated_rounds(insure: bool) -> None:
    """E[X^2] of a round, exact, against 10^6 simulated rounds off a fresh shoe (no cut card: every round
    is dealt from the full shoe), with and without insurance and even money."""
    from blackjack_env.evaluate.runner import simulate
    from blackjack_env.simulate import Policy
    from blackjack_env.solver.moments import round_moments

    rules = Rules(decks=1, split_to=1, surrender="late")
    basic = solve(rules).table
    table = StrategyTable(basic.actions, np.array([insure, insure]))
    ev, second = round_moments(rules, table)
    result = simulate(rules, Policy.from_table(table), 1_000_000, seed=11, workers=1).result
    simulated = result.sd() ** 2 + result.ev() ** 2
    assert result.ev() == pytest.approx(ev, abs=4 * result.stderr())
    assert simulated == pytest.approx(second, abs=0.006)  # about 5 standard errors of the simulated E[X^2]


def test_perfect_bettor_sd_is_exact_without_splits(serial) -> None:
    """Without splits each shoe carries the exact E[X^2] of its round (on the full shoe: basic strategy's,
    ``round_moments``) and the bettor's SD is sqrt(E[bet^2 X^2] - E[bet X]^2) from them; with splits the
    SD is the approximation, said so."""
    from blackjack_env.solver.ceiling import V_SECOND
    from blackjack_env.solver.moments import round_moments

    rules = Rules(decks=1, split_to=1, surrender="late", penetration=0.5)
    basic = solve(rules).table
    full = shoe_values(rules, np.array([4.0] * 9 + [16.0]), basic)
    assert full[V_SECOND] == pytest.approx(round_moments(rules, basic)[1], abs=1e-12)
    result = ceiling(rules, samples=4, seed=1, workers=1, in_round_every=0, basic=basic, cache=False)
    bettor = result.bettor((1, 8))
    bet = np.where(result.best > 0, 8.0, 1.0)
    second = result.values[:, V_SECOND]
    expected = math.sqrt(result.sample_weights() @ (bet * bet * second) - bettor["ev"] ** 2)
    assert bettor["sd_method"] == "exact" and bettor["sd"] == pytest.approx(expected, rel=1e-12)
    assert bettor["sd_approximate"] > 0 and bettor["n0"] == pytest.approx((bettor["sd"] / bettor["ev"]) ** 2)
    split = serial.bettor((1, 4))
    assert split["sd_method"] == "approximate" and split["sd"] == split["sd_approximate"]
    assert np.isnan(serial.values[:, V_SECOND]).all()


def test_round_moments_refuse_a_split_game() -> None:
    from blackjack_env.solver.moments import round_moments

    with pytest.raises(ValueError, match="split"):
        round_moments(GAME, solve(GAME).table)


# ============================================================================= the stratified design
def test_one_stratum_is_the_plain_mean() -> None:
    rng = np.random.default_rng(0)
    x = rng.exponential(size=50)
    mean, stderr, weights = stratified_mean(x, np.zeros(50, np.int64), np.ones(1), 50)
    assert mean == pytest.approx(x.mean(), abs=1e-15)
    assert stderr == pytest.approx(x.std(ddof=1) / math.sqrt(50), rel=1e-12)
    np.testing.assert_allclose(weights, 1 / 50)


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(0, 6), min_size=1, max_size=6).filter(lambda c: sum(c) > 0),
    seed=st.integers(0, 2**31),
)
def test_stratified_mean_is_its_sample_weights_mean(counts: list[int], seed: int) -> None:
    """Any strata (some with 0 or 1 shoe: an interrupted run, merged into a neighbour): the shoes'
    weights sum to 1, the mean is their weighted mean, and each stratum with 2+ shoes of its own
    weighs W_h / n_h per shoe."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(len(counts)), counts)
    rng.shuffle(labels)
    weights = rng.dirichlet(np.ones(len(counts)))
    x = rng.normal(size=len(labels))
    mean, stderr, w = stratified_mean(x, labels, weights, 1000)
    assert w.sum() == pytest.approx(1.0) and (w > 0).all()
    assert mean == pytest.approx(float(w @ x), abs=1e-12)
    if min(counts) >= MIN_PER_STRATUM:
        for h, n in enumerate(counts):
            np.testing.assert_allclose(w[labels == h], weights[h] / n)
        assert math.isfinite(stderr)


def test_weighted_percentiles_of_equal_weights_are_the_order_statistics() -> None:
    x = np.arange(10.0)
    np.testing.assert_array_equal(weighted_percentiles(x, np.ones(10), [10, 50, 100]), [0.0, 4.0, 9.0])
    # a shoe standing for 90% of the rounds is the median
    assert weighted_percentiles(np.array([1.0, 2.0]), np.array([0.9, 0.1]), [50])[0] == 1.0


def test_allocation_and_order() -> None:
    """Neyman-like allocation: the total, at least two per stratum, never more than a stratum holds;
    every stratum's first two shoes come first (an early Ctrl-C still has every stratum)."""
    n = _allocate(np.array([0.5, 0.1, 0.0, 2.0]), np.array([100, 100, 50, 3]), 40)
    assert n.sum() == 40 and (n >= MIN_PER_STRATUM).all() and n[3] == 3 and n[0] > n[1]
    rng = np.random.default_rng(1)
    proxy = rng.exponential(size=5000) ** 2
    design = Design.stratified(proxy, 60, 6)
    assert len(design.chosen) == 60 and len(set(design.chosen.tolist())) == 60
    assert design.weights.sum() == pytest.approx(1.0) and len(design.weights) == 6
    first = design.labels[: 2 * len(design.weights)]
    assert np.bincount(first, minlength=6).tolist() == [2] * 6
    # the top stratum (the largest predictions) gets far more than its share of the rounds
    top = design.labels == 5
    assert top.mean() > 5 * design.weights[5]
    assert proxy[design.chosen[top]].min() >= np.quantile(proxy, 1 - 0.5**5)


def test_stratified_estimates_are_unbiased_and_tighter_than_plain() -> None:
    """On a synthetic game (a skewed gain that its predictor explains in part), 400 two-phase
    stratified runs of 40 shoes: their mean is the population mean (within 4 standard errors),
    their variance far below plain sampling's, and their 95% CIs cover it about 95% of the time."""
    rng = np.random.default_rng(7)
    size = 200_000
    proxy = rng.gamma(0.5, size=size) ** 2
    gain = proxy * rng.lognormal(0.0, 0.5, size=size) + 0.01 * rng.exponential(size=size)
    truth = gain.mean()
    estimates, covered = [], 0
    for _ in range(400):
        pool = rng.choice(size, 4000, replace=False)
        design = Design.stratified(proxy[pool], 40, 8)
        x = gain[pool[design.chosen]]
        mean, stderr, _ = stratified_mean(x, design.labels, design.weights, design.pool)
        estimates.append(mean)
        covered += abs(mean - truth) <= 1.96 * stderr
    estimates = np.array(estimates)
    assert abs(estimates.mean() - truth) < 4 * estimates.std() / math.sqrt(len(estimates))
    plain_var = gain.var() / 40
    assert estimates.var() < plain_var / 3
    assert 0.88 <= covered / 400 <= 0.99


def test_gain_proxy_is_zero_on_the_full_shoe_and_grows_with_tens() -> None:
    """No decision flips on the full shoe (its basic strategy); a ten-rich shoe flips some and
    makes insurance pay."""
    full = np.array([4.0] * 9 + [16.0])
    rich = full.copy()
    rich[1:6] -= 3  # fifteen small cards gone
    proxy = gain_proxy(GAME, np.array([full, rich]))
    assert proxy[0] == pytest.approx(0.0, abs=1e-12) and proxy[1] > 0.005


def _fake_values(rules: Rules, shoe: np.ndarray, actions: np.ndarray, insurance: np.ndarray, in_round: bool):
    """A cheap stand-in for the exact analysis: the values a function of the shoe (its ten density)."""
    tens = shoe[9] / shoe.sum()
    out = np.full(N_VALUES, np.nan)
    out[V_BASIC] = tens - 4 / 13
    out[V_BEST] = out[V_BASIC] + (tens - 4 / 13) ** 2
    out[2] = 3 * shoe[9] / (shoe.sum() - 1) - 1
    out[V_CELLS] = 0
    return out


def test_cache_reads_back_and_an_interrupted_run_resumes(monkeypatch, tmp_path: Path, basic) -> None:
    """A stratified run keeps its shoes on disk: the same call again analyses nothing; after a Ctrl-C
    the next call analyses only the missing shoes, and ends with an uninterrupted run's values."""
    calls = []

    def counted(*args):
        calls.append(1)
        return _fake_values(*args)

    monkeypatch.setattr(ceiling_module, "_shoe_task", counted)
    monkeypatch.setattr(ceiling_module, "SIM_ROUNDS", 10_000)  # the pool's rounds only
    monkeypatch.setattr(ceiling_module, "gain_proxy", lambda rules, shoes: shoes[:, 9] / shoes.sum(axis=1))
    monkeypatch.setenv("BLACKJACK_ENV_CACHE", str(tmp_path / "a"))
    game = GAME.replace(penetration=0.4)  # a shallow cut: a small pool
    kwargs = {"samples": 24, "seed": 2, "workers": 1, "basic": basic}
    whole = ceiling(game, **kwargs)
    assert len(calls) == 24 and whole.design()["strata"] == 6
    (path,) = (tmp_path / "a").rglob("ceiling-*.npz")
    os.utime(path, (1e9, 1e9))  # last used long ago: reading it marks it used, so pruning keeps it
    again = ceiling(game, **kwargs)
    assert len(calls) == 24 and again.meta["cached"] and again.to_json()["cached"]
    assert path.stat().st_mtime > 1e9 + 1
    np.testing.assert_array_equal(again.values, whole.values)

    monkeypatch.setenv("BLACKJACK_ENV_CACHE", str(tmp_path / "b"))
    calls.clear()

    def stop_after_five(done: int) -> None:
        if len(calls) == 5:
            raise KeyboardInterrupt

    cut = ceiling(game, **kwargs, progress=stop_after_five)
    assert cut.interrupted and cut.samples == 5
    calls.clear()
    resumed = ceiling(game, **kwargs)
    assert len(calls) == 19 and resumed.meta["from_cache"] == 5
    np.testing.assert_array_equal(resumed.values, whole.values)
    assert resumed.gain == whole.gain
    assert ceiling(game, **kwargs, cache=False).meta["cached"] is False


# ============================================================================= end to end
E2E = ["--set", "decks=1", "--set", "split_to=2", "--set", "penetration=0.5", "--seed", "5"]


def test_evaluate_policy_ceiling_end_to_end(capsys) -> None:
    """blackjack-evaluate --policy hilo-i18-fab4 --ceiling --json: the share of the ceiling with its CI."""
    from blackjack_env.evaluate.cli import main as evaluate_main

    argv = ["--policy", "hilo-i18-fab4", "--ceiling", "--ceiling-samples", "3", "--rounds", "2e5", "--json"]
    assert evaluate_main([*argv, *E2E, "--workers", "1", "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    c = out["ceiling"]
    assert c["samples"] == 3 and c["bets"] is None
    assert c["gain"] >= 0 and c["gain_ci95"][0] <= c["gain"] <= c["gain_ci95"][1]
    assert c["policy_gain"] == pytest.approx(out["ev_diff"])
    assert c["share"] == pytest.approx(c["policy_gain"] / c["gain"])
    assert c["share_ci95"][0] <= c["share"] <= c["share_ci95"][1]


def test_sweep_ceiling_end_to_end(capsys) -> None:
    """blackjack-evaluate sweep --ceiling --json: every cell's share of its penetration's ceiling (the
    same game's shoes as the policy run's: read back from the cache)."""
    from blackjack_env.evaluate.cli import main as evaluate_main

    argv = ["sweep", "--systems", "hilo-i18-fab4", "--spreads", "1-4", "--ceiling", "--ceiling-samples", "3"]
    argv += ["--rounds", "2e5", "--no-plot", "--json", "--workers", "1", "--no-progress", *E2E]
    assert evaluate_main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    cells = out["cells"]
    assert len(cells) == 2
    for cell in cells:
        c = cell["ceiling"]
        assert c["samples"] == 3 and cell["ceiling_share"] == c["share"]
        assert c["share_ci95"][0] <= c["share"] <= c["share_ci95"][1] or math.isnan(c["share"])
    bets = cells[1]["ceiling"]["bets"]
    assert bets[0] == 1.0 and bets[-1] == 4.0  # the 1-4 spread's bets, the perfect bettor's too
    assert cells[0]["ceiling"]["bets"] is None
