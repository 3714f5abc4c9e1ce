"""What the env adapters over the table share (the round env, the shoe env, the vector env, the PettingZoo
table): their options and the checks on them, the action ids and the observation's components (with what
each means), the ``info`` keys, stacked cards, seeding a table and the policy of the seats the agent does not
play. ``blackjack_env.env`` re-exports the public names."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

import numpy as np

from . import engine as E
from . import table as T
from .cards import card_codes, card_name
from .rules import MAX_HANDS, Rules
from .slots import View
from .strategy import StrategyTable

COUNT_MODES = {"none": E.COUNT_NONE, "composition": E.COUNT_COMPOSITION, "hilo": E.COUNT_HILO}
REWARD_MODES = {"sampled": E.REWARD_SAMPLED, "expected": E.REWARD_EXPECTED}


OTHERS_CHOICES = (
    "'basic', 'random', a StrategyTable, or the path of a strategy table file (or of a saved agent's "
    "directory holding one, strategy.json)"
)
STRATEGY_FILE = "strategy.json"  # a saved agent's table, written beside its own files (agents.base)


def check_options(rules: Rules, count_obs: str, reward: str, seats: int = 1, seat: int = 0) -> None:
    """Validate the env options (shared by the single and the vector envs)."""
    if count_obs not in COUNT_MODES:
        raise ValueError(f"count_obs must be one of {', '.join(COUNT_MODES)}, got {count_obs!r}")
    if count_obs != "none" and rules.infinite:
        raise ValueError(f"count_obs={count_obs!r} needs a finite shoe; these rules have an infinite deck (decks=0)")
    if reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {', '.join(REWARD_MODES)}, got {reward!r}")
    E.check_seats(seats)
    E.check_seat(seat, seats)


def seed_table(st: np.ndarray, shoe: np.ndarray, prngs: np.ndarray, entropy: int | np.integer) -> None:
    """Seed a table's cards and its other seats' random play from one number (the env's draw
    from its np_random), so the single and the vector envs seed a table identically."""
    sequence = np.random.SeedSequence(int(entropy))
    E.seed_table(st, shoe, sequence)
    prngs[:] = E.seed_words(np.random.SeedSequence([int(entropy), 1]), len(prngs)).reshape(prngs.shape)


def others_policy(rules: Rules, others: Any) -> tuple[int, StrategyTable | None]:
    """(policy kind, table) of the seats the agent does not play: basic strategy for the rules,
    uniform random legal play, a StrategyTable, or a strategy table file on disk.

    The env knows tables, not agents: a saved agent's directory plays the ``strategy.json`` it
    wrote when saved; any agent becomes a table in the agent layer
    (``blackjack_env.agents.load_agent(path).to_table()``)."""
    if isinstance(others, StrategyTable):
        return T.POLICY_TABLE, others
    if others == "basic":
        from .solver import solve  # start-up time: a lone seat's env never loads the solver

        return T.POLICY_TABLE, solve(rules).table
    if others == "random":
        return T.POLICY_RANDOM, None
    if isinstance(others, (str, Path)) and Path(others).exists():
        path = Path(others)
        file = path / STRATEGY_FILE if path.is_dir() else path
        if not file.is_file():
            raise ValueError(
                f"others={str(others)!r} is a directory without a {STRATEGY_FILE}: a saved agent that plays no "
                "table (random play) is others='random'; any other agent is "
                "others=blackjack_env.agents.load_agent(path).to_table()"
            )
        try:
            return T.POLICY_TABLE, StrategyTable.load(file)
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"others={str(others)!r} is not a saved strategy table ({error})") from None
    raise ValueError(f"others must be {OTHERS_CHOICES}; got {others!r}")


def table_policy(rules: Rules, others: Any, seats: int) -> tuple[int, StrategyTable | None]:
    """``others_policy`` at a table of ``seats``; a table of one has no other seats to play, but a
    bad ``others`` is still an error."""
    if seats > 1:
        return others_policy(rules, others)
    if not (isinstance(others, StrategyTable) or (isinstance(others, str) and others in ("basic", "random"))):
        others_policy(rules, others)  # a saved agent or table is loaded (and checked), anything else raises
    return T.POLICY_RANDOM, None


class Action(enum.IntEnum):
    """The fixed action ids of ``blackjack_env/Blackjack-v0``."""

    STAND = E.STAND
    HIT = E.HIT
    DOUBLE = E.DOUBLE
    SPLIT = E.SPLIT
    SURRENDER = E.SURRENDER
    INSURANCE = E.INSURANCE  # insure, or take even money with a blackjack
    NO_INSURANCE = E.NO_INSURANCE


#: What each action does (the env cards and tests/test_docs.py read it; the shoe env's bets: BET_MEANING).
ACTION_MEANINGS = {
    Action.STAND: "stand on the current hand (in a round with nothing to decide: settle it)",
    Action.HIT: "take a card on the current hand",
    Action.DOUBLE: "double the hand's bet, take exactly one card and stand",
    Action.SPLIT: "split the pair into two hands, each with the hand's bet",
    Action.SURRENDER: "give up the hand and half its bet",
    Action.INSURANCE: "insure (half the bet, pays 2:1), or take even money holding a blackjack",
    Action.NO_INSURANCE: "decline insurance (or even money)",
}


class Phase(enum.IntEnum):
    """Observation component 0."""

    INSURANCE = E.P_INSURANCE
    PLAY = E.P_PLAY
    SETTLE = E.P_SETTLE
    OVER = E.P_OVER


OBS_NAMES = (
    "phase",
    "total",
    "soft",
    "pair",
    "can_double",
    "can_split",
    "can_surrender",
    "dealer_up",
    "num_hands",
    "hand_index",
    "split_ace",
    "natural",
)
#: What each observation component means, by name (the count components' too): the env cards'
#: Observation Space tables, checked against the class docstrings' tables by tests/test_docs.py.
OBS_MEANINGS = {
    "phase": "0 insurance question, 1 playing, 2 nothing to decide (STAND settles), 3 round over",
    "total": "best total of the current hand, 0-21 (0 once the round is over)",
    "soft": "1 if an ace counts 11",
    "pair": "value 1-10 of a splittable-looking pair (1 = aces), 0 if not a pair",
    "can_double": "1 if DOUBLE is legal now",
    "can_split": "1 if SPLIT is legal now",
    "can_surrender": "1 if SURRENDER is legal now",
    "dealer_up": "dealer's up card value 1-10 (1 = ace)",
    "num_hands": "hands the player holds, 1-8",
    "hand_index": "index of the hand being played, 0-7",
    "split_ace": "1 if the current hand is a split ace",
    "natural": "1 if the player holds a blackjack (the even-money question)",
    **{
        f"unseen_{name}": f"unseen cards of value {name} (in the shoe, or the dealer's hidden hole card)"
        for name in map(card_name, range(1, 11))
    },
    "hilo_true_count": "Hi-Lo true count of the cards seen, rounded and clipped to [-10, 10], plus 10",
}


def stacked_codes(rules: Rules, cards: Any, most: int, unit: str) -> list[int]:
    """Stacked cards (``reset(options={"cards": [...]})``) as engine codes, checked against the
    shoe: at most ``most`` per ``unit`` (a round, a shoe), none more often than the shoe holds it."""
    codes = card_codes(cards)
    if len(codes) > most:
        raise ValueError(f"at most {most} stacked cards per {unit}, got {len(codes)}")
    if not rules.infinite:
        wanted = np.bincount(codes, minlength=14)
        full = 4 * rules.decks
        over = [card_name(c) for c in range(1, 14) if wanted[c] > full]
        if over:
            raise ValueError(
                f"stacked cards ask for {wanted[card_codes(over)[0]]} x {over[0]} but a "
                f"{rules.decks}-deck shoe holds only {full}"
            )
    return codes


def load_stack(st: np.ndarray, rules: Rules, codes: list[int]) -> None:
    """The next cards to deal this round (a new shoe first if this one lacks them)."""
    view = View(st)
    if not codes:
        view.stack(codes)
        return
    short = False  # not enough left in this shoe: start a new one
    if not rules.infinite:
        wanted = np.bincount(codes, minlength=14)
        remaining = view.cards_left
        short = any(wanted[c] > remaining[c] for c in range(1, 14))
    view.stack(codes, force_shuffle=short)


def count_names(count_obs: str) -> tuple[str, ...]:
    """Names of the count components of the observation."""
    if count_obs == "composition":
        return tuple(f"unseen_{card_name(v)}" for v in range(1, 11))
    if count_obs == "hilo":
        return ("hilo_true_count",)
    return ()


def observation_nvec(rules: Rules, count_obs: str = "none") -> np.ndarray:
    """The MultiDiscrete sizes of the observation for these rules and counting option."""
    nvec = [4, 22, 2, 11, 2, 2, 2, 11, MAX_HANDS + 1, MAX_HANDS, 2, 2]
    if count_obs == "composition":
        nvec += [4 * rules.decks + 1] * 9 + [16 * rules.decks + 1]
    elif count_obs == "hilo":
        nvec += [2 * E.HILO_RANGE + 1]
    return np.array(nvec, dtype=np.int64)


#: Every key of Blackjack-v0's ``info``: (when it is there, what it holds). ``"always"``: after
#: ``reset`` and every step; ``"settled"``: on the step that settles the round (the last). The env
#: cards' Information tables; tests/test_docs.py holds them to a seeded rollout's infos.
INFO_KEYS = {
    "action_mask": (
        "always",
        "bool[7], the legal actions now (``action_masks()``); STAND alone once the round is over",
    ),
    "seat": ("settled", "the agent's box (``seat``)"),
    "playing": ("settled", "True: the agent's box played the round"),
    "hands": (
        "settled",
        "the agent's hands in play order, each a dict: ``cards`` (rank names), ``total``, ``bet`` (per unit "
        "bet), ``doubled``, ``split``, ``status`` (stood, bust, surrendered ...) and ``result``",
    ),
    "insurance": ("settled", "the insurance's (or even money's) result per unit bet, 0 if none"),
    "insurance_state": ("settled", "not offered, offered, taken, declined or even money"),
    "result": (
        "settled",
        "the round's dealt net result per unit bet, every hand and the insurance (the reward, but with "
        "``reward='expected'``)",
    ),
    "dealer": ("settled", "the dealer's ``cards`` (hole card included) and ``total``"),
    "seats": ("settled", "at a table of several seats (``seats`` > 1): every seat's summary, as the agent's above"),
}
