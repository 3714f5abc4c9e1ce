"""Compiled kernels of the exact analysis: dealer outcomes and the backward / forward passes.

Conventions shared by every kernel:

* card values are indexed 0..9 (0 = ace, 9 = any ten-value card);
* ``shoe`` holds the full shoe's count per value (finite) or each value's probability (infinite);
  ``removed`` counts the cards known to be out of it (up card, other hands' cards, this hand);
* every value ``J`` is a *joint* expectation ``E[result * 1(round not ended by a dealer
  blackjack found at the peek)]``, with the dealer's hole card treated as drawn from what is left
  after the player's cards. Exchangeability makes that exact, and it lets one formula serve peek
  and no-hole-card games: the blackjack mass is settled once per deal by the caller.

Outcome index of dealer distributions: 0..4 = totals 17..21, 5 = bust, 6 = blackjack.
"""

from __future__ import annotations

import itertools

import numpy as np
from numba import njit

from .. import engine as E

N_OUT = 7
O_BUST = 5
O_BJ = 6
KEY_BASE = 40  # removed-count digit base of dealer-cache keys (a hand holds < 40 of one value)

STAND, HIT, DOUBLE, SPLIT, SURRENDER = E.STAND, E.HIT, E.DOUBLE, E.SPLIT, E.SURRENDER
MODE_EVALUATE, MODE_OPTIMIZE, MODE_COMPOSITION = 0, 1, 2
#: Rows of the weights array: unsplit two-card first decisions, two-card split hands, multi-card.
W_DEAL, W_SPLIT, W_MULTI = 0, 1, 2
#: Columns of the per-row sums: action sums of the three populations, then weights (plain and
#: "given no dealer blackjack" where the dealer peeks).
C_A2, C_AS, C_AM = 0, 5, 10
C_W2, C_W2N, C_WS, C_WSN, C_WM, C_WMN = 12, 13, 14, 15, 16, 17
N_CELL = 18
NEG = -1e300


@njit(cache=True)
def dealer_fill(rem, n_rem, up, infinite, probs, ds_counts, ds_n, ds_start, ds_child, ds_outcome, reach, out):
    """Dealer final-total distribution (before the peek) from the up card and what is left.

    ``rem``/``n_rem``: the cards the hole card and hits come from (or ``probs`` when infinite).
    A forward pass over the dealer's unfinished hands (see ``_space.DealerSpace``); ``reach`` is
    scratch space of the dealer-space size."""
    out[:] = 0.0
    first = ds_start[up - 1]
    last = ds_start[up]
    reach[first:last] = 0.0
    reach[first] = 1.0
    for i in range(first, last):
        p = reach[i]
        if p == 0.0:
            continue
        left = n_rem - ds_n[i]
        for v in range(10):
            if infinite:
                pr = p * probs[v]
            else:
                c = rem[v] - ds_counts[i, v]
                if c <= 0.0:
                    continue
                pr = p * c / left
            end = ds_outcome[i, v]
            if end >= 0:
                out[end] += pr
            else:
                reach[ds_child[i, v]] += pr


@njit(cache=True)
def _cache_key(up, removed):
    key = 0
    for v in range(10):
        key = key * KEY_BASE + removed[v]
    return key * 11 + up


@njit(cache=True)
def dealer_cached(up, removed, shoe, infinite, ds, cache, rem, reach, out):
    """dealer_fill for shoe minus removed, memoised per (up, removed) in a typed dict."""
    key = up if infinite else _cache_key(up, removed)
    if key in cache:
        out[:] = cache[key]
        return
    n_rem = 0.0
    for v in range(10):
        rem[v] = shoe[v] - removed[v] if not infinite else 0.0
        n_rem += rem[v]
    ds_counts, ds_n, ds_start, ds_child, ds_outcome = ds
    dealer_fill(rem, n_rem, up, infinite, shoe, ds_counts, ds_n, ds_start, ds_child, ds_outcome, reach, out)
    cache[key] = out.copy()


@njit(cache=True)
def draw_probs(shoe, removed, infinite, out):
    """Probability of drawing each value next; returns False when removed exceeds the shoe."""
    if infinite:
        out[:] = shoe
        return True
    n = 0.0
    for v in range(10):
        left = shoe[v] - removed[v]
        if left < 0:
            return False
        out[v] = left
        n += left
    if n <= 0:
        return False
    for v in range(10):
        out[v] /= n
    return True


@njit(cache=True)
def bj_prob(up, probs):
    """Chance the hole card completes a dealer blackjack, given next-card probabilities."""
    if up == 1:
        return probs[9]
    if up == 10:
        return probs[0]
    return 0.0


@njit(cache=True)
def double_ok(rv, total):
    """The engine's doubling rule (``engine.may_double``) read from a rules vector."""
    return E.may_double(int(rv[E.R_DOUBLE_ON]), total)


@njit(cache=True)
def surrender_ok(rv, up):
    """The engine's surrender rule (``engine.may_surrender_vs``) read from a rules vector."""
    return E.may_surrender_vs(int(rv[E.R_SURRENDER]), int(rv[E.R_SURR_VS_ACE_TEN]), up)


@njit(cache=True)
def bj_coef(rv):
    """Bets a hand loses to a dealer blackjack found after play, per unit it has out (0 or 1).

    Only no-hole-card games without OBO charge each hand; with a peek, or OBO, the blackjack's
    one-unit loss is settled per deal by the caller (it does not depend on the play)."""
    return 1.0 if rv[E.R_PEEK] == 0 and rv[E.R_OBO] == 0 else 0.0


@njit(cache=True)
def bust_value(rv, bet, pbj):
    """Joint value of a hand with ``bet`` out that busts, pbj counted from what is left.

    Peek: a dealer blackjack would have ended the round first (joint with no blackjack).
    No hole card, OBO: a lone busted hand loses it all (the dealer never draws), so only one
    unit of the per-deal blackjack charge comes back. No hole card, full loss: -bet."""
    if rv[E.R_PEEK] != 0:
        return -bet * (1.0 - pbj)
    if rv[E.R_OBO] != 0:
        return -bet + pbj
    return -bet


@njit(cache=True)
def deal_bj_base(rv, pbj):
    """Blackjack term the caller adds per non-natural deal for every action but surrender."""
    return -pbj if bj_coef(rv) == 0.0 else 0.0


@njit(cache=True)
def surrender_value(rv, pbj):
    """Joint value of surrendering a two-card hand (the blackjack base term subtracted)."""
    absolute = -0.5 if int(rv[E.R_SURRENDER]) == E.SURR_EARLY else -0.5 * (1.0 - pbj) - pbj
    return absolute - deal_bj_base(rv, pbj)


@njit(cache=True)
def first_of(order, a, b):
    """Whichever of actions a, b comes first in a preference order."""
    for k in range(5):
        if order[k] == a or order[k] == b:
            return order[k]
    return a


@njit(cache=True)
def first_legal(order, legal):
    for k in range(5):
        if legal[order[k]]:
            return order[k]
    return STAND


#: Every reordering of five positions, identity first (lexicographic order).
PERMUTATIONS = np.array(list(itertools.permutations(range(5))), dtype=np.int64)


@njit(cache=True)
def choose_order(a2, w2, a_split, w_split, am, wm, legal2, legal_split, force_stand, out):
    """The best preference order for one cell (the total-dependent optimum, see solver docs).

    Three populations use a cell: unsplit two-card hands (legal2), two-card split hands
    (legal_split) and multi-card hands (stand, hit); a2, a_split, am are their weighted value
    sums per action. The order maximising the sum of each population's first legal action is
    kept; among equals, the one closest to best-EV-first (so unused fallbacks are still right).
    """
    ev = np.empty(5, np.float64)
    for a in range(5):
        if w2 > 0:
            ev[a] = a2[a] / w2 if legal2[a] else NEG
        elif w_split > 0:
            ev[a] = a_split[a] / w_split if legal_split[a] else NEG
        elif a in (STAND, HIT):
            ev[a] = am[a] / wm if wm > 0 else 0.0
        else:
            ev[a] = NEG
    base = np.empty(5, np.int64)
    used = np.zeros(5, np.bool_)
    start = 0
    if force_stand:
        base[0] = STAND
        used[STAND] = True
        start = 1
    for k in range(start, 5):
        pick = -1
        for a in range(5):
            if not used[a] and (pick < 0 or ev[a] > ev[pick]):
                pick = a
        base[k] = pick
        used[pick] = True
    out[:] = base
    if force_stand:
        return
    order = np.empty(5, np.int64)
    best = NEG
    for i in range(PERMUTATIONS.shape[0]):
        for k in range(5):
            order[k] = base[PERMUTATIONS[i, k]]
        obj = a2[first_legal(order, legal2)] + a_split[first_legal(order, legal_split)]
        obj += am[first_of(order, STAND, HIT)]
        if obj > best + 1e-15:
            best = obj
            out[:] = order


@njit(cache=True)
def backward(
    up,
    base_removed,
    need,
    shoe,
    infinite,
    rv,
    counts,
    total,
    soft,
    child,
    proc,
    cell_start,
    cell_row,
    actions,
    mode,
    weights,
    ds,
    cache,
    js,
    jh,
    jd,
    jr,
    val,
    pbj,
    cells,
):
    """Values of every hand against one up card.

    mode: MODE_EVALUATE reads each row's order from actions, MODE_OPTIMIZE decides it (and writes
    it to actions), MODE_COMPOSITION lets every hand take its own best action (no table).

    base_removed: cards out of the shoe besides the hand itself (the up card, split cards).
    need: only hands holding this value index are evaluated (split hands), -1 for all.
    weights[W_DEAL / W_SPLIT / W_MULTI, h]: how often each hand is decided as an unsplit
    two-card hand, a two-card split hand, a multi-card hand.
    Writes per hand: js, jh, jd (per unit bet, joint values), jr, val (multi-card policy value),
    pbj (chance of a dealer blackjack from what is left); per row, cells[row, C_*]: the weighted
    sums the decisions and reports use.
    ds: the dealer space arrays for the rules' soft-17 rule (counts, n_cards, start, child, outcome).
    """
    c = bj_coef(rv)
    reach = np.empty(len(ds[1]), np.float64)
    removed = np.empty(10, np.int64)
    probs = np.empty(10, np.float64)
    rem = np.empty(10, np.float64)
    dist = np.empty(N_OUT, np.float64)
    legal2 = np.zeros(5, np.bool_)
    legal_split = np.zeros(5, np.bool_)
    surr = surrender_ok(rv, up)
    das = rv[E.R_DAS] != 0
    col = up - 1
    order = np.empty(5, np.int64)
    n_cells = len(cell_row)
    for ci in range(n_cells):
        row = cell_row[ci]
        sums = cells[row]
        sums[:] = 0.0
        for k in range(cell_start[ci], cell_start[ci + 1]):
            h = proc[k]
            if need >= 0 and counts[h, need] == 0:
                continue
            n_cards = 0
            for v in range(10):
                removed[v] = base_removed[v] + counts[h, v]
                n_cards += counts[h, v]
            if not draw_probs(shoe, removed, infinite, probs):
                js[h] = 0.0
                jh[h] = 0.0
                jd[h] = 0.0
                jr[h] = 0.0
                val[h] = 0.0
                pbj[h] = 0.0
                continue
            pb = bj_prob(up, probs)
            pbj[h] = pb
            t = total[h]
            dealer_cached(up, removed, shoe, infinite, ds, cache, rem, reach, dist)
            s = dist[O_BUST] - c * dist[O_BJ]
            for o in range(5):
                d_total = 17 + o
                if t > d_total:
                    s += dist[o]
                elif t < d_total:
                    s -= dist[o]
            js[h] = s
            hit = 0.0
            dbl = 0.0
            for v in range(10):
                p = probs[v]
                if p == 0.0:
                    continue
                nxt = child[h, v]
                if nxt < 0:
                    # bust: the hole card is drawn from what is left after this card too
                    if infinite:
                        pb2 = pb
                    else:
                        n_left = 0.0
                        for w in range(10):
                            n_left += shoe[w] - removed[w]
                        hits = 0.0
                        if up == 1:
                            hits = shoe[9] - removed[9] - (1.0 if v == 9 else 0.0)
                        elif up == 10:
                            hits = shoe[0] - removed[0] - (1.0 if v == 0 else 0.0)
                        pb2 = hits / (n_left - 1.0) if n_left > 1.0 else 0.0
                    hit += p * bust_value(rv, 1.0, pb2)
                    dbl += p * bust_value(rv, 2.0, pb2)
                else:
                    hit += p * val[nxt]
                    dbl += p * 2.0 * js[nxt]
            jh[h] = hit
            jd[h] = dbl
            jr[h] = surrender_value(rv, pb) if (n_cards == 2 and surr) else NEG
            norm = 1.0 - pb if c == 0.0 else 1.0
            if n_cards == 2:
                w = weights[W_DEAL, h]
                sums[C_W2] += w
                sums[C_W2N] += w * norm
                sums[C_A2 + STAND] += w * js[h]
                sums[C_A2 + HIT] += w * hit
                sums[C_A2 + DOUBLE] += w * dbl
                if surr:
                    sums[C_A2 + SURRENDER] += w * jr[h]
                w = weights[W_SPLIT, h]
                sums[C_WS] += w
                sums[C_WSN] += w * norm
                sums[C_AS + STAND] += w * js[h]
                sums[C_AS + HIT] += w * hit
                sums[C_AS + DOUBLE] += w * dbl
            else:
                w = weights[W_MULTI, h]
                sums[C_WM] += w
                sums[C_WMN] += w * norm
                sums[C_AM + STAND] += w * js[h]
                sums[C_AM + HIT] += w * hit
        t_row = total[proc[cell_start[ci]]]
        legal2[:] = False
        legal2[STAND] = True
        legal2[HIT] = True
        legal2[DOUBLE] = double_ok(rv, t_row)
        legal2[SURRENDER] = surr
        legal_split[:] = False
        legal_split[STAND] = True
        legal_split[HIT] = True
        legal_split[DOUBLE] = das and double_ok(rv, t_row)
        if mode == MODE_OPTIMIZE:
            choose_order(
                sums[C_A2 : C_A2 + 5],
                sums[C_W2],
                sums[C_AS : C_AS + 5],
                sums[C_WS],
                sums[C_AM : C_AM + 2],
                sums[C_WM],
                legal2,
                legal_split,
                t_row >= 21,
                order,
            )
            actions[row, col, :] = order
        multi = first_of(actions[row, col], STAND, HIT)
        for k in range(cell_start[ci], cell_start[ci + 1]):
            h = proc[k]
            if need >= 0 and counts[h, need] == 0:
                continue
            if mode == MODE_COMPOSITION and total[h] < 21:
                val[h] = max(js[h], jh[h])
            elif total[h] >= 21 or multi == STAND:
                val[h] = js[h]
            else:
                val[h] = jh[h]


@njit(cache=True)
def forward(up, base_removed, shoe, infinite, counts, n_cards, total, child, by_cards, first, weights, always_hit):
    """Chance of reaching each multi-card hand (any order of its cards) when playing on.

    first[W_DEAL / W_SPLIT / W_MULTI, h]: the action the hand takes in that role (HIT sends its
    weight on); weights[W_DEAL] and weights[W_SPLIT] are given, weights[W_MULTI] is written.
    always_hit: hit everything below 21 (the floor weights of unreachable hands)."""
    removed = np.empty(10, np.int64)
    probs = np.empty(10, np.float64)
    weights[W_MULTI, :] = 0.0
    for k in range(len(by_cards)):
        h = by_cards[k]
        if total[h] >= 21:
            continue
        if n_cards[h] == 2:
            weight = 0.0
            for role in (W_DEAL, W_SPLIT):
                if always_hit or first[role, h] == HIT:
                    weight += weights[role, h]
        else:
            weight = weights[W_MULTI, h] if (always_hit or first[W_MULTI, h] == HIT) else 0.0
        if weight == 0.0:
            continue
        for v in range(10):
            removed[v] = base_removed[v] + counts[h, v]
        if not draw_probs(shoe, removed, infinite, probs):
            continue
        for v in range(10):
            nxt = child[h, v]
            if nxt >= 0 and probs[v] > 0.0:
                weights[W_MULTI, nxt] += weight * probs[v]
