"""The table's compiled driver: every seat's decisions made by its policy inside one call.

A compiled policy is data: its kind (a strategy table or uniform random legal play), the table's
preference lists and insurance choices, and its own random generator. ``play_until`` plays a
round at a table whose seats each point at one of those policies (``SEAT_POLICY`` in the seat's
block of the table state), stopping when a given seat
(the env's agent) must decide, or at the round's end. The envs, the vector envs and the
simulator all run the round through it, so an env step never returns to Python for the
other seats.
"""

from __future__ import annotations

from numba import njit

from . import engine as E
from .strategy import table_decision

POLICY_TABLE, POLICY_RANDOM = 0, 1
NO_SEAT = -1  # play_until's stop seat when every seat is played by its policy


@njit(cache=True, _nrt=False, forceinline=True)
def policy_decision(kind, actions, insurance, st, hands, mask, prng):
    """The acting seat's action under a policy: its table's choice, or a uniform legal one."""
    if kind == POLICY_TABLE:
        return table_decision(actions, insurance, st, hands)
    E.legal_mask(st, hands, mask)
    return E.uniform_legal(prng, 0, mask, E.N_ACTIONS)


@njit(cache=True, _nrt=False, forceinline=True)
def play_until(st, hands, shoe, rv, res, action, stop_seat, kinds, actions, insurance, mask, prngs):
    """Deal a round (``action`` < 0) or apply the stop seat's ``action``, then let the seats'
    policies act (seat s plays policy ``st[seat_slot(s, SEAT_POLICY)]``) until ``stop_seat``
    must decide or the round is over. One call site each of ``start_round`` and ``step_round``,
    so both inline once."""
    if action < 0:
        E.start_round(st, hands, shoe, res)
    while True:
        if action >= 0:
            E.step_round(st, hands, shoe, rv, res, action)
        if st[E.S_PHASE] == E.P_OVER or st[E.S_SEAT] == stop_seat:
            return
        p = st[E.seat_slot(st[E.S_SEAT], E.SEAT_POLICY)]
        action = policy_decision(kinds[p], actions[p], insurance[p], st, hands, mask, prngs[p])
