"""The compiled simulator: same game as the env, seeds independent of workers, honest statistics."""

from __future__ import annotations

import numpy as np
import pytest
from rule_sets import random_rules

from blackjack_env import Rules
from blackjack_env import engine as E
from blackjack_env.env import BlackjackEnv
from blackjack_env.evaluate.runner import simulate
from blackjack_env.simulate import (
    CHUNK_ROUNDS,
    OUT_STATS,
    ST_SUM,
    ST_SUMSQ,
    ST_WIN,
    Policy,
    Table,
    chunk_sizes,
    chunk_words,
    out_size,
    run_chunk,
)
from blackjack_env.solver import solve
from blackjack_env.strategy import N_PLAY, N_ROWS, N_UP, PLAY_ACTIONS, StrategyTable, row_of_label


def random_table(rng: np.random.Generator) -> StrategyTable:
    """A table whose cells prefer the five play actions in random orders (exercises every action)."""
    actions = np.array([rng.permutation(PLAY_ACTIONS) for _ in range(N_ROWS * N_UP)]).reshape(N_ROWS, N_UP, N_PLAY)
    return StrategyTable(actions, rng.integers(0, 2, 2).astype(bool), name="random-table")


def env_statistics(rules: Rules, table: StrategyTable, words: np.ndarray, rounds: int) -> tuple[float, float, int]:
    """Play `rounds` rounds through the single env with the kernel's card stream."""
    env = BlackjackEnv(rules)
    env.reset(seed=0)
    env._st[:] = 0
    E.load_rules(env._st, rules.to_array())
    env._hands[:] = 0
    env._shoe[:] = E.new_shoe(rules.decks)
    env._st[E.S_SHOE_LEN] = len(env._shoe)
    env._st[E.S_SHOE_POS] = len(env._shoe)
    env._st[E.S_RNG : E.S_RNG + 4] = words[:4]
    total = total_sq = 0.0
    wins = 0
    for _ in range(rounds):
        obs, info = env.reset()
        done = False
        while not done:
            obs, reward, done, _, info = env.step(table.act(obs, info["action_mask"]))
        total += reward
        total_sq += reward * reward
        wins += reward > 0
    return total, total_sq, wins


@pytest.mark.parametrize("case", range(10))
def test_compiled_simulator_and_single_env_play_identical_rounds(case: int) -> None:
    """Differential test: on the same cards, the kernel and the env give the same results."""
    rng = np.random.default_rng(1000 + case)
    rules = random_rules(rng, penetrations=(0.0, 0.5, 0.9))
    table = random_table(rng)
    words = chunk_words(case, 1)[0]
    rounds = 400
    out = run_chunk(rules.to_array(), [Policy.from_table(table)], words, Table(), rounds)
    total, total_sq, wins = env_statistics(rules, table, words, rounds)
    assert out[OUT_STATS + ST_SUM] == pytest.approx(total, abs=1e-9)
    assert out[OUT_STATS + ST_SUMSQ] == pytest.approx(total_sq, abs=1e-9)
    assert out[OUT_STATS + ST_WIN] == wins


def test_chunks_are_fixed_by_rounds_alone() -> None:
    assert chunk_sizes(2 * CHUNK_ROUNDS + 5) == [CHUNK_ROUNDS, CHUNK_ROUNDS, 5]
    assert chunk_sizes(7) == [7]
    first = chunk_words(9, 3)
    again = chunk_words(9, 3)
    assert all((a == b).all() for a, b in zip(first, again, strict=True))
    assert not (first[0] == first[1]).all()


def test_same_seed_same_result_on_one_or_two_workers() -> None:
    rules = Rules(decks=2, penetration=0.75)
    policy = Policy.from_table(solve(rules).table)
    rounds = CHUNK_ROUNDS + 300_000  # two chunks
    one = simulate(rules, policy, rounds, seed=5, workers=1, baseline=Policy.random())
    two = simulate(rules, policy, rounds, seed=5, workers=2, baseline=Policy.random())
    np.testing.assert_array_equal(one.result.totals, two.result.totals)
    other_seed = simulate(rules, policy, rounds, seed=6, workers=2)
    assert other_seed.result.ev() != one.result.ev()


def one_deviation(table: StrategyTable, section: str, key: str, up: int, action: int) -> StrategyTable:
    actions = table.actions.copy()
    row = row_of_label(section, key)
    order = [action] + [a for a in actions[row, up - 1] if a != action]
    actions[row, up - 1] = order
    return StrategyTable(actions, table.insurance.copy(), name="basic with one deviation")


@pytest.mark.parametrize("rules", [Rules(), Rules(decks=0, hit_soft_17=False)], ids=["6 decks", "infinite deck"])
def test_paired_difference_is_far_tighter_than_either_ev(rules: Rules) -> None:
    basic = solve(rules).table
    deviant = one_deviation(basic, "hard", "16", 10, E.STAND)
    run = simulate(rules, Policy.from_table(deviant), 1_000_000, seed=3, baseline=Policy.from_table(basic))
    diff, diff_stderr, paired = run.result.diff()
    assert paired == run.result.rounds
    assert run.result.stderr() / diff_stderr > 5
    exact_gap = solve(rules).evaluate(deviant).ev - solve(rules).ev
    assert abs(diff - exact_gap) < 4.5 * diff_stderr  # a false alarm once in ~150,000 runs


AGREEMENT_RULES = {
    "6D H17 DAS LS": Rules(),
    "6D S17": Rules(hit_soft_17=False),
    "1 deck": Rules(decks=1, split_to=4),
    "infinite deck": Rules(decks=0),
    "no hole card": Rules(peek=False, obo=False, surrender="none"),
}


@pytest.mark.parametrize("name", AGREEMENT_RULES)
def test_simulated_basic_strategy_agrees_with_the_exact_analysis(name: str) -> None:
    """Basic strategy simulated off a fresh shoe each round matches the exact EV (the README's
    benchmarks/agreement.py runs 1e8 rounds; here a few million keep CI short).

    Tolerance: 4.5 standard errors (a false alarm once in ~150,000 runs). A round's result has a
    standard deviation of ~1.15, so 3M rounds resolve only ~0.3 percentage points of absolute EV; the
    finer checks are paired (test_each_action_is_worth_in_the_engine_what_the_solver_says, 0.05 points)
    and exact (the expected reward of standing equals the solver's stand EV, test_expected_reward.py)."""
    rules = AGREEMENT_RULES[name]
    solution = solve(rules)
    run = simulate(rules, Policy.from_table(solution.table), 3_000_000, seed=11)
    assert abs(run.result.ev() - solution.ev) < 4.5 * run.result.stderr()


def _without(table: StrategyTable, action: int) -> StrategyTable:
    """The table with ``action`` moved last in every cell's order: never played where another is legal."""
    actions = np.array([[[a for a in order if a != action] + [action] for order in row] for row in table.actions])
    return StrategyTable(actions, table.insurance.copy(), name=f"basic without action {action}")


def _insuring(table: StrategyTable) -> StrategyTable:
    return StrategyTable(table.actions.copy(), np.array([True, True]), name="basic, insuring")


ACTION_VALUE_RULES = {"6D H17 DAS LS": Rules(), "1 deck ES no hole card": Rules(decks=1, peek=False, surrender="early")}
#: (rules, change, rounds): enough rounds for a standard error of at most 1.15e-4 each (measured at 3M
#: rounds: 1.1e-4 surrender and insurance, 2.1e-4 split, 2.5e-4 double; it falls as 1/sqrt(rounds)).
ACTION_VALUE_CASES = [
    ("6D H17 DAS LS", "surrender", 3_000_000),
    ("6D H17 DAS LS", "insurance", 3_000_000),
    ("6D H17 DAS LS", "split", 13_000_000),
    ("6D H17 DAS LS", "double", 16_000_000),
    ("1 deck ES no hole card", "surrender", 4_000_000),
    ("1 deck ES no hole card", "insurance", 3_000_000),
]


@pytest.mark.parametrize(("name", "change", "rounds"), ACTION_VALUE_CASES, ids=lambda v: str(v))
def test_each_action_is_worth_in_the_engine_what_the_solver_says(name: str, change: str, rounds: int) -> None:
    """Basic strategy paired with itself without one action (or always insuring) on identical cards:
    the simulated mean difference is the engine's value of that action, the solver's exact
    ``evaluate`` difference its analysis'. Only rounds in which the two play differently add
    variance, so a few million rounds resolve the difference to a standard error of 1.15e-4 at most:
    a bias of 0.05 percentage points in how either prices surrender, splits, doubles or insurance is
    outside 4.5 standard errors (the tolerance: a false alarm once in ~150,000 runs). The no-hole-card
    game's early surrender and its insurance (settled after the dealer plays) are priced apart."""
    rules = ACTION_VALUE_RULES[name]
    solution = solve(rules)
    other = {
        "surrender": lambda t: _without(t, E.SURRENDER),
        "double": lambda t: _without(t, E.DOUBLE),
        "split": lambda t: _without(t, E.SPLIT),
        "insurance": _insuring,
    }[change](solution.table)
    run = simulate(rules, Policy.from_table(other), rounds, seed=17, baseline=Policy.from_table(solution.table))
    diff, stderr, _ = run.result.diff()
    exact = solution.evaluate(other).ev - solution.ev
    assert exact < -5e-4  # each is worth more than the bias to detect: the check has something to get right
    assert stderr < 1.15e-4
    assert abs(diff - exact) < 4.5 * stderr, f"engine {diff:.6f} +- {stderr:.6f}, solver {exact:.6f}"


def test_outcome_rates_are_consistent() -> None:
    run = simulate(Rules(), Policy.from_table(solve(Rules()).table), 200_000, seed=1)
    rates = run.result.rates()
    assert rates["win"] + rates["push"] + rates["loss"] == pytest.approx(1.0)
    # a natural off a fresh 6-deck shoe: exactly 2 (24/312) (96/311) = 4.749%; the rate is a binomial
    # share, so 4.5 of its standard errors (4.75e-4 at 200k rounds) bound a correct engine's miss
    natural = 2 * (24 / 312) * (96 / 311)
    assert abs(rates["blackjack"] - natural) < 4.5 * np.sqrt(natural * (1 - natural) / run.result.rounds)
    assert rates["insurance"] == 0.0  # basic strategy never insures
    assert 0 < rates["surrender"] < rates["double"]
    assert len(run.result.totals) == out_size(1)


KERNEL_RULES = [Rules(penetration=0.75), Rules(decks=2, peek=False, surrender="early", penetration=0.9)]


@pytest.mark.parametrize("rules", KERNEL_RULES)
def test_the_counting_kernel_plays_tables_and_random_play_exactly_as_the_table_kernel(
    rules: Rules, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One kernel source is compiled twice (counting pruned out of ``simulate_chunk``); with no
    counting strategy seated both must give every statistic bit for bit, paired runs and other
    seats included."""
    import blackjack_env.simulate as simulate_module

    basic = Policy.from_table(solve(rules).table)
    policies, table = [basic, Policy.random()], Table(3, 1, basic)
    words = chunk_words(7, 1, len(policies))[0]
    table_kernel = run_chunk(rules.to_array(), policies, words, table, 20_000)
    monkeypatch.setattr(simulate_module, "simulate_chunk", simulate_module.simulate_counting_chunk)
    counting_kernel = run_chunk(rules.to_array(), policies, words, table, 20_000)
    np.testing.assert_array_equal(table_kernel, counting_kernel)
