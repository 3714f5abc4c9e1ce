"""A counting strategy compiled: its count, bet ramp, index plays and exit rule as one float array.

The table driver (``table.policy_decision``) plays a ``POLICY_COUNT`` seat with
:func:`count_decision` and the simulator bets it by :func:`round_bet`; both read the policy's row
of ``params`` laid out by the ``PC_*`` offsets below (built by :func:`policy_params` from a
:class:`blackjack_env.counting.CountingStrategy`). The cards seen are the full shoe less the
shoe's remaining cards (the engine's ``S_COUNTS``) less a hole card still face down
(:func:`true_count`), derived afresh from the shoe at every bet and decision: ten products summed
as a tree, which cost less than carrying a count on from card to card.

How a decision is made (a fixed order): surrender?, split?, double?, then stand or hit;
the first "yes" is played. A question with an index entry in the cell is answered by the entry's
condition on the exact (float) true count; one without is answered by basic strategy (the rules'
table: is this action its first legal choice among those not already refused?). A hand of three or
more cards asks its stand question of the cell's entry for such hands (an entry of ``cards``
"any" or "three_or_more"), a hand of two cards of the entry for those ("any" or "two"). A question whose
action is illegal now is not asked. When an entry refuses to split a pair, the hand is played by
its total's cell (its surrender question too, unless an entry answered that); a pair not split by
basic strategy's answer stays in the pair's cell. A cell with no entry is played by the table
alone, exactly as the table policy plays it.
"""

from __future__ import annotations

import math

import numpy as np

from . import engine as E
from . import slots
from ._jit import njit
from .counting import MAX_RAMP_PAIRS, VALUES, CountingStrategy
from .strategy import N_ROWS, N_UP, hand_row, table_cell, table_play

# the four questions of a cell, in the order they are asked
Q_SURRENDER, Q_SPLIT, Q_DOUBLE, Q_STAND = range(4)
N_QUESTIONS = 4
# an entry's condition: none, "yes" at or above the index, "yes" below it
WHEN_NONE, WHEN_AT_OR_ABOVE, WHEN_BELOW = 0, 1, 2
#: Whole true counts (floored) the simulator keeps apart; the tails are pooled into the end buckets.
TC_LOW, TC_HIGH = -6, 10
N_TC = TC_HIGH - TC_LOW + 1

PC_TAGS = 0  # tag per card code 0..13 (code 0 unused): 14 slots
PC_INITIAL = 14  # initial running count (unbalanced systems)
PC_BALANCED = 15  # 1: true count = running count per unseen deck; 0: the running count itself
PC_EXIT_BELOW = 16  # leave the shoe once the true count is below this (-inf: no exit rule)
PC_INS_WHEN = 17  # insurance entry: WHEN_*
PC_INS_INDEX = 18
PC_RAMP_N = 19  # ramp pairs
PC_RAMP = 20  # MAX_RAMP_PAIRS (true count, bet) pairs
PC_ALL_SEEN = PC_RAMP + 2 * MAX_RAMP_PAIRS  # the running count once every card of the shoe is seen
PC_BET_BY_TC = PC_ALL_SEEN + 1  # 1 when the ramp's counts are whole and within the buckets, then
# the bet per true-count bucket (N_TC slots): a lookup instead of a search of the ramp
PC_CELL_ANY = PC_BET_BY_TC + 1 + N_TC  # per cell: 1 when the cell's play may depend on the count
PC_WHEN = PC_CELL_ANY + N_ROWS * N_UP  # per cell and question: WHEN_*
PC_INDEX = PC_WHEN + N_ROWS * N_UP * N_QUESTIONS  # per cell and question: the index
# the stand question of a hand of three or more cards, per cell: WHEN_* and the index (an entry of
# any cards fills both the question's slot above and this one; a two-card entry the one above only)
PC_LATER_WHEN = PC_INDEX + N_ROWS * N_UP * N_QUESTIONS
PC_LATER_INDEX = PC_LATER_WHEN + N_ROWS * N_UP
N_PARAMS = PC_LATER_INDEX + N_ROWS * N_UP


@njit(cache=True, _nrt=False, inline="always")
def cell_slot(row, col, question):
    """Offset of a cell's question within the PC_WHEN / PC_INDEX blocks."""
    return (row * N_UP + col) * N_QUESTIONS + question


@njit(cache=True, _nrt=False, forceinline=True)
def running_count(params, st):
    """The running count of every card seen so far: the count with every card seen less the tags
    of the unseen ones (the shoe's remaining cards, a hole card still face down: ``engine.unseen_tags``)."""
    return params[PC_ALL_SEEN] - E.unseen_tags(params, PC_TAGS, st)


@njit(cache=True, _nrt=False, forceinline=True)
def true_count(params, st):
    """The policy's count of every card seen so far: a balanced system's running count per unseen
    deck (a float, never rounded), an unbalanced one's running count."""
    running = running_count(params, st)
    if params[PC_BALANCED] == 0.0:
        return running
    unseen = slots.unseen_cards(st)
    return E.per_unseen_deck(running, unseen)


@njit(cache=True, _nrt=False, forceinline=True)
def tc_bucket(count):
    """The true count's bucket: its floor, the tails pooled into TC_LOW and TC_HIGH (0..N_TC-1)."""
    return min(max(math.floor(count), TC_LOW), TC_HIGH) - TC_LOW


@njit(cache=True, _nrt=False, forceinline=True)
def round_bet(params, count, bucket):
    """The ramp's bet at this true count: looked up by its bucket where the ramp's counts are whole
    and within the buckets (then count >= k exactly when floor(count) >= k), else searched."""
    if params[PC_BET_BY_TC] != 0.0:
        return params[PC_BET_BY_TC + 1 + bucket]
    return ramp_bet(params, count)


@njit(cache=True, _nrt=False, forceinline=True)
def ramp_bet(params, count):
    """The bet of the last ramp pair whose count is <= ``count`` (the first pair's below them all)."""
    last = 0  # the counts increase: the pairs at or below the count are a prefix
    for i in range(1, int(params[PC_RAMP_N])):  # no early exit: a count-dependent branch mispredicts
        last += params[PC_RAMP + 2 * i] <= count
    return params[PC_RAMP + 2 * last + 1]


@njit(cache=True, _nrt=False, inline="always")
def _holds(when, index, count):
    return count >= index if when == WHEN_AT_OR_ABOVE else count < index


@njit(cache=True, _nrt=False, inline="always")
def _first_choice(order, allowed):
    """The order's first action among ``allowed`` (a bit per action: legal and not refused yet),
    basic strategy's answer to a question."""
    for k in range(order.shape[0]):
        a = order[k]
        if (allowed >> a) & 1:
            return a
    return E.STAND


@njit(cache=True, _nrt=False, forceinline=True)
def count_decision(actions, insurance, params, st, hands):
    """The acting seat's action under a counting strategy (see the module docstring)."""
    phase = slots.phase(st)
    if phase == E.P_INSURANCE:
        when = params[PC_INS_WHEN]
        if when == WHEN_NONE:
            return E.INSURANCE if insurance[slots.natural(st)] else E.NO_INSURANCE
        take = _holds(when, params[PC_INS_INDEX], true_count(params, st))
        return E.INSURANCE if take else E.NO_INSURANCE
    if phase != E.P_PLAY:
        return E.STAND
    row, col, split_legal = table_cell(st, hands)
    if params[PC_CELL_ANY + row * N_UP + col] == 0.0:
        return table_play(actions, st, hands, row, col, split_legal)
    return _indexed_play(actions, params, st, hands, row, col, split_legal)


@njit(cache=True, _nrt=False)
def _indexed_play(actions, params, st, hands, row, col, split_legal):
    """The questions of a cell with index entries (about one decision in six). The count is taken
    once, up front: its one inlined copy costs less than a lazy count at each question."""
    count = true_count(params, st)
    h = slots.current_row(st)
    can_hit = not E.split_ace_locked(st, hands, h)
    can_double = E.can_double(st, hands, h)
    can_surrender = E.can_surrender(st, hands, h)
    # a bit per action still open to basic strategy's answers: legal, not refused yet
    allowed = (1 << E.STAND) | (int(can_hit) << E.HIT) | (int(can_double) << E.DOUBLE)
    allowed |= (int(split_legal) << E.SPLIT) | (int(can_surrender) << E.SURRENDER)
    if can_surrender:
        yes, surrender_entry = _answer(actions, params, row, col, Q_SURRENDER, E.SURRENDER, allowed, count)
        if yes:
            return E.SURRENDER
        allowed &= ~(1 << E.SURRENDER)
    if split_legal:
        yes, split_entry = _answer(actions, params, row, col, Q_SPLIT, E.SPLIT, allowed, count)
        if yes:
            return E.SPLIT
        allowed &= ~(1 << E.SPLIT)
        if split_entry:  # an entry refused the split: the hand is played by its total's cell
            hard = hands[h, E.H_HARD]
            aces = hands[h, E.H_ACES]
            row = hand_row(E.best_total(hard, aces), E.is_soft(hard, aces), 0, False)
            if can_surrender and not surrender_entry:  # that cell's own surrender answer
                yes, _ = _answer(
                    actions, params, row, col, Q_SURRENDER, E.SURRENDER, allowed | (1 << E.SURRENDER), count
                )
                if yes:
                    return E.SURRENDER
    if can_double:
        yes, _ = _answer(actions, params, row, col, Q_DOUBLE, E.DOUBLE, allowed, count)
        if yes:
            return E.DOUBLE
        allowed &= ~(1 << E.DOUBLE)
    if not can_hit:
        return E.STAND
    if hands[h, E.H_N] > 2:  # the cell's entry for hands of three or more cards
        cell = row * N_UP + col
        stand, _ = _entry_or_basic(
            actions, params, PC_LATER_WHEN + cell, PC_LATER_INDEX + cell, row, col, E.STAND, allowed, count
        )
    else:
        stand, _ = _answer(actions, params, row, col, Q_STAND, E.STAND, allowed, count)
    return E.STAND if stand else E.HIT


@njit(cache=True, _nrt=False, inline="always")
def _answer(actions, params, row, col, question, action, allowed, count):
    """(yes, by an entry): the cell's entry for the question decides on the count; without one,
    basic strategy does (``action`` is its first choice among those ``allowed``)."""
    slot = cell_slot(row, col, question)
    return _entry_or_basic(actions, params, PC_WHEN + slot, PC_INDEX + slot, row, col, action, allowed, count)


@njit(cache=True, _nrt=False, inline="always")
def _entry_or_basic(actions, params, when_at, index_at, row, col, action, allowed, count):
    """(yes, by an entry) for the entry whose condition is at ``when_at`` and index at ``index_at``."""
    when = params[when_at]
    if when != WHEN_NONE:
        return _holds(when, params[index_at], count), True
    return _first_choice(actions[row, col], allowed) == action, False


def policy_params(strategy: object, rules: object) -> np.ndarray:
    """The compiled form of a :class:`~blackjack_env.counting.CountingStrategy` for these rules."""
    assert isinstance(strategy, CountingStrategy)
    out = np.zeros(N_PARAMS, np.float64)
    tags = dict(zip(VALUES, strategy.system.tags, strict=True))
    for code in range(1, 14):
        value = min(code, 10)
        out[PC_TAGS + code] = tags["A" if value == 1 else str(value)]
    out[PC_INITIAL] = strategy.system.initial_running_count(rules.decks)  # type: ignore[attr-defined]
    out[PC_BALANCED] = float(strategy.system.balanced)
    out[PC_ALL_SEEN] = out[PC_INITIAL] + 4 * rules.decks * out[PC_TAGS : PC_TAGS + 14].sum()  # type: ignore[attr-defined]
    out[PC_EXIT_BELOW] = -math.inf if strategy.exit_below is None else strategy.exit_below
    out[PC_RAMP_N] = len(strategy.ramp)
    for i, (count, bet) in enumerate(strategy.ramp):
        out[PC_RAMP + 2 * i] = count
        out[PC_RAMP + 2 * i + 1] = bet
    thresholds = [count for count, _ in strategy.ramp[1:]]  # the first pair's count is never compared
    if all(float(k).is_integer() and TC_LOW < k <= TC_HIGH for k in thresholds):
        out[PC_BET_BY_TC] = 1.0
        for bucket in range(N_TC):
            out[PC_BET_BY_TC + 1 + bucket] = ramp_bet(out, float(TC_LOW + bucket))
    for entry in strategy.indices:
        _, when_name = entry.stand_form  # an H entry is the S entry it equals
        when = WHEN_AT_OR_ABOVE if when_name == "at_or_above" else WHEN_BELOW
        if entry.hand == "insurance":
            out[PC_INS_WHEN] = when
            out[PC_INS_INDEX] = entry.index
            continue
        cell = entry.row * N_UP + entry.col
        if entry.cards != "three_or_more":
            slot = cell_slot(entry.row, entry.col, entry.question_id)
            out[PC_WHEN + slot] = when
            out[PC_INDEX + slot] = entry.index
        if entry.question_id == Q_STAND and entry.cards != "two":
            out[PC_LATER_WHEN + cell] = when
            out[PC_LATER_INDEX + cell] = entry.index
        out[PC_CELL_ANY + cell] = 1.0
    return out
