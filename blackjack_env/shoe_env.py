"""``blackjack_env/BlackjackShoe-v0``: one shoe, dealt to the cut card, is one episode."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import engine as E
from . import table as T
from .counting import hilo_count
from .env import BlackjackEnv
from .env_kit import INFO_KEYS, Action, observation_nvec
from .rules import DEFAULT_PRESET, Rules

DEFAULT_BETS = (1, 2, 4, 8)
SHOE_OBS_NAMES = ("bet_level", "shoe_dealt")
#: What the shoe env's own observation components mean (and its phase, which adds BET), by name;
#: the rest are Blackjack-v0's (``env.OBS_MEANINGS``).
SHOE_OBS_MEANINGS = {
    "phase": "0 insurance question, 1 playing, 2 nothing to decide (STAND settles), 3 round over, 4 a bet is due (BET)",
    "bet_level": "0 while the bet is due, else 1 + the index of this round's bet in ``bets``",
    "shoe_dealt": "cards dealt from the shoe so far, in 52nds of the shoe (0-52)",
}
#: What action id ``7 + i`` does (``str.format`` with ``i`` and ``bet``, ``bets[i]``).
BET_MEANING = "bet {bet:g} table-minimum units on the next round (``bets[{i}]``; a 0 sits it out)"


def shoe_rules(rules: Rules | str | Mapping[str, Any] | None) -> Rules:
    """The rules of a shoe game (default: the default preset dealt to a cut card at 75%), which
    must have a cut card."""
    rules = Rules.preset(DEFAULT_PRESET).replace(penetration=0.75) if rules is None else Rules.coerce(rules)
    if rules.infinite or rules.penetration <= 0:
        raise ValueError(
            "a shoe game needs a cut card: rules with decks >= 1 and penetration > 0 "
            f"(e.g. penetration=0.75), got decks={rules.decks}, penetration={rules.penetration}"
        )
    return rules


def shoe_options(
    rules: Rules | str | Mapping[str, Any] | None, bets: Any, seats: Any
) -> tuple[Rules, tuple[float, ...]]:
    """The validated rules and bets of a shoe game (the single and the vector env's arguments)."""
    return shoe_rules(rules), check_bets(bets, int(seats) if isinstance(seats, (int, np.integer)) else 1)


def shoe_nvec(rules: Rules, count_obs: str, n_bets: int) -> np.ndarray:
    """MultiDiscrete sizes of the shoe env's observation: Blackjack-v0's (with the BET phase),
    then the bet level and the 52nds of the shoe dealt."""
    nvec = observation_nvec(rules, count_obs)
    nvec[E.O_PHASE] = E.P_BET + 1
    return np.concatenate([nvec, [n_bets + 1, T.SHOE_STEPS + 1]]).astype(np.int64)


def check_bets(bets: Any, seats: int) -> tuple[float, ...]:
    """The bet sizes (table-minimum units), validated: strictly increasing, >= 0, a 0 (sitting a
    round out) only with other seats at the table."""
    try:
        sizes = tuple(float(b) for b in bets)
    except (TypeError, ValueError):
        raise ValueError(f"bets must be a sequence of bet sizes such as (1, 2, 4, 8), got {bets!r}") from None
    if not sizes:
        raise ValueError(f"bets must hold at least one bet size, such as (1, 2, 4, 8); got the empty {bets!r}")
    if any(not np.isfinite(b) or b < 0 for b in sizes):
        raise ValueError(f"bets must be >= 0 (0 sits a round out), got {bets!r}")
    if any(b <= a for a, b in itertools.pairwise(sizes)):
        raise ValueError(f"bets must be strictly increasing, got {bets!r}")
    if sizes[0] == 0 and seats == 1:
        raise ValueError(
            f"bets may start with 0 (sitting a round out) only with other seats at the table (seats >= 2); "
            f"got bets={bets!r} with seats={seats!r}"
        )
    return sizes


#: Every key of BlackjackShoe-v0's ``info``: (when, what), as ``env.INFO_KEYS`` (``"settled"``: on
#: the step that settles a round, every round of the shoe).
SHOE_INFO_KEYS = {
    **INFO_KEYS,
    "action_mask": ("always", "bool[7 + len(bets)], the legal actions now; STAND alone once the shoe is over"),
    "running_count": ("always", "Hi-Lo running count of every card seen this shoe"),
    "true_count": ("always", "running count / (unseen cards / 52), a float"),
    "cards_dealt": ("always", "cards dealt from the shoe so far"),
    "bet": ("always", "this round's bet (table-minimum units), 0 while it is due"),
    "seats": ("settled", "every seat's summary as the agent's, each with its ``bet`` (the others bet 1)"),
    "round_result": ("settled", "the agent's result of the round in table-minimum units (bet x result; the reward)"),
}


class BlackjackShoeEnv(BlackjackEnv):
    """A shoe of casino blackjack dealt to the cut card, a bet before every round, at a table.

    ## Description
    The game of :class:`BlackjackEnv` played round after round from one shoe until the cut card
    comes out, with a bet chosen before each round: the game card counters beat. The agent sits
    in box ``seat`` of a table of ``seats`` (1-7); the other boxes are played by ``others``
    (basic strategy for these rules by default, at flat 1-unit bets). Every round deals one card
    to each playing seat from seat 0 up, the dealer's up card, a second card to each seat in the
    same order, then the hole card (peek games); insurance is asked of each seat in order, then
    the seats play in order, each finishing all its hands, then the dealer. Every card dealt is
    seen by everyone; the hole card once it is turned over (at the latest, the round's end).

    ## Action Space
    ``Discrete(7 + len(bets))``. Ids 0-6 are :class:`Action` (as in Blackjack-v0); id ``7 + i``
    places ``bets[i]`` for the next round. Every round begins with a BET decision in which only
    the bet ids are legal; then the round is played as in Blackjack-v0 (the insurance question,
    decisions, a STAND-only step for a round with nothing to decide). A bet of 0 sits the round
    out: the other seats play it inside that step. ``action_masks()`` / ``info["action_mask"]``
    give the legal ids; an illegal one raises ``ValueError`` and changes nothing.

    ## Observation Space
    ``MultiDiscrete``: Blackjack-v0's components (phase 4 is BET: a bet is due, and the hand
    components are 0), its count components (``count_obs``), then:

    | name | values |
    |---|---|
    | bet_level | 0 while the bet is due, else 1 + the index of this round's bet in ``bets`` |
    | shoe_dealt | cards dealt from the shoe so far, in 52nds of the shoe (0-52) |

    ``count_obs="hilo"`` (the default) is the Hi-Lo true count of the cards seen (running count
    over the unseen decks), rounded and clipped to [-10, 10], plus 10; ``"composition"`` the unseen
    cards per value 1-10; ``"none"`` nothing. ``observation_names`` lists every component.

    ## Starting State
    A freshly shuffled shoe and the first round's BET decision. ``reset(options={"cards": [...]})``
    puts those ranks on top of the shoe in deal order (every seat and the dealer, round after
    round); the seeded shoe continues after them.

    ## Rewards
    0 on every step but the one that settles a round; there, the agent's net result of the round
    in table-minimum units (its bet times the round's result per unit bet; 0 for a round it sat
    out). The mean reward per round is the counter's win rate per round.

    ## Episode End
    Terminated on the step that settles the last round before the shuffle: the round in which the
    shoe reached the cut card (``int(penetration * 52 * decks)`` cards dealt; the round in which it
    comes out is finished). Never truncated. On that step the mask holds STAND alone, as in
    Blackjack-v0 (what a vector env's autoreset step ignores); the env must then be reset.

    ## Arguments
    ``gymnasium.make("blackjack_env/BlackjackShoe-v0", rules=..., bets=(1, 2, 4, 8), seats=1,
    seat=0, others="basic", count_obs="hilo", reward="sampled", render_mode=None)``: ``rules`` as in
    Blackjack-v0 (default: the default preset with ``penetration=0.75``; a shoe needs a cut card,
    so ``penetration=0`` is a ``ValueError``); ``bets`` strictly increasing sizes >= 0 (a 0 only
    with ``seats >= 2``); ``others``: ``"basic"``, ``"random"``, a ``StrategyTable`` or the path of a
    saved agent or strategy table.

    ``info`` after every step: ``action_mask``, ``running_count`` (Hi-Lo, every card seen this
    shoe), ``true_count`` (running count / (unseen cards / 52)), ``cards_dealt``, ``bet`` (this
    round's, 0 while it is due); when a round is settled also Blackjack-v0's round summary of the
    agent's seat, ``seats`` (every seat's hands, bets and results), ``dealer`` and
    ``round_result`` (the agent's result in table-minimum units).

    ## Version History
    * v0: initial version.
    """

    def __init__(
        self,
        rules: Rules | str | Mapping[str, Any] | None = None,
        bets: Sequence[float] = DEFAULT_BETS,
        seats: int = 1,
        seat: int = 0,
        others: Any = "basic",
        count_obs: str = "hilo",
        reward: str = "sampled",
        render_mode: str | None = None,
    ) -> None:
        rules, self.bets = shoe_options(rules, bets, seats)
        super().__init__(rules, count_obs, render_mode, reward, seats, seat, others)
        self._view.shoe_episode = 1
        self.observation_names = (*self.observation_names, *SHOE_OBS_NAMES)

    def _bet_sizes(self) -> tuple[float, ...]:
        return self.bets

    def _observation_nvec(self) -> np.ndarray:
        return shoe_nvec(self.rules, self.count_obs, len(self.bets))

    def _extra_index(self) -> int:
        return len(observation_nvec(self.rules, self.count_obs))

    _stack_unit = "shoe"

    def _max_stacked(self) -> int:
        return len(self._shoe)

    def _start(self, codes: list[int]) -> None:
        """A fresh shuffle (the stacked cards on top) and the first bet due."""
        self._view.stack([])
        T.start_shoe(self._st, self._shoe, codes)
        T.write_agent_view(self._st, self._hands, self._obs, self._mask)

    def _episode_over(self) -> bool:
        return bool(self._view.phase == E.P_OVER and not self._view.betting)

    def _info(self, settled: bool) -> dict[str, Any]:
        info = super()._info(settled)
        running, unseen = self.hilo_count()
        view = self._view
        betting = bool(view.betting)
        info.update(
            running_count=running,
            true_count=float(E.per_unseen_deck(running, unseen)),
            cards_dealt=int(view.shoe_pos),
            bet=0.0 if betting else self.bets[int(view.bet_level)],
        )
        if "hands" in info:  # a round was settled on this step (the next bet may already be due)
            playing = view.seat_active(self.seat)
            info["round_result"] = self.bets[int(view.bet_level)] * info["result"] if playing else 0.0
        return info

    def round_summary(self) -> dict[str, Any]:
        """Blackjack-v0's summary of the agent's seat, with ``seats``: every seat's hands, its bet
        (table-minimum units; the others bet 1) and result per unit bet."""
        summary = super().round_summary()
        summary["seats"] = [self._seat_summary(s) for s in range(self.seats)]
        level = int(self._view.bet_level)
        for seat in summary["seats"]:
            seat["bet"] = (self.bets[level] if seat["seat"] == self.seat else 1.0) if seat["playing"] else 0.0
        return summary

    def hilo_count(self) -> tuple[int, int]:
        """(Hi-Lo running count of every card seen this shoe, cards unseen): the shoe's cards and a
        hidden hole card are unseen."""
        return hilo_count(self._st)

    def _action_names(self) -> list[str]:
        return [a.name for a in Action] + [f"BET {bet:g}" for bet in self.bets]

    def _table_text(self) -> str:
        text = super()._table_text()
        running, unseen = self.hilo_count()
        return (
            f"{text}\nShoe: {int(self._view.shoe_pos)} of {len(self._shoe)} cards dealt, "
            f"Hi-Lo running count {running:+d}, true count {E.per_unseen_deck(running, unseen):+.2f}"
        )


__all__ = [
    "BET_MEANING",
    "DEFAULT_BETS",
    "SHOE_INFO_KEYS",
    "SHOE_OBS_MEANINGS",
    "SHOE_OBS_NAMES",
    "BlackjackShoeEnv",
    "check_bets",
    "hilo_count",
    "shoe_nvec",
    "shoe_rules",
]
