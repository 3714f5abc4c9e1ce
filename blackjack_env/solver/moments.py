"""A round's exact first and second moments under a table, on any shoe, for games without splits.

    from blackjack_env.solver.moments import round_moments
    ev, second = round_moments(Rules(decks=1, split_to=1), table, shoe=shoe)   # E[X], E[X^2]

The ceiling's perfect bettor needs the SD of a round's result, E[X^2] - E[X]^2 per shoe. Every part
of a round but a split carries its second moment through the same recursion as its EV: a hand's
stand value is a sum over the dealer's outcomes (squares: 1 for a win or a loss, 0 for a push), a
hit's and a double's are sums over the next card, a surrender's, a natural's and insurance's are
closed forms. A split round's is not: its result is the sum of its hands' results, whose square
has cross terms E[X_i X_j] between hands that face one dealer hand, and the solver's split model
prices each split hand against its own depleted shoe, never forming their joint distribution. So
this pass is exact for games without splits (``split_to=1``) and refuses the others; the ceiling uses
it to bound its own SD approximation on such a game (``benchmarks/ceiling_sd.py``). The model
follows the solver's conventions (``_kernels``): joint values with the dealer's blackjack settled per
deal; here only peek games with late or no surrender (a hole card checked before any play).
"""

from __future__ import annotations

import numpy as np

from .. import engine as E
from ..rules import Rules
from ..strategy import StrategyTable
from . import _kernels as K
from ._analysis import Model, _insurance_value, _insured_natural


def check_moment_rules(rules: Rules) -> None:
    """The games whose round second moment this module computes exactly (see the module)."""
    if rules.split_to >= 2:
        raise ValueError(
            "a split round's second moment needs the joint distribution of its hands, which the solver's "
            "split model does not form: use split_to=1"
        )
    if not rules.peek or rules.surrender == "early":
        raise ValueError("round moments are computed for peek games with late or no surrender only")


def _stand(total: np.ndarray, dist: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Joint first and second moments of standing on ``total`` against each hand's dealer outcomes."""
    dealer = 17 + np.arange(5)
    win = (dist[:, :5] * (total[:, None] > dealer)).sum(axis=1)
    lose = (dist[:, :5] * (total[:, None] < dealer)).sum(axis=1)
    return dist[:, K.O_BUST] - c * dist[:, K.O_BJ] + win - lose, dist[:, K.O_BUST] + c * dist[:, K.O_BJ] + win + lose


def _up_moments(model: Model, up: int, table: StrategyTable) -> tuple[float, float]:
    """Sum over the first two cards, weighted by their chance, of the round's E[X] and E[X^2] given ``up``."""
    sp = model.space
    col = up - 1
    removed = (model.base(up)[None, :] + sp.counts).astype(np.int64)
    left = model.shoe[None, :] - removed
    n_left = left.sum(axis=1)
    valid = (left >= 0).all(axis=1) & (n_left > 0)
    probs = np.where(valid[:, None], left / np.where(n_left > 0, n_left, 1.0)[:, None], 0.0)
    pbj = probs[:, 9] if up == 1 else probs[:, 0] if up == 10 else np.zeros(sp.size)
    dist = np.zeros((sp.size, K.N_OUT))
    K.dealer_rows(up, removed, valid, model.shoe, model.dealer, model.cache, dist)
    s1, s2 = _stand(sp.total, dist, K.bj_coef(model.rv))
    orders = table.actions[:, col]
    multi_hit = np.argmax(orders == E.HIT, axis=1) < np.argmax(orders == E.STAND, axis=1)
    plays = multi_hit[sp.row] & (sp.total < 21)
    v1, v2 = s1.copy(), s2.copy()
    h1, h2, d1, d2 = (np.zeros(sp.size) for _ in range(4))
    # the hole card completes a blackjack after the player busts drawing value v (``hole_bj_after``)
    hole = {1: left[:, 9:10] - (np.arange(10) == 9), 10: left[:, 0:1] - (np.arange(10) == 0)}.get(up)
    no_bj = 1.0 - (0.0 if hole is None else np.where(n_left[:, None] > 1, hole / np.maximum(n_left - 1, 1)[:, None], 0))
    no_bj = np.broadcast_to(no_bj, (sp.size, 10))
    for n in range(int(sp.n_cards.max()), 1, -1):  # a hit lands in a hand of one more card, valued already
        hands = np.flatnonzero((sp.n_cards == n) & valid)
        p, child, live = probs[hands], sp.child[hands], no_bj[hands]
        bust = child < 0
        safe = np.where(bust, 0, child)
        h1[hands] = (p * np.where(bust, -live, v1[safe])).sum(axis=1)
        h2[hands] = (p * np.where(bust, live, v2[safe])).sum(axis=1)
        d1[hands] = (p * np.where(bust, -2 * live, 2 * s1[safe])).sum(axis=1)
        d2[hands] = (p * np.where(bust, 4 * live, 4 * s2[safe])).sum(axis=1)
        v1[hands] = np.where(plays[hands], h1[hands], s1[hands])
        v2[hands] = np.where(plays[hands], h2[hands], s2[hands])
    rules = model.rules
    weights = model.deal_weights(up)
    insured = up == 1 and rules.insurance and bool(table.insurance[0])
    first, second = 0.0, 0.0
    for h in model.two:
        w, p = weights[h], pbj[h]
        if w == 0.0:
            continue
        if h == model.natural_id:
            if up == 1 and table.insurance[1] and (rules.even_money or rules.insurance):
                x1 = _insured_natural(rules, p)
                x2 = 1.0 if rules.even_money else p + (1 - p) * (rules.blackjack_pays - 0.5) ** 2
            else:
                x1, x2 = (1 - p) * rules.blackjack_pays, (1 - p) * rules.blackjack_pays**2
            first, second = first + w * x1, second + w * x2
            continue
        action = K.first_legal(orders[sp.row[h]], model.legal2(up, int(sp.total[h]), False))
        if action == E.SURRENDER:
            j1, j2 = -0.5 * (1 - p), 0.25 * (1 - p)
        else:
            j1, j2 = {E.STAND: (s1, s2), E.HIT: (h1, h2), E.DOUBLE: (d1, d2)}[action]
            j1, j2 = j1[h], j2[h]
        if insured:  # half a unit on the dealer's blackjack: with it the round nets 0, else X - 1/2
            x1, x2 = j1 - p + _insurance_value(p), j2 - j1 + 0.25 * (1 - p)
        else:  # a dealer blackjack, found at the peek, takes the one unit bet
            x1, x2 = j1 - p, j2 + p
        first, second = first + w * x1, second + w * x2
    return first, second


def round_moments(
    rules: Rules, table: StrategyTable, *, shoe: np.ndarray | None = None, model: Model | None = None
) -> tuple[float, float]:
    """E[X] and E[X^2] of one round's result X (units of the initial bet) played by ``table`` on ``shoe``
    (cards per value, A first; default the full shoe) or on ``model``'s shoe (reusing its dealer memo).
    E[X] is the solver's EV of the table (a check on the pass); a ValueError for rules it does not cover
    (``check_moment_rules``)."""
    check_moment_rules(rules)
    if rules.infinite:
        raise ValueError("round moments need a finite shoe (decks >= 1)")
    model = model if model is not None else Model(rules, shoe)
    first = second = 0.0
    for up in range(1, 11):
        f, s = _up_moments(model, up, table)
        first += model.up_prob(up) * f
        second += model.up_prob(up) * s
    return float(first), float(second)
