"""The PettingZoo table (``blackjack_env.multiagent``): PettingZoo's own API and seed tests, the
simulator's cards seat for seat, the casino's turn order, rewards and bad input."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the multiagent extra (pip install 'blackjack-env[multiagent]')")

from gymnasium.utils import seeding
from pettingzoo.test import api_test, seed_test

from blackjack_env import Action, Rules
from blackjack_env import engine as E
from blackjack_env import simulate as S
from blackjack_env.multiagent import BlackjackTableEnv, env, raw_env
from blackjack_env.solver import solve

BET = E.N_ACTIONS  # the first bet id of a shoe game


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    """PettingZoo's checks warn that a Dict observation is not a Box (its card games' own)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


@pytest.mark.parametrize(
    "kwargs",
    [
        {"seats": 3},
        {"seats": 1, "rules": "european"},
        {"seats": 2, "game": "shoe", "bets": (0, 1, 2), "rules": {"decks": 1, "penetration": 0.5}},
        {"seats": 7, "game": "shoe", "count_obs": "composition", "reward": "expected"},
    ],
    ids=["round-3", "round-1-european", "shoe-2-sit-out", "shoe-7-composition"],
)
def test_pettingzoo_api_and_seed_tests_pass(kwargs: dict[str, Any]) -> None:
    api_test(env(**kwargs), num_cycles=300)
    seed_test(lambda: env(**kwargs), num_cycles=200)


def play_basic(table: BlackjackTableEnv, rounds: int, seed: int) -> list[list[dict[str, Any]]]:
    """Every seat plays the rules' basic strategy (bet 1) for ``rounds`` rounds; each round's
    per-seat infos from the step that settled it. Episodes follow each other unseeded."""
    basic = solve(table.rules).table
    settled: list[list[dict[str, Any]]] = []
    table.reset(seed=seed)
    while len(settled) < rounds:
        if not table.agents:
            table.reset()
        agent = table.agent_selection
        obs = table.observe(agent)
        if table.terminations[agent]:
            table.step(None)
            continue
        mask = obs["action_mask"].astype(bool)
        action = BET if mask[BET:].any() else basic.act(obs["observation"][: E.OBS_BASE], mask[:BET])
        table.step(action)
        if "round_result" in table.infos[agent]:
            settled.append([table.infos[a] for a in table.possible_agents])
            table.infos = {a: {} for a in table.agents}
    return settled


@pytest.mark.parametrize(
    ("seats", "game", "rules"),
    [
        (3, "shoe", Rules(decks=2, penetration=0.6)),
        (3, "round", Rules()),
        (4, "shoe", Rules(decks=1, penetration=0.7, peek=False, obo=False, surrender="none")),
        (2, "shoe", Rules(decks=6, penetration=0.8, surrender="early")),
    ],
    ids=["shoe-3", "round-3", "shoe-4-no-hole-card", "shoe-2-early-surrender"],
)
def test_basic_strategy_agents_get_what_the_simulators_table_gets(seats: int, game: str, rules: Rules) -> None:
    """Same seed, same cards: seat for seat, the table's basic-strategy agents win, push, lose,
    double, split and bust exactly where the simulator's table (its seat k) does."""
    rounds, seed = 400, 17
    bets = {"bets": (1,)} if game == "shoe" else {}
    settled = play_basic(raw_env(seats=seats, game=game, rules=rules, **bets), rounds, seed)
    entropy = int(seeding.np_random(seed)[0].integers(0, 2**63))  # what the table seeds its cards with
    words = E.seed_words(np.random.SeedSequence(entropy), 3)
    basic = S.Policy.from_table(solve(rules).table)
    for seat in range(seats):
        out = S.run_chunk(rules.to_array(), [basic], words, S.Table(seats, seat, basic), rounds)
        stats = out[S.OUT_STATS : S.OUT_STATS + S.N_STATS]
        results = [round_[seat]["round_result"] for round_ in settled[:rounds]]
        hands = [round_[seat]["hands"] for round_ in settled[:rounds]]
        assert stats[S.ST_SUM] == pytest.approx(sum(results), abs=1e-9)
        assert stats[S.ST_SUMSQ] == pytest.approx(sum(r * r for r in results), abs=1e-9)
        assert stats[S.ST_WIN] == sum(r > 0 for r in results)
        assert stats[S.ST_LOSS] == sum(r < 0 for r in results)
        assert stats[S.ST_SPLIT] == sum(len(h) > 1 for h in hands)
        assert stats[S.ST_DOUBLE] == sum(any(x["doubled"] for x in h) for h in hands)
        assert stats[S.ST_BUST] == sum(any(x["status"] == "bust" for x in h) for h in hands)


def test_turn_order_is_the_casinos_and_rewards_settle_every_seat() -> None:
    """Insurance asked of each seat in order, then each seat plays all its hands (a split) in
    order; every seat is paid on the settling step, in table-minimum units."""
    table = raw_env(seats=3, rules={"decks": 6})
    # seats 0-2: 8,8 / 10,6 / 10,9; dealer A up, 7 in the hole; then 3, K (the double) and 2 for seat 0
    table.reset(seed=0, options={"cards": ["8", "10", "10", "A", "8", "6", "9", "7", "3", "K", "2"]})
    order = []
    plan = {
        "seat_0": [Action.NO_INSURANCE, Action.SPLIT, Action.DOUBLE, Action.STAND],
        "seat_1": [Action.INSURANCE, Action.STAND],
        "seat_2": [Action.NO_INSURANCE, Action.STAND],
    }
    settled: dict[str, Any] = {}
    for agent in table.agent_iter():
        if table.terminations[agent]:
            table.step(None)
            continue
        order.append(agent)
        table.step(plan[agent].pop(0))
        if "round_result" in table.infos[agent]:
            settled, rewards = dict(table.infos), dict(table.rewards)
    assert order == ["seat_0", "seat_1", "seat_2", "seat_0", "seat_0", "seat_0", "seat_1", "seat_2"]
    assert not table.agents  # every agent stepped out after the round
    # dealer A,7 = soft 18 stands; seat 0: 8,3 doubled +K = 21 wins 2, 8,2 = 10 loses 1; seat 1:
    # 16 loses 1, its insurance 0.5; seat 2: 19 wins 1
    assert settled["seat_0"]["dealer"]["cards"] == ["A", "7"]
    assert [h["cards"] for h in settled["seat_0"]["hands"]] == [["8", "3", "K"], ["8", "2"]]
    assert rewards == {"seat_0": 1.0, "seat_1": -1.5, "seat_2": 1.0}
    assert [settled[a]["round_result"] for a in rewards] == [1.0, -1.5, 1.0]


def test_masks_are_zero_out_of_turn_and_bad_input_changes_nothing() -> None:
    table = raw_env(seats=2, game="shoe", bets=(0, 1))
    table.reset(seed=3)
    assert table.observe("seat_1")["action_mask"].sum() == 0
    assert table.observe("seat_0")["action_mask"][BET:].tolist() == [1, 1]
    before = table._st.copy()
    with pytest.raises(ValueError, match=r"illegal action 0 \(STAND\) for seat_0.*legal actions: 7 BET 0, 8 BET 1"):
        table.step(0)
    with pytest.raises(ValueError, match=r"illegal action 'x' for seat_0"):
        table.step("x")
    with pytest.raises(ValueError, match=r"unknown agent 'seat_2'; this table's agents are seat_0 \.\. seat_1"):
        table.observe("seat_2")
    with pytest.raises(ValueError, match=r"unknown agent 'dealer'"):
        table.action_space("dealer")
    np.testing.assert_array_equal(table._st, before)
    assert table.agent_selection == "seat_0"
    table.step(BET)  # seat 0 sits out: seat 1, the last to bet, may not (someone plays every round)
    assert table.observe("seat_1")["action_mask"][BET:].tolist() == [0, 1]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seats": 0}, r"seats must be a whole number of boxes 1\.\.7, got 0"),
        ({"seats": 8}, r"seats .* got 8"),
        ({"seats": True}, r"seats .* got True"),
        ({"game": "tournament"}, r"game must be 'round' .* or 'shoe' .* got 'tournament'"),
        ({"game": "shoe", "rules": {"penetration": 0}}, r"a shoe game needs a cut card.*penetration=0"),
        ({"bets": (1, 2)}, r"bets= applies to game='shoe'"),
        ({"game": "shoe", "bets": (2, 1)}, r"bets must be strictly increasing"),
        ({"count_obs": "hilo", "rules": {"decks": 0}}, r"count_obs='hilo' needs a finite shoe"),
        ({"render_mode": "video"}, r"render_mode must be one of ansi, human, rgb_array"),
    ],
)
def test_bad_arguments_name_the_problem(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        raw_env(**kwargs)


def test_observation_holds_the_other_seats_cards_and_the_shoe() -> None:
    table = raw_env(seats=3, game="shoe", bets=(1, 2), rules={"decks": 2, "penetration": 0.75})
    table.reset(seed=1, options={"cards": ["2", "3", "4", "9", "5", "6", "K"]})
    for _ in range(3):
        table.step(BET + 1)
    names = table.observation_names_of("seat_1")
    obs = dict(zip(names, table.observe("seat_1")["observation"].tolist(), strict=True))
    # seats 0-2: 2,5 / 3,6 / 4,K against a 9 and the hole card: 8 of the 104 cards dealt
    assert obs["total"] == 9 and obs["dealer_up"] == 9 and obs["bet_level"] == 2
    assert obs["seat_0_2"] == 1 and obs["seat_0_5"] == 1 and obs["seat_2_4"] == 1 and obs["seat_2_10"] == 1
    assert sum(v for k, v in obs.items() if k.startswith("seat_")) == 4
    assert obs["shoe_dealt"] == 8 * 52 // 104
    assert names[: len(table.observation_names)] == table.observation_names
    assert isinstance(table.observe("seat_0")["observation"], np.ndarray)


EXAMPLES = Path(__file__).resolve().parents[1] / "benchmarks"


def run_script(path: Path, *args: str) -> str:
    result = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_the_independent_learners_example_learns_and_prints_each_seats_ev() -> None:
    """Each seat's TabularAgent learns from its own rounds at the table: after 20,000 rounds every
    seat's greedy table is priced well above the untrained one's (standing on everything first)."""
    from blackjack_env.agents import TabularAgent
    from blackjack_env.solver import solve

    out = run_script(EXAMPLES / "examples" / "table_learners.py", "--rounds", "20000", "--eval-rounds", "500")
    lines = out.splitlines()
    assert lines[0].startswith("basic strategy's exact EV for these rules: ")
    assert [line.split(":")[0] for line in lines[1:]] == ["seat_0", "seat_1", "seat_2"]
    assert all(
        "95% CI" in line and "500 rounds;" in line and "after 20000 rounds learned" in line for line in lines[1:]
    )
    untrained = solve("ultimatebet").evaluate(TabularAgent("ultimatebet").to_table()).ev
    exact = [float(re.search(r"its table's exact EV ([-+.\d]+)", line).group(1)) for line in lines[1:]]
    assert all(untrained + 0.025 < ev < solve("ultimatebet").ev for ev in exact), (untrained, exact)


def test_the_speed_benchmark_runs() -> None:
    out = run_script(EXAMPLES / "multiagent_speed.py", "--seconds", "0.2")
    assert "blackjack table, 3 seats, round" in out and "steps/s" in out
