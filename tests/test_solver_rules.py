"""The exact analysis offers each hand the actions the engine offers it.

The solver's backward pass decides a cell from the actions legal there (``_kernels.cell_legal``, read
by ``Model.legal2`` / ``Model.legal_split``): double and surrender through the engine's own predicates,
but which hands may double after a split, surrender only as a first decision and splitting only a
splittable pair are the solver's reading of the rules. Over random rules these tests hold that
reading to the env's action mask on dealt hands, so the analysis never prices a play the game
refuses (or misses one it allows).
"""

from __future__ import annotations

from hypothesis import given, settings
from rule_sets import rules_strategy

from blackjack_env import Action, BlackjackEnv, Phase, Rules
from blackjack_env.solver._analysis import Model
from blackjack_env.solver._space import hand_space

UPS = ["A", *(str(v) for v in range(2, 11))]
CHECKED = (Action.STAND, Action.HIT, Action.DOUBLE, Action.SPLIT, Action.SURRENDER)


def _value(label: str) -> int:
    return 1 if label == "A" else int(label)


def _total(cards: list[str]) -> int:
    """The best total of a hand (an ace counts 11 where that does not bust)."""
    hard = sum(_value(c) for c in cards)
    return hard + 10 if "A" in cards and hard + 10 <= 21 else hard


def _first_decision(env: BlackjackEnv, cards: list[str]) -> dict | None:
    """The info of the first playing decision on stacked cards, or None where the round ends first
    (a natural, a peeked dealer blackjack)."""
    _, info = env.reset(seed=0, options={"cards": cards})
    if env.phase == Phase.INSURANCE:
        _, _, _, _, info = env.step(Action.NO_INSURANCE)
    return info if env.phase == Phase.PLAY else None


@settings(max_examples=12, deadline=None)
@given(rules=rules_strategy(penetration=False))
def test_the_solver_s_first_decisions_are_the_engine_s(rules: Rules) -> None:
    """Every two-card hand (pairs included) against every up card: the legal set the solver
    decides with (Model.legal2, SPLIT where the pair may be split) is the env's mask."""
    model = Model(rules)
    sp = hand_space()
    env = BlackjackEnv(rules=rules, count_obs="none")
    checked = 0
    for a in range(1, 11):
        for b in range(a, 11):
            cards = ["A" if v == 1 else str(v) for v in (a, b)]
            h = sp.two_card[(a, b)]
            for up in UPS:
                info = _first_decision(env, [cards[0], up, cards[1], "5"])
                if info is None:
                    continue
                legal = model.legal2(_value(up), _total(cards), bool(model.split_frac[h] > 0))
                mask = info["action_mask"]
                assert [bool(mask[x]) for x in CHECKED] == [bool(legal[x]) for x in CHECKED], (rules, cards, up)
                checked += 1
    assert checked >= 400  # 55 hands x 10 up cards, less the rounds a natural or a peeked blackjack ends


@settings(max_examples=12, deadline=None)
@given(rules=rules_strategy(penetration=False))
def test_the_solver_s_split_hands_double_as_the_engine_s(rules: Rules) -> None:
    """After a split, the first hand's two-card decision: doubling as Model.legal_split says (DAS
    and the double_on totals), never surrender. Split aces that get one card are not decided."""
    model = Model(rules)
    env = BlackjackEnv(rules=rules, count_obs="none")
    checked = 0
    for pair in UPS:
        for second in ("2", "3", "6", "9"):  # 11-20 with a non-ace pair card, soft hands with aces
            if second == pair:
                continue
            hole = ["5"] if rules.peek else []  # no hole card: the next card is the split hand's
            info = _first_decision(env, [pair, "7", pair, *hole, second, "8", "3", "4", "5"])
            if info is None or not info["action_mask"][Action.SPLIT]:
                continue
            _, _, _, _, info = env.step(Action.SPLIT)
            if env.phase != Phase.PLAY:
                continue  # split aces stood on their one card
            legal = model.legal_split(_total([pair, second]))
            mask = info["action_mask"]
            for x in (Action.STAND, Action.HIT, Action.DOUBLE, Action.SURRENDER):
                assert bool(mask[x]) == bool(legal[x]), (rules, pair, second, x.name)
            checked += 1
    assert rules.split_to < 2 or checked >= 30
