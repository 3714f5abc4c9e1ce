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

from typing import Any, NamedTuple

import numpy as np

from . import engine as E
from ._jit import njit
from .count_policy import count_decision
from .linear_policy import linear_decision
from .rules import MAX_HANDS
from .strategy import N_PLAY, N_ROWS, N_UP, StrategyTable, table_decision

POLICY_TABLE, POLICY_RANDOM, POLICY_COUNT, POLICY_LINEAR = 0, 1, 2, 3  # LINEAR: a composition model
NO_SEAT = -1  # play_until's stop seat when every seat is played by its policy
EVERY_SEAT = -2  # play_until's stop seat when every seat is an agent (the PettingZoo table)
SHOE_STEPS = 52  # the shoe-dealt observation counts 52nds of the shoe
VALUES = 10  # card values 1 (ace) .. 10: the PettingZoo table counts the other seats' cards per value


class Table(NamedTuple):
    """One table's arrays (``engine``'s layout), passed to the kernels as one value: its state
    ``st``, ``hands``, ``shoe``, the rules ``rv``, the results ``res``, and the acting seat's
    observation ``obs`` and legal actions ``mask`` (a kernel that writes no observation gives an
    empty ``obs``), and the expected reward's dealer-outcome cache ``dealer`` (``engine.new_dealer_cache``;
    no rows for the dealt reward). The vector env keeps a batch of them, one row a table (``table_at``;
    the rules and the cache shared)."""

    st: np.ndarray
    hands: np.ndarray
    shoe: np.ndarray
    rv: np.ndarray
    res: np.ndarray
    obs: np.ndarray
    mask: np.ndarray
    dealer: np.ndarray


class Policies(NamedTuple):
    """The seats' compiled policies, row p policy p (a seat plays the one its block names): ``kinds``
    (``POLICY_*``), a strategy table's ``actions`` and ``insurance``, each policy's random generator
    ``prngs`` (4 words a row), and ``counting``: None where no counting strategy plays (numba then
    compiles their play out), else a row per policy of ``count_policy``'s or ``linear_policy``'s
    parameters."""

    kinds: np.ndarray
    actions: np.ndarray
    insurance: np.ndarray
    prngs: np.ndarray
    counting: Any


class Chunk(NamedTuple):
    """A chunk of rounds from a fresh shoe: its seed ``words`` (the cards' generator first), its
    length (``rounds``; the tabular learner counts env steps), the table's boxes (``seats``), the
    seat that learns or is evaluated (``seat``; -1: every seat, where a learner allows it) and the
    round's kind (``at_table``, ``engine.table_kind``)."""

    words: np.ndarray
    rounds: int
    seats: int
    seat: int
    at_table: int | None


def new_table(rules_array: np.ndarray, seats: int = 1, n_obs: int = 0) -> Table:
    """Zeroed arrays of a table of ``seats`` boxes for these rules (an ``n_obs`` observation), which
    settles the dealt result (no dealer-outcome cache)."""
    return Table(
        np.zeros(E.ST_SIZE, np.int64),
        E.new_hands(seats),
        E.new_shoe(int(rules_array[E.R_DECKS])),
        rules_array,
        E.new_res(seats),
        np.zeros(n_obs, np.int64),
        np.zeros(E.N_ACTIONS, np.bool_),
        E.new_dealer_cache(False),
    )


def driver_policies(kind: int, table: StrategyTable | None) -> tuple[np.ndarray, ...]:
    """The driver's policy arrays (kinds, actions, insurance) for one table policy (the envs' other
    seats); a random policy's table arrays are unused zeros."""
    actions = table.actions if table is not None else np.zeros((N_ROWS, N_UP, N_PLAY), np.int64)
    insurance = table.insurance if table is not None else np.zeros(2, np.bool_)
    return np.array([kind], np.int64), actions[None].copy(), insurance[None].copy()


def table_policies(kind: int, table: StrategyTable | None, n_generators: int = 1) -> Policies:
    """One table policy (``driver_policies``) with ``n_generators`` zeroed generators."""
    kinds, actions, insurance = driver_policies(kind, table)
    return Policies(kinds, actions, insurance, np.zeros((n_generators, 4), np.int64), None)


@njit(cache=True, _nrt=False, forceinline=True)
def policy_decision(policies, counting, p, st, hands, mask):
    """The acting seat's action under policy ``p``: its table's choice, a counting strategy's (its
    row of ``counting``, see ``count_policy``), or a uniform legal one. ``counting`` is
    ``policies.counting`` as an argument, so that numba prunes its branch where it is None. Where
    counting strategies play a table plays through ``count_decision`` too: with no entries it is
    the table's choice, and the kernel holds one copy of that code instead of two."""
    kind = policies.kinds[p]
    if counting is not None:  # None: numba prunes this branch at compile time
        if kind == POLICY_LINEAR:  # a composition model (``linear_policy``): its row of ``counting``
            return linear_decision(counting[p], st, hands, mask)
        if kind != POLICY_RANDOM:
            return count_decision(policies.actions[p], policies.insurance[p], counting[p], st, hands)
    elif kind == POLICY_TABLE:
        return table_decision(policies.actions[p], policies.insurance[p], st, hands)
    E.legal_mask(st, hands, mask)
    return E.uniform_legal(policies.prngs[p], 0, mask, E.N_ACTIONS)


@njit(cache=True, _nrt=False, inline="always")
def play_until(table, policies, action, stop_seat, at_table):
    """Deal a round (``action`` < 0) or apply the stop seat's ``action``, then let the seats'
    policies act (each seat the policy its block names) until ``stop_seat`` must decide (any seat,
    when it is ``EVERY_SEAT``) or the round is over. ``at_table``: the round's kind (``engine.table_kind``)."""
    st = table.st
    while True:
        play_action(table, action, at_table)
        seat = E.acting_seat(st, at_table)
        if st[E.S_PHASE] == E.P_OVER or seat == stop_seat or stop_seat == EVERY_SEAT:
            return
        p = st[E.seat_slot(seat, E.SEAT_POLICY)]
        action = policy_decision(policies, policies.counting, p, st, table.hands, table.mask)


@njit(cache=True, _nrt=False, inline="always")
def play_action(table, action, at_table):
    """Deal a round (``action`` < 0) or apply the acting seat's ``action``: one call site each of
    ``start_round`` and ``step_round``, so both inline once."""
    if action < 0:
        E.start_round(table.st, table.hands, table.shoe, table.res, at_table)
    else:
        E.step_round(table.st, table.hands, table.shoe, table.rv, table.res, table.dealer, action, at_table)


@njit(cache=True, _nrt=False, forceinline=True)
def table_at(tables, i):
    """Table i of a batch (the vector env's arrays, one row a table; the rules and the dealer cache shared)."""
    st, hands, shoe, res = tables.st[i], tables.hands[i], tables.shoe[i], tables.res[i]
    return Table(st, hands, shoe, tables.rv, res, tables.obs[i], tables.mask[i], tables.dealer)


@njit(cache=True, _nrt=False, forceinline=True)
def policies_at(policies, i):
    """Table i's policies in a batch (the policies shared, each table its own generators)."""
    return Policies(policies.kinds, policies.actions, policies.insurance, policies.prngs[i], policies.counting)


@njit(cache=True, _nrt=False, forceinline=True)
def seed_generator(prng, words, block):
    """A generator's four words from ``words[4 * block:]`` (element copies: a slice copy would need
    numba's allocator)."""
    for k in range(4):
        prng[k] = words[4 * block + k]


@njit(cache=True, _nrt=False, forceinline=True)
def start_chunk(table, seats, words, policy):
    """A table readied for a chunk of rounds: cleared, ``seats`` boxes every one playing policy
    ``policy``, the rules loaded, and a fresh shoe whose cards are seeded by ``words[:4]``
    (``engine.fresh_shoe``: where every seeded shoe starts). The chunk's other generators are the
    caller's (``seed_generator``)."""
    st = table.st
    st[:] = 0
    table.hands[:, :] = 0
    E.set_seats(st, seats)
    E.load_rules(st, table.rv)
    E.fresh_shoe(st, table.shoe, int(table.rv[E.R_DECKS]), words)
    for s in range(E.MAX_SEATS):
        st[E.seat_slot(s, E.SEAT_POLICY)] = policy


@njit(cache=True, _nrt=False, forceinline=True)
def named(table, policies):
    """(Table, Policies) from either, or from plain tuples of their fields in order: what Python
    passes to an entry kernel, as numba types a plain tuple argument several times faster than a
    named one (a microsecond of every env step)."""
    return Table(*table), Policies(*policies)


@njit(cache=True, _nrt=False)
def env_advance(table, policies, action, bets, at_table):
    """One env transition at a table; returns the agent's reward (its bet times its result).

    ``action`` < 0 deals a round (Blackjack-v0's reset); in a shoe episode's bet phase it is a
    bet id (``N_ACTIONS + i`` places ``bets[i]``, 0 sits the round out, which is then played
    by the other seats alone); else it is the agent's play. The other seats then act until the
    agent must decide or the round is over; a shoe episode then opens the next bet, unless the
    cut card came out (the episode's end: phase ``P_OVER`` with no bet due). The agent's
    observation and mask are written. The env's settings are table state (``S_AGENT``,
    ``S_COUNT_MODE``, ``S_OBS_EXTRA``): every argument costs the Python call of a step; but the
    round's kind (``at_table``, ``engine.table_kind``) must be an argument, as numba compiles
    the lone seat's round apart. ``table`` and ``policies`` may be plain tuples (``named``)."""
    table, policies = named(table, policies)
    st = table.st
    agent = st[E.S_AGENT]
    stop = agent
    if st[E.S_BETTING]:
        level = action - E.N_ACTIONS
        st[E.S_BET_LEVEL] = level
        st[E.S_BETTING] = 0
        playing = bets[level] > 0
        st[E.seat_slot(agent, E.SEAT_ACTIVE)] = playing
        if not playing:
            stop = NO_SEAT  # the round is played by the others alone
        action = -1
    if at_table is None:  # the lone seat is the agent's and always plays (no bet of 0 alone): it acts
        play_action(table, action, at_table)  # next or the round is over, and no policy is compiled
    else:
        play_until(table, policies, action, stop, at_table)
    reward = 0.0
    over = st[E.S_PHASE] == E.P_OVER
    if over and st[E.seat_slot(agent, E.SEAT_ACTIVE)]:
        reward = bets[st[E.S_BET_LEVEL]] * table.res[agent * E.RES_SIZE + E.RES_REWARD]
    if over and st[E.S_SHOE_EPISODE] and not shoe_ended(st):
        st[E.S_BETTING] = 1
    E.save_seat(st)  # every seat block current, for the adapters' summaries
    write_agent_view(st, table.hands, table.obs, table.mask)
    return reward


@njit(cache=True, _nrt=False)
def table_advance(table, policies, action, at_table):
    """Deal a round (``action`` < 0) or apply the acting seat's action, then stop at the next
    seat's decision (or the round's end): the PettingZoo table's transition, every seat an agent
    (``multiagent``). Writes the acting seat's legal actions (all False once the round is over).
    ``table`` and ``policies`` may be plain tuples (``named``)."""
    table, policies = named(table, policies)
    play_until(table, policies, action, EVERY_SEAT, at_table)
    E.save_seat(table.st)  # every seat block current, for the observations and the summaries
    E.legal_mask(table.st, table.hands, table.mask)


@njit(cache=True, _nrt=False, forceinline=True)
def shoe_episode(st):
    """An env's episode is a shoe, with a bet before each round."""
    return st[E.S_SHOE_EPISODE]


@njit(cache=True, _nrt=False, forceinline=True)
def episode_over(st):
    """An env's episode is over: the round settled and no bet due (a shoe episode's cut card came out)."""
    return st[E.S_PHASE] == E.P_OVER and not st[E.S_BETTING]


@njit(cache=True, _nrt=False)
def write_seat_obs(st, hands, obs, seat, count_mode, cards_base):
    """Seat ``seat``'s observation: the single env's components as that seat sees the table (its
    current hand, the up card, the count), then from ``cards_base`` the other seats' cards, a
    count per value 1-10 for each other seat in seat order (every card of every hand: all are
    dealt face up). The acting seat's scalars are left as they were."""
    acting = st[E.S_SEAT]
    if seat != acting:  # the seat's own scalars (save_seat after every step keeps blocks current)
        E._load_seat(st, seat)
    E.write_obs(st, hands, obs, count_mode)
    if seat != acting:
        E._load_seat(st, acting)
    k = cards_base
    for other in range(st[E.S_SEATS]):
        if other == seat:
            continue
        for v in range(VALUES):
            obs[k + v] = 0
        if st[E.seat_slot(other, E.SEAT_ACTIVE)] != 0:
            row0 = other * MAX_HANDS
            for h in range(row0, row0 + st[E.seat_slot(other, E.SEAT_NUM_HANDS)]):
                for c in range(hands[h, E.H_N]):
                    obs[k + E.card_value(hands[h, E.H_CARDS + c]) - 1] += 1
        k += VALUES


@njit(cache=True, _nrt=False)
def shoe_ended(st):
    """The cut card came out (or the shoe ran out and was reshuffled mid-round): a shoe episode
    ends with the round being settled."""
    return st[E.S_SHOE_POS] >= st[E.S_CUT] or st[E.S_MID_SHUFFLE] != 0


@njit(cache=True, _nrt=False)
def write_agent_view(st, hands, obs, mask):
    """The agent's observation and legal actions: its decision in the round, or a bet due; a shoe
    episode's two extra components (bet level, 52nds of the shoe dealt) from ``S_OBS_EXTRA`` on."""
    E.write_view(st, hands, obs, mask, st[E.S_COUNT_MODE])
    extra = st[E.S_OBS_EXTRA]
    if extra == 0:  # not a shoe episode (its extras never start at 0)
        return
    n_bets = mask.shape[0] - E.N_ACTIONS
    if st[E.S_BETTING]:
        obs[E.O_PHASE] = E.P_BET
        obs[E.O_UP] = 0  # the last round's up card is history: the count carries what matters
        for i in range(n_bets):
            mask[E.N_ACTIONS + i] = True
        obs[extra] = 0
    else:
        obs[extra] = st[E.S_BET_LEVEL] + 1
    obs[extra + 1] = min(SHOE_STEPS, st[E.S_SHOE_POS] * SHOE_STEPS // max(st[E.S_SHOE_LEN], 1))


@njit(cache=True, _nrt=False)
def begin_shoe(st):
    """A shoe episode's start: a fresh shuffle, nothing stacked, the first bet due."""
    E.reset_shoe(st)
    st[E.S_FORCE_SHUFFLE] = 0
    st[E.S_STACK_POS] = 0
    st[E.S_STACK_LEN] = 0
    st[E.S_FIXED_END] = 0
    st[E.S_BETTING] = 1
    st[E.S_PHASE] = E.P_OVER


def start_shoe(st: np.ndarray, shoe: np.ndarray, codes: list[int]) -> None:
    """``begin_shoe`` with ``codes`` on top of the shoe in deal order (the env checked that the
    shoe holds them): each is swapped into place, and draws take them in order."""
    begin_shoe(st)
    for i, code in enumerate(codes):
        j = i + int(np.flatnonzero(shoe[i:] == code)[0])
        shoe[i], shoe[j] = shoe[j], shoe[i]
    st[E.S_FIXED_END] = len(codes)
