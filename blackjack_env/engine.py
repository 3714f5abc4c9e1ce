"""The game itself: dealing, legal actions, dealer play and settlement, written once.

Everything here is a small ``numba``-compiled function over plain integer arrays, so the single
env, the vector env and the batch simulator all run this very code. With ``NUMBA_DISABLE_JIT=1``
the same functions run as plain Python (for debugging and coverage).

State of one table (see the index constants below):

* ``st``    int64[ST_SIZE]: round scalars, the random-number state, remaining cards per rank,
  stacked cards and the dealer's cards.
* ``hands`` int16[seats * MAX_HANDS, HAND_FIELDS]: every seat's hands (totals, bet, status,
  cards), MAX_HANDS rows a seat: seat s's hand i is row s * MAX_HANDS + i.
* ``shoe``  int8[n_cards]: the shoe as card codes; ``shoe[:pos]`` have been dealt. Cards are
  drawn by a lazy Fisher-Yates shuffle (each draw swaps a uniformly chosen undealt card into
  place), so shuffling is O(1) and the dealt order is a uniform random permutation.
  Empty for an infinite deck, where every draw is an independent uniform rank.
* ``rv``    float64[N_RULES]: the rules (``Rules.to_array``). ``load_rules`` copies the integer ones
  into ``st``, so most functions take only ``st`` and ``hands``: numba passes every array as
  seven or more machine words, and fewer arrays per call made the simulator markedly faster.
* ``res``   float64[seats * RES_SIZE]: per seat (from s * RES_SIZE) each hand's result, the
  insurance result, the round total and the reward.

A table has 1..7 seats (boxes), dealt and played in order from seat 0; one seat is the special
case, dealt and played exactly as a single player. The seat acting now keeps its scalars (hand
count, current hand's row, insurance, natural, its first row and result slot) in the st slots
the game's functions read (``S_NUM_HANDS`` ...); the others' wait in their seat blocks. Rows and
offsets rather than array views: views cost the simulator 5%. Results are per unit of each
seat's own bet: the adapters multiply by the bets. The round's functions take its kind,
``at_table`` (``table_kind``): None compiles the lone seat's round apart, with no seat loops (a
lone seat is always seat 0 and always plays; its block is saved from its scalars when read).

Card codes are 1..13 (ace, 2..10, jack, queen, king); their blackjack value is ``min(code, 10)``.
Codes keep the ten-value ranks apart because ``split_by_value=False`` forbids splitting K,Q.

Random numbers come from xoshiro128** kept in ``st`` (32-bit words in int64 slots, so the
plain-Python mode never overflows), seeded from a ``numpy.random.SeedSequence``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._jit import njit
from .rules import MAX_HANDS

# The game functions neither allocate nor keep arrays, so they run without numba's reference
# counting (``_nrt=False``): the atomic increments it adds at every call were half the
# simulator's time. The few functions on every card's path are inlined by numba itself
# (``inline="always"``, 10% faster); inlining more that way grew compile times more than it saved.
# The round's larger pieces (``draw``, ``_play_from``, ``_play_action``, ``finish_round``) are
# instead inlined by LLVM (``forceinline``), each from a single call site so the code is not copied: a call passes
# every array as seven or more words and forces the state back to memory, and inlining them
# (and the simulator's per-round helpers) doubled its speed at no cost in compile time. LLVM's
# own heuristics do not suffice: callees loaded from numba's cache were left as calls. numba
# hands ``forceinline`` on to every function a force-inlined one calls unless that function sets
# it itself, so the rare paths (the reshuffle, stacked draws, the steps between decisions, the
# next seat's play, the expected-reward walk) say ``forceinline=False`` and stay calls: the
# kernel is a third smaller and faster for it. Code inlined keeps loops simple (no vectorisable
# fills): vectorised copies made compile times explode.
# ``start_round`` and ``step_round`` (and ``table.play_until`` above them) are glue around their
# callees, so numba inlines them (``inline="always"``): compiled apart, each level had the
# whole round below it optimised and emitted once more, and the env's first step compiled 9% longer
# (13.2 -> 12.0 CPU s, the simulator's speed unchanged). Inlining the pieces below them
# or the small leaves the same way saved nothing more, and every ``forceinline`` one doubled it.

# ----------------------------------------------------------------------------- actions
STAND, HIT, DOUBLE, SPLIT, SURRENDER, INSURANCE, NO_INSURANCE = range(7)
N_ACTIONS = 7

# ----------------------------------------------------------------------------- phases
P_INSURANCE = 0  # the insurance / even-money question is open: only INSURANCE, NO_INSURANCE
P_PLAY = 1  # the player decides on the current hand
P_SETTLE = 2  # nothing to decide (natural, dealer blackjack found): STAND settles the round
P_OVER = 3  # the round is settled
P_BET = 4  # shoe episodes: the agent's bet for the next round is due (the envs' phase, not the engine's)

# insurance states
INS_NONE, INS_PENDING, INS_TAKEN, INS_DECLINED, INS_EVEN_MONEY = range(5)

# hand statuses
HS_WAIT, HS_PLAY, HS_STOOD, HS_BUST, HS_SURRENDERED = range(5)

# ----------------------------------------------------------------------------- rules vector
(
    R_DECKS,
    R_H17,
    R_BJ_PAYS,
    R_DOUBLE_ON,
    R_DAS,
    R_SPLIT_TO,
    R_SPLIT_BY_VALUE,
    R_RSA,
    R_HSA,
    R_SURRENDER,
    R_SURR_VS_ACE_TEN,
    R_PEEK,
    R_OBO,
    R_INSURANCE,
    R_EVEN_MONEY,
    R_PENETRATION,
) = range(16)
N_RULES = 16
SURR_NONE, SURR_LATE, SURR_EARLY = range(3)
DOUBLE_ANY, DOUBLE_9_11, DOUBLE_10_11 = range(3)

# ----------------------------------------------------------------------------- table state
MAX_CARDS = 24  # cards one hand (or the dealer) can hold: 21 aces and a bust card fit
MAX_STACK = 64  # most stacked cards one round can take
MAX_SEATS = 7  # boxes at a table


def check_seats(seats: Any, name: str = "seats") -> int:
    """A table's boxes, checked where a caller takes them (``name``: the argument or flag, e.g. ``--seats``):
    a whole number 1..MAX_SEATS, returned as an int; anything else is a ``ValueError`` naming ``name``."""
    if isinstance(seats, bool) or not isinstance(seats, (int, np.integer)) or not 1 <= seats <= MAX_SEATS:
        raise ValueError(f"{name} must be a whole number of boxes 1..{MAX_SEATS}, got {seats!r}")
    return int(seats)


def check_seat(seat: Any, seats: int, name: str = "seat", every: bool = False) -> int:
    """A player's box at a table of ``seats`` (already checked: ``check_seats``), checked where a caller
    takes it (``name``: the argument or flag, e.g. ``--seat``): a whole number 0..seats-1, seat 0 dealt
    first, returned as an int; with ``every`` also -1, every seat (a shoe learner's ``--seat all``).
    Anything else is a ``ValueError`` naming ``name`` and the boxes allowed."""
    low = -1 if every else 0
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not low <= seat < seats:
        every_text = " or all" if every else ""
        raise ValueError(f"{name} must be a box 0..{seats - 1} (seat 0 is dealt first){every_text}, got {seat!r}")
    return int(seat)


# a seat's block in st (seat_slot): its scalars while another seat acts, and its own flags
SEAT_NUM_HANDS = 0
SEAT_CUR = 1
SEAT_INS = 2
SEAT_NATURAL = 3
SEAT_ACTIVE = 4  # the seat plays this round (0: it sits out and is dealt no cards)
SEAT_DEFER = 5  # early surrender: the seat's first choice + 1, carried out after the peek
SEAT_POLICY = 6  # which of the driver's policies plays the seat (``table.play_until``)
SEAT_FIELDS = 7

S_PHASE = 0
S_NUM_HANDS = 1
S_CUR = 2
S_INS = 3
S_DEALER_N = 4
S_DEALER_HARD = 5
S_DEALER_ACES = 6
S_HOLE_HIDDEN = 7
S_PEEK_PENDING = 8  # early surrender: the peek waits for the player's first action
S_NATURAL = 9
S_SHOE_POS = 10
S_SHOE_LEN = 11
S_STACK_POS = 12
S_STACK_LEN = 13
S_FORCE_SHUFFLE = 14
S_ROUNDS = 15
S_SHUFFLES = 16
S_FIXED_END = 17  # shoe[pos:S_FIXED_END] is already in deal order (a paired replay): no swaps
S_ROUND_START = 18  # shoe position when this round was dealt
S_MID_SHUFFLE = 19  # the shoe ran out during this round and the discards were reshuffled
S_RNG = 20  # 4 slots
S_COUNTS = 24  # remaining cards per code: S_COUNTS + code, code 1..13 (14 slots)
S_STACK = 38  # MAX_STACK slots
S_DEALER = S_STACK + MAX_STACK  # MAX_CARDS slots
S_RULES = S_DEALER + MAX_CARDS  # the integer rules, st[S_RULES + R_*] (load_rules)
S_CUT = S_RULES + N_RULES  # shoe position of the cut card (0: shuffle every round)
S_REWARD_MODE = S_CUT + 1  # REWARD_SAMPLED or REWARD_EXPECTED (an env option, not a rule)
S_PEEKED = S_CUT + 2  # the dealer has checked the hole card for blackjack this round
S_UNSEEN = S_CUT + 3  # scratch: unseen cards (slot 0) and per value 1..10 (11 slots)
S_TREE_HARD = S_UNSEEN + 11  # scratch of the dealer-outcome walk: MAX_CARDS slots each
S_TREE_ACES = S_TREE_HARD + MAX_CARDS
S_TREE_NEXT = S_TREE_ACES + MAX_CARDS
S_SEATS = S_TREE_NEXT + MAX_CARDS  # boxes at the table, 1..MAX_SEATS (``set_seats``)
S_SEAT = S_SEATS + 1  # the acting seat: S_NUM_HANDS, S_CUR, S_INS and S_NATURAL are its own
S_ROW0 = S_SEATS + 2  # the acting seat's first row in hands (S_CUR is a row: S_ROW0 + hand index)
S_RES0 = S_SEATS + 3  # the acting seat's first slot in res (its results: res[S_RES0 + RES_*])
S_EVEN_MONEY = S_SEATS + 4  # seats that took even money this round
S_ORDER = S_SEATS + 5  # scratch: the seats playing this round, in deal order (MAX_SEATS slots)
S_SEAT_BASE = S_ORDER + MAX_SEATS  # one block of SEAT_FIELDS per seat
# the envs' slots (table.env_advance): a shoe episode's bet phase and the agent's bet this round
S_SHOE_EPISODE = S_SEAT_BASE + MAX_SEATS * SEAT_FIELDS  # 1: the episode is a shoe, with a bet each round
S_BETTING = S_SHOE_EPISODE + 1  # 1 while the agent's bet for the next round is due
S_BET_LEVEL = S_SHOE_EPISODE + 2  # index of the agent's bet this round (in the env's bets)
S_AGENT = S_SHOE_EPISODE + 3  # the agent's seat
S_COUNT_MODE = S_SHOE_EPISODE + 4  # the count the observation carries (COUNT_*)
S_OBS_EXTRA = S_SHOE_EPISODE + 5  # where a shoe episode's extra observation components start (0: none)
ST_SIZE = S_SHOE_EPISODE + 6

REWARD_SAMPLED, REWARD_EXPECTED = range(2)
# dealer outcomes of the expected settlement: final totals 17..21, a bust, a blackjack
N_DEALER_OUTCOMES = 7
DEALER_BUST = 5
DEALER_BLACKJACK = 6
MIN_UNSEEN_FOR_EXPECTED = 12  # fewer unseen cards could run the shoe out mid-round
# The dealer-outcome cache of the expected reward (``_cached_dealer_outcomes``): a row holds the walk's
# inputs (DEALER_KEY of them: the up card's value, whether a peek ruled out a blackjack, H17, a finite
# shoe, and the unseen cards of each value 1..10), then the N_DEALER_OUTCOMES probabilities they give.
DEALER_KEY = 14
DEALER_ROW = DEALER_KEY + N_DEALER_OUTCOMES
#: Rows an env with the expected reward keeps (2^15, 5.5 MB): a round shuffled every time deals far
#: fewer distinct (up card, unseen cards) pairs, so nearly every round after the first thousands finds
#: its dealer's outcomes there instead of walking them again.
DEALER_CACHE_ROWS = 1 << 15

# Small dtypes keep a table in few cache lines (a hand is one 64-byte line), which matters when
# the vector env steps thousands of tables.
SHOE_DTYPE = np.int8
HAND_DTYPE = np.int16

H_HARD = 0  # total with every ace counted as 1
H_ACES = 1
H_N = 2
H_BET = 3
H_STATUS = 4
H_DOUBLED = 5
H_SPLIT = 6  # the hand came from a split
H_SPLIT_ACE = 7  # the hand is a split ace
H_CARDS = 8
HAND_FIELDS = H_CARDS + MAX_CARDS

RES_INSURANCE = MAX_HANDS
RES_TOTAL = MAX_HANDS + 1  # the round's net result, as dealt
RES_REWARD = MAX_HANDS + 2  # the reward paid: RES_TOTAL, or its expectation (REWARD_EXPECTED)
RES_DEALER = MAX_HANDS + 3  # scratch: probabilities of the N_DEALER_OUTCOMES
RES_TREE_P = RES_DEALER + N_DEALER_OUTCOMES  # scratch: MAX_CARDS probabilities
RES_SIZE = RES_TREE_P + MAX_CARDS

# ----------------------------------------------------------------------------- observation
O_PHASE = 0
O_TOTAL = 1
O_SOFT = 2
O_PAIR = 3
O_CAN_DOUBLE = 4
O_CAN_SPLIT = 5
O_CAN_SURRENDER = 6
O_UP = 7
O_NUM_HANDS = 8
O_HAND_INDEX = 9
O_SPLIT_ACE = 10
O_NATURAL = 11
OBS_BASE = 12
COUNT_NONE, COUNT_COMPOSITION, COUNT_HILO = range(3)
HILO_RANGE = 10  # true count observed clipped to [-10, 10]
#: Hi-Lo's tag per card code (code 0 unused), the observation's count: ``counting.SYSTEMS["hilo"]``'s tags
#: by value (tests/test_counting.py holds the two equal). A whole shoe's tags add up to 0.
HILO_TAGS = np.array([0, -1, 1, 1, 1, 1, 1, 0, 0, 0, -1, -1, -1, -1], np.int64)

M32 = 0xFFFFFFFF


# ============================================================================= random numbers
@njit(cache=True, _nrt=False, inline="always")
def _rotl32(x, k):
    return ((x << k) | (x >> (32 - k))) & M32


@njit(cache=True, _nrt=False, inline="always")
def next_u32(words, base):
    """Next 32-bit output of the xoshiro128** generator held in words[base:base+4]."""
    s0 = words[base]
    s1 = words[base + 1]
    s2 = words[base + 2]
    s3 = words[base + 3]
    result = (_rotl32((s1 * 5) & M32, 7) * 9) & M32
    t = (s1 << 9) & M32
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl32(s3, 11)
    words[base] = s0
    words[base + 1] = s1
    words[base + 2] = s2
    words[base + 3] = s3
    return result


@njit(cache=True, _nrt=False, inline="always")
def uniform_int(words, base, n):
    """Unbiased integer in [0, n) from the generator at words[base:] (Lemire's method), n < 2**31."""
    m = next_u32(words, base) * n
    if (m & M32) < n:  # rarely: reject the few outputs that would bias the result
        threshold = ((1 << 32) - n) % n
        while (m & M32) < threshold:
            m = next_u32(words, base) * n
    return m >> 32


@njit(cache=True, _nrt=False, inline="always")
def uniform_legal(words, base, mask, n_actions):
    """A uniformly random action among the legal ones in mask[:n_actions] (STAND if none is):
    random play in the simulator and the exploration of the tabular learner."""
    n_legal = 0
    for a in range(n_actions):
        n_legal += mask[a]
    pick = uniform_int(words, base, n_legal)
    for a in range(n_actions):
        if mask[a]:
            if pick == 0:
                return a
            pick -= 1
    return STAND


def seed_words(seed_sequence: np.random.SeedSequence, n_generators: int = 1) -> np.ndarray:
    """Generator words (4 per generator, never all zero) drawn from a SeedSequence."""
    words = seed_sequence.generate_state(4 * n_generators, np.uint32).astype(np.int64)
    for g in range(n_generators):
        if not words[4 * g : 4 * g + 4].any():
            words[4 * g] = 1
    return words


@njit(cache=True, _nrt=False, forceinline=False)
def load_rules(st, rv):
    """Copy the rules into the table state (integer rules, and the cut card's position); a
    table not yet given its seats (``set_seats``) has one."""
    for i in range(N_RULES):
        st[S_RULES + i] = int(rv[i])
    st[S_CUT] = int(rv[R_PENETRATION] * 52 * rv[R_DECKS])
    if st[S_SEATS] == 0:
        st[S_SEATS] = 1
        st[S_SEAT_BASE + SEAT_ACTIVE] = 1


def new_shoe(decks: int) -> np.ndarray:
    """A shoe in its fixed starting order (every seeded shoe starts from this order)."""
    shoe = np.empty(52 * decks, SHOE_DTYPE)
    order_shoe(shoe, 52 * decks)
    return shoe


@njit(cache=True, _nrt=False)
def order_shoe(shoe, n_cards):
    """The shoe's fixed starting order, ranks 1..13 over and over."""
    for i in range(n_cards):
        shoe[i] = 1 + i % 13


@njit(cache=True, _nrt=False)
def fresh_shoe(st, shoe, decks, words):
    """Gather a fresh shoe of ``decks`` decks and seed the table's card generator with ``words[:4]``:
    where every seeded shoe starts, so a seed fixes every card dealt (the envs, the simulator and the
    tabular learner all start here). Empty: the next round starts a new shoe."""
    order_shoe(shoe, 52 * decks)
    st[S_SHOE_LEN] = 52 * decks
    st[S_SHOE_POS] = 52 * decks
    for k in range(4):  # element copies: slice copies would need numba's allocator
        st[S_RNG + k] = words[k]


def seed_table(st: np.ndarray, shoe: np.ndarray, seed_sequence: np.random.SeedSequence) -> None:
    """Seed a table's card generator and gather a fresh shoe (``fresh_shoe``)."""
    fresh_shoe(st, shoe, len(shoe) // 52, seed_words(seed_sequence))


# ============================================================================= cards and hands
@njit(cache=True, _nrt=False)
def card_value(code):
    return code if code < 10 else 10


@njit(cache=True, _nrt=False)
def best_total(hard, aces):
    """Blackjack total: one ace counts 11 when that does not bust the hand."""
    if aces > 0 and hard + 10 <= 21:
        return hard + 10
    return hard


@njit(cache=True, _nrt=False)
def is_soft(hard, aces):
    return aces > 0 and hard + 10 <= 21


@njit(cache=True, _nrt=False, forceinline=False)
def reset_shoe(st):
    """Gather every card back into the shoe (the lazy shuffle needs no reordering)."""
    decks = st[S_RULES + R_DECKS]
    st[S_SHOE_POS] = 0
    for code in range(1, 14):
        st[S_COUNTS + code] = 4 * decks
    st[S_SHUFFLES] += 1


@njit(cache=True, _nrt=False, forceinline=False)
def _reshuffle_discards(st, shoe):
    """The shoe ran out mid-round: shuffle every card not on the table back into it.

    The table's cards are the ones dealt this round, shoe[S_ROUND_START:pos]; they move to the
    front of the shoe and the discards become the undealt rest (the lazy shuffle needs no order)."""
    decks = st[S_RULES + R_DECKS]
    for code in range(1, 14):
        st[S_COUNTS + code] = 4 * decks
    k = 0
    for i in range(st[S_ROUND_START], st[S_SHOE_POS]):
        code = shoe[i]
        shoe[k] = code
        st[S_COUNTS + code] -= 1
        k += 1
    st[S_SHOE_POS] = k
    st[S_ROUND_START] = 0
    code = 0
    left = 0
    for i in range(k, st[S_SHOE_LEN]):  # one plain loop: inlined copies stay small
        while left == 0:
            code += 1
            left = st[S_COUNTS + code]
        shoe[i] = code
        left -= 1
    st[S_SHUFFLES] += 1
    st[S_MID_SHUFFLE] = 1


@njit(cache=True, _nrt=False, inline="always")
def _take(st, shoe, j):
    """Deal shoe[j]: swap it to the dealt end of the shoe and count it out."""
    pos = st[S_SHOE_POS]
    code = shoe[j]
    shoe[j] = shoe[pos]
    shoe[pos] = code
    st[S_SHOE_POS] = pos + 1
    st[S_COUNTS + code] -= 1
    return code


@njit(cache=True, _nrt=False, forceinline=False)
def _draw_stacked(st, shoe):
    """Deal the next stacked card (the env checked that the shoe still holds it)."""
    code = st[S_STACK + st[S_STACK_POS]]
    st[S_STACK_POS] += 1
    if st[S_RULES + R_DECKS] == 0:
        return code
    j = st[S_SHOE_POS]
    while shoe[j] != code:
        j += 1
    return _take(st, shoe, j)


@njit(cache=True, _nrt=False, forceinline=False)
def _draw_special(st, shoe):
    """``draw`` when a stacked card is due, the deck is infinite, the shoe is out or replayed."""
    if st[S_STACK_POS] < st[S_STACK_LEN]:
        return _draw_stacked(st, shoe)
    if st[S_RULES + R_DECKS] == 0:  # infinite deck
        return 1 + uniform_int(st, S_RNG, 13)
    n = st[S_SHOE_LEN]
    pos = st[S_SHOE_POS]
    if pos >= n:
        _reshuffle_discards(st, shoe)
        st[S_FIXED_END] = 0
        pos = st[S_SHOE_POS]
    if pos < st[S_FIXED_END]:  # a paired replay: this card is already in place
        return _take(st, shoe, pos)
    return _take(st, shoe, pos + uniform_int(st, S_RNG, n - pos))


@njit(cache=True, _nrt=False, forceinline=True)
def draw(st, shoe):
    """Deal the next card: a stacked one if any are left, else a random one from the shoe.

    Inlined by LLVM (``forceinline``): the common case, a random card from a finite shoe, is
    a handful of instructions next to a call that passes two arrays as fourteen words."""
    pos = st[S_SHOE_POS]
    n = st[S_SHOE_LEN]  # 0 for an infinite deck (its shoe is empty): pos >= n sends it aside too
    if pos >= n or pos < st[S_FIXED_END] or st[S_STACK_POS] < st[S_STACK_LEN]:
        return _draw_special(st, shoe)
    return _take(st, shoe, pos + uniform_int(st, S_RNG, n - pos))


@njit(cache=True, _nrt=False)
def add_card(hands, h, code):
    n = hands[h, H_N]
    hands[h, H_CARDS + n] = code
    hands[h, H_N] = n + 1
    value = card_value(code)
    hands[h, H_HARD] += value
    if value == 1:
        hands[h, H_ACES] += 1


@njit(cache=True, _nrt=False)
def hand_total(hands, h):
    return best_total(hands[h, H_HARD], hands[h, H_ACES])


@njit(cache=True, _nrt=False)
def dealer_add(st, code):
    n = st[S_DEALER_N]
    st[S_DEALER + n] = code
    st[S_DEALER_N] = n + 1
    value = card_value(code)
    st[S_DEALER_HARD] += value
    if value == 1:
        st[S_DEALER_ACES] += 1


@njit(cache=True, _nrt=False)
def up_value(st):
    return card_value(st[S_DEALER])


@njit(cache=True, _nrt=False)
def dealer_blackjack(st):
    return st[S_DEALER_N] == 2 and best_total(st[S_DEALER_HARD], st[S_DEALER_ACES]) == 21


# ============================================================================= legal actions
@njit(cache=True, _nrt=False)
def is_pair(st, hands, h):
    """Two cards of one value (unlike ten-value cards only when split_by_value)."""
    if hands[h, H_N] != 2:
        return False
    a = hands[h, H_CARDS]
    b = hands[h, H_CARDS + 1]
    if card_value(a) != card_value(b):
        return False
    return a == b or st[S_RULES + R_SPLIT_BY_VALUE] != 0


@njit(cache=True, _nrt=False)
def can_split(st, hands, h):
    if not is_pair(st, hands, h):
        return False
    split_ace = hands[h, H_CARDS] == 1 and hands[h, H_SPLIT] != 0
    return may_split(st[S_RULES + R_SPLIT_TO], st[S_RULES + R_RSA], st[S_NUM_HANDS], split_ace)


@njit(cache=True, _nrt=False)
def split_ace_locked(st, hands, h):
    """A split ace that may not be played on (split aces get one card)."""
    return hands[h, H_SPLIT_ACE] != 0 and st[S_RULES + R_HSA] == 0


@njit(cache=True, _nrt=False)
def per_unseen_deck(running, unseen):
    """The true count: a running count per unseen deck (52 cards), never divided by zero; the one
    formula of the engine's observation, the counting policies, the shoe env and ``counting``."""
    return running * 52.0 / max(unseen, 1)


# ---------------------------------------------------------------------------- the count
@njit(cache=True, _nrt=False, inline="always")
def _unseen_rank_tags(tags, base, st, code):
    """The tags of a rank's cards still in the shoe."""
    return tags[base + code] * st[S_COUNTS + code]


@njit(cache=True, _nrt=False, inline="always")
def unseen_tags(tags, base, st):
    """The tags of every card not seen yet: the shoe's remaining cards and a hole card still face down
    (``tags[base + code]``: a card code's tag; the ten-value codes take code 10's). Any system's running
    count is its whole shoe's tags less these, derived from the shoe afresh rather than tallied card by
    card: the one definition of the observation's Hi-Lo count (``write_obs``), the counting policies'
    count (``count_policy.running_count``) and ``counting.hilo_count``. The ten-valued ranks' counts
    are added first and the ten products summed as a tree (short dependency chains; exact for tags in
    halves, as every built-in system's are)."""
    c = S_COUNTS
    tens = st[c + 10] + st[c + 11] + st[c + 12] + st[c + 13]
    low = (_unseen_rank_tags(tags, base, st, 1) + _unseen_rank_tags(tags, base, st, 2)) + (
        _unseen_rank_tags(tags, base, st, 3) + _unseen_rank_tags(tags, base, st, 4)
    )
    mid = (_unseen_rank_tags(tags, base, st, 5) + _unseen_rank_tags(tags, base, st, 6)) + (
        _unseen_rank_tags(tags, base, st, 7) + _unseen_rank_tags(tags, base, st, 8)
    )
    unseen = (low + mid) + (_unseen_rank_tags(tags, base, st, 9) + tags[base + 10] * tens)
    if st[S_HOLE_HIDDEN]:
        unseen += tags[base + st[S_DEALER + 1]]
    return unseen


# ---------------------------------------------------------------------------- the rules' predicates
# Each rule that decides a legal action or the dealer's play is written once, over the Rules values
# it reads (``Rules.to_array()``'s R_* entries): the engine, the solver (solver/_kernels.py,
# solver/_space.py) and the agents (agents/ppo.py) call these.
@njit(cache=True, _nrt=False)
def may_double(double_on, total):
    """Whether a two-card hand of this (best) total may double under ``double_on`` (R_DOUBLE_ON:
    any two cards, 9-11 or 10-11); the hand's other conditions (two cards, DAS) are the caller's."""
    if double_on == DOUBLE_ANY:
        return True
    low = 9 if double_on == DOUBLE_9_11 else 10
    return low <= total <= 11


@njit(cache=True, _nrt=False)
def may_split(split_to, resplit_aces, hands_held, split_ace):
    """Whether a pair may be split under R_SPLIT_TO (the most hands a seat may hold) and R_RSA, the seat
    holding ``hands_held`` hands (1 before any split), ``split_ace``: the pair's first card is an ace from
    a split; that the hand is a pair (R_SPLIT_BY_VALUE) is the caller's."""
    if hands_held >= split_to:
        return False
    return not (split_ace and resplit_aces == 0)


@njit(cache=True, _nrt=False)
def may_surrender_vs(surrender, vs_ace_ten, up):
    """Whether surrender is offered against this up card value (1 = ace) under R_SURRENDER and
    R_SURR_VS_ACE_TEN; that only a lone two-card hand may surrender is the caller's."""
    if surrender == SURR_NONE:
        return False
    return vs_ace_ten != 0 or (up != 1 and up != 10)


@njit(cache=True, _nrt=False)
def dealer_stands(hit_soft_17, total, soft):
    """Whether the dealer stands on this best total (S17; H17, R_H17 set: hits a soft 17)."""
    if total > 17:
        return True
    if total < 17:
        return False
    return not (hit_soft_17 != 0 and soft)


@njit(cache=True, _nrt=False)
def can_double(st, hands, h):
    if hands[h, H_N] != 2 or split_ace_locked(st, hands, h):
        return False
    if hands[h, H_SPLIT] and st[S_RULES + R_DAS] == 0:
        return False
    return may_double(st[S_RULES + R_DOUBLE_ON], hand_total(hands, h))


@njit(cache=True, _nrt=False)
def surrender_allowed_vs(st):
    return may_surrender_vs(st[S_RULES + R_SURRENDER], st[S_RULES + R_SURR_VS_ACE_TEN], up_value(st))


@njit(cache=True, _nrt=False)
def can_surrender(st, hands, h):
    return st[S_NUM_HANDS] == 1 and hands[h, H_N] == 2 and surrender_allowed_vs(st)


@njit(cache=True, _nrt=False)
def needs_decision(st, hands, h):
    """A hand at 21 or over, or a split ace that may not be played on, ends by itself."""
    if hand_total(hands, h) >= 21:
        return False
    if split_ace_locked(st, hands, h):
        return can_split(st, hands, h)
    return True


@njit(cache=True, _nrt=False)
def legal_mask(st, hands, mask):
    """Write the legal actions of the current decision into mask (bool[7])."""
    mask[:] = False
    phase = st[S_PHASE]
    if phase == P_INSURANCE:
        mask[INSURANCE] = True
        mask[NO_INSURANCE] = True
    elif phase == P_SETTLE:
        mask[STAND] = True
    elif phase == P_PLAY:
        h = st[S_CUR]
        mask[STAND] = True
        mask[HIT] = not split_ace_locked(st, hands, h)
        mask[DOUBLE] = can_double(st, hands, h)
        mask[SPLIT] = can_split(st, hands, h)
        mask[SURRENDER] = can_surrender(st, hands, h)


# ============================================================================= seats
@njit(cache=True, _nrt=False, forceinline=True)
def seat_slot(s, field):
    """st index of a field of seat s's block (SEAT_*)."""
    return S_SEAT_BASE + s * SEAT_FIELDS + field


@njit(cache=True, _nrt=False, forceinline=True)
def save_seat(st):
    """Store the acting seat's scalars (S_NUM_HANDS, S_CUR, S_INS, S_NATURAL) in its block."""
    base = S_SEAT_BASE + st[S_SEAT] * SEAT_FIELDS
    st[base + SEAT_NUM_HANDS] = st[S_NUM_HANDS]
    st[base + SEAT_CUR] = st[S_CUR]
    st[base + SEAT_INS] = st[S_INS]
    st[base + SEAT_NATURAL] = st[S_NATURAL]


@njit(cache=True, _nrt=False, forceinline=True)
def _load_seat(st, s):
    """Make seat s the acting one, loading its scalars from its block."""
    st[S_SEAT] = s
    st[S_ROW0] = s * MAX_HANDS
    st[S_RES0] = s * RES_SIZE
    base = S_SEAT_BASE + s * SEAT_FIELDS
    st[S_NUM_HANDS] = st[base + SEAT_NUM_HANDS]
    st[S_CUR] = st[base + SEAT_CUR]
    st[S_INS] = st[base + SEAT_INS]
    st[S_NATURAL] = st[base + SEAT_NATURAL]


@njit(cache=True, _nrt=False, forceinline=True)
def _switch_seat(st, s):
    """Make seat s the acting one: the game's functions read and write its scalars in place."""
    if s != st[S_SEAT]:
        save_seat(st)
        _load_seat(st, s)


@njit(cache=True, _nrt=False, forceinline=False)
def set_seats(st, seats):
    """A table of ``seats`` boxes (1..MAX_SEATS, checked by the caller), every one playing
    (``SEAT_ACTIVE`` turns one off for a round)."""
    st[S_SEATS] = seats
    st[S_SEAT] = 0  # seat 0 acts (a lone seat's round relies on these and never changes them)
    st[S_ROW0] = 0
    st[S_RES0] = 0
    st[S_ORDER] = 0
    for s in range(MAX_SEATS):
        st[S_SEAT_BASE + s * SEAT_FIELDS + SEAT_ACTIVE] = s < seats


#: The ``at_table`` argument of the round's functions at a table of several seats (``table_kind``).
TABLE = 1


@njit(cache=True, _nrt=False, inline="always")
def acting_seat(st, at_table):
    """The acting seat: 0 for a lone seat, known when its round compiles."""
    return 0 if at_table is None else st[S_SEAT]


@njit(cache=True, _nrt=False, inline="always")
def acting_row0(st, at_table):
    """The acting seat's first row in hands: 0 for a lone seat, known when its round compiles."""
    return 0 if at_table is None else st[S_ROW0]


@njit(cache=True, _nrt=False, inline="always")
def acting_res0(st, at_table):
    """The acting seat's first slot in res: 0 for a lone seat, known when its round compiles."""
    return 0 if at_table is None else st[S_RES0]


def table_kind(seats: int) -> int | None:
    """The round's ``at_table`` argument for a table of ``seats``: None for a lone seat, whose
    round numba then compiles without the table's seat loops (they cost a lone player's
    simulator 7-9%), else TABLE. Each kind is its own compiled specialisation of a kernel."""
    return None if seats == 1 else TABLE


def new_hands(seats: int = 1) -> np.ndarray:
    """The hand array of a table of ``seats`` boxes (MAX_HANDS rows each)."""
    return np.zeros((seats * MAX_HANDS, HAND_FIELDS), HAND_DTYPE)


def new_res(seats: int = 1) -> np.ndarray:
    """The result array of a table of ``seats`` boxes (a RES_SIZE block each)."""
    return np.zeros(seats * RES_SIZE, np.float64)


def new_dealer_cache(expected: bool) -> np.ndarray:
    """The dealer-outcome cache of a table or a batch of them (shared: the rules are): DEALER_CACHE_ROWS
    empty rows (a key of -1, which no up card has) for the expected reward, none for the dealt one."""
    return np.full((DEALER_CACHE_ROWS if expected else 0, DEALER_ROW), -1.0)


# ============================================================================= round flow
@njit(cache=True, _nrt=False, inline="always")
def shuffle_due(st):
    """The finite shoe is shuffled before the coming round: every round (no cut card), once the
    cut card has come out, or when a shuffle was asked for."""
    cut = st[S_CUT]
    return st[S_RULES + R_DECKS] != 0 and (cut == 0 or st[S_SHOE_POS] >= cut or st[S_FORCE_SHUFFLE] != 0)


@njit(cache=True, _nrt=False, inline="always")
def start_round(st, hands, shoe, res, at_table):
    """Deal a new round and open its first decision.

    Deal order: one card to each playing seat from seat 0 up, the dealer's up card, a second card
    to each seat in the same order, then the hole card (peek games; no-hole-card games draw the
    dealer's second card after the players act). ``at_table`` (see ``table_kind``): None compiles
    the lone seat's deal inline, with no trace of the table's (``_deal_table``, out of line)."""
    if shuffle_due(st):
        reset_shoe(st)
    st[S_FORCE_SHUFFLE] = 0
    st[S_ROUNDS] += 1
    st[S_ROUND_START] = st[S_SHOE_POS]
    st[S_MID_SHUFFLE] = 0
    st[S_EVEN_MONEY] = 0
    st[S_DEALER_N] = 0
    st[S_DEALER_HARD] = 0
    st[S_DEALER_ACES] = 0
    st[S_PEEK_PENDING] = 0
    st[S_PEEKED] = 0
    if at_table is not None:  # (pruned at compile time for the lone seat)
        _deal_table(st, hands, shoe, res)
        return
    # the lone seat 0 (it always plays): its scalars are the acting seat's throughout the round
    _clear_hands(hands, 0, st[S_NUM_HANDS])  # (its results are all written by its settlement)
    st[seat_slot(0, SEAT_DEFER)] = 0  # (its other fields are saved from its scalars when read)
    hands[0, H_BET] = 1
    hands[0, H_STATUS] = HS_PLAY
    st[S_NUM_HANDS] = 1
    st[S_CUR] = 0
    n_cards = 4 if st[S_RULES + R_PEEK] != 0 else 3  # no peek: the hole card comes at the end
    for k in range(n_cards):  # one call site of the inlined draw
        code = draw(st, shoe)
        if k % 2 == 0:
            add_card(hands, 0, code)
        else:
            dealer_add(st, code)
    st[S_HOLE_HIDDEN] = n_cards == 4
    st[S_NATURAL] = hand_total(hands, 0) == 21
    st[S_INS] = _insurance_offer(st, st[S_NATURAL] != 0)
    if st[S_INS] == INS_PENDING:
        st[S_PHASE] = P_INSURANCE
    else:
        _after_insurance(st, at_table)


@njit(cache=True, _nrt=False, forceinline=True)
def _clear_hands(hands, s, n_hands):
    """Seat s's last round's hands (n_hands rows) back to zero."""
    row = s * MAX_HANDS
    for h in range(max(n_hands, 1)):
        for field in range(H_CARDS):  # a hand's cards are read only up to its count
            hands[row + h, field] = 0


@njit(cache=True, _nrt=False, forceinline=True)
def _clear_seat(st, hands, res, s):
    """Seat s's hands, results and round flags back to a new round's; it gets its first hand
    (one unit bet, to be dealt) when it plays this round. Returns whether it plays. A seat that
    sits out keeps zero results (a playing one's are all written by its settlement)."""
    base = S_SEAT_BASE + s * SEAT_FIELDS
    row = s * MAX_HANDS
    _clear_hands(hands, s, st[base + SEAT_NUM_HANDS])
    for i in range(s * RES_SIZE, s * RES_SIZE + RES_REWARD + 1):  # results, not the scratch
        res[i] = 0.0
    st[base + SEAT_INS] = INS_NONE
    st[base + SEAT_NATURAL] = 0
    st[base + SEAT_DEFER] = 0
    st[base + SEAT_CUR] = row
    playing = st[base + SEAT_ACTIVE] != 0
    st[base + SEAT_NUM_HANDS] = playing
    if playing:
        hands[row, H_BET] = 1
        hands[row, H_STATUS] = HS_PLAY
    return playing


@njit(cache=True, _nrt=False, forceinline=True)
def _insurance_offer(st, natural):
    """A seat's insurance state once the cards are out: the question is pending when the up card
    is an ace and insurance, or even money for this natural, is offered."""
    offered = st[S_RULES + R_INSURANCE] != 0 or (natural and st[S_RULES + R_EVEN_MONEY] != 0)
    return INS_PENDING if up_value(st) == 1 and offered else INS_NONE


@njit(cache=True, _nrt=False, forceinline=False)
def _deal_table(st, hands, shoe, res):
    """``start_round``'s deal at a table of several seats (out of line: the lone seat's is inline)."""
    n_playing = 0
    for s in range(st[S_SEATS]):  # row offsets, not views: this runs every round
        if _clear_seat(st, hands, res, s):
            st[S_ORDER + n_playing] = s
            n_playing += 1
    n_cards = 2 * n_playing + (2 if st[S_RULES + R_PEEK] != 0 else 1)  # no peek: the hole card comes at the end
    r = 0  # who gets the card: the r-th playing seat, or the dealer when r == n_playing
    for _ in range(n_cards):  # one call site of the inlined draw
        code = draw(st, shoe)
        if r < n_playing:
            add_card(hands, st[S_ORDER + r] * MAX_HANDS, code)  # the seat's first hand
            r += 1
        else:
            dealer_add(st, code)
            r = 0
    st[S_HOLE_HIDDEN] = st[S_DEALER_N] == 2
    first_insured = -1
    for r in range(n_playing):
        s = st[S_ORDER + r]
        row = s * MAX_HANDS
        natural = best_total(hands[row, H_HARD], hands[row, H_ACES]) == 21
        st[seat_slot(s, SEAT_NATURAL)] = natural
        st[seat_slot(s, SEAT_INS)] = _insurance_offer(st, natural)
        if first_insured < 0 and st[seat_slot(s, SEAT_INS)] == INS_PENDING:
            first_insured = s
    _load_seat(st, first_insured if first_insured >= 0 else st[S_ORDER])
    if first_insured >= 0:
        st[S_PHASE] = P_INSURANCE
    else:
        _after_insurance(st, TABLE)


@njit(cache=True, _nrt=False, forceinline=False)
def _next_seat_with(st, s, field, value):
    """The first playing seat from s on whose block field equals value, else -1."""
    while s < st[S_SEATS]:
        if st[seat_slot(s, SEAT_ACTIVE)] != 0 and st[seat_slot(s, field)] == value:
            return s
        s += 1
    return -1


@njit(cache=True, _nrt=False, forceinline=False)
def _first_waiting(st, s):
    """The first playing seat from s on that did not take even money (it still plays or
    settles), else -1."""
    while s < st[S_SEATS]:
        if st[seat_slot(s, SEAT_ACTIVE)] != 0 and st[seat_slot(s, SEAT_INS)] != INS_EVEN_MONEY:
            return s
        s += 1
    return -1


@njit(cache=True, _nrt=False, forceinline=False)
def _early_surrender_seat(st, s):
    """The first seat from s on that makes an early-surrender choice (any seat without a natural
    and without even money), else -1."""
    while s < st[S_SEATS]:
        if (
            st[seat_slot(s, SEAT_ACTIVE)] != 0
            and st[seat_slot(s, SEAT_NATURAL)] == 0
            and st[seat_slot(s, SEAT_INS)] != INS_EVEN_MONEY
        ):
            return s
        s += 1
    return -1


@njit(cache=True, _nrt=False, forceinline=True)
def _after_insurance(st, at_table):
    """Every seat has answered insurance: the peek (or the early-surrender choices that come
    before it), then the first decision of play. Returns True when no seat has anything left
    (every seat took even money). Draws no card."""
    waiting = 0 if at_table is None else st[S_ORDER]  # the first seat to act: it holds two cards
    if at_table is not None and st[S_EVEN_MONEY] > 0:
        waiting = _first_waiting(st, 0)
        if waiting < 0:
            return True  # every seat took even money
    up = up_value(st)
    if st[S_RULES + R_PEEK] != 0 and (up == 1 or up == 10):
        first = -1
        if st[S_RULES + R_SURRENDER] == SURR_EARLY:
            save_seat(st)  # the seats' blocks current: a lone seat's deal writes only its scalars
            first = _early_surrender_seat(st, 0)
        if first >= 0 and surrender_allowed_vs(st):
            st[S_PEEK_PENDING] = 1  # early surrender is decided before the dealer checks
            _switch_seat(st, first)
            st[S_PHASE] = P_PLAY
            return False
        st[S_PEEKED] = 1
    if at_table is not None:
        _switch_seat(st, waiting)
    settle_only = st[S_NATURAL] != 0 or (st[S_PEEKED] != 0 and dealer_blackjack(st))
    st[S_PHASE] = P_SETTLE if settle_only else P_PLAY
    return False


@njit(cache=True, _nrt=False, forceinline=True)
def _play_from(st, hands, shoe, h, at_table):
    """Move play to the acting seat's hand in row h (dealing a split hand its second card);
    returns True when the seat has no hand left to play."""
    while h < acting_row0(st, at_table) + st[S_NUM_HANDS]:
        st[S_CUR] = h
        if hands[h, H_N] == 1:
            add_card(hands, h, draw(st, shoe))
            hands[h, H_STATUS] = HS_PLAY
        if hands[h, H_STATUS] == HS_PLAY and needs_decision(st, hands, h):
            st[S_PHASE] = P_PLAY
            return False
        if hands[h, H_STATUS] == HS_PLAY:
            hands[h, H_STATUS] = HS_STOOD
        h += 1
    return True


@njit(cache=True, _nrt=False, forceinline=False)
def _split(st, hands, h):
    """Move the second card of the hand in row h to a new hand after the seat's last one."""
    new = st[S_ROW0] + st[S_NUM_HANDS]
    code = hands[h, H_CARDS + 1]
    value = card_value(code)
    hands[h, H_CARDS + 1] = 0
    hands[h, H_N] = 1
    hands[h, H_HARD] -= value
    if value == 1:
        hands[h, H_ACES] -= 1
    add_card(hands, new, code)
    hands[new, H_BET] = 1
    hands[new, H_STATUS] = HS_WAIT
    hands[h, H_SPLIT] = 1
    hands[new, H_SPLIT] = 1
    if value == 1:
        hands[h, H_SPLIT_ACE] = 1
        hands[new, H_SPLIT_ACE] = 1
    st[S_NUM_HANDS] += 1


@njit(cache=True, _nrt=False, forceinline=True)
def _play_action(st, hands, shoe, action):
    """Apply a playing action to the acting seat's current hand; returns the hand play moves on
    from (``_play_from``), or -1 while the same hand still decides."""
    h = st[S_CUR]
    if action == SPLIT:
        _split(st, hands, h)
        return h
    if action == STAND:
        hands[h, H_STATUS] = HS_STOOD
    elif action in (HIT, DOUBLE):  # one call site of the inlined draw
        if action == DOUBLE:
            hands[h, H_BET] *= 2
            hands[h, H_DOUBLED] = 1
        add_card(hands, h, draw(st, shoe))
        total = hand_total(hands, h)
        if total > 21:
            hands[h, H_STATUS] = HS_BUST
        elif total == 21 or action == DOUBLE:
            hands[h, H_STATUS] = HS_STOOD
        else:
            return -1
    elif action == SURRENDER:
        hands[h, H_STATUS] = HS_SURRENDERED
    else:
        return -1
    return h + 1


@njit(cache=True, _nrt=False, forceinline=False)
def _play_seats(st, hands, shoe, s):
    """Play on from seat s, seat after seat, until a decision is due; returns True when every
    seat is done. Out of line: a lone player's round never comes here.

    A seat coming up settles at once (P_SETTLE) with a natural, or with an unplayed hand after a
    peek found the dealer's blackjack; a seat that chose before an early-surrender peek has that
    choice carried out first; one paid even money has nothing to play."""
    while s < st[S_SEATS]:
        if st[seat_slot(s, SEAT_ACTIVE)] != 0:
            _switch_seat(st, s)
            h = st[S_CUR]
            deferred = st[seat_slot(s, SEAT_DEFER)] - 1
            st[seat_slot(s, SEAT_DEFER)] = 0
            if deferred >= 0:
                h = _play_action(st, hands, shoe, deferred)
                if h < 0:
                    return False
            elif st[S_INS] == INS_EVEN_MONEY:
                h = st[S_ROW0] + st[S_NUM_HANDS]  # paid already: nothing to play
            elif st[S_NATURAL] != 0 or (st[S_PEEKED] != 0 and hands[h, H_STATUS] == HS_PLAY and dealer_blackjack(st)):
                st[S_PHASE] = P_SETTLE
                return False
            if not _play_from(st, hands, shoe, h, TABLE):
                return False
        s += 1
    return True


@njit(cache=True, _nrt=False, forceinline=True)
def _table_done(st, hands, shoe, s):
    """The seats from s on have nothing to play (True), or one of them now decides (False)."""
    return s >= st[S_SEATS] or _play_seats(st, hands, shoe, s)


@njit(cache=True, _nrt=False, forceinline=False)
def _step_between(st, hands, shoe, action):
    """A step that is not a decision on a dealt hand: an insurance answer, a settle-only step, or
    an early-surrender choice made before the peek; returns True when the round is over. Out of
    line (rarer steps)."""
    phase = st[S_PHASE]
    s = st[S_SEAT]
    if phase == P_INSURANCE:
        if action == INSURANCE and st[S_NATURAL] and st[S_RULES + R_EVEN_MONEY] != 0:
            st[S_INS] = INS_EVEN_MONEY
            st[S_EVEN_MONEY] += 1
        else:
            st[S_INS] = INS_TAKEN if action == INSURANCE else INS_DECLINED
        save_seat(st)
        following = _next_seat_with(st, s + 1, SEAT_INS, INS_PENDING)
        if following >= 0:
            _switch_seat(st, following)
            return False
        return _after_insurance(st, TABLE)
    if phase == P_SETTLE:
        return _table_done(st, hands, shoe, s + 1)
    # early surrender: a seat's first choice; anything but SURRENDER waits for the peek
    if action == SURRENDER:
        hands[st[S_CUR], H_STATUS] = HS_SURRENDERED
    else:
        st[seat_slot(s, SEAT_DEFER)] = action + 1
    following = _early_surrender_seat(st, s + 1)
    if following >= 0:
        _switch_seat(st, following)
        return False
    st[S_PEEK_PENDING] = 0
    waiting = False  # a seat whose result still depends on the peek: a choice or a natural
    for t in range(st[S_SEATS]):
        waiting |= st[seat_slot(t, SEAT_DEFER)] != 0
        waiting |= st[seat_slot(t, SEAT_NATURAL)] != 0 and st[seat_slot(t, SEAT_INS)] != INS_EVEN_MONEY
    if not waiting:
        return True  # every seat surrendered: the dealer need not check
    st[S_PEEKED] = 1
    if dealer_blackjack(st):  # the waiting choices never happen: those hands lose as they are
        for t in range(st[S_SEATS]):
            if st[seat_slot(t, SEAT_DEFER)] != 0:
                st[seat_slot(t, SEAT_DEFER)] = 0
                hands[t * MAX_HANDS, H_STATUS] = HS_STOOD
    return _play_seats(st, hands, shoe, 0)  # a seat with a natural still settles in its turn


@njit(cache=True, _nrt=False, inline="always")
def step_round(st, hands, shoe, rv, res, dealer, action, at_table):
    """Apply the acting seat's legal action and move to the next decision at the table;
    returns seat 0's reward once the round is over, else 0 (every seat's is in its res block).

    A decision on a dealt hand, the common step, is played inline; the rest (insurance, settle
    steps, early surrender, play moving to the next seat) out of line, so a lone player's round
    runs as before. Every path that ends the round meets at one ``finish_round``."""
    if st[S_PHASE] == P_PLAY and st[S_PEEK_PENDING] == 0:
        h = _play_action(st, hands, shoe, action)  # the one inline call site of each piece
        over = h >= 0 and _play_from(st, hands, shoe, h, at_table)
        if at_table is not None:  # other seats may follow (pruned for the lone seat)
            over = over and _table_done(st, hands, shoe, st[S_SEAT] + 1)
    else:
        over = _step_between(st, hands, shoe, action)
    if over:
        finish_round(st, hands, shoe, rv, res, dealer, at_table)
    return res[RES_REWARD] if over else 0.0


@njit(cache=True, _nrt=False)
def dealer_stands_on(st, hard, aces):
    """Whether the dealer stands on this hand under the table's rules (``dealer_stands``)."""
    return dealer_stands(st[S_RULES + R_H17], best_total(hard, aces), is_soft(hard, aces))


@njit(cache=True, _nrt=False, forceinline=True)
def settle(st, hands, rv, res, dealer_total, dealer_bj, at_table):
    """Every bet of the acting seat against one dealer outcome, into its block of res; returns
    the seat's net result.

    The table's one settlement rule, applied to the dealt outcome and, for expected rewards, to
    each outcome the dealer's unseen cards could make (``at_table``: the round's kind)."""
    n_hands = st[S_NUM_HANDS]
    row0 = acting_row0(st, at_table)
    r0 = acting_res0(st, at_table)
    res[r0 + RES_INSURANCE] = 0.0
    if st[S_INS] == INS_EVEN_MONEY:
        res[r0] = 1.0
        return 1.0
    natural = st[S_NATURAL] != 0 and n_hands == 1
    late_no_peek = st[S_RULES + R_PEEK] == 0 and st[S_RULES + R_SURRENDER] == SURR_LATE
    surrendered = False
    total = 0.0
    for i in range(n_hands):
        h = row0 + i
        bet = float(hands[h, H_BET])
        status = hands[h, H_STATUS]
        if status == HS_SURRENDERED:
            surrendered = True
            result = -1.0 if dealer_bj and late_no_peek else -0.5
        elif natural:
            result = 0.0 if dealer_bj else rv[R_BJ_PAYS]
        elif dealer_bj or status == HS_BUST:
            result = -bet
        else:
            player_total = hand_total(hands, h)
            if dealer_total > 21 or player_total > dealer_total:
                result = bet
            elif player_total == dealer_total:
                result = 0.0
            else:
                result = -bet
        res[r0 + i] = result
        total += result
    if dealer_bj and st[S_RULES + R_PEEK] == 0 and st[S_RULES + R_OBO] != 0 and not natural and not surrendered:
        # original bets only: the dealer's blackjack takes one unit, doubles and splits come back
        for i in range(n_hands):
            res[r0 + i] = -1.0 if i == 0 else 0.0
        total = -1.0
    if st[S_INS] == INS_TAKEN:
        res[r0 + RES_INSURANCE] = 1.0 if dealer_bj else -0.5
        total += res[r0 + RES_INSURANCE]
    return total


@njit(cache=True, _nrt=False, forceinline=True)
def finish_round(st, hands, shoe, rv, res, dealer, at_table):
    """Play the dealer's hand as far as the table needs it, then settle every seat's bets (``dealer``:
    the dealer-outcome cache of the expected reward, ``new_dealer_cache``).

    The dealer draws while any hand at the table must be compared with the dealer's total; a
    no-hole-card dealer takes the second card when any seat's result depends on it. A lone
    seat's stakes and settlement are inline (``at_table`` None), a table's loops over its seats
    out of line."""
    stakes = _seat_stakes(st, hands, None) if at_table is None else _table_stakes(st, hands)
    live = stakes >= STAKE_LIVE
    needs_card = stakes != STAKE_NONE
    st[S_PHASE] = P_OVER
    expected = st[S_REWARD_MODE] == REWARD_EXPECTED and _dealer_unknown(st, needs_card)
    if expected:
        _expected_rewards(st, hands, rv, res, dealer)
    hole = st[S_DEALER_N] == 1 and needs_card  # no hole card: the second card comes now
    st[S_HOLE_HIDDEN] = 0
    dealer_bj = False
    while True:  # one call site of the inlined draw: the missing hole card, then hits
        if not hole:
            dealer_bj = dealer_blackjack(st)
            if not live or dealer_bj or dealer_stands_on(st, st[S_DEALER_HARD], st[S_DEALER_ACES]):
                break
        dealer_add(st, draw(st, shoe))
        hole = False
    dealer_total = best_total(st[S_DEALER_HARD], st[S_DEALER_ACES])
    if at_table is None:
        _settle_seat(st, hands, rv, res, dealer_total, dealer_bj, expected, None)
    else:
        _settle_table(st, hands, rv, res, dealer_total, dealer_bj, expected)
        save_seat(st)  # every seat's block is now its final state (a lone seat's: when read)


# what the dealer's play must serve (``_seat_stakes``)
STAKE_NONE = 0  # no result depends on the dealer's cards
STAKE_CARD = 1  # a result depends on whether the dealer's two cards are a blackjack only (see _seat_stakes)
STAKE_LIVE = 2  # a hand must be compared with the dealer's total


@njit(cache=True, _nrt=False, forceinline=True)
def _seat_stakes(st, hands, at_table):
    """What the acting seat's results need of the dealer's play (STAKE_*); hands left unplayed
    (a natural, a dealer blackjack found by the peek) stand as they are."""
    natural = st[S_NATURAL] != 0 and st[S_NUM_HANDS] == 1
    surrendered = False
    live = False
    row0 = acting_row0(st, at_table)
    for h in range(row0, row0 + st[S_NUM_HANDS]):
        status = hands[h, H_STATUS]
        if status in (HS_PLAY, HS_WAIT):  # settled without playing on (natural, blackjack)
            status = HS_STOOD
            hands[h, H_STATUS] = status
        if status == HS_SURRENDERED:
            surrendered = True
        elif status != HS_BUST and not natural:
            live = True
    if live:
        return STAKE_LIVE
    up = up_value(st)
    if up != 1 and up != 10:
        return STAKE_NONE  # no dealer blackjack can change a natural's, or a surrender's, result
    ins = st[S_INS]
    late_no_peek = st[S_RULES + R_PEEK] == 0 and st[S_RULES + R_SURRENDER] == SURR_LATE
    if ins != INS_EVEN_MONEY and (natural or ins == INS_TAKEN or (surrendered and late_no_peek)):
        return STAKE_CARD
    return STAKE_NONE


@njit(cache=True, _nrt=False, forceinline=False)
def _table_stakes(st, hands):
    """The most any playing seat's results need of the dealer's play (STAKE_*)."""
    stakes = STAKE_NONE
    for s in range(st[S_SEATS]):
        if st[seat_slot(s, SEAT_ACTIVE)] != 0:
            _switch_seat(st, s)
            stakes = max(stakes, _seat_stakes(st, hands, TABLE))
    return stakes


@njit(cache=True, _nrt=False, forceinline=True)
def _settle_seat(st, hands, rv, res, dealer_total, dealer_bj, expected, at_table):
    """The acting seat's net result against the dealer's hand, and its reward (the result, or
    its expectation already in place when ``expected``)."""
    r0 = acting_res0(st, at_table)
    res[r0 + RES_TOTAL] = settle(st, hands, rv, res, dealer_total, dealer_bj, at_table)
    if not expected:
        res[r0 + RES_REWARD] = res[r0 + RES_TOTAL]


@njit(cache=True, _nrt=False, forceinline=False)
def _settle_table(st, hands, rv, res, dealer_total, dealer_bj, expected):
    """``_settle_seat`` for every playing seat of a table."""
    for s in range(st[S_SEATS]):
        if st[seat_slot(s, SEAT_ACTIVE)] != 0:
            _switch_seat(st, s)
            _settle_seat(st, hands, rv, res, dealer_total, dealer_bj, expected, TABLE)


# ============================================================================= expected rewards
@njit(cache=True, _nrt=False, forceinline=False)
def _dealer_unknown(st, needs_card):
    """Whether the dealer's outcome still matters and is unseen; if so, count the unseen cards
    into st[S_UNSEEN:].

    Unseen cards are the shoe's and a hidden hole card; after a peek that found no blackjack the
    hole card cannot complete one. Too few unseen cards (the shoe could run out and be
    reshuffled mid-round) keep the dealt result."""
    if st[S_DEALER_N] == 1 and not needs_card:
        return False  # the dealer takes no more cards: nothing is unknown
    if st[S_PEEKED] and dealer_blackjack(st):
        return False  # the peek showed the blackjack
    infinite = st[S_RULES + R_DECKS] == 0
    for value in range(11):
        st[S_UNSEEN + value] = 0
    for code in range(1, 14):
        count = 4 if infinite else st[S_COUNTS + code]
        st[S_UNSEEN + card_value(code)] += count
        st[S_UNSEEN] += count
    if st[S_DEALER_N] == 2 and not infinite:  # the hidden hole card is unseen too
        st[S_UNSEEN + card_value(st[S_DEALER + 1])] += 1
        st[S_UNSEEN] += 1
    return infinite or st[S_UNSEEN] >= MIN_UNSEEN_FOR_EXPECTED


@njit(cache=True, _nrt=False, forceinline=False)
def _expected_rewards(st, hands, rv, res, dealer):
    """Every playing seat's reward as its result averaged over the dealer's possible outcomes
    (their probabilities in seat 0's scratch, ``_cached_dealer_outcomes``)."""
    _cached_dealer_outcomes(st, res, dealer)
    for s in range(st[S_SEATS]):
        if st[seat_slot(s, SEAT_ACTIVE)] != 0:
            _switch_seat(st, s)
            res[st[S_RES0] + RES_REWARD] = _expected_result(st, hands, rv, res)


@njit(cache=True, _nrt=False, forceinline=False)
def _expected_result(st, hands, rv, res):
    """The acting seat's net result averaged over the dealer's possible outcomes (the same
    settle), with their probabilities in res[RES_DEALER:] (``_dealer_outcomes``)."""
    if st[S_INS] == INS_EVEN_MONEY:
        return 1.0
    expected = 0.0
    for outcome in range(N_DEALER_OUTCOMES):
        p = res[RES_DEALER + outcome]
        if p > 0.0:
            bj = outcome == DEALER_BLACKJACK
            expected += p * settle(st, hands, rv, res, 21 if bj else 17 + outcome, bj, TABLE)
    return expected


@njit(cache=True, _nrt=False, forceinline=True)
def _dealer_key(st, k):
    """Input k of the dealer's walk (DEALER_KEY of them, in the order of a dealer-cache row)."""
    if k == 0:
        return card_value(st[S_DEALER])
    if k == 1:
        return 1 if st[S_PEEKED] != 0 else 0
    if k == 2:
        return st[S_RULES + R_H17]
    if k == 3:
        return 1 if st[S_RULES + R_DECKS] != 0 else 0
    return st[S_UNSEEN + k - 3]


@njit(cache=True, _nrt=False, forceinline=False)
def _cached_dealer_outcomes(st, res, dealer):
    """``_dealer_outcomes``, looked up first in the cache ``dealer`` (rows a power of two; none: always
    walked): the row its inputs hash to holds them and their outcomes, or is overwritten with them.
    A row is used only when every input matches, so the probabilities are the walk's to the bit."""
    rows = dealer.shape[0]
    if rows == 0:
        _dealer_outcomes(st, res)
        return
    h = 0
    for k in range(DEALER_KEY):
        h = h * 1000003 + _dealer_key(st, k)  # wraps around in 64 bits
    row = dealer[(h ^ (h >> 29)) & (rows - 1)]
    hit = True
    for k in range(DEALER_KEY):
        if row[k] != _dealer_key(st, k):
            hit = False
            break
    if hit:
        for outcome in range(N_DEALER_OUTCOMES):
            res[RES_DEALER + outcome] = row[DEALER_KEY + outcome]
        return
    _dealer_outcomes(st, res)
    for k in range(DEALER_KEY):
        row[k] = _dealer_key(st, k)
    for outcome in range(N_DEALER_OUTCOMES):
        row[DEALER_KEY + outcome] = res[RES_DEALER + outcome]


@njit(cache=True, _nrt=False, forceinline=False)
def _dealer_outcomes(st, res):
    """Probabilities of the dealer's outcomes from the up card, drawing from st[S_UNSEEN:].

    A depth-first walk over the dealer's draws with an explicit stack (numba's cache cannot hold
    recursive functions): level d is the hand after d cards beyond the up card, with its total in
    st[S_TREE_HARD + d], st[S_TREE_ACES + d], the next value to try in st[S_TREE_NEXT + d] and its
    probability in res[RES_TREE_P + d]."""
    for outcome in range(N_DEALER_OUTCOMES):
        res[RES_DEALER + outcome] = 0.0
    finite = st[S_RULES + R_DECKS] != 0
    up_value = card_value(st[S_DEALER])
    no_blackjack = st[S_PEEKED] != 0  # the peek ruled out a hole card that makes a blackjack
    excluded = 0  # unseen cards the hole card cannot be
    if no_blackjack:
        for value in range(1, 11):
            if best_total(up_value + value, (up_value == 1) + (value == 1)) == 21:
                excluded += st[S_UNSEEN + value]
    st[S_TREE_HARD] = up_value
    st[S_TREE_ACES] = up_value == 1
    st[S_TREE_NEXT] = 1
    res[RES_TREE_P] = 1.0
    d = 0
    while d >= 0:
        value = st[S_TREE_NEXT + d]
        if value > 10:  # every card tried at this level: back up and return the card that led here
            d -= 1
            if d >= 0 and finite:
                st[S_UNSEEN + st[S_TREE_NEXT + d] - 1] += 1
                st[S_UNSEEN] += 1
            continue
        st[S_TREE_NEXT + d] = value + 1
        count = st[S_UNSEEN + value]
        if count == 0:
            continue
        hard = st[S_TREE_HARD + d] + value
        aces = st[S_TREE_ACES + d] + (value == 1)
        total = best_total(hard, aces)
        if d == 0 and total == 21:
            if not no_blackjack:
                res[RES_DEALER + DEALER_BLACKJACK] += res[RES_TREE_P] * count / st[S_UNSEEN]
            continue
        p = res[RES_TREE_P + d] * count / (st[S_UNSEEN] - (excluded if d == 0 else 0))
        if dealer_stands_on(st, hard, aces):
            res[RES_DEALER + (DEALER_BUST if total > 21 else total - 17)] += p
            continue
        if finite:
            st[S_UNSEEN + value] = count - 1
            st[S_UNSEEN] -= 1
        d += 1
        st[S_TREE_HARD + d] = hard
        st[S_TREE_ACES + d] = aces
        st[S_TREE_NEXT + d] = 1
        res[RES_TREE_P + d] = p


# ============================================================================= observation
@njit(cache=True, _nrt=False)
def write_obs(st, hands, obs, count_mode):
    """Write the observation vector (layout documented in BlackjackEnv)."""
    obs[:] = 0
    phase = st[S_PHASE]
    obs[O_PHASE] = phase
    obs[O_UP] = up_value(st) if st[S_DEALER_N] > 0 else 0
    if phase != P_OVER:
        h = st[S_CUR]
        obs[O_TOTAL] = min(hand_total(hands, h), 21)
        obs[O_SOFT] = is_soft(hands[h, H_HARD], hands[h, H_ACES])
        if is_pair(st, hands, h):
            obs[O_PAIR] = card_value(hands[h, H_CARDS])
        if phase == P_PLAY:
            obs[O_CAN_DOUBLE] = can_double(st, hands, h)
            obs[O_CAN_SPLIT] = can_split(st, hands, h)
            obs[O_CAN_SURRENDER] = can_surrender(st, hands, h)
        obs[O_NUM_HANDS] = st[S_NUM_HANDS]
        obs[O_HAND_INDEX] = h - st[S_ROW0]
        obs[O_SPLIT_ACE] = hands[h, H_SPLIT_ACE]
        obs[O_NATURAL] = st[S_NATURAL]
    if count_mode == COUNT_NONE:
        return
    hole_code = st[S_DEALER + 1] if st[S_HOLE_HIDDEN] else 0  # unseen = the shoe + a hidden hole card
    if count_mode == COUNT_COMPOSITION:
        for code in range(1, 14):
            obs[OBS_BASE + card_value(code) - 1] += st[S_COUNTS + code] + (code == hole_code)
        return
    n_unseen = 0
    for code in range(1, 14):
        n_unseen += st[S_COUNTS + code] + (code == hole_code)
    running = -unseen_tags(HILO_TAGS, 0, st)  # Hi-Lo count of the cards seen: a full shoe's tags add to 0
    true_count = per_unseen_deck(running, n_unseen)
    rounded = int(np.floor(true_count + 0.5))
    obs[OBS_BASE] = max(-HILO_RANGE, min(HILO_RANGE, rounded)) + HILO_RANGE


# ============================================================================= env entry points
@njit(cache=True, _nrt=False)
def write_view(st, hands, obs, mask, count_mode):
    """The acting seat's observation and legal actions."""
    write_obs(st, hands, obs, count_mode)
    legal_mask(st, hands, mask)
