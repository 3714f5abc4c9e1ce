"""Gymnasium adapter over the compiled engine: observation, mask, reward, render."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from . import engine as E
from . import render as R
from . import table as T
from ._jit import compiles_on_call, compiling_notice
from .cards import card_name
from .env_kit import (
    ACTION_MEANINGS,
    COUNT_MODES,
    INFO_KEYS,
    OBS_MEANINGS,
    OBS_NAMES,
    REWARD_MODES,
    Action,
    Phase,
    check_options,
    count_names,
    load_stack,
    observation_nvec,
    seed_table,
    stacked_codes,
    table_policy,
)
from .rules import Rules
from .slots import View
from .summary import dealer_summary, seat_summary


def _action_id(action: Any) -> int:
    """An action id from an int, a numpy integer or a one-element integer array; else ValueError."""
    if isinstance(action, np.ndarray) and action.size == 1 and np.issubdtype(action.dtype, np.integer):
        return int(action.reshape(()))
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    raise ValueError(f"action must be an integer id 0-6 (see blackjack_env.Action), got {action!r}")


class LegalActions(spaces.Discrete):
    """``Discrete(n)`` whose plain ``sample()`` draws among the actions legal right now.

    Generic tools (Gymnasium's and SB3's env checkers, random rollouts) call ``sample()`` with no
    mask; drawing from the live mask keeps them from stepping illegal actions. After the episode
    ends it returns STAND, the one id a finished env's mask holds (the env itself must then be
    reset; a vector env's autoreset ignores the action). An explicit ``mask`` or ``probability``
    argument behaves exactly as in ``Discrete``.

    Right after ``seed(s)`` (before the env's next reset or step) a sample is drawn for the first
    decision of the episode that ``reset(seed=s)`` would start (a dry run of the env's, when it
    gives one as ``first_mask``): Gymnasium's ``check_env`` seeds the space, samples, then resets
    with that seed and steps the sample.
    """

    def __init__(self, live_mask: np.ndarray, seed: int | None = None, first_mask: Any = None) -> None:
        self._live_mask = live_mask
        self._first_mask = first_mask  # seed -> bool mask of that seeded episode's first decision, or None
        self._fresh: tuple[int | None] | None = None
        super().__init__(len(live_mask), seed=seed)
        self._fresh = None

    def seed(self, seed: int | None = None) -> Any:
        seeds = super().seed(seed)
        self._fresh = (seed,)
        return seeds

    def env_moved(self) -> None:
        """The env reset or stepped: samples follow the live mask again."""
        self._fresh = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_first_mask"] = None  # a copy (or a pickle) does not hold the env
        state["_fresh"] = None
        return state

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        live = self._live_mask
        if self._fresh is not None and self._first_mask is not None:
            first = self._first_mask(self._fresh[0])
            if first is not None:
                live = first
        legal = np.flatnonzero(live)
        if len(legal) == 0:
            return np.int64(E.STAND)
        return np.int64(legal[self.np_random.integers(len(legal))])


class BlackjackEnv(gym.Env):
    """Casino blackjack with the full rule set, one round per episode, with action masking.

    ## Description
    One player against the dealer under a configurable casino rule set
    (:class:`blackjack_env.Rules`): hit, stand, double (also after splits), split and resplit
    (split aces get one card unless ``hit_split_aces``), late or early surrender, insurance and
    even money, dealer peek or European no hole card (with or without OBO), H17/S17, 1-8 decks
    or an infinite deck, a fresh shuffle every round or a shoe dealt to a cut card.

    Cards are dealt player, dealer up card, player, dealer hole card (no hole card in
    ``peek=False`` games: the dealer's second card is drawn after the players act), then in the
    order play draws them. After a split each hand gets its second card when play reaches it;
    a hand made by splitting is added after the last hand and played in that order.

    ## Action Space
    ``Discrete(7)`` with fixed ids (:class:`Action`): 0 STAND, 1 HIT, 2 DOUBLE, 3 SPLIT,
    4 SURRENDER, 5 INSURANCE (insure, or take even money holding a blackjack), 6 NO_INSURANCE.
    ``env.action_masks()`` (the sb3-contrib ``MaskablePPO`` hook) and ``info["action_mask"]``
    give the legal ones as ``bool[7]``. While the insurance question is open only 5 and 6 are
    legal. A hand at 21, a bust hand and a split ace that may not be played on end without a
    decision. A round that needs no decision (a natural settled at once, a dealer blackjack found
    by the peek) is still one step long: only STAND is legal and it settles the round.
    With early surrender against an ace or ten the dealer checks for blackjack after the
    player's first choice: any choice but SURRENDER then loses the original bet to a dealer
    blackjack without being carried out (choosing is still optimal as if the check came first).
    An illegal action raises ``ValueError`` and leaves the round unchanged.

    ## Observation Space
    ``MultiDiscrete`` (one-hot encoded by Stable-Baselines3's ``MlpPolicy``):

    | index | name | values |
    |---|---|---|
    | 0 | phase | 0 insurance question, 1 playing, 2 nothing to decide (STAND settles), 3 round over |
    | 1 | total | best total of the current hand, 0-21 (0 once the round is over) |
    | 2 | soft | 1 if an ace counts 11 |
    | 3 | pair | value 1-10 of a splittable-looking pair (1 = aces), 0 if not a pair |
    | 4 | can_double | 1 if DOUBLE is legal now |
    | 5 | can_split | 1 if SPLIT is legal now |
    | 6 | can_surrender | 1 if SURRENDER is legal now |
    | 7 | dealer_up | dealer's up card value 1-10 (1 = ace) |
    | 8 | num_hands | hands the player holds, 1-8 |
    | 9 | hand_index | index of the hand being played, 0-7 |
    | 10 | split_ace | 1 if the current hand is a split ace |
    | 11 | natural | 1 if the player holds a blackjack (the even-money question) |

    With ``count_obs="composition"`` ten more entries give the unseen cards per value 1-10 (still
    in the shoe, or the dealer's hidden hole card); with ``count_obs="hilo"`` one more gives the
    Hi-Lo true count of the cards seen, rounded and clipped to [-10, 10], plus 10. Counting needs a
    finite shoe.

    ## Starting State
    A freshly dealt round (the shoe is reshuffled first when ``penetration`` is 0 or the cut card
    was reached). ``reset(options={"cards": ["A", "K", ...]})`` deals exactly those ranks first
    (A, 2-10, J, Q, K) in deal order, then continues from the seeded shoe.

    ## Rewards
    0 on every step but the last; on the last, the net result of the whole round (every hand,
    double, split, surrender and insurance) in units of the initial bet. A natural pays
    ``blackjack_pays``; insurance costs 0.5 and pays 2:1. The mean episode reward of a policy is
    its expected value per round.

    With ``reward="expected"`` (off by default) the last step pays instead the round's expected
    result given everything the player has seen: the player's final hands, the up card, the
    shoe's remaining composition and what a peek revealed. The dealer's unseen cards (hole card
    included) are averaged over exactly, with the same settlement as the dealt result. The dealer's
    play involves no decision, so every policy's expected return is unchanged while most of the
    noise of the dealer's draws goes: a variance-reduction option for learners. The dealer still
    draws (the shoe advances as in play) and ``info["result"]`` is still the dealt result. When
    fewer than 12 cards are unseen (the shoe might run out mid-round) the dealt result is paid.

    ## Episode End
    The episode terminates when the round is settled. It is never truncated. On that step
    ``info["action_mask"]`` and ``action_masks()`` hold STAND alone, as a finished table's mask does
    in every vector env (Gymnasium's ``"sync"`` and ``"async"`` modes and the native one): its next
    step there is the autoreset, which ignores the action. The env itself must be reset:
    ``step()`` on a finished episode raises ``RuntimeError``.

    ## Arguments
    ``gymnasium.make("blackjack_env/Blackjack-v0", rules=..., count_obs="none", render_mode=None, reward="sampled")``

    * ``rules``: a :class:`Rules`, a preset name (``Rules.preset``) or a dict of fields; default
      ``Rules()`` (the ``ultimatebet`` preset).
    * ``count_obs``: ``"none"``, ``"composition"`` or ``"hilo"`` (what a card counter sees).
    * ``render_mode``: ``"ansi"`` returns a text picture of the table, ``"rgb_array"`` an
      ``(H, W, 3) uint8`` picture (Pillow; the hole card face down until shown, every seat's hands,
      bets and totals, the acting hand framed, the count and the shoe's depth in shoe games),
      ``"human"`` shows that picture in a window where a display exists, else prints the text.
    * ``reward``: ``"sampled"`` (the dealt result) or ``"expected"`` (see Rewards).

    The final step's ``info`` has ``hands`` (each hand's cards, bet, status and result),
    ``dealer`` (cards and total), ``insurance`` (its result) and ``result`` (the round total).

    ## Version History
    * v0: initial version (``reward="expected"`` added as an option; the default is unchanged).
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        rules: Rules | str | Mapping[str, Any] | None = None,
        count_obs: str = "none",
        render_mode: str | None = None,
        reward: str = "sampled",
        seats: int = 1,
        seat: int = 0,
        others: Any = "basic",
    ) -> None:
        self.rules = Rules.coerce(rules)
        check_options(self.rules, count_obs, reward, seats, seat)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {', '.join(self.metadata['render_modes'])} or None, got {render_mode!r}"
            )
        self.count_obs = count_obs
        self.reward = reward
        self.render_mode = render_mode
        self.seats = int(seats)
        self.seat = int(seat)
        self._count_mode = COUNT_MODES[count_obs]
        self._mask = np.zeros(E.N_ACTIONS + len(self._bet_sizes()), np.bool_)
        self.action_space = LegalActions(self._mask, first_mask=self._first_decision_mask)
        self.observation_space = spaces.MultiDiscrete(self._observation_nvec())
        self._rv = self.rules.to_array()
        self._st = np.zeros(E.ST_SIZE, np.int64)
        self._hands = E.new_hands(self.seats)
        self._shoe = E.new_shoe(self.rules.decks)
        E.set_seats(self._st, self.seats)
        E.load_rules(self._st, self._rv)
        self._view = View(self._st)
        self._view.reward_mode = REWARD_MODES[reward]
        self._res = E.new_res(self.seats)
        self._dealer = E.new_dealer_cache(reward == "expected")
        self._obs = np.zeros(len(self.observation_space.nvec), np.int64)
        self.observation_names = (*OBS_NAMES, *count_names(count_obs))
        # the other seats' policy (policy 0 of the table driver; unused at a table of one)
        kind, table = table_policy(self.rules, others, self.seats)
        self._kinds, self._actions, self._insurance = T.driver_policies(kind, table)
        self._prngs = np.zeros((1, 4), np.int64)
        self._bets = np.array(self._bet_sizes() or (1.0,), np.float64)  # one round: a flat bet of 1
        self._at_table = E.table_kind(self.seats)
        self._view.agent = self.seat
        self._view.count_mode = self._count_mode
        self._view.obs_extra = self._extra_index()
        self._driver = self._driver_values()
        self._seeded = False

    # ------------------------------------------------------------------ what the shoe env changes
    def _bet_sizes(self) -> tuple[float, ...]:
        """The bets the agent may place (none here: one round at a flat bet of 1)."""
        return ()

    def _observation_nvec(self) -> np.ndarray:
        return observation_nvec(self.rules, self.count_obs)

    def _extra_index(self) -> int:
        """Where the shoe episode's extra observation components start (0: there are none)."""
        return 0

    _stack_unit = "round"

    def _max_stacked(self) -> int:
        """Most stacked cards a reset takes (one round's worth)."""
        return E.MAX_STACK

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if isinstance(self.action_space, LegalActions):
            self.action_space.env_moved()
        super().reset(seed=seed)
        if seed is not None or not self._seeded:
            # a new seed starts a new shoe and a new card stream (and the other seats' own)
            seed_table(self._st, self._shoe, self._prngs, self.np_random.integers(0, 2**63))
            self._seeded = True
        self._start(self._stacked_codes(options))
        info = self._info(settled=False)
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), info

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        action = _action_id(action)
        if not 0 <= action < len(self._mask) or not self._mask[action]:
            self._raise_illegal(action)
        if isinstance(self.action_space, LegalActions):
            self.action_space.env_moved()
        reward = self._advance(action)
        terminated = self._episode_over()
        info = self._info(settled=self._view.phase == E.P_OVER)
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), reward, bool(terminated), False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions now, bool[n_actions] (sb3-contrib's MaskablePPO calls this). Once the
        episode is over: STAND alone (see Episode End; stepping then raises ``RuntimeError``)."""
        mask = self._mask.copy()
        if self._seeded and self._episode_over():
            mask[E.STAND] = True  # the engine's mask stays empty: step() refuses every action
        return mask

    def render(self) -> str | np.ndarray | None:
        if not self._seeded:
            raise RuntimeError("no round has been dealt: call reset() before render()")
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            return R.draw_table(R.env_view(self))
        if self.render_mode == "human" and R.display_available():
            R.show(R.draw_table(R.env_view(self)), self.__dict__.setdefault("_window", {}))
            return None
        text = self._table_text()
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    # ------------------------------------------------------------------ the table
    def _advance(self, action: int) -> float:
        """One compiled transition: the agent's action (or a deal, -1), then the other seats."""
        if compiles_on_call(T.env_advance):  # the process's first transition: said if it compiles
            with compiling_notice("the env's kernels"):
                return self._transition(action)
        return self._transition(action)

    def _transition(self, action: int) -> float:
        table, policies = self._driver
        return float(T.env_advance(table, policies, action, self._bets, self._at_table))

    def _driver_values(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """The table driver's values over the env's arrays (made again when the arrays are), as
        plain tuples (``table.named``: a step's call is faster so)."""
        table = T.Table(self._st, self._hands, self._shoe, self._rv, self._res, self._obs, self._mask, self._dealer)
        return tuple(table), tuple(T.Policies(self._kinds, self._actions, self._insurance, self._prngs, None))

    def _first_decision_mask(self, seed: int | None) -> np.ndarray | None:
        """The legal actions of the first decision of the episode ``reset(seed=seed)`` would start
        now (a dry run on copies of the table; None when an unseeded first reset makes it random)."""
        if seed is None and not self._seeded:
            return None
        names = ("_st", "_hands", "_shoe", "_res", "_obs", "_mask", "_prngs")
        kept = {name: getattr(self, name) for name in names}
        kept_driver = self._driver, self._view
        try:
            for name, array in kept.items():
                setattr(self, name, array.copy())
            self._driver, self._view = self._driver_values(), View(self._st)
            if seed is not None:
                rng, _ = seeding.np_random(seed)  # as reset: super().reset(seed=seed), then its np_random
                seed_table(self._st, self._shoe, self._prngs, rng.integers(0, 2**63))
            self._start([])
            return self._mask.copy()
        finally:
            for name, array in kept.items():
                setattr(self, name, array)
            self._driver, self._view = kept_driver

    def _start(self, codes: list[int]) -> None:
        """Deal the episode's round with ``codes`` on top (Blackjack-v0: one round)."""
        self._load_stack(codes)
        self._advance(-1)

    def _episode_over(self) -> bool:
        return self._view.phase == E.P_OVER

    def _info(self, settled: bool) -> dict[str, Any]:
        """The step's info: the mask (``action_masks()``), and the round's summary on the step
        that settled it."""
        info: dict[str, Any] = {"action_mask": self.action_masks()}
        if settled:
            info.update(self.round_summary())
        return info

    # ------------------------------------------------------------------ helpers
    @property
    def phase(self) -> Phase:
        return Phase(int(self._obs[E.O_PHASE]))

    @property
    def shoe_counts(self) -> dict[str, int]:
        """Cards left in the shoe per rank (the hidden hole card counts as dealt)."""
        left = self._view.cards_left
        return {card_name(code): int(left[code]) for code in range(1, 14)}

    def round_summary(self) -> dict[str, Any]:
        """The round (settled, or as it stands): the agent's hands with their cards, bet, status
        and result, the dealer's cards, the insurance and the round's result (per unit bet);
        at a table of several seats also ``seats``, every seat's hands and result.

        Mid-round it shows the table as the house sees it, hole card included: a tool for tests
        and analysis, never an input for an agent (the observation and render hide the hole card)."""
        summary = self._seat_summary(self.seat)
        summary["dealer"] = dealer_summary(self._st)
        if self.seats > 1:
            summary["seats"] = [self._seat_summary(s) for s in range(self.seats)]
        return summary

    def _seat_summary(self, s: int) -> dict[str, Any]:
        return seat_summary(self._st, self._hands, self._res, s)

    def _stacked_codes(self, options: dict[str, Any] | None) -> list[int]:
        """options['cards'] as engine codes, checked against the shoe's size."""
        unknown = set(options or {}) - {"cards"}
        if unknown:
            raise ValueError(f"unknown reset option {sorted(unknown)[0]!r}; the only option is 'cards'")
        if not options or options.get("cards") is None:
            return []
        return stacked_codes(self.rules, options["cards"], self._max_stacked(), self._stack_unit)

    def _load_stack(self, codes: list[int]) -> None:
        load_stack(self._st, self.rules, codes)

    def _action_names(self) -> list[str]:
        return [a.name for a in Action]

    def _raise_illegal(self, action: int) -> None:
        if not self._seeded or not self._mask.any():
            raise RuntimeError("the episode is over (or was never started): call reset() before step()")
        names = self._action_names()
        legal = ", ".join(f"{a} {names[a]}" for a in np.flatnonzero(self._mask))
        name = names[action] if 0 <= action < len(names) else "not an action id"
        raise ValueError(f"illegal action {action} ({name}) now; legal actions: {legal}")

    def _table_text(self) -> str:
        """The ``ansi`` text: the rules, the table's lines (``render.table_lines``: every seat's bet,
        hands and results in table-minimum units), the agent's round result (its reward) and the
        legal actions."""
        view = R.env_view(self)
        lines = [f"Rules: {self.rules.describe()}", *R.table_lines(view)]
        if view.over:
            mine = next(seat for seat in view.seats if seat["you"])
            lines.append(f"Round result: {R.amount(mine['result'], sign=True)}")
        if self._mask.any():
            names = self._action_names()
            lines.append(f"Legal: {', '.join(names[a] for a in np.flatnonzero(self._mask))}")
        return "\n".join(lines)


__all__ = [
    "ACTION_MEANINGS",
    "COUNT_MODES",
    "INFO_KEYS",
    "OBS_MEANINGS",
    "OBS_NAMES",
    "REWARD_MODES",
    "Action",
    "BlackjackEnv",
    "LegalActions",
    "Phase",
    "count_names",
    "observation_nvec",
]
