"""The simulator at a table: a policy in any seat, the others playing basic strategy, shoes dealt to
a cut card, paired runs on identical shoes, and the published house edge with a cut card."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from blackjack_env import Rules
from blackjack_env import engine as E
from blackjack_env import simulate as S
from blackjack_env.evaluate.runner import simulate
from blackjack_env.simulate import Policy, Table
from blackjack_env.solver import solve

DATA = Path(__file__).parent / "data"


def basic(rules: Rules) -> Policy:
    return Policy.from_table(solve(rules).table)


def test_table_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match=r"seats must be a whole number of boxes 1\.\.7"):
        Table(8, 0)
    with pytest.raises(ValueError, match=r"seat must be a box 0\.\.2"):
        Table(3, 3)
    with pytest.raises(ValueError, match="other seats"):
        Table(2, 0)


@pytest.mark.parametrize("seat", [0, 3, 6])
def test_a_seat_at_a_full_table_has_the_single_players_ev_when_shuffled_every_round(seat: int) -> None:
    """With a fresh shuffle every round the other seats' cards are a random removal, so every seat's
    expectation is the lone player's: the exact EV lies in the simulated interval."""
    rules = Rules()
    run = simulate(rules, basic(rules), 2_000_000, seed=4, table=Table(7, seat, basic(rules)))
    assert run.result.rounds_played() == run.result.rounds == 2_000_000
    assert run.result.avg_bet() == 1.0
    assert run.result.ev_per_unit_bet() == pytest.approx(run.result.ev())
    assert abs(run.result.ev() - solve(rules).ev) < 4.5 * run.result.stderr()


@pytest.mark.parametrize(
    "rules",
    [
        Rules(penetration=0.75),
        Rules(surrender="early", decks=2, penetration=0.6),
        Rules(peek=False, obo=False, penetration=0.7),
        Rules(decks=0, surrender="early"),
    ],
)
def test_the_lone_seats_own_round_plays_what_a_tables_round_plays_with_one_seat(
    rules: Rules, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lone seat's round is compiled apart (``at_table`` None, the table's seat loops pruned); the
    table's round at a table of one seat deals and pays exactly the same (a table and random play,
    paired on the same cards)."""
    policies = [basic(rules), Policy.random(), basic(rules)]
    words = S.chunk_words(3, 1, len(policies))[0]
    lone = S.run_chunk(rules.to_array(), policies, words, Table(), 60_000)
    monkeypatch.setattr(E, "table_kind", lambda seats: E.TABLE)
    table = S.run_chunk(rules.to_array(), policies, words, Table(), 60_000)
    assert lone[S.OUT_ROUNDS] == 60_000
    np.testing.assert_array_equal(lone, table)


def test_paired_runs_at_a_table_share_their_shoes() -> None:
    """A policy and itself in the same seat of a 5-seat table, on identical shoes: identical results."""
    rules = Rules(penetration=0.75)
    run = simulate(rules, basic(rules), 300_000, seed=9, baseline=basic(rules), table=Table(5, 2, basic(rules)))
    diff, stderr, paired = run.result.diff()
    assert paired == run.result.rounds and diff == 0.0 and stderr == 0.0


def test_the_seat_changes_the_cards_but_not_the_expectation() -> None:
    rules = Rules(penetration=0.75)
    first = simulate(rules, basic(rules), 1_000_000, seed=2, table=Table(3, 0, basic(rules))).result
    last = simulate(rules, basic(rules), 1_000_000, seed=2, table=Table(3, 2, basic(rules))).result
    assert first.ev() != last.ev()
    assert abs(first.ev() - last.ev()) < 4.5 * (first.stderr() ** 2 + last.stderr() ** 2) ** 0.5


@pytest.mark.slow
def test_basic_strategy_with_a_cut_card_matches_the_published_house_edge() -> None:
    """6 decks H17 DAS LS, split to 4, cut card at 1.5 decks from the end: published 0.55-0.56%
    (tests/data/published_cut_card.json). 1e8 rounds: a 95% interval of about +-0.023 pp."""
    published = json.loads((DATA / "published_cut_card.json").read_text())
    rules = Rules.from_dict({**Rules().to_dict(), **published["rules"]})
    assert rules.penetration * 52 * rules.decks == 52 * 4.5  # the cut card 1.5 decks from the end
    run = simulate(rules, basic(rules), 100_000_000, seed=12)
    edge = -100 * run.result.ev()
    stderr = 100 * run.result.stderr()
    low, high = published["accepted_range_percent"]
    assert low - 4 * stderr < edge < high + 4 * stderr
    assert abs(edge - published["house_edge_percent"]["hoppe_simulation"]) < 4 * stderr
