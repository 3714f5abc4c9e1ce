"""Counting systems: the published tags, counts, and the correlations that follow from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blackjack_env.counting import SYSTEMS, VALUES, CountingSystem, system, weighted_correlation

DATA = json.loads((Path(__file__).parent / "data" / "counting_systems.json").read_text())


@pytest.mark.parametrize("name", list(DATA["systems"]))
def test_built_in_tags_are_the_published_ones(name: str) -> None:
    published = DATA["systems"][name]
    assert SYSTEMS[name] == CountingSystem.from_mapping(name, published["tags"], published["balanced"])


@pytest.mark.parametrize("name", list(DATA["systems"]))
def test_insurance_correlation_matches_the_published_ic(name: str) -> None:
    assert SYSTEMS[name].insurance_correlation() == pytest.approx(DATA["systems"][name]["ic"], abs=0.006)


@pytest.mark.parametrize("name", list(DATA["systems"]))
def test_betting_correlation_from_published_effects_of_removal(name: str) -> None:
    """BC from the Wizard of Odds six-deck S17 effects of removal. The published BCs come from an
    unstated game, so the tolerance is 0.025 (the largest gap, KO's, is 0.019)."""
    eor = [DATA["eor_six_decks_s17"]["eor"][v] for v in VALUES]
    assert SYSTEMS[name].correlation(eor) == pytest.approx(DATA["systems"][name]["bc"], abs=0.025)


def test_insurance_tags_correlate_perfectly_with_themselves_and_hilo_ranks_below_hiopt2() -> None:
    ins = DATA["insurance_tags"]["tags"]
    assert weighted_correlation([ins[v] for v in VALUES], [ins[v] for v in VALUES]) == pytest.approx(1.0)
    assert system("hiopt2").insurance_correlation() > system("hilo").insurance_correlation()


@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_ko_starts_at_its_published_initial_running_count(decks: int) -> None:
    expected = DATA["ko_initial_running_count"][str(decks)]
    assert system("ko").initial_running_count(decks) == expected
    full_shoe = [4 * decks] * 9 + [16 * decks]
    assert system("ko").running_count(full_shoe, decks) == 4  # the pivot: +4 once every card is seen


def test_true_count_is_the_running_count_per_unseen_deck_unrounded() -> None:
    hilo = system("hilo")
    seen = [0, 3, 2, 1, 0, 0, 0, 0, 0, 1]  # three 2s, two 3s, a 4 and a ten: running count +5
    assert hilo.running_count(seen, 6) == 5
    assert hilo.true_count(seen, 6) == pytest.approx(5 * 52 / (312 - 7))
    assert system("ko").true_count(seen, 6) == -20 + 5  # unbalanced: the running count itself


def test_bad_systems_are_named() -> None:
    with pytest.raises(ValueError, match="unknown counting system 'nope'; built in: hilo"):
        system("nope")
    with pytest.raises(ValueError, match="declared balanced but its tags sum to 4"):
        CountingSystem("lopsided", (-1, 1, 1, 1, 1, 1, 1, 0, 0, -1), balanced=True)
    with pytest.raises(ValueError, match="lack the values A, 3, 4"):
        CountingSystem.from_mapping("short", {"2": 1}, balanced=True)


def test_the_engines_hilo_tags_are_the_systems() -> None:
    """The observation's count (engine.HILO_TAGS, per card code) is Hi-Lo's, value by value."""
    from blackjack_env.engine import HILO_TAGS

    assert tuple(HILO_TAGS[min(code, 10)] for code in range(1, 11)) == SYSTEMS["hilo"].tags
    assert all(HILO_TAGS[code] == HILO_TAGS[10] for code in range(11, 14))
