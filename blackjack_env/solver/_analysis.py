"""The exact analysis of one rule set: optimise or evaluate a total-dependent strategy table.

Model (what is exact and what is approximated):

* Every unsplit hand is analysed with its exact composition: the up card and all the player's
  cards are out of the shoe; the dealer's hole card and hits come from what is left. Peek,
  no-hole-card, OBO and surrender rules are settled exactly (see ``_kernels``).
* Total-dependent strategy: one preference order per (row, up card), as the engine plays it
  (first legal action). Three kinds of hands decide in a row: unsplit two-card hands (double and
  surrender may be legal), two-card split hands (double if DAS) and hands of three or more cards
  (stand or hit). A row's order maximises the round's EV summed over every hand composition of
  the three kinds, each weighted by how often the table reaches it. Rows are decided from high
  totals down, so a hit always lands in a decided row; the weights come from the previous pass,
  repeated until the table stops changing (a fixed point: no single row's change gains). Pair
  rows are chosen on the initial pair's own EVs.
* Split model: each split hand is played with the same table against the shoe minus the up card
  and every pair card seen so far (the original pair, resplit cards and pair cards drawn when no
  resplit is left); the other split hands' non-pair cards are not removed. Resplitting follows
  the pair row; optimising assumes a redrawn pair is resplit while allowed. Each hand is settled
  on its own (in a no-hole-card OBO game the rare round where every split hand busts is charged
  as if the dealer had drawn). For an infinite deck the split values are exact.
* Unlike ten-value cards without ``split_by_value``: an initial ten pair is splittable with the
  chance both are one rank; redrawn tens are never resplit (splitting tens is never basic
  strategy, so only that cell's reported split EV is affected).
* ``composition_ev`` and ``hand_evs`` drop the table: every hand takes its own best action (the
  composition-dependent optimum that e.g. the Wizard of Odds' Appendix 9 reports).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import types
from numba.typed import Dict

from .. import engine as E
from ..rules import Rules
from ..strategy import N_PLAY, N_ROWS, N_UP, PAIR_BASE, StrategyTable, row_of_label
from . import _kernels as K
from ._space import HandSpace, dealer_space, hand_space

#: Fewest cards a custom shoe may hold: a round's first four cards (the cut card ends a shoe well
#: before, so every shoe a game deals a round from holds more).
MIN_CARDS = 4
FLOOR = 1e-9  # weight given to unreachable hands so every row still gets defined EVs
MAX_PASSES = 8


def shoe_vector(rules: Rules) -> tuple[np.ndarray, bool]:
    """Cards per value (finite shoe) or each value's probability (infinite deck)."""
    if rules.infinite:
        return np.array([1.0] * 9 + [4.0]) / 13.0, True
    return np.array([4.0 * rules.decks] * 9 + [16.0 * rules.decks]), False


@dataclass
class UpResult:
    """Per-hand values against one up card (arrays over the hand space) and per-row sums."""

    js: np.ndarray
    jh: np.ndarray
    jd: np.ndarray
    jr: np.ndarray
    val: np.ndarray
    pbj: np.ndarray
    cells: np.ndarray  # [N_ROWS, K.N_CELL] (see the C_* columns in _kernels)


@dataclass
class Analysis:
    """Everything a Solution or an evaluation needs, as plain arrays."""

    ev: float
    actions: np.ndarray  # int64[38, 10, 5]
    insurance: np.ndarray  # bool[2]
    action_ev: np.ndarray  # float[38, 10, 5], NaN where an action is never legal there
    freq: np.ndarray  # float[38, 10] chance per round of deciding in that cell
    obj: np.ndarray  # float[38, 10, 5] weighted value sums of unsplit two-card first decisions
    obj_split: np.ndarray  # float[38, 10, 5] the same for two-card split hands
    obj_multi: np.ndarray  # float[38, 10, 2] the same for multi-card hands (stand, hit)
    legal2: np.ndarray  # bool[38, 10, 5] legal for an unsplit two-card hand
    legal_split: np.ndarray  # bool[38, 10, 5] legal for a two-card split hand
    insurance_ev: np.ndarray  # float[39]: per row, then (last) the natural's even money
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


def _checked_shoe(shoe: np.ndarray, infinite: bool) -> np.ndarray:
    """A custom shoe as float cards per value; an infinite deck has no composition to change.

    Any shoe a game can deal is analysed, however few of a value it holds: a hand or a dealer draw
    that needs more of a value than is left has no chance (``_kernels.draw_probs``)."""
    if infinite:
        raise ValueError("a custom shoe composition needs a finite shoe (decks >= 1), not an infinite deck")
    out = np.asarray(shoe, dtype=np.float64).reshape(-1)
    if out.shape != (10,) or not np.isfinite(out).all() or (out < 0).any() or out.sum() < MIN_CARDS:
        raise ValueError(
            f"a shoe is 10 non-negative card counts (A, 2..10) holding at least {MIN_CARDS} cards, got {shoe!r}"
        )
    return out


class Model:
    """One rule set's shoe, rules vector and memoised dealer outcomes.

    shoe: cards per value (A, 2..10) to analyse instead of the rules' full shoe, e.g. a depleted
    shoe for effects of removal or a shoe at a true count; counts may be fractional (an average
    composition). Such a shoe gets its own dealer memo, freed with the model."""

    def __init__(self, rules: Rules, shoe: np.ndarray | None = None) -> None:
        self.rules = rules
        self.rv = rules.to_array()
        self.shoe, self.infinite = shoe_vector(rules)
        if shoe is not None:
            self.shoe = _checked_shoe(shoe, self.infinite)
            self.cache = Dict.empty(key_type=types.int64, value_type=types.float64[:])
        else:
            self.cache = dealer_cache(rules)
        self.space: HandSpace = hand_space()
        self.dealer = dealer_arrays(rules.hit_soft_17)
        self._legal: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        #: Evaluated split values by what they read of the table (``split_values``).
        self._splits: dict[tuple, tuple[float, np.ndarray]] = {}
        self._split_hand_memo: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        #: What the backward pass reads of the game (see ``_kernels.backward``).
        self.game = (self.shoe, self.infinite, self.rv, self.dealer)
        sp = self.space
        #: The hand space's arrays as the backward pass takes them.
        self.arrays = (sp.counts, sp.n_cards, sp.total, sp.child, sp.proc, sp.cell_start, sp.cell_row)
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
            tens = float(self.shoe[9])  # one rank is a quarter of the ten-value cards
            same = max(tens / 4 - 1, 0.0) / (tens - 1) if tens > 1 else 0.0
        self.split_frac = np.zeros(sp.size)  # share of a two-card hand's deals that may split
        if rules.split_to >= 2:
            for i in self.two:
                if self.pair_value[i]:
                    self.split_frac[i] = same if self.pair_value[i] == 10 else 1.0
        #: The pair row of a two-card hand that may split (its first action comes from it), else -1.
        self.pair_row = np.where(self.split_frac > 0, PAIR_BASE + self.pair_value - 1, -1).astype(np.int64)
        #: Every hand valued in full: what a backward pass does unless told less (``split_levels``).
        self.full_level = np.full(sp.size, K.LEVEL_FULL, np.int64)

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
        weights: np.ndarray,
        level: np.ndarray | None = None,
    ) -> UpResult:
        """The kernel's backward pass against ``up`` (see ``_kernels.backward``) into a new UpResult;
        level: how much of each hand to value (``_kernels.split_levels``), None for every hand."""
        m = self.space.size
        z = np.zeros
        r = UpResult(z(m), z(m), z(m), z(m), z(m), z(m), z((N_ROWS, K.N_CELL)))
        out = (r.js, r.jh, r.jd, r.jr, r.val, r.pbj, r.cells)
        level = self.full_level if level is None else level
        K.backward(up, base_removed, need, self.game, self.cache, self.arrays, actions, mode, weights, out, level)
        return r

    def legal(self, up: int, total: int) -> tuple[np.ndarray, np.ndarray]:
        """Legal actions of an unsplit and of a split two-card hand at ``total`` (no SPLIT), as the
        backward pass decides them (``_kernels.cell_legal``); copies of a memo (the optimiser asks
        thousands of times per pass, and callers add SPLIT)."""
        found = self._legal.get((up, total))
        if found is None:
            found = (np.zeros(5, np.bool_), np.zeros(5, np.bool_))
            K.cell_legal(self.rv, up, total, *found)
            self._legal[(up, total)] = found
        return found[0].copy(), found[1].copy()

    def legal2(self, up: int, total: int, pair: bool) -> np.ndarray:
        """Legal actions of an unsplit two-card hand (SPLIT only for a splittable pair)."""
        legal = self.legal(up, total)[0]
        legal[E.SPLIT] = pair
        return legal

    def legal_split(self, total: int) -> np.ndarray:
        """Legal actions of a two-card split hand that may be played on (no surrender)."""
        return self.legal(1, total)[1]

    def first_actions(self, up: int, actions: np.ndarray) -> np.ndarray:
        """The action each hand takes first under a table, per role (W_DEAL, W_SPLIT, W_MULTI)."""
        sp = self.space
        first = np.zeros((3, sp.size), np.int64)
        K.first_actions(self.rv, up, actions, sp.row, sp.n_cards, sp.total, self.pair_row, first)
        return first

    def reach(self, up: int, actions: np.ndarray | None, weights: np.ndarray) -> None:
        """Fill weights[W_MULTI] from the two-card weights (actions None: hit everything)."""
        sp = self.space
        first = self.first_actions(up, actions) if actions is not None else np.zeros((3, sp.size), np.int64)
        K.forward(
            up,
            self.base(up),
            self.shoe,
            self.infinite,
            sp.counts,
            sp.n_cards,
            sp.total,
            sp.child,
            sp.by_cards,
            first,
            weights,
            actions is None,
        )

    # ------------------------------------------------------------------ splits
    def split_values(
        self, up: int, pair: int, actions: np.ndarray, composition: bool = False
    ) -> tuple[float, np.ndarray]:
        """Joint EV of splitting an initial pair of ``pair`` against ``up`` (all hands, per unit),
        and the expected number of split hands that end up holding each second card.

        composition: every split hand takes its own best action and always resplits. Under a table
        the result reads the table only through ``_split_reads`` (each row's stand-or-hit choice,
        the split hands' first actions, the resplit choice): it is kept per those reads, so another
        optimisation pass or an evaluation on the same model that reads alike reuses it, and each
        pass values only the hands those reads reach (``_kernels.split_levels``)."""
        if composition:
            return self._split_values(up, pair, actions, True, None)
        reads, draws = self._split_reads(up, pair, actions)
        found = self._splits.get(reads)
        if found is None:
            sp = self.space
            level = np.zeros(sp.size, np.int64)
            multi_hit = np.frombuffer(reads[2], np.bool_).copy()
            roots = self._split_hands(pair)[0]
            K.split_levels(roots, draws, sp.n_cards, sp.total, sp.child, sp.row, sp.by_cards, multi_hit, level)
            found = self._split_values(up, pair, actions, False, level, np.frombuffer(reads[3], np.int64))
            self._splits[reads] = found
        return found[0], found[1].copy()

    def _resplit_legal(self, pair: int, locked: bool) -> np.ndarray:
        """Legal actions of a redrawn pair that may be resplit (SPLIT among them)."""
        legal = np.zeros(5, np.bool_)
        legal[E.STAND] = legal[E.SPLIT] = True
        legal[E.HIT] = not locked
        legal[E.DOUBLE] = (not locked) and self.rules.double_after_split and bool(K.double_ok(self.rv, 2 * pair))
        return legal

    def _split_hands(self, pair: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The two-card split hands (pair, 1..10): their ids, the actions each may take first (as
        ``hand_value`` plays them: stand only at 21 or on split aces that get one card) and, for the
        redrawn pair, those of resplitting (``_resplit_legal``)."""
        found = self._split_hand_memo.get(pair)
        if found is None:
            sp = self.space
            ids = np.array([sp.two_card[tuple(sorted((pair, v + 1)))] for v in range(10)], np.int64)
            locked = pair == 1 and not self.rules.hit_split_aces
            legal = np.array([self.legal_split(int(sp.total[h])) for h in ids])
            legal[(sp.total[ids] >= 21) | locked, 1:] = False
            found = (ids, legal, self._resplit_legal(pair, locked))
            self._split_hand_memo[pair] = found
        return found

    def _split_reads(self, up: int, pair: int, actions: np.ndarray) -> tuple[tuple, np.ndarray]:
        """All an evaluated split reads of the table against ``up``: every total row's choice between
        stand and hit (the backward pass's multi-card hands), each split hand's first action, the
        redrawn pair's first action from the pair row and whether it resplits; and per split hand
        whether it draws (2 hits, 1 only doubles, 0 stands: ``_kernels.split_levels``'s roots)."""
        ids, legal, resplit_legal = self._split_hands(pair)
        col = up - 1
        rows = actions[:PAIR_BASE, col]
        multi_hit = np.argmax(rows == E.HIT, axis=1) < np.argmax(rows == E.STAND, axis=1)
        pair_row = actions[PAIR_BASE + pair - 1, col]
        orders = np.vstack([actions[self.space.row[ids], col], pair_row])  # the last: the redrawn pair declining
        allowed = np.take_along_axis(np.vstack([legal, legal[pair - 1]]), orders, axis=1)
        first = orders[np.arange(11), np.argmax(allowed, axis=1)].astype(np.int64)  # STAND is always allowed
        resplit = bool(resplit_legal[pair_row].argmax() == np.flatnonzero(pair_row == E.SPLIT)[0])
        draws = np.select([first == E.HIT, first == E.DOUBLE], [2, 1], 0).astype(np.int64)
        draws[pair - 1] = max(draws[pair - 1], draws[10])
        return (up, pair, multi_hit.tobytes(), first.tobytes(), resplit), draws[:10]

    def _split_values(
        self,
        up: int,
        pair: int,
        actions: np.ndarray,
        composition: bool,
        level: np.ndarray | None,
        first: np.ndarray | None = None,
    ) -> tuple[float, np.ndarray]:
        """``split_values`` computed: a backward pass per number of pair cards out (valuing ``level``
        of each hand), then the recursion over the hands still to be dealt to. first: the split
        hands' first actions and the declined pair's (``_split_reads``), read off at once instead of
        per hand from the table (the same values)."""
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
        zeros = np.zeros((3, sp.size))
        vals: dict[int, tuple[np.ndarray, np.ndarray, bool]] = {}

        def hand_value(res: UpResult, h: int, order: np.ndarray) -> float:
            total = int(sp.total[h])
            if total >= 21 or locked:
                return float(res.js[h])
            legal = self.legal_split(total)
            options = (res.js[h], res.jh[h], res.jd[h])
            if composition:
                return float(max(options[a] for a in range(3) if legal[a]))
            return float(options[K.first_legal(order, legal)])

        def values(k: int) -> tuple[np.ndarray, np.ndarray, bool]:
            k = min(k, k_max)
            if k not in vals:
                removed = self.base(up, pair, k - 1)
                mode = K.MODE_COMPOSITION if composition else K.MODE_EVALUATE
                res = self.backward(up, removed, pv, actions, mode, zeros, level)
                if first is not None:
                    options = np.stack((res.js, res.jh, res.jd))
                    v, declined = options[first[:10], ids], float(options[first[10], ids[pv]])
                else:
                    v = np.zeros(10)
                    for r in range(10):
                        h = ids[r]
                        v[r] = hand_value(res, h, actions[sp.row[h], col])
                    # a redrawn pair that may resplit but is not: played from the pair row
                    declined = hand_value(res, ids[pv], pair_row)
                resplit = composition or K.first_legal(pair_row, self._resplit_legal(pair, locked)) == E.SPLIT
                q = self.next_probs(self.base(up, pair, k))
                vals[k] = (v, np.array([declined]) if q is None else np.append(q, declined), resplit)
            return vals[k]

        @cache
        def pending(n: int, waiting: int, k: int) -> np.ndarray:
            """[value, hands ending with each second card] of the hands still to be dealt to."""
            out = np.zeros(11)
            if waiting == 0:
                return out
            v, q_and_declined, resplit = values(k)
            if len(q_and_declined) == 1:
                return out
            q, declined = q_and_declined[:10], q_and_declined[10]
            for r in range(10):
                if q[r] == 0.0:
                    continue
                if r == pv:
                    can = n < n_max and may_resplit
                    if can and resplit:
                        out += q[r] * pending(n + 1, waiting + 1, k + 1)
                        continue
                    rest = pending(n, waiting - 1, k + 1)
                    out[0] += q[r] * (declined if can else v[r])
                else:
                    rest = pending(n, waiting - 1, k)
                    out[0] += q[r] * v[r]
                out[1 + r] += q[r]
                out += q[r] * rest
            return out

        result = pending(2, 2, 2)
        return float(result[0]), result[1:]


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


def analyse(
    rules: Rules,
    table: StrategyTable | None = None,
    shoe: np.ndarray | None = None,
    *,
    model: Model | None = None,
    start: np.ndarray | None = None,
) -> Analysis:
    """Optimise the table for the rules (table None) or evaluate the given table exactly.

    shoe: analyse this composition (cards per value, A first) instead of the full shoe.
    model: a Model to reuse (its shoe, and its dealer memo filled by an earlier analysis of the
    same shoe: the ceiling evaluates and optimises each shoe on one); shoe is then ignored.
    start: the table actions an optimisation starts from (default a rough hit-to-17 table); a
    near-optimal start (the full shoe's basic strategy for a depleted shoe) needs fewer passes."""
    model = model if model is not None else Model(rules, shoe)
    sp = model.space
    ups = range(1, 11)
    optimize = table is None
    if table is None:
        actions = _initial_actions() if start is None else np.array(start, np.int64, copy=True)
    else:
        actions = table.actions.copy()
    mode = K.MODE_OPTIMIZE if optimize else K.MODE_EVALUATE
    wdeal = {up: model.deal_weights(up) for up in ups}
    floor = {}
    deal_w = {}
    for up in ups:
        reachable = np.zeros((3, sp.size))
        reachable[K.W_DEAL] = wdeal[up]
        model.reach(up, None, reachable)
        floor[up] = FLOOR * reachable  # every hand a little weight, so every row has EVs
        floor[up][K.W_SPLIT] = 0.0
        w = wdeal[up] * (1.0 - model.split_frac)
        w[model.natural_id] = 0.0  # settled at once; the floor still prices its row
        deal_w[up] = w
    split_ev = np.zeros((11, 11))
    split_count = np.zeros((11, 11, 10))
    if not optimize:
        _pair_rows(model, actions, None, wdeal, split_ev, split_count, optimize=False)
    results: dict[int, UpResult] = {}
    weights_from = actions.copy()
    passes = 0
    while True:
        passes += 1
        previous = actions.copy()
        for up in ups:
            weights = np.zeros((3, sp.size))
            weights[K.W_DEAL] = deal_w[up]
            weights[K.W_SPLIT] = _split_weights(model, weights_from, up, wdeal[up], split_count[up])
            model.reach(up, weights_from, weights)
            results[up] = model.backward(up, model.base(up), -1, actions, mode, weights + floor[up])
        if optimize:
            _pair_rows(model, actions, results, wdeal, split_ev, split_count, optimize=True)
        if not optimize or passes >= MAX_PASSES or (passes > 1 and np.array_equal(previous, actions)):
            break
        weights_from = actions.copy()
    return _summarise(model, table, actions, results, wdeal, split_ev, passes)


def _split_weights(model: Model, actions: np.ndarray, up: int, wdeal: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """How often each two-card split hand is decided: split deals times hands per second card."""
    sp = model.space
    w = np.zeros(sp.size)
    col = up - 1
    for pair in range(1, 11):
        h = sp.two_card[(pair, pair)]
        if model.split_frac[h] == 0 or (pair == 1 and not model.rules.hit_split_aces):
            continue  # no split, or split aces that get one card: nothing to decide
        legal = model.legal2(up, int(sp.total[h]), True)
        if K.first_legal(actions[PAIR_BASE + pair - 1, col], legal) != E.SPLIT:
            continue
        for r in range(10):
            w[sp.two_card[tuple(sorted((pair, r + 1)))]] += wdeal[h] * model.split_frac[h] * counts[pair, r]
    return w


def _pair_rows(
    model: Model,
    actions: np.ndarray,
    results: dict[int, UpResult] | None,
    wdeal: dict[int, np.ndarray],
    split_ev: np.ndarray,
    split_count: np.ndarray,
    optimize: bool,
) -> None:
    """Split values and counts for every (up, pair); when optimising, each pair row's order."""
    sp = model.space
    for up in range(1, 11):
        col = up - 1
        for pair in range(1, 11):
            row = PAIR_BASE + pair - 1
            if optimize:
                # resplits are assumed while the value is computed
                actions[row, col] = [E.SPLIT, E.HIT, E.STAND, E.DOUBLE, E.SURRENDER]
            if model.rules.split_to >= 2:
                split_ev[up, pair], split_count[up, pair] = model.split_values(up, pair, actions)
            if optimize and results is not None:
                h = sp.two_card[(pair, pair)]
                legal = model.legal2(up, int(sp.total[h]), model.rules.split_to >= 2)
                res = results[up]
                joint = np.array([res.js[h], res.jh[h], res.jd[h], split_ev[up, pair], res.jr[h]])
                actions[row, col] = _pair_order(np.where(legal, joint, -np.inf), legal)


def _summarise(
    model: Model,
    table: StrategyTable | None,
    actions: np.ndarray,
    results: dict[int, UpResult],
    wdeal: dict[int, np.ndarray],
    split_ev: np.ndarray,
    passes: int,
) -> Analysis:
    """Per-cell EVs, frequencies and decision sums, and the round's EV."""
    rules = model.rules
    sp = model.space
    action_ev = np.full((N_ROWS, N_UP, N_PLAY), np.nan)
    obj = np.zeros((N_ROWS, N_UP, N_PLAY))
    obj_split = np.zeros((N_ROWS, N_UP, N_PLAY))
    obj_multi = np.zeros((N_ROWS, N_UP, 2))
    legal2 = np.zeros((N_ROWS, N_UP, N_PLAY), np.bool_)
    legal_split = np.zeros((N_ROWS, N_UP, N_PLAY), np.bool_)
    freq = np.zeros((N_ROWS, N_UP))
    peek_frame = K.bj_coef(model.rv) == 0.0
    for up in range(1, 11):
        col = up - 1
        res = results[up]
        pu = model.up_prob(up)
        for pair in range(1, 11):
            h = sp.two_card[(pair, pair)]
            row = PAIR_BASE + pair - 1
            legal = model.legal2(up, int(sp.total[h]), rules.split_to >= 2)
            joint = np.array([res.js[h], res.jh[h], res.jd[h], split_ev[up, pair], res.jr[h]])
            norm = 1.0 - res.pbj[h] if peek_frame else 1.0
            weight = wdeal[up][h] * model.split_frac[h]
            action_ev[row, col] = np.where(legal, joint / norm, np.nan)
            obj[row, col] = np.where(legal, joint * weight, 0.0)
            legal2[row, col] = legal
            freq[row, col] = pu * weight * norm
        for row in range(PAIR_BASE):
            c = res.cells[row]
            ids = np.flatnonzero(sp.row == row)
            two = ids[sp.n_cards[ids] == 2]
            total = int(sp.total[two[0]] if len(two) else sp.total[ids[0]])
            legal2[row, col] = model.legal2(up, total, False)
            legal_split[row, col] = model.legal_split(total)
            obj[row, col] = np.where(legal2[row, col], c[K.C_A2 : K.C_A2 + 5], 0.0)
            obj_split[row, col] = np.where(legal_split[row, col], c[K.C_AS : K.C_AS + 5], 0.0)
            obj_multi[row, col] = c[K.C_AM : K.C_AM + 2]
            freq[row, col] = pu * (c[K.C_W2N] + c[K.C_WSN] + c[K.C_WMN])
            if c[K.C_W2] > 0:
                action_ev[row, col] = np.where(legal2[row, col], c[K.C_A2 : K.C_A2 + 5] / c[K.C_W2N], np.nan)
            elif c[K.C_WS] > 0:
                action_ev[row, col] = np.where(legal_split[row, col], c[K.C_AS : K.C_AS + 5] / c[K.C_WSN], np.nan)
            elif c[K.C_WM] > 0:
                action_ev[row, col, :2] = c[K.C_AM : K.C_AM + 2] / c[K.C_WMN]
    # a hand at 21 stands by itself in the game: those rows are never decided
    freq[row_of_label("hard", "21")] = 0.0
    freq[row_of_label("soft", "21")] = 0.0
    insurance = table.insurance.copy() if table is not None else np.zeros(2, np.bool_)
    ev = _round_ev(model, rules, actions, insurance, results, wdeal, split_ev, table is None)
    insurance_ev = _insurance_evs(model, results[1], wdeal[1])
    return Analysis(
        ev=ev,
        actions=actions,
        insurance=insurance,
        action_ev=action_ev,
        freq=freq,
        obj=obj,
        obj_split=obj_split,
        obj_multi=obj_multi,
        legal2=legal2,
        legal_split=legal_split,
        insurance_ev=insurance_ev,
        passes=passes,
    )


def _insurance_value(pbj: float) -> float:
    """EV of the insurance bet (half a unit, pays 2:1) when the hole card completes a blackjack
    with chance pbj."""
    return pbj - 0.5 * (1.0 - pbj)


def _insured_natural(rules: Rules, pbj: float) -> float:
    """A natural against an ace, taking even money (or, where that is not offered, insuring)."""
    if rules.even_money:
        return 1.0
    return pbj + (1.0 - pbj) * (rules.blackjack_pays - 0.5)


def _insurance_evs(model: Model, ace: UpResult, wdeal: np.ndarray) -> np.ndarray:
    """Against an ace: the insurance bet's EV (half a unit, pays 2:1) per row's two-card hands,
    and last the gain of even money (or insuring) over declining for a natural."""
    sp = model.space
    sums = np.zeros((N_ROWS, 2))
    for h in model.two:
        if h == model.natural_id:
            continue
        value = _insurance_value(ace.pbj[h])
        frac = model.split_frac[h]
        rows = ((PAIR_BASE + model.pair_value[h] - 1, frac), (sp.row[h], 1.0 - frac))
        for row, share in rows:
            if share > 0:
                sums[row] += (wdeal[h] * share * value, wdeal[h] * share)
    out = np.full(N_ROWS + 1, np.nan)
    seen = sums[:, 1] > 0
    out[:N_ROWS][seen] = sums[seen, 0] / sums[seen, 1]
    p = ace.pbj[model.natural_id]
    out[N_ROWS] = _insured_natural(model.rules, p) - (1.0 - p) * model.rules.blackjack_pays
    return out


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
                gain += wdeal[1][h] * _insurance_value(ace.pbj[h])
        insurance[0] = bool(rules.insurance and gain > 0)
        p = ace.pbj[model.natural_id]
        insurance[1] = bool(_insured_natural(rules, p) > (1.0 - p) * bj)
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
                offered = rules.even_money or rules.insurance
                x = _insured_natural(rules, p) if (up == 1 and insurance[1] and offered) else (1.0 - p) * bj
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
                x += _insurance_value(p)
            ev_up += w * x
        total_ev += model.up_prob(up) * ev_up
    return float(total_ev)


def composition_ev(rules: Rules, *, model: Model | None = None) -> float:
    """EV per round when every hand, split hands included, takes its own best action.

    This is the composition-dependent optimum off the top (never insuring, never taking even
    money) that analyses such as the Wizard of Odds' Appendix 9 report; with the same insurance
    choices the basic-strategy EV can only be lower. model: a Model of another shoe (the
    ceiling's depleted shoes, sharing their dealer memo), else the rules' full shoe."""
    model = model if model is not None else Model(rules)
    sp = model.space
    actions = _initial_actions()
    zeros = np.zeros((3, sp.size))
    total_ev = 0.0
    for up in range(1, 11):
        res = model.backward(up, model.base(up), -1, actions, K.MODE_COMPOSITION, zeros)
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
                split = model.split_values(up, int(model.pair_value[h]), actions, composition=True)[0]
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
    zeros = np.zeros((3, sp.size))
    if table is None:
        res = model.backward(up, model.base(up), -1, _initial_actions(), K.MODE_COMPOSITION, zeros)
    else:
        res = model.backward(up, model.base(up), -1, table.actions.copy(), K.MODE_EVALUATE, zeros)
    norm = 1.0 - res.pbj[h] if K.bj_coef(model.rv) == 0.0 else 1.0
    out = {"stand": res.js[h] / norm, "hit": res.jh[h] / norm}
    if len(cards) == 2:
        out["double"] = res.jd[h] / norm
        if K.surrender_ok(model.rv, up):
            out["surrender"] = res.jr[h] / norm
    return {name: float(value) for name, value in out.items()}
