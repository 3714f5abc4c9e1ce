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

from .. import engine as E
from .._jit import njit

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
#: How much of a hand a backward pass values (``split_levels``): nothing, its stand value, everything.
LEVEL_SKIP, LEVEL_STAND, LEVEL_FULL = 0, 1, 2


@njit(cache=True, inline="always")
def copy_into(out, src):
    """out[:] = src, element by element: numba's array-to-array assignment compiles its shape-mismatch
    message (string formatting), 1.5 s of CPU the first time a process compiles one."""
    for i in range(len(out)):
        out[i] = src[i]


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
        copy_into(out, cache[key])
        return
    n_rem = 0.0
    for v in range(10):
        rem[v] = shoe[v] - removed[v] if not infinite else 0.0
        n_rem += rem[v]
    ds_counts, ds_n, ds_start, ds_child, ds_outcome = ds
    dealer_fill(rem, n_rem, up, infinite, shoe, ds_counts, ds_n, ds_start, ds_child, ds_outcome, reach, out)
    cache[key] = out.copy()


@njit(cache=True)
def dealer_rows(up, removed, valid, shoe, ds, cache, out):
    """dealer_cached for every row of ``removed`` where ``valid`` (out[i]: that row's outcomes), in
    one call: the second-moment pass (``moments``) asks for every hand of the space at once."""
    rem = np.empty(10, np.float64)
    reach = np.empty(len(ds[1]), np.float64)
    dist = np.empty(N_OUT, np.float64)
    for i in range(removed.shape[0]):
        if valid[i]:
            dealer_cached(up, removed[i], shoe, False, ds, cache, rem, reach, dist)
            copy_into(out[i], dist)


@njit(cache=True)
def draw_probs(shoe, removed, infinite, out):
    """Probability of drawing each value next; returns False when removed exceeds the shoe."""
    if infinite:
        copy_into(out, shoe)
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
    copy_into(out, base)
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
            copy_into(out, order)


@njit(cache=True, inline="always")
def stand_value(total, dist, c):
    """Joint value of standing on ``total`` against the dealer's distribution ``dist``; c is
    :func:`bj_coef` (whether this hand pays a dealer blackjack found after play)."""
    s = dist[O_BUST] - c * dist[O_BJ]
    for o in range(5):
        d_total = 17 + o
        if total > d_total:
            s += dist[o]
        elif total < d_total:
            s -= dist[o]
    return s


@njit(cache=True)
def hole_bj_after(up, v, n_left, aces_left, tens_left):
    """Chance the hole card completes a dealer blackjack once value ``v`` is drawn from a finite
    shoe holding n_left cards (aces_left aces, tens_left ten-values): a hand that busts is
    settled against the hole card drawn from what is left after it."""
    hits = 0.0
    if up == 1:
        hits = tens_left - (1.0 if v == 9 else 0.0)
    elif up == 10:
        hits = aces_left - (1.0 if v == 0 else 0.0)
    return hits / (n_left - 1.0) if n_left > 1.0 else 0.0


@njit(cache=True, inline="always")
def draw_values(h, child, up, shoe, infinite, rv, removed, probs, pb, js, val):
    """Joint values of hitting a hand (then playing on by ``val``) and of doubling it (one card,
    then standing by ``js``), per unit bet. child[h, v]: the hand after drawing value v (-1:
    bust), valued already; removed, probs: the cards out and next-card chances with the hand out.
    Inlined (numba's inline), the hole-card chance after a bust from scalars: as calls taking
    arrays, the reference counts of those arrays made the whole pass about 1.4x slower."""
    n_left = 0.0
    if not infinite:
        for w in range(10):
            n_left += shoe[w] - removed[w]
    aces_left = shoe[0] - removed[0]
    tens_left = shoe[9] - removed[9]
    hit = 0.0
    dbl = 0.0
    for v in range(10):
        p = probs[v]
        if p == 0.0:
            continue
        nxt = child[h, v]
        if nxt < 0:
            pb2 = pb if infinite else hole_bj_after(up, v, n_left, aces_left, tens_left)
            hit += p * bust_value(rv, 1.0, pb2)
            dbl += p * bust_value(rv, 2.0, pb2)
        else:
            hit += p * val[nxt]
            dbl += p * 2.0 * js[nxt]
    return hit, dbl


@njit(cache=True, inline="always")
def add_to_sums(sums, actions_at, weight_at, w, norm, stand, hit, dbl, doubles):
    """Add one hand, deciding ``w`` times, to a population's weighted sums in a row's cells:
    weights at weight_at (plain, then given no dealer blackjack), action values from actions_at."""
    sums[weight_at] += w
    sums[weight_at + 1] += w * norm
    sums[actions_at + STAND] += w * stand
    sums[actions_at + HIT] += w * hit
    if doubles:
        sums[actions_at + DOUBLE] += w * dbl


@njit(cache=True)
def value_cell(hands, up, base_removed, need, game, memo, space, weights, work, out, sums, level):
    """Every hand of one cell (``hands``) valued against ``up``: out's js, jh, jd, jr, pbj (zeros
    where its cards are not in the shoe), and the cell's weighted sums (``sums``) over the three
    populations deciding there. The tuples are unpacked here, once per cell: unpacked per hand,
    their reference counting doubled the pass's time. work: (removed, probs, rem, reach, dist).
    level[h] (see ``split_levels``): LEVEL_FULL values the hand, LEVEL_STAND only its stand value
    (jh, jd NaN, not in the sums), LEVEL_SKIP leaves it out (zeros, no dealer outcome)."""
    shoe, infinite, rv, ds = game
    counts, n_cards, total, child = space[0], space[1], space[2], space[3]
    removed, probs, rem, reach, dist = work
    js, jh, jd, jr, val, pbj = out[0], out[1], out[2], out[3], out[4], out[5]
    c = bj_coef(rv)
    surr = surrender_ok(rv, up)
    sums[:] = 0.0
    for h in hands:
        if (need >= 0 and counts[h, need] == 0) or level[h] == LEVEL_SKIP:
            continue
        for v in range(10):
            removed[v] = base_removed[v] + counts[h, v]
        if not draw_probs(shoe, removed, infinite, probs):
            js[h] = jh[h] = jd[h] = jr[h] = val[h] = pbj[h] = 0.0
            continue
        pb = bj_prob(up, probs)
        pbj[h] = pb
        dealer_cached(up, removed, shoe, infinite, ds, memo, rem, reach, dist)
        js[h] = stand_value(total[h], dist, c)
        if level[h] == LEVEL_STAND:
            jh[h] = jd[h] = jr[h] = np.nan  # never read: a hand hit or doubled into is valued in full
            continue
        jh[h], jd[h] = draw_values(h, child, up, shoe, infinite, rv, removed, probs, pb, js, val)
        two = n_cards[h] == 2
        jr[h] = surrender_value(rv, pb) if (two and surr) else NEG
        norm = 1.0 - pb if c == 0.0 else 1.0
        if two:
            add_to_sums(sums, C_A2, C_W2, weights[W_DEAL, h], norm, js[h], jh[h], jd[h], True)
            if surr:
                sums[C_A2 + SURRENDER] += weights[W_DEAL, h] * jr[h]
            add_to_sums(sums, C_AS, C_WS, weights[W_SPLIT, h], norm, js[h], jh[h], jd[h], True)
        else:
            add_to_sums(sums, C_AM, C_WM, weights[W_MULTI, h], norm, js[h], jh[h], 0.0, False)


@njit(cache=True)
def cell_legal(rv, up, total, legal2, legal_split):
    """Fill the actions a cell's unsplit two-card hands (legal2) and two-card split hands
    (legal_split) may take against ``up`` at ``total``; SPLIT is left to the pair rows."""
    legal2[:] = False
    legal2[STAND] = True
    legal2[HIT] = True
    legal2[DOUBLE] = double_ok(rv, total)
    legal2[SURRENDER] = surrender_ok(rv, up)
    legal_split[:] = False
    legal_split[STAND] = True
    legal_split[HIT] = True
    legal_split[DOUBLE] = rv[E.R_DAS] != 0 and double_ok(rv, total)


@njit(cache=True)
def decide_cell(rv, up, total, sums, order):
    """The preference order of one cell (row at ``total``, up card ``up``) from its sums."""
    legal2 = np.zeros(5, np.bool_)
    legal_split = np.zeros(5, np.bool_)
    cell_legal(rv, up, total, legal2, legal_split)
    choose_order(
        sums[C_A2 : C_A2 + 5],
        sums[C_W2],
        sums[C_AS : C_AS + 5],
        sums[C_WS],
        sums[C_AM : C_AM + 2],
        sums[C_WM],
        legal2,
        legal_split,
        total >= 21,
        order,
    )


@njit(cache=True)
def settle_cell(hands, need, counts, total, multi, composition, js, jh, val):
    """Each hand's value once its cell is decided (val, what a hit leading here is worth): its own
    best of stand and hit (composition), else the cell's multi-card choice ``multi``."""
    for h in hands:
        if need >= 0 and counts[h, need] == 0:
            continue
        if composition and total[h] < 21:
            val[h] = max(js[h], jh[h])
        elif total[h] >= 21 or multi == STAND:
            val[h] = js[h]
        else:
            val[h] = jh[h]


@njit(cache=True)
def backward(up, base_removed, need, game, memo, space, actions, mode, weights, out, level):
    """Values of every hand against one up card, cell by cell from high totals down (a hit always
    lands in a cell valued already).

    mode: MODE_EVALUATE reads each row's order from actions, MODE_OPTIMIZE decides it (and writes
    it to actions), MODE_COMPOSITION lets every hand take its own best action (no table).
    base_removed: cards out of the shoe besides the hand itself (the up card, split cards).
    need: only hands holding this value index are evaluated (split hands), -1 for all.
    game: (shoe, infinite, rules vector, dealer space arrays), see ``Model.game``; memo: the
    dealer outcomes already computed for this shoe (a typed dict, kept apart: a tuple holding it
    is typed slowly at every call from Python).
    space: (counts, n_cards, total, child, proc, cell_start, cell_row) of the hand space.
    weights[W_DEAL / W_SPLIT / W_MULTI, h]: how often each hand is decided as an unsplit
    two-card hand, a two-card split hand, a multi-card hand.
    out: (js, jh, jd, jr, val, pbj, cells) written: per hand and unit bet the joint values of
    stand, hit, double, surrender, the value under the policy, the chance of a dealer blackjack
    from what is left; per row, cells[row, C_*]: the weighted sums the decisions and reports use.
    level: per hand, how much of it to value (``value_cell``); LEVEL_FULL everywhere for a full pass.
    """
    rv = game[2]
    counts, total, proc, cell_start, cell_row = space[0], space[2], space[4], space[5], space[6]
    work = (
        np.empty(10, np.int64),
        np.empty(10, np.float64),
        np.empty(10, np.float64),
        np.empty(len(game[3][1]), np.float64),
        np.empty(N_OUT, np.float64),
    )
    order = np.empty(5, np.int64)
    col = up - 1
    for ci in range(len(cell_row)):
        row = cell_row[ci]
        hands = proc[cell_start[ci] : cell_start[ci + 1]]
        value_cell(hands, up, base_removed, need, game, memo, space, weights, work, out, out[6][row], level)
        if mode == MODE_OPTIMIZE:
            decide_cell(rv, up, total[hands[0]], out[6][row], order)
            copy_into(actions[row, col], order)
        multi = first_of(actions[row, col], STAND, HIT)
        settle_cell(hands, need, counts, total, multi, mode == MODE_COMPOSITION, out[0], out[1], out[4])


@njit(cache=True)
def split_levels(roots, root_draws, n_cards, total, child, row, by_cards, multi_hit, level):
    """Which hands a split hand's backward pass must value (``level``), from the two-card split hands
    it is asked for (``roots``) down what the table draws to: a root is valued in full where it hits
    or doubles (root_draws[r]: 2 it hits, the children's values needed; 1 it only doubles, their
    stand values; 0 it stands), else its stand value only; a multi-card hand reached by a hit is
    valued in full where its row hits (multi_hit[row]) and below 21, else its stand value; every
    other hand is skipped. The roots' values read nothing else, so they come out bit for bit as a
    full pass's: about two hands in three are skipped (the dealer outcomes they would need too)."""
    want = np.zeros(len(n_cards), np.int64)  # 2: a parent hits to it, 1: only doubles to it
    level[:] = LEVEL_SKIP
    for r in range(len(roots)):
        h = roots[r]
        level[h] = LEVEL_FULL if root_draws[r] > 0 else max(level[h], LEVEL_STAND)
        for v in range(10):
            c = child[h, v]
            if c >= 0 and root_draws[r] > want[c]:
                want[c] = root_draws[r]
    for k in range(len(by_cards)):
        h = by_cards[k]
        if n_cards[h] < 3 or want[h] == 0:
            continue
        if want[h] == 2 and total[h] < 21 and multi_hit[row[h]]:
            level[h] = LEVEL_FULL
            for v in range(10):
                c = child[h, v]
                if c >= 0:
                    want[c] = 2
        else:
            level[h] = LEVEL_STAND


@njit(cache=True)
def first_actions(rv, up, actions, row, n_cards, total, pair_row, first):
    """The action each hand takes first under a table against ``up``, per role: first[W_DEAL] as an
    unsplit two-card hand (from its pair row, SPLIT legal, where pair_row[h] >= 0: a pair that may
    be split), first[W_SPLIT] as a two-card split hand, first[W_MULTI] as a multi-card hand."""
    legal2 = np.zeros(5, np.bool_)
    legal_split = np.zeros(5, np.bool_)
    col = up - 1
    for h in range(len(n_cards)):
        order = actions[row[h], col]
        if n_cards[h] == 2:
            cell_legal(rv, up, total[h], legal2, legal_split)
            first[W_SPLIT, h] = first_legal(order, legal_split)
            if pair_row[h] >= 0:
                order = actions[pair_row[h], col]
                legal2[SPLIT] = True
            first[W_DEAL, h] = first_legal(order, legal2)
        else:
            first[W_MULTI, h] = first_of(order, STAND, HIT)


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
