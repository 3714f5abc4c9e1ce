"""The exact analysis of one rule set: optimise or evaluate a total-dependent strategy table.

Model (what is exact and what is approximated):

* Every unsplit hand is analysed with its exact composition: the up card and all the player's
  cards are out of the shoe; the dealer's hole card and hits come from what is left. Peek,
  no-hole-card, OBO and surrender rules are settled exactly (see ``_kernels``).
* Total-dependent strategy: one preference order per (row, up card). A row's order is chosen to
  maximise the round's EV, summing over every hand composition in the row weighted by how often
  the strategy reaches it (two-card first decisions and multi-card hands separately, since a
  double or surrender is only legal on the former). Rows are decided from high totals down, so a
  hit always lands in a decided row; the reach weights come from the previous pass, repeated
  until the table stops changing. Pair rows are chosen on the initial pair's own EVs.
* Split model: each split hand is played with the same table against the shoe minus the up card
  and every pair card seen so far (the original pair, resplit cards and pair cards drawn when no
  resplit is left); the other split hands' non-pair cards are not removed. Resplitting follows
  the pair row; optimising assumes a redrawn pair is resplit while allowed. For an infinite deck
  the split values are exact.
* Unlike ten-value cards without ``split_by_value``: an initial ten pair is splittable with the
  chance both are one rank; redrawn tens are never resplit (splitting tens is never basic
  strategy, so only that cell's reported split EV is affected).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import types
from numba.typed import Dict

from .. import engine as E
from ..rules import Rules
from ..strategy import N_PLAY, N_ROWS, N_UP, PAIR_BASE, StrategyTable
from . import _kernels as K
from ._space import HandSpace, dealer_space, hand_space

FLOOR = 1e-9  # weight given to unreachable hands so every row still gets defined EVs
MAX_PASSES = 8


def shoe_vector(rules: Rules) -> tuple[np.ndarray, bool]:
    """Cards per value (finite shoe) or each value's probability (infinite deck)."""
    if rules.infinite:
        return np.array([1.0] * 9 + [4.0]) / 13.0, True
    return np.array([4.0 * rules.decks] * 9 + [16.0 * rules.decks]), False


@dataclass
class UpResult:
    """Per-hand values against one up card (arrays over the hand space)."""

    js: np.ndarray
    jh: np.ndarray
    jd: np.ndarray
    jr: np.ndarray
    val: np.ndarray
    pbj: np.ndarray
    cell_a2: np.ndarray  # [N_ROWS, 5]
    cell_w2: np.ndarray
    cell_w2n: np.ndarray
    cell_am: np.ndarray  # [N_ROWS, 2]
    cell_wm: np.ndarray
    cell_wmn: np.ndarray


@dataclass
class Analysis:
    """Everything a Solution or an evaluation needs, as plain arrays."""

    ev: float
    actions: np.ndarray  # int64[38, 10, 5]
    insurance: np.ndarray  # bool[2]
    action_ev: np.ndarray  # float[38, 10, 5], NaN where an action is never legal there
    freq: np.ndarray  # float[38, 10] chance per round of deciding in that cell
    obj: np.ndarray  # float[38, 10, 5] weighted sums for two-card first decisions
    obj_multi: np.ndarray  # float[38, 10, 2] weighted sums for multi-card hands
    legal2: np.ndarray  # bool[38, 10, 5]
    passes: int


_DEALER_CACHES: dict[tuple[int, bool], Dict] = {}


def dealer_cache(rules: Rules) -> Dict:
    """The process-wide memo of dealer outcomes for a shoe size and soft-17 rule.

    Dealer outcomes depend on nothing else, so rule variants analysed in one process share it
    (compiled calls hold the GIL, so threads cannot mutate it at once)."""
    key = (rules.decks, rules.hit_soft_17)
    if key not in _DEALER_CACHES:
        _DEALER_CACHES[key] = Dict.empty(key_type=types.int64, value_type=types.float64[:])
    return _DEALER_CACHES[key]


def dealer_arrays(hit_soft_17: bool) -> tuple[np.ndarray, ...]:
    """The dealer space as the tuple of arrays the kernels take."""
    ds = dealer_space(hit_soft_17)
    return (ds.counts, ds.n_cards, ds.start, ds.child, ds.outcome)


def clear_dealer_caches() -> None:
    """Free the dealer-outcome memos (they grow to a few hundred thousand entries per shoe)."""
    _DEALER_CACHES.clear()


class Model:
    """One rule set's shoe, rules vector and memoised dealer outcomes."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.rv = rules.to_array()
        self.shoe, self.infinite = shoe_vector(rules)
        self.space: HandSpace = hand_space()
        self.cache = dealer_cache(rules)
        self.dealer = dealer_arrays(rules.hit_soft_17)
        sp = self.space
        self.natural_id = sp.two_card[(1, 10)]
        self.two = np.flatnonzero(sp.n_cards == 2)
        self.pair_value = np.zeros(sp.size, np.int64)  # value 1..10 of a two-card pair, else 0
        for i in self.two:
            v = np.flatnonzero(sp.counts[i] == 2)
            if len(v):
                self.pair_value[i] = v[0] + 1
        if rules.split_by_value or self.infinite:
            same = 1.0 if rules.split_by_value else 0.25
        else:
            same = (4 * rules.decks - 1) / (16 * rules.decks - 1)
        self.ten_same = same
        self.split_frac = np.zeros(sp.size)  # share of a two-card hand's deals that may split
        if rules.split_to >= 2:
            for i in self.two:
                if self.pair_value[i]:
                    self.split_frac[i] = same if self.pair_value[i] == 10 else 1.0

    # ------------------------------------------------------------------ probabilities
    def up_prob(self, up: int) -> float:
        return float(self.shoe[up - 1] / self.shoe.sum())

    def base(self, up: int, extra_value: int = 0, extra_count: int = 0) -> np.ndarray:
        removed = np.zeros(10, np.int64)
        if not self.infinite:
            removed[up - 1] += 1
            if extra_count:
                removed[extra_value - 1] += extra_count
        return removed

    def next_probs(self, removed: np.ndarray) -> np.ndarray | None:
        out = np.zeros(10)
        return out if K.draw_probs(self.shoe, removed, self.infinite, out) else None

    def deal_weights(self, up: int) -> np.ndarray:
        """Chance of each two-card hand as the player's first two cards, given the up card."""
        w = np.zeros(self.space.size)
        p1 = self.next_probs(self.base(up))
        for (a, b), i in self.space.two_card.items():
            removed = self.base(up)
            removed[a - 1] += 1
            p2 = self.next_probs(removed)
            if p1 is None or p2 is None:
                continue
            w[i] = p1[a - 1] * p2[b - 1] * (1 if a == b else 2)
        return w

    # ------------------------------------------------------------------ passes
    def backward(
        self,
        up: int,
        base_removed: np.ndarray,
        need: int,
        actions: np.ndarray,
        mode: int,
        w2: np.ndarray,
        wm: np.ndarray,
    ) -> UpResult:
        sp = self.space
        m = sp.size
        r = UpResult(
            *(np.zeros(m) for _ in range(6)),
            np.zeros((N_ROWS, 5)),
            np.zeros(N_ROWS),
            np.zeros(N_ROWS),
            np.zeros((N_ROWS, 2)),
            np.zeros(N_ROWS),
            np.zeros(N_ROWS),
        )
        K.backward(
            up,
            base_removed,
            need,
            self.shoe,
            self.infinite,
            self.rv,
            sp.counts,
            sp.total,
            sp.soft,
            sp.child,
            sp.proc,
            sp.cell_start,
            sp.cell_row,
            actions,
            mode,
            w2,
            wm,
            self.dealer,
            self.cache,
            r.js,
            r.jh,
            r.jd,
            r.jr,
            r.val,
            r.pbj,
            r.cell_a2,
            r.cell_w2,
            r.cell_w2n,
            r.cell_am,
            r.cell_wm,
            r.cell_wmn,
        )
        return r

    def legal2(self, up: int, total: int, pair: bool) -> np.ndarray:
        """Legal actions of an unsplit two-card hand (SPLIT only for a splittable pair)."""
        legal = np.zeros(5, np.bool_)
        legal[E.STAND] = legal[E.HIT] = True
        legal[E.DOUBLE] = bool(K.double_ok(self.rv, total))
        legal[E.SURRENDER] = bool(K.surrender_ok(self.rv, up))
        legal[E.SPLIT] = pair
        return legal

    def first_actions(self, up: int, actions: np.ndarray) -> np.ndarray:
        """The action each hand takes first under a table (two-card: unsplit first decision)."""
        sp = self.space
        first = np.zeros(sp.size, np.int64)
        col = up - 1
        for h in range(sp.size):
            row = sp.row[h]
            if sp.n_cards[h] == 2:
                if self.split_frac[h] > 0:
                    row = PAIR_BASE + self.pair_value[h] - 1
                legal = self.legal2(up, int(sp.total[h]), self.split_frac[h] > 0)
                first[h] = K.first_legal(actions[row, col], legal)
            else:
                first[h] = K.first_of(actions[row, col], E.STAND, E.HIT)
        return first

    def reach(self, up: int, actions: np.ndarray | None, wdeal: np.ndarray) -> np.ndarray:
        """Multi-card reach weights under a table (None: hit everything, for the floor)."""
        sp = self.space
        wm = np.zeros(sp.size)
        first = self.first_actions(up, actions) if actions is not None else np.zeros(sp.size, np.int64)
        K.forward(
            up,
            self.base(up),
            self.shoe,
            self.infinite,
            self.rv,
            sp.counts,
            sp.n_cards,
            sp.total,
            sp.child,
            sp.by_cards,
            first,
            wdeal,
            actions is None,
            wm,
        )
        return wm

    # ------------------------------------------------------------------ splits
    def split_values(self, up: int, pair: int, actions: np.ndarray, composition: bool = False) -> float:
        """Joint EV of splitting an initial pair of ``pair`` against ``up`` (all hands, per unit).

        composition: every split hand takes its own best action and always resplits."""
        rules = self.rules
        sp = self.space
        n_max = rules.split_to
        pv = pair - 1
        col = up - 1
        locked = pair == 1 and not rules.hit_split_aces
        may_resplit = pair != 1 or rules.resplit_aces
        if pair == 10 and not rules.split_by_value:
            may_resplit = False
        if self.infinite:
            k_max = 2
        else:
            avail = int(self.shoe[pv]) - (1 if up == pair else 0)
            k_max = max(2, min(2 * n_max, avail))
        ids = [sp.two_card[tuple(sorted((pair, v + 1)))] for v in range(10)]
        pair_row = actions[PAIR_BASE + pv, col]
        zeros = np.zeros(sp.size)
        vals: dict[int, tuple[np.ndarray, np.ndarray, bool]] = {}

        def hand_value(res: UpResult, h: int, order: np.ndarray) -> float:
            total = int(sp.total[h])
            if total >= 21 or locked:
                return float(res.js[h])
            legal = np.zeros(5, np.bool_)
            legal[E.STAND] = legal[E.HIT] = True
            legal[E.DOUBLE] = rules.double_after_split and bool(K.double_ok(self.rv, total))
            options = (res.js[h], res.jh[h], res.jd[h])
            if composition:
                return float(max(options[a] for a in range(3) if legal[a]))
            return float(options[K.first_legal(order, legal)])

        def values(k: int) -> tuple[np.ndarray, np.ndarray, bool]:
            k = min(k, k_max)
            if k not in vals:
                removed = self.base(up, pair, k - 1)
                mode = K.MODE_COMPOSITION if composition else K.MODE_EVALUATE
                res = self.backward(up, removed, pv, actions, mode, zeros, zeros)
                v = np.zeros(10)
                for r in range(10):
                    h = ids[r]
                    v[r] = hand_value(res, h, actions[sp.row[h], col])
                # a redrawn pair that may resplit but is not: played from the pair row
                declined = hand_value(res, ids[pv], pair_row)
                legal = np.zeros(5, np.bool_)
                legal[E.STAND] = legal[E.SPLIT] = True
                legal[E.HIT] = not locked
                legal[E.DOUBLE] = (not locked) and rules.double_after_split and bool(K.double_ok(self.rv, 2 * pair))
                resplit = composition or K.first_legal(pair_row, legal) == E.SPLIT
                q = self.next_probs(self.base(up, pair, k))
                vals[k] = (v, np.array([declined]) if q is None else np.append(q, declined), resplit)
            return vals[k]

        @cache
        def pending(n: int, waiting: int, k: int) -> float:
            if waiting == 0:
                return 0.0
            v, q_and_declined, resplit = values(k)
            if len(q_and_declined) == 1:
                return 0.0
            q, declined = q_and_declined[:10], q_and_declined[10]
            total = 0.0
            for r in range(10):
                if q[r] == 0.0:
                    continue
                if r == pv:
                    can = n < n_max and may_resplit
                    if can and resplit:
                        total += q[r] * pending(n + 1, waiting + 1, k + 1)
                    else:
                        total += q[r] * ((declined if can else v[r]) + pending(n, waiting - 1, k + 1))
                else:
                    total += q[r] * (v[r] + pending(n, waiting - 1, k))
            return total

        return pending(2, 2, 2)


def _pair_order(ev: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Legal actions by EV, best first, then the illegal ones in action order."""
    keyed = sorted(range(N_PLAY), key=lambda a: (not legal[a], -ev[a] if legal[a] else 0.0, a))
    return np.array(keyed, np.int64)


def _initial_actions() -> np.ndarray:
    """A rough starting table (hit hard < 17 and soft < 18, split pairs) for the first reach weights."""
    actions = np.zeros((N_ROWS, N_UP, N_PLAY), np.int64)
    for row in range(N_ROWS):
        if row < 18:
            hit = row + 4 < 17
        elif row < PAIR_BASE:
            hit = row - 18 + 12 < 18
        else:
            actions[row, :, :] = [E.SPLIT, E.HIT, E.STAND, E.DOUBLE, E.SURRENDER]
            continue
        first = [E.HIT, E.STAND] if hit else [E.STAND, E.HIT]
        actions[row, :, :] = [*first, E.DOUBLE, E.SPLIT, E.SURRENDER]
    return actions


def analyse(rules: Rules, table: StrategyTable | None = None) -> Analysis:
    """Optimise the table for the rules (table None) or evaluate the given table exactly."""
    model = Model(rules)
    sp = model.space
    optimize = table is None
    actions = _initial_actions() if optimize else table.actions.copy()
    wdeal = {up: model.deal_weights(up) for up in range(1, 11)}
    floor = {up: FLOOR * model.reach(up, None, wdeal[up]) for up in range(1, 11)}
    w2t = {}
    for up in range(1, 11):
        w = wdeal[up] * (1.0 - model.split_frac)
        w[model.natural_id] = 0.0  # a natural is settled at once; the floor still prices its row
        w2t[up] = w + FLOOR * wdeal[up] * model.split_frac
        w2t[up][model.natural_id] += FLOOR * wdeal[up][model.natural_id]
    results: dict[int, UpResult] = {}
    passes = 0
    weights_from = actions.copy()
    while True:
        passes += 1
        previous = actions.copy()
        for up in range(1, 11):
            wm = model.reach(up, weights_from, wdeal[up]) + floor[up]
            mode = K.MODE_OPTIMIZE if optimize else K.MODE_EVALUATE
            results[up] = model.backward(up, model.base(up), -1, actions, mode, w2t[up], wm)
        if not optimize or passes >= MAX_PASSES:
            break
        if np.array_equal(previous[:PAIR_BASE], actions[:PAIR_BASE]) and passes > 1:
            break
        weights_from = actions.copy()

    # pair rows: the initial pair's own EVs, split included
    split_ev = np.zeros((11, 11))
    action_ev = np.full((N_ROWS, N_UP, N_PLAY), np.nan)
    obj = np.zeros((N_ROWS, N_UP, N_PLAY))
    obj_multi = np.zeros((N_ROWS, N_UP, 2))
    legal2 = np.zeros((N_ROWS, N_UP, N_PLAY), np.bool_)
    freq = np.zeros((N_ROWS, N_UP))
    for up in range(1, 11):
        col = up - 1
        res = results[up]
        pu = model.up_prob(up)
        for pair in range(1, 11):
            h = sp.two_card[(pair, pair)]
            legal = model.legal2(up, int(sp.total[h]), rules.split_to >= 2)
            if optimize:
                # resplits are assumed while the value is computed
                actions[PAIR_BASE + pair - 1, col] = [E.SPLIT, E.HIT, E.STAND, E.DOUBLE, E.SURRENDER]
            split_ev[up, pair] = model.split_values(up, pair, actions) if rules.split_to >= 2 else 0.0
            joint = np.array([res.js[h], res.jh[h], res.jd[h], split_ev[up, pair], res.jr[h]])
            norm = 1.0 - res.pbj[h] if K.bj_coef(model.rv) == 0.0 else 1.0
            ev = np.where(legal, joint / norm, np.nan)
            row = PAIR_BASE + pair - 1
            if optimize:
                actions[row, col] = _pair_order(np.nan_to_num(ev, nan=-np.inf), legal)
            action_ev[row, col] = ev
            weight = wdeal[up][h] * model.split_frac[h]
            obj[row, col] = np.where(legal, joint * weight, 0.0)
            legal2[row, col] = legal
            freq[row, col] = pu * weight * norm
        for row in range(PAIR_BASE):
            w2n, wmn = res.cell_w2n[row], res.cell_wmn[row]
            ids = np.flatnonzero((sp.row == row) & (sp.n_cards == 2))
            total = int(sp.total[ids[0]]) if len(ids) else int(sp.total[sp.row == row][0])
            legal = model.legal2(up, total, False)
            legal2[row, col] = legal
            obj[row, col] = np.where(legal, res.cell_a2[row], 0.0)
            obj_multi[row, col] = res.cell_am[row]
            freq[row, col] = pu * (w2n + wmn)
            if res.cell_w2[row] > 0:
                action_ev[row, col] = np.where(legal, res.cell_a2[row] / w2n, np.nan)
            elif res.cell_wm[row] > 0:
                action_ev[row, col, :2] = res.cell_am[row] / wmn

    insurance = table.insurance.copy() if table is not None else np.zeros(2, np.bool_)
    ev = _round_ev(model, rules, actions, insurance, results, wdeal, split_ev, optimize)
    return Analysis(
        ev=ev,
        actions=actions,
        insurance=insurance,
        action_ev=action_ev,
        freq=freq,
        obj=obj,
        obj_multi=obj_multi,
        legal2=legal2,
        passes=passes,
    )


def _round_ev(
    model: Model,
    rules: Rules,
    actions: np.ndarray,
    insurance: np.ndarray,
    results: dict[int, UpResult],
    wdeal: dict[int, np.ndarray],
    split_ev: np.ndarray,
    optimize: bool,
) -> float:
    """EV per round off the top of a fresh shoe; decides insurance too when optimising."""
    sp = model.space
    bj = rules.blackjack_pays
    ace = results[1]
    # insurance: one decision for all non-naturals, one for naturals (even money)
    if optimize and (rules.insurance or rules.even_money):
        gain = 0.0
        for h in model.two:
            if h != model.natural_id and rules.insurance:
                p = ace.pbj[h]
                gain += wdeal[1][h] * (p - 0.5 * (1.0 - p))
        insurance[0] = bool(rules.insurance and gain > 0)
        p = ace.pbj[model.natural_id]
        take = 1.0 if rules.even_money else p + (1.0 - p) * (bj - 0.5)
        insurance[1] = bool(take > (1.0 - p) * bj)
    total_ev = 0.0
    for up in range(1, 11):
        res = results[up]
        col = up - 1
        ev_up = 0.0
        for h in model.two:
            w = wdeal[up][h]
            if w == 0.0:
                continue
            p = res.pbj[h]
            if h == model.natural_id:
                x = (1.0 - p) * bj
                if up == 1 and insurance[1]:
                    if rules.even_money:
                        x = 1.0
                    elif rules.insurance:
                        x = p + (1.0 - p) * (bj - 0.5)
                ev_up += w * x
                continue
            joint = np.array([res.js[h], res.jh[h], res.jd[h], 0.0, res.jr[h]])
            x = 0.0
            frac = model.split_frac[h]
            if frac > 0:
                pair = model.pair_value[h]
                joint[E.SPLIT] = split_ev[up, pair]
                legal = model.legal2(up, int(sp.total[h]), True)
                x += frac * joint[K.first_legal(actions[PAIR_BASE + pair - 1, col], legal)]
            if frac < 1:
                legal = model.legal2(up, int(sp.total[h]), False)
                x += (1.0 - frac) * joint[K.first_legal(actions[sp.row[h], col], legal)]
            x += K.deal_bj_base(model.rv, p)
            if up == 1 and rules.insurance and insurance[0]:
                x += p - 0.5 * (1.0 - p)
            ev_up += w * x
        total_ev += model.up_prob(up) * ev_up
    return float(total_ev)


def composition_ev(rules: Rules) -> float:
    """EV per round when every hand, split hands included, takes its own best action.

    This is the composition-dependent optimum off the top (no insurance) that analyses such as
    the Wizard of Odds' Appendix 9 report; the basic-strategy EV can only be lower."""
    model = Model(rules)
    sp = model.space
    actions = _initial_actions()
    zeros = np.zeros(sp.size)
    total_ev = 0.0
    for up in range(1, 11):
        res = model.backward(up, model.base(up), -1, actions, K.MODE_COMPOSITION, zeros, zeros)
        wdeal = model.deal_weights(up)
        ev_up = 0.0
        for h in model.two:
            w = wdeal[h]
            if w == 0.0:
                continue
            p = res.pbj[h]
            if h == model.natural_id:
                ev_up += w * (1.0 - p) * rules.blackjack_pays
                continue
            legal = model.legal2(up, int(sp.total[h]), False)
            joint = np.array([res.js[h], res.jh[h], res.jd[h], -np.inf, res.jr[h]])
            best = max(joint[a] for a in range(5) if legal[a])
            frac = model.split_frac[h]
            if frac > 0:
                split = model.split_values(up, int(model.pair_value[h]), actions, composition=True)
                best = frac * max(best, split) + (1.0 - frac) * best
            ev_up += w * (best + K.deal_bj_base(model.rv, p))
        total_ev += model.up_prob(up) * ev_up
    return float(total_ev)


def hand_evs(rules: Rules, cards: list[int], up: int, table: StrategyTable | None = None) -> dict[str, float]:
    """EVs of stand, hit, double (and surrender where legal) for one exact hand.

    The hand's cards and the up card are out of the shoe; after a hit the hand plays on by its
    own composition (table None) or by the table. Frame: given no dealer blackjack where the
    dealer peeks, as the per-decision EVs elsewhere."""
    model = Model(rules)
    sp = model.space
    counts = np.zeros(10, np.int64)
    for value in cards:
        counts[value - 1] += 1
    match = np.flatnonzero((sp.counts == counts).all(axis=1))
    if len(match) != 1:
        raise ValueError(f"cards {cards} are not a hand of two or more cards totalling at most 21")
    h = int(match[0])
    zeros = np.zeros(sp.size)
    if table is None:
        res = model.backward(up, model.base(up), -1, _initial_actions(), K.MODE_COMPOSITION, zeros, zeros)
    else:
        res = model.backward(up, model.base(up), -1, table.actions.copy(), K.MODE_EVALUATE, zeros, zeros)
    norm = 1.0 - res.pbj[h] if K.bj_coef(model.rv) == 0.0 else 1.0
    out = {"stand": res.js[h] / norm, "hit": res.jh[h] / norm}
    if len(cards) == 2:
        out["double"] = res.jd[h] / norm
        if K.surrender_ok(model.rv, up):
            out["surrender"] = res.jr[h] / norm
    return {name: float(value) for name, value in out.items()}
