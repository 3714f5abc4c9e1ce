"""Scenario tests on stacked cards: every rule sentence of the five rule texts and every Rules field.

Cards are stacked in deal order: player, dealer up card, player, dealer hole card (peek games only;
with ``peek=False`` the dealer's second card comes after the player acts), then every card in
the order play draws it; after a split each hand gets its second card when play reaches it.
Every scenario checks the legal actions before each step, each hand's result, the insurance
result and the round's reward (computed by hand in the comment), and that exactly the stacked
cards were dealt.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import D, H, I, N, P, R, S, legal, play_round, table_cards

import blackjack_env
from blackjack_env import Action, BlackjackEnv, Phase, Rules

PLAY = {S, H, D, R}  # a fresh two-card hand, not a pair, late surrender open
PAIR = {S, H, D, P, R}  # a fresh pair
SPLIT_HAND = {S, H, D}  # a two-card hand made by splitting (DAS, no surrender after a split)
DRAWN = {S, H}  # three cards or more
ASK = {I, N}  # the insurance / even-money question


def sc(
    name: str,
    cards: str,
    actions: list[Action],
    masks: list[set[Action]],
    results: list[float],
    reward: float,
    *,
    insurance: float = 0.0,
    rules: dict[str, Any] | None = None,
    dealer: str | None = None,
) -> Any:
    """One table row: ``cards`` and ``dealer`` are space-separated ranks."""
    return pytest.param(rules or {}, cards.split(), actions, masks, results, reward, insurance, dealer, id=name)


NO_HOLE = {"peek": False, "surrender": "none"}

SCENARIOS = [
    # ------------------------------------------------------------------ payouts (all five texts)
    # A,K vs 9,7: a natural pays 3:2 at once, the dealer draws nothing: +1.5
    sc("natural-pays-3:2", "A 9 K 7", [S], [{S}], [1.5], 1.5, dealer="9 7"),
    # same cards, blackjack_pays=1.2: +1.2
    sc("natural-pays-6:5", "A 9 K 7", [S], [{S}], [1.2], 1.2, rules={"blackjack_pays": 1.2}, dealer="9 7"),
    # ten-value cards of every rank make a natural (text 000: "K,Q,J,10")
    sc("natural-with-jack", "J 9 A 7", [S], [{S}], [1.5], 1.5),
    sc("natural-with-ten", "10 9 A 7", [S], [{S}], [1.5], 1.5),
    # 10,9 = 19 vs 9,8 = 17: won bets are paid even money: +1
    sc("win-pays-1:1", "10 9 9 8", [S], [PLAY], [1.0], 1.0),
    # 10,8 = 18 vs 10,8 = 18: push, 0
    sc("push", "10 10 8 8", [S], [PLAY], [0.0], 0.0),
    # 10,7 = 17 vs 10,8 = 18: -1
    sc("lose", "10 10 7 8", [S], [PLAY], [-1.0], -1.0),
    # 10,8 +3 = 21 (three cards, stands by itself) vs 9,7 +4 = 20: a 3-card 21 pays 1:1: +1
    sc("three-card-21-pays-1:1", "10 9 8 7 3 4", [H], [PLAY], [1.0], 1.0, dealer="9 7 4"),
    # 10,2 = 12 stands; dealer 6,10 = 16 hits 9 = 25, busts: every standing hand wins: +1
    sc("dealer-bust-player-wins", "10 6 2 10 9", [S], [PLAY], [1.0], 1.0, dealer="6 10 9"),
    # 10,6 hits K = 26: the player busts and loses at once; the dealer (6,10) draws nothing: -1
    sc("player-bust-loses-first", "10 6 6 10 K", [H], [PLAY], [-1.0], -1.0, dealer="6 10"),
    # A,5 = soft 16, hit 9: the ace drops to 1, 15 (text 000's A,4 +9 = 14 example); hit 4 = 19
    # vs 9,7 +2 = 18: +1
    sc("soft-hand-ace-becomes-one", "A 9 5 7 9 4 2", [H, H, S], [PLAY, DRAWN, DRAWN], [1.0], 1.0),
    # ------------------------------------------------------------------ blackjack against 21
    # A,K vs 10,5: the dealer never draws against a lone natural, so no 3-card 21 (10,5,6) of
    # his can tie it: +1.5 (text 002: "an Ace and a 10-value card will beat a 10, 5, 6 hand")
    sc("blackjack-beats-any-21", "A 10 K 5", [S], [{S}], [1.5], 1.5, dealer="10 5"),
    # no hole card: the dealer takes his second card (5) only; 10,5 = 15, natural +1.5
    sc("blackjack-beats-any-21-no-hole", "A 10 K 5", [S], [{S}], [1.5], 1.5, rules=NO_HOLE, dealer="10 5"),
    # both blackjack (dealer 10 up, ace in the hole, found by the peek): push, 0
    sc("both-blackjack-push", "A 10 K A", [S], [{S}], [0.0], 0.0),
    # both blackjack, no hole card (A,Q vs K then A): push, 0
    sc("both-blackjack-push-no-hole", "A K Q A", [S], [{S}], [0.0], 0.0, rules=NO_HOLE),
    # no hole card: 10,5 hits 6 = 21 (three cards) vs K then A = blackjack: the dealer's
    # blackjack beats a player 21 (text 004: "even if that hand's points amount to 21 (as a
    # result of the player getting more cards)"; with a peek the player never draws against a
    # dealer blackjack, so the sentence can only bite without one): -1
    sc("dealer-blackjack-beats-21", "10 K 5 6 A", [H], [SPLIT_HAND], [-1.0], -1.0, rules=NO_HOLE),
    # ------------------------------------------------------------------ peek
    # 10,7 vs K with an ace in the hole: the peek ends the round at once, only STAND: -1
    sc("peek-blackjack-under-ten", "10 K 7 A", [S], [{S}], [-1.0], -1.0, dealer="K A"),
    # 10,7 vs A with K in the hole, insured: hand -1, insurance +1 (2:1 on 0.5): 0
    sc("peek-blackjack-under-ace-insured", "10 A 7 K", [I, S], [ASK, {S}], [-1.0], 0.0, insurance=1.0),
    # same, insurance declined: -1
    sc("peek-blackjack-under-ace-declined", "10 A 7 K", [N, S], [ASK, {S}], [-1.0], -1.0),
    # 10,9 vs A,7 (soft 18, stands under H17) insured: insurance loses 0.5, play goes on,
    # 19 beats 18: +1 - 0.5 = +0.5
    sc("insurance-lost-play-goes-on", "10 A 9 7", [I, S], [ASK, PLAY], [1.0], 0.5, insurance=-0.5),
    # ------------------------------------------------------------------ insurance and even money
    # insurance=False: no question against an ace; 19 vs 18: +1
    sc("insurance-off", "10 A 9 7", [S], [PLAY], [1.0], 1.0, rules={"insurance": False}),
    # A,K vs A,K: even money taken pays +1 at once, whatever the hole card
    sc("even-money-vs-blackjack", "A A K K", [I], [ASK], [1.0], 1.0),
    sc("even-money-vs-no-blackjack", "A A K 7", [I], [ASK], [1.0], 1.0),
    # even money declined: dealer blackjack: push 0; no dealer blackjack: +1.5
    sc("even-money-declined-vs-blackjack", "A A K K", [N, S], [ASK, {S}], [0.0], 0.0),
    sc("even-money-declined-vs-no-blackjack", "A A K 7", [N, S], [ASK, {S}], [1.5], 1.5),
    # even_money=False, insurance=True: a natural may insure; dealer blackjack: push 0 + 1 = +1;
    # no dealer blackjack: 1.5 - 0.5 = +1 (the same as even money, settled later)
    sc(
        "insured-blackjack-vs-blackjack",
        "A A K K",
        [I, S],
        [ASK, {S}],
        [0.0],
        1.0,
        insurance=1.0,
        rules={"even_money": False},
    ),
    sc(
        "insured-blackjack-vs-no-blackjack",
        "A A K 7",
        [I, S],
        [ASK, {S}],
        [1.5],
        1.0,
        insurance=-0.5,
        rules={"even_money": False},
    ),
    # insurance=False, even_money=True: only a natural is asked (even money): +1
    sc("even-money-without-insurance", "A A K 7", [I], [ASK], [1.0], 1.0, rules={"insurance": False}),
    # insurance=False, even_money=False: nothing to ask; A,K vs A,7: +1.5
    sc(
        "no-question-at-all",
        "A A K 7",
        [S],
        [{S}],
        [1.5],
        1.5,
        rules={"insurance": False, "even_money": False},
    ),
    # ------------------------------------------------------------------ no hole card (text 001)
    # 10,8 = 18 vs 9, then 7 = 16, hits 2 = 18: push 0
    sc("no-hole-dealer-draws-after-player", "10 9 8 7 2", [S], [{S, H, D}], [0.0], 0.0, rules=NO_HOLE),
    # split 8s vs 10: 8,3 doubled to 20 (bet 2), 8,2 doubled to 20 (bet 2); dealer 10 then A:
    # OBO (original bet only): -1 (the split and the doubles come back)
    sc(
        "no-hole-obo",
        "8 10 8 3 9 2 K A",
        [P, D, D],
        [{S, H, D, P}, SPLIT_HAND, SPLIT_HAND],
        [-1.0, 0.0],
        -1.0,
        rules={**NO_HOLE, "obo": True},
    ),
    # same without OBO: the dealer's blackjack takes both doubled hands: -2 - 2 = -4
    sc(
        "no-hole-no-obo",
        "8 10 8 3 9 2 K A",
        [P, D, D],
        [{S, H, D, P}, SPLIT_HAND, SPLIT_HAND],
        [-2.0, -2.0],
        -4.0,
        rules={**NO_HOLE, "obo": False},
    ),
    # OBO with a busted double beside a live hand (ambiguous in practice: casinos take a busted
    # bet at once; the engine documents "a dealer blackjack takes only the original bet", so the
    # whole round costs 1): split 8s vs 10, 8,4 doubles and draws K = 22 (bust, bet 2); 8,9 = 17
    # stands; the dealer's second card A makes blackjack: OBO -1 in all; without OBO -2 -1 = -3
    sc(
        "no-hole-obo-busted-double-beside-live-hand",
        "8 10 8 4 K 9 A",
        [P, D, S],
        [{S, H, D, P}, SPLIT_HAND, SPLIT_HAND],
        [-1.0, 0.0],
        -1.0,
        rules={**NO_HOLE, "obo": True},
    ),
    sc(
        "no-hole-no-obo-busted-double-beside-live-hand",
        "8 10 8 4 K 9 A",
        [P, D, S],
        [{S, H, D, P}, SPLIT_HAND, SPLIT_HAND],
        [-2.0, -1.0],
        -3.0,
        rules={**NO_HOLE, "obo": False},
    ),
    # a lone busted double: every hand is bust, so the dealer never draws his second card and no
    # blackjack can refund anything: 8,4 doubles, draws K = 22: -2 (OBO or not)
    sc(
        "no-hole-obo-lone-busted-double",
        "8 10 4 K",
        [D],
        [{S, H, D}],
        [-2.0],
        -2.0,
        rules={**NO_HOLE, "obo": True},
        dealer="10",
    ),
    # split 10s vs K: 10,A = 21 (two cards after a split, not a blackjack), 10,9 = 19 stands;
    # dealer K then A = blackjack. Without OBO both hands lose: -2; with OBO: -1.
    sc(
        "no-hole-split-21-loses-to-blackjack",
        "10 K 10 A 9 A",
        [P, S],
        [{S, H, D, P}, SPLIT_HAND],
        [-1.0, -1.0],
        -2.0,
        rules={**NO_HOLE, "obo": False},
    ),
    sc(
        "no-hole-split-21-loses-to-blackjack-obo",
        "10 K 10 A 9 A",
        [P, S],
        [{S, H, D, P}, SPLIT_HAND],
        [-1.0, 0.0],
        -1.0,
        rules={**NO_HOLE, "obo": True},
    ),
    # no hole card, insured 10,9 vs A then K: hand -1, insurance +1: 0
    sc(
        "no-hole-insurance-wins",
        "10 A 9 K",
        [I, S],
        [ASK, {S, H, D}],
        [-1.0],
        0.0,
        insurance=1.0,
        rules=NO_HOLE,
    ),
    # no hole card, insured 10,9 vs A then 7 (soft 18, stands): +1 - 0.5 = +0.5
    sc(
        "no-hole-insurance-loses",
        "10 A 9 7",
        [I, S],
        [ASK, {S, H, D}],
        [1.0],
        0.5,
        insurance=-0.5,
        rules=NO_HOLE,
    ),
    # late surrender without a hole card: the dealer still draws his second card, and a dealer
    # blackjack takes the whole bet (-1); otherwise half the bet (-0.5)
    sc(
        "no-hole-late-surrender-vs-blackjack",
        "10 10 6 A",
        [R],
        [PLAY],
        [-1.0],
        -1.0,
        rules={"peek": False, "surrender": "late"},
    ),
    sc(
        "no-hole-late-surrender-vs-no-blackjack",
        "10 10 6 7",
        [R],
        [PLAY],
        [-0.5],
        -0.5,
        rules={"peek": False, "surrender": "late"},
    ),
    # early surrender without a hole card is kept whatever comes: -0.5, the dealer draws nothing
    sc(
        "no-hole-early-surrender",
        "10 10 6",
        [R],
        [PLAY],
        [-0.5],
        -0.5,
        rules={"peek": False, "surrender": "early"},
        dealer="10",
    ),
    # ------------------------------------------------------------------ surrender
    # late surrender (text 000): 10,6 vs 9 gives up half the bet: -0.5; the dealer draws nothing
    sc("late-surrender", "10 9 6 8", [R], [PLAY], [-0.5], -0.5, dealer="9 8"),
    # surrender only on the first two cards: 5,4 hits 3 = 12; no DOUBLE/SURRENDER now; 12 vs 17: -1
    sc("no-surrender-after-hit", "5 9 4 8 3", [H, S], [PLAY, DRAWN], [-1.0], -1.0),
    # surrender="none": 16 vs 17: -1
    sc("no-surrender-rule", "10 9 6 8", [S], [{S, H, D}], [-1.0], -1.0, rules={"surrender": "none"}),
    # early surrender vs a ten: decided before the peek, so it beats the blackjack: -0.5
    sc("early-surrender-vs-ten-blackjack", "10 10 6 A", [R], [PLAY], [-0.5], -0.5, rules={"surrender": "early"}),
    # early surrender vs a ten declined (HIT): the peek then finds the blackjack, the hit never
    # happens (cards stay 10,6): -1
    sc("early-surrender-declined-vs-blackjack", "10 10 6 A", [H], [PLAY], [-1.0], -1.0, rules={"surrender": "early"}),
    # early surrender vs an ace (after the insurance question): -0.5
    sc("early-surrender-vs-ace-blackjack", "10 A 6 K", [N, R], [ASK, PLAY], [-0.5], -0.5, rules={"surrender": "early"}),
    # insured, then early surrender vs A,K: insurance is a separate bet: -0.5 + 1 = +0.5
    sc(
        "early-surrender-insured-vs-ace-blackjack",
        "10 A 6 K",
        [I, R],
        [ASK, PLAY],
        [-0.5],
        0.5,
        insurance=1.0,
        rules={"surrender": "early"},
    ),
    # late surrender vs an ace: the peek comes first and ends the round: -1, no surrender
    sc("late-surrender-too-late-vs-ace-blackjack", "10 A 6 K", [N, S], [ASK, {S}], [-1.0], -1.0),
    # ------------------------------------------------------------------ splitting
    # K,Q split (equal value, text 002): K +9 = 19, Q +A = 21 (not a blackjack: 1:1); dealer
    # 9,8 = 17: +1 +1 = +2
    sc("split-unlike-tens", "K 9 Q 8 9 A", [P, S], [PAIR, SPLIT_HAND], [1.0, 1.0], 2.0),
    # 10,10 split vs 9,7: 10 +A = 21 stands by itself (no decision), 10 +9 = 19; dealer 16 +2 = 18:
    # 21 after a split pays 1:1: +1 +1 = +2
    sc("split-21-is-not-blackjack", "10 9 10 7 A 9 2", [P, S], [PAIR, SPLIT_HAND], [1.0, 1.0], 2.0),
    # same split, dealer 16 +5 = 21 (three cards): the split 21 only pushes, 19 loses: 0 - 1 = -1
    sc("split-21-pushes-dealer-21", "10 9 10 7 A 9 5", [P, S], [PAIR, SPLIT_HAND], [0.0, -1.0], -1.0),
    # split aces get one card each, no decision (text 000/001/002/003): A +5 = soft 16,
    # A +K = 21 (1:1, not a blackjack); dealer 9,7 +2 = 18: -1 +1 = 0; the SPLIT ends the round
    sc("split-aces-one-card", "A 9 A 7 5 K 2", [P], [PAIR], [-1.0, 1.0], 0.0),
    # split aces both making 21: +1 +1 = +2, not 2 x 1.5
    sc("split-aces-21s-pay-1:1", "A 9 A 7 K Q 2", [P], [PAIR], [1.0, 1.0], 2.0),
    # resplit_aces=False: A gets another A = soft 12, no resplit and no decision; A +K = 21;
    # dealer 18: -1 +1 = 0
    sc("split-aces-no-resplit", "A 9 A 7 A K 2", [P], [PAIR], [-1.0, 1.0], 0.0),
    # resplit_aces=True: A +A is split again (only STAND or SPLIT: no hit, no double);
    # A +9 = 20, A +8 = 19, A +K = 21 vs 18: +3
    sc(
        "split-aces-resplit",
        "A 9 A 7 A 9 8 K 2",
        [P, P],
        [PAIR, {S, P}],
        [1.0, 1.0, 1.0],
        3.0,
        rules={"resplit_aces": True},
    ),
    # resplit_aces=True but split_to=2: no room, A,A = soft 12 stands: -1 +1 = 0
    sc(
        "split-aces-resplit-at-limit",
        "A 9 A 7 A K 2",
        [P],
        [PAIR],
        [-1.0, 1.0],
        0.0,
        rules={"resplit_aces": True, "split_to": 2},
    ),
    # hit_split_aces=True: A +5 = soft 16 gets a decision (double too, DAS), hits 2 = soft 18,
    # stands; A +K = 21; dealer 18: 0 +1 = +1
    sc(
        "hit-split-aces",
        "A 9 A 7 5 2 K 2",
        [P, H, S],
        [PAIR, SPLIT_HAND, DRAWN],
        [0.0, 1.0],
        1.0,
        rules={"hit_split_aces": True},
    ),
    # a split hand that busts ends and play moves on: 8 +5 = 13 hits K = 23 (-1); 8 +10 = 18
    # stands; dealer 9,7 +10 busts: -1 +1 = 0
    sc(
        "split-hand-busts-next-hand-plays",
        "8 9 8 7 5 K 10 10",
        [P, H, S],
        [PAIR, SPLIT_HAND, SPLIT_HAND],
        [-1.0, 1.0],
        0,
    ),
    # ------------------------------------------------------------------ doubling
    # DAS (text 000/003): 8,8 split vs 6,10; 8 +3 = 11 doubles, draws 10 = 21 (bet 2); 8 +2 = 10
    # doubles, draws 9 = 19 (bet 2); dealer 16 +9 busts: +2 +2 = +4
    sc("double-after-split", "8 6 8 10 3 10 2 9 9", [P, D, D], [PAIR, SPLIT_HAND, SPLIT_HAND], [2.0, 2.0], 4.0),
    # no DAS: same cards, hit instead: 8,3 +10 = 21 stands by itself, 8,2 +9 = 19: +1 +1 = +2
    sc(
        "no-double-after-split",
        "8 6 8 10 3 10 2 9 9",
        [P, H, H, S],
        [PAIR, DRAWN, DRAWN, DRAWN],
        [1.0, 1.0],
        2.0,
        rules={"double_after_split": False},
    ),
    # double: one card only, even on 13: 5,6 +2 = 13; dealer 9,7 +10 busts: +2
    sc("double-one-card", "5 9 6 7 2 10", [D], [PLAY], [2.0], 2.0),
    # double 11 +5 = 16 vs 10,8 = 18: -2
    sc("double-lose", "5 10 6 8 5", [D], [PLAY], [-2.0], -2.0),
    # double 6,6 draws K = 22: bust, -2; the dealer (9,7) draws nothing
    sc("double-bust", "6 9 6 7 K", [D], [PAIR], [-2.0], -2.0, dealer="9 7"),
    # ------------------------------------------------------------------ auto-stand at 21
    # 5,6 hits 10 = 21: the hand ends without a STAND; dealer 9,7 +10 busts: +1
    sc("hit-to-21-ends-hand", "5 9 6 7 10 10", [H], [PLAY], [1.0], 1.0),
    # soft 21 by a hit: A,5 +5 = 21 ends; dealer 9,7 +2 = 18: +1
    sc("soft-21-by-hit-ends-hand", "A 9 5 7 5 2", [H], [PLAY], [1.0], 1.0),
]


@pytest.mark.parametrize(("rules", "cards", "actions", "masks", "results", "reward", "insurance", "dealer"), SCENARIOS)
def test_scenario(
    rules: dict[str, Any],
    cards: list[str],
    actions: list[Action],
    masks: list[set[Action]],
    results: list[float],
    reward: float,
    insurance: float,
    dealer: str | None,
) -> None:
    played = play_round(Rules().replace(**rules), cards, actions)
    assert played.masks == [frozenset(m) for m in masks]
    assert played.results == pytest.approx(results)
    assert played.info["insurance"] == pytest.approx(insurance)
    assert played.reward == pytest.approx(reward)
    if dealer is not None:
        assert played.dealer_cards == dealer.split()


def test_scenario_table_covers_every_rules_field() -> None:
    """Every field is set to a non-default value by some scenario in this module or below."""
    touched: set[str] = set()
    for param in SCENARIOS:
        touched |= set(param.values[0])
    # covered by the dedicated tests further down
    touched |= {"decks", "hit_soft_17", "double_on", "split_by_value", "surrender_vs_ace_ten", "penetration"}
    touched |= {"split_to"}
    assert touched == set(Rules().to_dict())


# --------------------------------------------------------------------------- deal order


def test_deal_order_with_hole_card() -> None:
    """Player, dealer up card, player, hole card. Text 000 deals the dealer's first card
    face down and the second face up; the env follows the common order (the dealer's first card is the up
    card), which only changes which stacked position is visible, not any payout."""
    env = BlackjackEnv()
    env.reset(seed=1, options={"cards": ["2", "3", "4", "5"]})
    summary = env.round_summary()
    assert summary["hands"][0]["cards"] == ["2", "4"]
    assert summary["dealer"]["cards"] == ["3", "5"]
    assert sum(env.shoe_counts.values()) == 6 * 52 - 4


def test_no_hole_card_deals_three_cards() -> None:
    """Text 001: "each player receives two cards and the dealer receives one card"."""
    env = BlackjackEnv(rules=Rules.preset("face-up-no-hole-card"))
    env.reset(seed=1, options={"cards": ["2", "3", "4", "5"]})
    summary = env.round_summary()
    assert summary["hands"][0]["cards"] == ["2", "4"]
    assert summary["dealer"]["cards"] == ["3"]
    assert sum(env.shoe_counts.values()) == 6 * 52 - 3
    # the dealer's second card is the next card after the player acts
    env.step(S)
    assert env.round_summary()["dealer"]["cards"][:2] == ["3", "5"]


@pytest.mark.parametrize(
    ("cards", "seats", "dealer", "dealt"),
    [
        # a lone natural against a 9: settled when dealt, the dealer's second card never drawn
        ("A 9 Q K", 1, ["9"], 3),
        # against a 10 a dealer blackjack would push it: the second card (K) is drawn, no blackjack
        ("A 10 Q K", 1, ["10", "K"], 4),
        # two naturals against a 9 at a table of two: nothing depends on the dealer's cards
        ("A A 9 Q K", 2, ["9"], 5),
        # a natural and a live hand (10,8 stands) against a 9: the dealer plays out (9,K = 19)
        ("A 10 9 Q 8 K", 2, ["9", "K"], 6),
    ],
)
def test_no_hole_card_draws_the_second_card_only_when_a_result_depends_on_it(
    cards: str, seats: int, dealer: list[str], dealt: int
) -> None:
    """No-hole-card games draw the dealer's second card only for a live hand or for a
    result a dealer blackjack would change (here with 2 decks, no surrender, no OBO)."""
    rules = Rules(decks=2, peek=False, surrender="none", obo=False, penetration=0.6)
    env = BlackjackEnv(rules=rules, seats=seats, seat=0, others="basic")
    env.reset(seed=3, options={"cards": cards.split()})
    assert env.phase == Phase.SETTLE  # seat 0 (the agent) holds the natural: STAND settles
    _, reward, terminated, _, info = env.step(S)
    assert terminated
    assert reward == pytest.approx(1.5)
    assert info["dealer"]["cards"] == dealer
    assert sum(env.shoe_counts.values()) == 2 * 52 - dealt


def test_split_hands_get_their_second_card_when_play_reaches_them() -> None:
    """After a split the first hand is finished before the second gets its card (text 004
    says the dealer "deals one card to each" at the split, which only changes the order in which
    stacked cards arrive, not the odds: the env follows )."""
    env = BlackjackEnv()
    env.reset(seed=3, options={"cards": ["8", "9", "8", "7", "3", "5", "4"]})
    env.step(P)
    hands = env.round_summary()["hands"]
    assert [h["cards"] for h in hands] == [["8", "3"], ["8"]]
    assert [h["status"] for h in hands] == ["playing", "waiting"]
    env.step(H)  # 8,3 +5 = 16
    env.step(S)
    hands = env.round_summary()["hands"]
    assert [h["cards"] for h in hands] == [["8", "3", "5"], ["8", "4"]]


# --------------------------------------------------------------------------- split limits


@pytest.mark.parametrize("split_to", [1, 2, 3, 5, 8])
def test_split_to_limits_the_hands(split_to: int) -> None:
    """Keep dealing 8s to the first hand: SPLIT is legal until the player holds split_to hands.

    Cards: 8 vs 9, 8, hole 7; after each split the first hand draws another 8; once the limit is
    reached it keeps 8,8 (16) and stands; every other hand draws a 10 (18) and stands; dealer
    9,7 hits 10 and busts, so each of the split_to hands wins 1: reward = split_to.
    (text 000: "split up to 3 hands"; text 003: "split up to four times" = 5 hands.)"""
    cards = ["8", "9", "8", "7"] + ["8"] * (split_to - 1) + ["10"] * (split_to - 1) + ["10"]
    actions = [P] * (split_to - 1) + [S] * split_to
    expected_masks = [PAIR] + [{S, H, D, P}] * (split_to - 2) if split_to > 1 else []
    expected_masks += [{S, H, D, R}] if split_to == 1 else [SPLIT_HAND]
    expected_masks += [SPLIT_HAND] * (split_to - 1)
    played = play_round({"split_to": split_to}, cards, actions)
    assert played.masks == [frozenset(m) for m in expected_masks]
    assert len(played.info["hands"]) == split_to
    assert played.results == [1.0] * split_to
    assert played.reward == split_to


@pytest.mark.parametrize(
    ("pair", "split_by_value", "can_split"),
    [
        (("K", "Q"), True, True),
        (("K", "Q"), False, False),
        (("10", "J"), False, False),
        (("K", "K"), False, True),
        (("10", "10"), False, True),
        (("8", "8"), False, True),
    ],
)
def test_split_by_value(pair: tuple[str, str], split_by_value: bool, can_split: bool) -> None:
    """Text 002: "The two cards must be of the same point value (... a King and a Queen ...)".

    Split: each hand draws a 10 (18 or 20) vs 9,8 = 17: +2. No split: 16 or 20 vs 17."""
    rules = {"split_by_value": split_by_value}
    if can_split:
        played = play_round(rules, [pair[0], "9", pair[1], "8", "10", "10"], [P, S, S])
        assert played.masks[0] == PAIR
        assert len(played.masks) == 3 and all(S in m and H in m and D in m for m in played.masks[1:])
        assert played.results == [1.0, 1.0] and played.reward == 2.0
    else:
        played = play_round(rules, [pair[0], "9", pair[1], "8"], [S])
        assert played.masks == [PLAY]
        assert played.results == [1.0] and played.reward == 1.0
    assert played.observations[0][3] == ((8 if pair == ("8", "8") else 10) if can_split else 0)


# --------------------------------------------------------------------------- surrender restriction


@pytest.mark.parametrize("surrender", ["late", "early"])
@pytest.mark.parametrize(("up", "allowed"), [("A", False), ("10", False), ("K", False), ("J", False), ("9", True)])
def test_surrender_vs_ace_ten(surrender: str, up: str, allowed: bool) -> None:
    """Text 001: surrender "on any original two-card hand, except when the dealer has an Ace or a
    face card" (surrender_vs_ace_ten=False; the engine also counts the 10 as a face card).

    10,6 vs up card, hole 7 (A,7 soft 18; 10,7 or K,7 hard 17; 9,7 = 16). Surrender: -0.5;
    otherwise stand 16: loses to 17 and 18: -1."""
    rules = {"surrender": surrender, "surrender_vs_ace_ten": False}
    before = [N] if up == "A" else []
    action = R if allowed else S
    played = play_round(rules, ["10", up, "6", "7"], [*before, action])
    assert (R in played.masks[-1]) is allowed
    assert played.masks[-1] == ({S, H, D, R} if allowed else {S, H, D})
    assert played.reward == (-0.5 if allowed else -1.0)
    assert played.results == [played.reward]


# --------------------------------------------------------------------------- double restrictions


@pytest.mark.parametrize(
    ("double_on", "cards", "can_double"),
    [
        ("any", ("5", "3"), True),
        ("any", ("A", "8"), True),
        ("any", ("10", "2"), True),
        ("9-11", ("5", "4"), True),
        ("9-11", ("6", "4"), True),
        ("9-11", ("6", "5"), True),
        ("9-11", ("5", "3"), False),
        ("9-11", ("10", "2"), False),
        ("9-11", ("A", "8"), False),  # soft 19 (hard 9): soft hands never qualify
        ("9-11", ("A", "A"), False),  # soft 12 (hard 2)
        ("10-11", ("5", "4"), False),
        ("10-11", ("6", "4"), True),
        ("10-11", ("6", "5"), True),
        ("10-11", ("A", "9"), False),  # soft 20 (hard 10)
        ("10-11", ("A", "10"), False),  # a natural never doubles (text 002/003)
    ],
)
def test_double_on(double_on: str, cards: tuple[str, str], can_double: bool) -> None:
    """double_on restricts doubling by the two-card best total; soft hands never qualify.

    Dealer 10,8 = 18 stands; the player stands: 8, 9, 10, 11, 12 lose (-1), 19, 20 win (+1);
    a natural is paid +1.5 at once."""
    total = sum(min(10, int(c)) if c != "A" else 1 for c in cards)
    if "A" in cards and total + 10 <= 21:
        total += 10
    played = play_round({"double_on": double_on}, [cards[0], "10", cards[1], "8"], [S])
    if total == 21:
        assert played.masks == [{S}]
    else:
        expected = {S, H, R} | ({D} if can_double else set()) | ({P} if cards[0] == cards[1] else set())
        assert played.masks == [expected]
    assert played.observations[0][4] == int(can_double)
    expected_reward = 1.5 if total == 21 else (1.0 if total > 18 else -1.0)
    assert played.reward == expected_reward and played.results == [expected_reward]


@pytest.mark.parametrize(("double_on", "allowed"), [("any", True), ("9-11", False), ("10-11", False)])
def test_double_on_applies_after_split(double_on: str, allowed: bool) -> None:
    """9,9 split vs 10,8: 9 +3 = 12 (double only under "any"), stands; 9 +10 = 19 stands;
    dealer 18: -1 +1 = 0."""
    played = play_round({"double_on": double_on}, ["9", "10", "9", "8", "3", "10"], [P, S, S])
    assert (D in played.masks[1]) is allowed
    assert played.results == [-1.0, 1.0] and played.reward == 0.0


# --------------------------------------------------------------------------- dealer play


@pytest.mark.parametrize("h17", [True, False])
@pytest.mark.parametrize(
    ("dealer_cards_h17", "dealer_cards_s17"),
    [
        # 6,A = soft 17: H17 hits (3: 20), S17 stands (17)
        ("6 A 3", "6 A"),
        # 5,A = soft 16 hits A: A,5,A = soft 17 (text 000's example); H17 hits 2 = 19
        ("5 A A 2", "5 A A"),
        # 2,A hits 4: A,2,4 = soft 17 (text 000's example); H17 hits 10 = hard 17, stands
        ("2 A 4 10", "2 A 4"),
        # hard 17 stands under both rules
        ("10 7", "10 7"),
        # 10,6 hits 1 ace = hard 17: stands under both
        ("10 6 A", "10 6 A"),
        # soft 18 stands under both
        ("7 A", "7 A"),
        # 16 and under hits: 10,6 +2 = 18
        ("10 6 2", "10 6 2"),
    ],
)
def test_dealer_hits_soft_17(h17: bool, dealer_cards_h17: str, dealer_cards_s17: str) -> None:
    """Texts 000/001/003: the dealer hits soft 17 (H17); texts 002/004: stands on all 17s (S17).

    The player stands on 10,8 = 18: dealer 17 -> +1, 18 -> 0, 19/20 -> -1."""
    dealer = (dealer_cards_h17 if h17 else dealer_cards_s17).split()
    cards = ["10", dealer[0], "8", *dealer[1:]]
    played = play_round({"hit_soft_17": h17}, cards, [S])
    assert played.masks == [PLAY]
    assert played.dealer_cards == dealer
    dealer_total = played.info["dealer"]["total"]
    assert dealer_total >= 17
    assert played.reward == {17: 1.0, 18: 0.0, 19: -1.0, 20: -1.0}[dealer_total]
    assert played.results == [played.reward]


@pytest.mark.parametrize("preset", ["ultimatebet", "face-up-no-hole-card", "six-deck-h17-split-4x"])
def test_h17_presets_hit_soft_17(preset: str) -> None:
    # 10,8 vs 6,A (or 6 then A): H17 draws 3 = 20: -1
    cards = ["10", "6", "8", "A", "3"]
    played = play_round(preset, cards, [S])
    assert played.dealer_cards == ["6", "A", "3"] and played.reward == -1.0 and played.results == [-1.0]


@pytest.mark.parametrize("preset", ["online-s17", "hole-card-s17"])
def test_s17_presets_stand_on_soft_17(preset: str) -> None:
    # 10,8 vs 6,A = soft 17 stands: 18 beats 17: +1
    played = play_round(preset, ["10", "6", "8", "A"], [S])
    assert played.masks == [{S, H, D}]  # neither text offers surrender
    assert played.dealer_cards == ["6", "A"] and played.reward == 1.0 and played.results == [1.0]


# --------------------------------------------------------------------------- naturals are one step


def _dealer_final(hard: int, ace: bool, h17: bool, memo: dict[tuple[int, bool], dict[int, float]]) -> dict[int, float]:
    """Infinite-deck distribution of the dealer's final total (22 = bust) from a hard total."""
    key = (hard, ace)
    if key in memo:
        return memo[key]
    soft = ace and hard + 10 <= 21
    total = hard + 10 if soft else hard
    if total > 21:
        out = {22: 1.0}
    elif total > 17 or (total == 17 and not (h17 and soft)):
        out = {total: 1.0}
    else:
        out = {}
        for value in range(1, 11):
            p = (4 if value == 10 else 1) / 13
            for final, q in _dealer_final(hard + value, ace or value == 1, h17, memo).items():
                out[final] = out.get(final, 0.0) + p * q
    memo[key] = out
    return out


def _always_stand_ev(rules: Rules) -> float:
    """Exact EV per round of "stand on the first two cards, decline insurance" with an infinite
    deck and a peek: naturals pay blackjack_pays (push a dealer blackjack), a dealer blackjack
    beats everything else, otherwise the two-card total meets the dealer's final total."""
    p = {v: (4 if v == 10 else 1) / 13 for v in range(1, 11)}
    memo: dict[tuple[int, bool], dict[int, float]] = {}
    ev = 0.0
    for a in range(1, 11):
        for b in range(1, 11):
            player = a + b + (10 if 1 in (a, b) else 0)
            natural = {a, b} == {1, 10}
            for up in range(1, 11):
                for hole in range(1, 11):
                    prob = p[a] * p[b] * p[up] * p[hole]
                    dealer_bj = {up, hole} == {1, 10}
                    if natural:
                        ev += prob * (0.0 if dealer_bj else rules.blackjack_pays)
                    elif dealer_bj:
                        ev -= prob
                    else:
                        for final, q in _dealer_final(up + hole, 1 in (up, hole), rules.hit_soft_17, memo).items():
                            ev += (
                                prob
                                * q
                                * (1.0 if final == 22 or player > final else (0.0 if player == final else -1.0))
                            )
    return ev


def test_natural_round_is_one_step_with_only_stand() -> None:
    """A natural against a non-ace is one episode of one step: only STAND, reward 3:2 on it."""
    env = BlackjackEnv()
    obs, info = env.reset(seed=0, options={"cards": ["A", "9", "K", "7"]})
    assert legal(info["action_mask"]) == {S}
    assert obs[0] == Phase.SETTLE and obs[11] == 1
    _, reward, terminated, _, _ = env.step(S)
    assert terminated and reward == 1.5


@pytest.mark.parametrize("rules", [Rules(decks=0, hit_soft_17=False), Rules(decks=0, blackjack_pays=1.2)])
def test_mean_episode_reward_equals_ev(rules: Rules) -> None:
    """Naturals and peeked dealer blackjacks are episodes too, so the mean episode reward of a
    policy is its EV per round. Always-stand with an infinite deck: exact EV (about -0.16 for S17
    3:2) from the dealer's final-total distribution; 60,000 rounds give a standard error of about
    0.004; the check allows 4.5 of them (leaving naturals out would shift the mean by ~0.07)."""
    env = BlackjackEnv(rules=rules)
    env.reset(seed=2024)
    rounds = 60_000
    total = 0.0
    total_sq = 0.0
    for _ in range(rounds):
        _, info = env.reset()
        reward = 0.0
        terminated = False
        while not terminated:
            action = S if info["action_mask"][S] else N
            _, reward, terminated, _, info = env.step(action)
        total += reward
        total_sq += reward * reward
    mean = total / rounds
    stderr = math.sqrt((total_sq / rounds - mean * mean) / rounds)
    exact = _always_stand_ev(rules)
    assert -0.25 < exact < -0.1
    assert abs(mean - exact) < 4.5 * stderr, (mean, exact, stderr)


# --------------------------------------------------------------------------- shoe: penetration, decks


def _finish_round(env: BlackjackEnv, info: dict[str, Any]) -> dict[str, Any]:
    terminated = False
    while not terminated:
        action = S if info["action_mask"][S] else N
        _, _, terminated, _, info = env.step(action)
    return info


@pytest.mark.parametrize(("decks", "penetration"), [(1, 0.5), (2, 0.75), (1, 0.95), (1, 0.0), (6, 0.0)])
def test_penetration_cut_card(decks: int, penetration: float) -> None:
    """Cards dealt from the shoe since the last shuffle are exactly the cards of the rounds since
    then (cards conserved); the shoe is reshuffled before a round once the cut card (penetration
    x shoe) is reached, and before every round when penetration = 0. A round that runs the shoe
    dry (possible at 0.95 in one deck) reshuffles the cards off the table and plays on."""
    full = 52 * decks
    cut = int(penetration * full)
    env = BlackjackEnv(rules=Rules(decks=decks, penetration=penetration))
    _, info = env.reset(seed=7)
    discards = table_cards(_finish_round(env, info))
    reshuffles = mid_round = 0
    for _ in range(120):
        dealt_before = full - sum(env.shoe_counts.values())
        _, info = env.reset()
        table = table_cards(_finish_round(env, info))
        dealt = Counter({rank: 4 * decks - n for rank, n in env.shoe_counts.items()})
        if penetration == 0 or dealt_before >= cut:
            reshuffles += 1
            discards = Counter()
            dealt_before = 0
        if dealt_before + sum(table.values()) > full:
            mid_round += 1
            discards = Counter()
        assert +dealt == discards + table
        discards += table
    if penetration == 0:
        assert reshuffles == 120
    else:
        assert 3 <= reshuffles < 120
    assert (mid_round > 0) is (penetration == 0.95)


def test_infinite_deck_draws_every_rank_and_never_runs_out() -> None:
    env = BlackjackEnv(rules=Rules(decks=0))
    env.reset(seed=5)
    seen: Counter[str] = Counter()
    for _ in range(1500):
        _, info = env.reset()
        seen += table_cards(_finish_round(env, info))
    assert set(seen) == set(blackjack_env.cards.RANK_NAMES)
    tens = seen["10"] + seen["J"] + seen["Q"] + seen["K"]
    assert abs(tens / sum(seen.values()) - 4 / 13) < 0.03


def test_infinite_deck_allows_any_stack() -> None:
    """Seven 2s, more than a 1-deck shoe holds: 2,2 vs 2,2; the player hits three 2s (10)."""
    cards = ["2"] * 7
    env = BlackjackEnv(rules=Rules(decks=0))
    env.reset(seed=0, options={"cards": cards})
    for _ in range(3):
        env.step(H)
    summary = env.round_summary()
    assert summary["hands"][0]["cards"] == ["2"] * 5
    assert summary["dealer"]["cards"] == ["2", "2"]
    with pytest.raises(ValueError, match="7 x 2 but a 1-deck shoe holds only 4"):
        BlackjackEnv(rules=Rules(decks=1)).reset(seed=0, options={"cards": cards})


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"cards": ["A", "X"]}, "card 'X' is not a rank"),
        ({"cards": "AK"}, "list of ranks"),
        ({"cards": ["A"], "colour": 1}, "unknown reset option 'colour'"),
        ({"cards": ["2"] * 65}, "at most 64"),
    ],
)
def test_bad_stacked_cards(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        BlackjackEnv(rules=Rules(decks=8)).reset(seed=0, options=options)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("action", "name"), [(P, "SPLIT"), (I, "INSURANCE"), (N, "NO_INSURANCE"), (7, "not an action")]
)
def test_illegal_action_raises_and_leaves_the_round(action: int, name: str) -> None:
    env = BlackjackEnv(render_mode="ansi")
    env.reset(seed=0, options={"cards": ["10", "9", "7", "8", "3"]})
    before = (env.render(), env.action_masks().tolist(), env.round_summary(), env.shoe_counts, env.phase)
    with pytest.raises(ValueError) as caught:
        env.step(action)
    message = str(caught.value)
    assert f"illegal action {action}" in message and name in message
    assert "legal actions: 0 STAND, 1 HIT, 2 DOUBLE, 4 SURRENDER" in message
    assert (env.render(), env.action_masks().tolist(), env.round_summary(), env.shoe_counts, env.phase) == before
    # the round plays on as if nothing happened: 10,7 +3 = 20 vs 9,8 = 17: +1
    env.step(H)
    _, reward, terminated, _, _ = env.step(S)
    assert terminated and reward == 1.0


def test_illegal_action_in_the_insurance_question() -> None:
    env = BlackjackEnv()
    env.reset(seed=0, options={"cards": ["10", "A", "7", "7"]})
    with pytest.raises(ValueError, match=r"illegal action 0 \(STAND\).*5 INSURANCE, 6 NO_INSURANCE"):
        env.step(S)
    assert env.phase == Phase.INSURANCE


def test_stepping_a_finished_round_raises() -> None:
    env = BlackjackEnv()
    env.reset(seed=0, options={"cards": ["A", "9", "K", "7"]})
    env.step(S)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(S)
    with pytest.raises(RuntimeError, match="reset"):
        BlackjackEnv().step(S)


def test_bad_env_arguments() -> None:
    with pytest.raises(ValueError, match="count_obs"):
        BlackjackEnv(count_obs="cards")
    with pytest.raises(ValueError, match="needs a finite shoe"):
        BlackjackEnv(rules=Rules(decks=0), count_obs="hilo")
    with pytest.raises(ValueError, match="render_mode"):
        BlackjackEnv(render_mode="video")
    with pytest.raises(ValueError, match="unknown rules preset"):
        BlackjackEnv(rules="mars")


# --------------------------------------------------------------------------- seeds, make, render


def _play_seeded(env: BlackjackEnv, seed: int, rounds: int) -> list[Any]:
    """Rounds from one seed with a fixed policy (hit below 17, decline insurance)."""
    out = []
    _, info = env.reset(seed=seed)
    for i in range(rounds):
        if i:
            _, info = env.reset()
        terminated = False
        while not terminated:
            mask = info["action_mask"]
            action = N if mask[N] else (H if mask[H] and env.round_summary()["hands"][0]["total"] < 17 else S)
            _, reward, terminated, _, info = env.step(action)
        out.append((info["hands"], info["dealer"], reward))
    return out


def test_same_seed_same_rounds_in_fresh_envs() -> None:
    rules = Rules(decks=2, penetration=0.6)
    assert _play_seeded(BlackjackEnv(rules=rules), 42, 40) == _play_seeded(BlackjackEnv(rules=rules), 42, 40)
    assert _play_seeded(BlackjackEnv(rules=rules), 42, 40) != _play_seeded(BlackjackEnv(rules=rules), 43, 40)


@pytest.mark.parametrize("rules", ["ultimatebet", {"decks": 2, "hit_soft_17": False}, Rules(peek=False)])
def test_gymnasium_make(rules: Any) -> None:
    env = gym.make(blackjack_env.ENV_ID, rules=rules)
    assert env.unwrapped.rules == Rules.coerce(rules)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert info["action_mask"].shape == (7,) and info["action_mask"].dtype == np.bool_
    assert np.array_equal(env.unwrapped.action_masks(), info["action_mask"])
    assert np.array_equal(env.action_masks(), info["action_mask"])  # make returns the env itself
    env.close()


def test_gymnasium_make_returns_the_env_which_enforces_its_own_order() -> None:
    env = gym.make(blackjack_env.ENV_ID, render_mode="ansi")
    assert type(env) is BlackjackEnv
    assert env.spec is not None and env.spec.id == blackjack_env.ENV_ID
    with pytest.raises(RuntimeError, match="reset"):
        env.step(Action.STAND)
    with pytest.raises(RuntimeError, match="reset"):
        env.render()
    env.reset(seed=0)
    while True:
        *_, done, _, _ = env.step(env.action_space.sample())
        if done:
            break
    with pytest.raises(RuntimeError, match="reset"):
        env.step(Action.STAND)


def test_gymnasium_make_with_module_prefix() -> None:
    env = gym.make("blackjack_env:blackjack_env/Blackjack-v0")
    assert env.unwrapped.rules == Rules()
    env.close()


def test_render_ansi() -> None:
    env = BlackjackEnv(render_mode="ansi")
    env.reset(seed=0, options={"cards": ["10", "9", "7", "8", "3"]})
    text = env.render()
    assert isinstance(text, str)
    assert "Dealer: 9 ??" in text  # the hole card stays hidden
    assert "Hand 1: 10 7" in text and "bet 1" in text
    assert "Legal: STAND, HIT, DOUBLE, SURRENDER" in text
    env.step(H)
    env.step(S)
    text = env.render()
    assert "Dealer: 9 8  (17)" in text
    assert "result +1" in text and "Round result: +1" in text


def test_render_human_prints(capsys: pytest.CaptureFixture[str]) -> None:
    env = BlackjackEnv(render_mode="human")
    env.reset(seed=0, options={"cards": ["8", "9", "8", "7", "3", "10", "10"]})
    assert "Legal: STAND, HIT, DOUBLE, SPLIT, SURRENDER" in capsys.readouterr().out
    env.step(P)
    out = capsys.readouterr().out
    assert "-> Hand 1: 8 3" in out and "Hand 2: 8" in out
    assert env.render() is None
    assert "Hand 2" in capsys.readouterr().out


def test_render_without_mode_warns() -> None:
    env = BlackjackEnv()
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None


# --------------------------------------------------------------------------- observation


@pytest.mark.parametrize(
    ("rules", "cards", "actions", "expected"),
    [
        # A,6 = soft 17 vs 9: phase play, total 17, soft, no pair, double/surrender open, up 9
        ({}, "A 9 6 7", [], [1, 17, 1, 0, 1, 0, 1, 9, 1, 0, 0, 0]),
        # 8,8 vs K: pair 8, split open
        ({}, "8 K 8 7", [], [1, 16, 0, 8, 1, 1, 1, 10, 1, 0, 0, 0]),
        # insurance question: phase 0, nothing open, up ace
        ({}, "10 A 9 7", [], [0, 19, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0]),
        # natural vs ace: the even-money question, natural flag set
        ({}, "A A K 7", [], [0, 21, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1]),
        # split aces with hit_split_aces: the second hand (index 1) of two, split-ace flag
        ({"hit_split_aces": True}, "A 9 A 7 K 5", [P], [1, 16, 1, 0, 1, 0, 0, 9, 2, 1, 1, 0]),
        # after the round: phase 3, hand fields cleared, up card kept
        ({}, "10 9 9 8", [S], [3, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0]),
    ],
)
def test_observation_layout(rules: dict[str, Any], cards: str, actions: list[Action], expected: list[int]) -> None:
    env = BlackjackEnv(rules=Rules().replace(**rules))
    obs, _ = env.reset(seed=0, options={"cards": cards.split()})
    for action in actions:
        obs, *_ = env.step(action)
    assert obs.tolist() == expected
    assert env.observation_space.contains(obs)


# --------------------------------------------------------------------------- more deal-order details


def test_resplit_hands_are_appended_and_played_in_order() -> None:
    """K,Q split (split_by_value), K draws J and is split again: hands K, Q, J (the new hand goes
    after the last one); each then draws in that order: K+2, Q+3, J+4 (12, 13, 14) and stands.
    Dealer 9,7 hits 10 and busts: +1 x 3."""
    cards = ["K", "9", "Q", "7", "J", "2", "3", "4", "10"]
    played = play_round({}, cards, [P, P, S, S, S])
    assert played.hand_cards == [["K", "2"], ["Q", "3"], ["J", "4"]]
    assert played.masks == [PAIR, {S, H, D, P}, SPLIT_HAND, SPLIT_HAND, SPLIT_HAND]
    assert [obs[9] for obs in played.observations[2:]] == [0, 1, 2]  # hand_index
    assert [obs[8] for obs in played.observations] == [1, 2, 3, 3, 3]  # num_hands
    assert played.results == [1.0, 1.0, 1.0] and played.reward == 3.0


@pytest.mark.parametrize(("action", "reward"), [(P, -1.0), (D, -1.0), (S, -1.0), (R, -0.5)])
def test_early_surrender_peek_comes_after_the_first_choice(action: Action, reward: float) -> None:
    """Early surrender vs a ten with an ace in the hole: any choice but SURRENDER is never carried
    out (the hand keeps its two cards, bet 1): -1; SURRENDER: -0.5 (documented engine order)."""
    played = play_round({"surrender": "early"}, ["8", "10", "8", "A"], [action])
    assert played.masks == [PAIR]
    assert played.hand_cards == [["8", "8"]]
    assert played.info["hands"][0]["bet"] == 1.0
    assert played.reward == reward


def test_stacked_cards_missing_from_the_shoe_start_a_new_shoe() -> None:
    """1 deck dealt to a cut card at 90%: after a round with all four aces on the table, stacking
    another ace cannot come from this shoe, so the env starts a new one (cards still conserved)."""
    env = BlackjackEnv(rules=Rules(decks=1, penetration=0.9))
    env.reset(seed=0, options={"cards": ["A", "A", "A", "A"]})
    env.step(N)
    assert env.shoe_counts["A"] == 0
    while env.phase != Phase.OVER:
        env.step(S)
    env.reset(options={"cards": ["A", "5", "K", "6"]})
    assert env.round_summary()["hands"][0]["cards"] == ["A", "K"]
    assert sum(env.shoe_counts.values()) == 52 - 4
    assert env.shoe_counts["A"] == 3


@pytest.mark.parametrize("peek", [True, False])
def test_count_observations(peek: bool) -> None:
    """1 deck, 2,4 vs 3 (hole 5 in a peek game). Composition: unseen cards per value, the hole card
    counted as unseen. Hi-Lo: the seen 2, 3, 4 give running +3; unseen 49 cards:
    true count 3 * 52 / 49 = 3.18 -> 3, shifted by 10: 13."""
    cards = ["2", "3", "4", "5"] if peek else ["2", "3", "4"]
    rules = Rules(decks=1, peek=peek)
    obs, _ = BlackjackEnv(rules=rules, count_obs="composition").reset(seed=0, options={"cards": cards})
    assert obs[12:].tolist() == [4, 3, 3, 3, 4, 4, 4, 4, 4, 16]
    obs, _ = BlackjackEnv(rules=rules, count_obs="hilo").reset(seed=0, options={"cards": cards})
    assert obs[12:].tolist() == [13]
    obs, _ = BlackjackEnv(rules=rules, count_obs="none").reset(seed=0, options={"cards": cards})
    assert len(obs) == 12


@pytest.mark.parametrize(
    ("rules", "cards", "actions"),
    [
        ({}, "A 9 K 7", [S]),  # a natural settled at once
        ({}, "10 K 7 A", [S]),  # a dealer blackjack found by the peek
        ({}, "10 A 7 K", [I, S]),  # the same under an ace, insured
        ({"surrender": "early"}, "10 10 6 A", [H]),  # early surrender declined, then the peek
        ({"peek": False}, "A 10 K 5", [S]),  # a natural without a hole card
    ],
)
def test_settled_hands_are_not_playing(rules: dict[str, Any], cards: str, actions: list[Action]) -> None:
    """The final info describes a settled round: no hand may still read "playing" or "waiting"."""
    played = play_round(rules, cards.split(), actions)
    assert [h["status"] for h in played.info["hands"]] == ["stood"]


def test_unknown_reset_option_is_rejected_without_cards_too() -> None:
    """A misspelt option (``card`` for ``cards``) must not silently deal random cards."""
    env = BlackjackEnv()
    with pytest.raises(ValueError, match="unknown reset option 'card'"):
        env.reset(seed=0, options={"card": ["A", "K", "A", "K"]})


@pytest.mark.parametrize("action", [1.7, 0.5, "1"])
def test_non_integer_action_is_rejected(action: Any) -> None:
    """1.7 is not an action id of Discrete(7) (``action_space.contains`` says no); it must raise
    rather than be truncated to 1 (HIT)."""
    env = BlackjackEnv()
    env.reset(seed=0, options={"cards": ["10", "9", "7", "8"]})
    assert not env.action_space.contains(action)
    with pytest.raises((ValueError, TypeError)):
        env.step(action)
    assert env.round_summary()["hands"][0]["cards"] == ["10", "7"]


@pytest.mark.parametrize(
    ("decks", "same_rank"), [(1, 3 / 51), (2, 7 / 103), (0, 1 / 13)], ids=["1-deck", "2-decks", "infinite"]
)
def test_deal_is_a_uniform_shuffle(decks: int, same_rank: float) -> None:
    """Fresh shoe each round (penetration 0), 20,000 deals: the first card is uniform over the 13
    ranks (chi-square, 12 degrees of freedom, below 32.9 = the 0.1% point), and the second card
    repeats its rank with probability 3/51 in one deck, 7/103 in two, 1/13 from an infinite deck
    (sampling without replacement vs with it; 4.5 standard errors allowed)."""
    env = BlackjackEnv(rules=Rules(decks=decks))
    env.reset(seed=99)
    rounds = 20_000
    first: Counter[str] = Counter()
    same = 0
    for _ in range(rounds):
        env.reset()
        a, b = env.round_summary()["hands"][0]["cards"]
        first[a] += 1
        same += a == b
    expected = rounds / 13
    chi2 = sum((first[rank] - expected) ** 2 / expected for rank in blackjack_env.cards.RANK_NAMES)
    assert chi2 < 32.9, first
    stderr = math.sqrt(same_rank * (1 - same_rank) / rounds)
    assert abs(same / rounds - same_rank) < 4.5 * stderr


def test_render_insurance_question_through_gymnasium_make() -> None:
    env = gym.make(blackjack_env.ENV_ID, render_mode="ansi")
    env.reset(seed=0, options={"cards": ["10", "A", "9", "7"]})
    text = env.render()
    assert "Dealer: A ??" in text
    assert "Insurance: offered" in text
    assert "Legal: INSURANCE, NO_INSURANCE" in text
    env.step(I)
    assert "Insurance: taken" in env.render()
    env.close()
