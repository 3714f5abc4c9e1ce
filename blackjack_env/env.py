"""Gymnasium adapter over the compiled engine: observation, mask, reward, render."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import engine as E
from .cards import card_codes, card_name, card_names
from .rules import MAX_HANDS, Rules

COUNT_MODES = {"none": E.COUNT_NONE, "composition": E.COUNT_COMPOSITION, "hilo": E.COUNT_HILO}
REWARD_MODES = {"sampled": E.REWARD_SAMPLED, "expected": E.REWARD_EXPECTED}


def check_options(rules: Rules, count_obs: str, reward: str) -> None:
    """Validate the env options (shared by the single and the vector env)."""
    if count_obs not in COUNT_MODES:
        raise ValueError(f"count_obs must be one of {', '.join(COUNT_MODES)}, got {count_obs!r}")
    if count_obs != "none" and rules.infinite:
        raise ValueError(f"count_obs={count_obs!r} needs a finite shoe; these rules have an infinite deck (decks=0)")
    if reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {', '.join(REWARD_MODES)}, got {reward!r}")


class Action(enum.IntEnum):
    """The fixed action ids of ``blackjack_env/Blackjack-v0``."""

    STAND = E.STAND
    HIT = E.HIT
    DOUBLE = E.DOUBLE
    SPLIT = E.SPLIT
    SURRENDER = E.SURRENDER
    INSURANCE = E.INSURANCE  # insure, or take even money with a blackjack
    NO_INSURANCE = E.NO_INSURANCE


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
_STATUS_NAMES = {
    E.HS_WAIT: "waiting",
    E.HS_PLAY: "playing",
    E.HS_STOOD: "stood",
    E.HS_BUST: "bust",
    E.HS_SURRENDERED: "surrendered",
}
_INSURANCE_NAMES = {
    E.INS_NONE: "not offered",
    E.INS_PENDING: "offered",
    E.INS_TAKEN: "taken",
    E.INS_DECLINED: "declined",
    E.INS_EVEN_MONEY: "even money",
}


def _action_id(action: Any) -> int:
    """An action id from an int, a numpy integer or a one-element integer array; else ValueError."""
    if isinstance(action, np.ndarray) and action.size == 1 and np.issubdtype(action.dtype, np.integer):
        return int(action.reshape(()))
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    raise ValueError(f"action must be an integer id 0-6 (see blackjack_env.Action), got {action!r}")


class LegalActions(spaces.Discrete):
    """``Discrete(7)`` whose plain ``sample()`` draws among the actions legal right now.

    Generic tools (Gymnasium's and SB3's env checkers, random rollouts) call ``sample()`` with no
    mask; drawing from the live mask keeps them from stepping illegal actions. After a round ends
    it returns STAND, which opens every round that has no insurance question. An explicit
    ``mask`` or ``probability`` argument behaves exactly as in ``Discrete``.
    """

    def __init__(self, live_mask: np.ndarray, seed: int | None = None) -> None:
        super().__init__(E.N_ACTIONS, seed=seed)
        self._live_mask = live_mask

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        legal = np.flatnonzero(self._live_mask)
        if len(legal) == 0:
            return np.int64(E.STAND)
        return np.int64(legal[self.np_random.integers(len(legal))])


def observation_nvec(rules: Rules, count_obs: str = "none") -> np.ndarray:
    """The MultiDiscrete sizes of the observation for these rules and counting option."""
    nvec = [4, 22, 2, 11, 2, 2, 2, 11, MAX_HANDS + 1, MAX_HANDS, 2, 2]
    if count_obs == "composition":
        nvec += [4 * rules.decks + 1] * 9 + [16 * rules.decks + 1]
    elif count_obs == "hilo":
        nvec += [2 * E.HILO_RANGE + 1]
    return np.array(nvec, dtype=np.int64)


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
    The episode terminates when the round is settled. It is never truncated.

    ## Arguments
    ``gymnasium.make("blackjack_env/Blackjack-v0", rules=..., count_obs="none", render_mode=None, reward="sampled")``

    * ``rules``: a :class:`Rules`, a preset name (``Rules.preset``) or a dict of fields; default
      ``Rules()`` (the ``ultimatebet`` preset).
    * ``count_obs``: ``"none"``, ``"composition"`` or ``"hilo"`` (what a card counter sees).
    * ``render_mode``: ``"ansi"`` returns a text picture of the table, ``"human"`` prints it.
    * ``reward``: ``"sampled"`` (the dealt result) or ``"expected"`` (see Rewards).

    The final step's ``info`` has ``hands`` (each hand's cards, bet, status and result),
    ``dealer`` (cards and total), ``insurance`` (its result) and ``result`` (the round total).

    ## Version History
    * v0: initial version (``reward="expected"`` added as an option; the default is unchanged).
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        rules: Rules | str | Mapping[str, Any] | None = None,
        count_obs: str = "none",
        render_mode: str | None = None,
        reward: str = "sampled",
    ) -> None:
        self.rules = Rules.coerce(rules)
        check_options(self.rules, count_obs, reward)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {', '.join(self.metadata['render_modes'])} or None, got {render_mode!r}"
            )
        self.count_obs = count_obs
        self.reward = reward
        self.render_mode = render_mode
        self._count_mode = COUNT_MODES[count_obs]
        self._mask = np.zeros(E.N_ACTIONS, np.bool_)
        self.action_space = LegalActions(self._mask)
        self.observation_space = spaces.MultiDiscrete(observation_nvec(self.rules, count_obs))
        self._rv = self.rules.to_array()
        self._st = np.zeros(E.ST_SIZE, np.int64)
        self._hands = np.zeros((MAX_HANDS, E.HAND_FIELDS), E.HAND_DTYPE)
        self._shoe = E.new_shoe(self.rules.decks)
        E.load_rules(self._st, self._rv)
        self._st[E.S_REWARD_MODE] = REWARD_MODES[reward]
        self._res = np.zeros(E.RES_SIZE, np.float64)
        self._obs = np.zeros(len(self.observation_space.nvec), np.int64)
        self._seeded = False

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if seed is not None or not self._seeded:
            # a new seed starts a new shoe and a new card stream
            E.seed_table(self._st, self._shoe, np.random.SeedSequence(self.np_random.integers(0, 2**63)))
            self._seeded = True
        self._stack_cards(options)
        E.env_reset(self._st, self._hands, self._shoe, self._res, self._obs, self._mask, self._count_mode)
        info: dict[str, Any] = {"action_mask": self._mask.copy()}
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), info

    def step(self, action: int):
        action = _action_id(action)
        if not 0 <= action < E.N_ACTIONS or not self._mask[action]:
            self._raise_illegal(action)
        reward = float(
            E.env_step(
                self._st, self._hands, self._shoe, self._rv, self._res, self._obs, self._mask, self._count_mode, action
            )
        )
        terminated = self._st[E.S_PHASE] == E.P_OVER
        info: dict[str, Any] = {"action_mask": self._mask.copy()}
        if terminated:
            info.update(self.round_summary())
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), reward, bool(terminated), False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions now, bool[7] (sb3-contrib's MaskablePPO calls this)."""
        return self._mask.copy()

    def render(self) -> str | None:
        if not self._seeded:
            raise RuntimeError("no round has been dealt: call reset() before render()")
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        text = self._table_text()
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    # ------------------------------------------------------------------ helpers
    @property
    def phase(self) -> Phase:
        return Phase(int(self._st[E.S_PHASE]))

    @property
    def shoe_counts(self) -> dict[str, int]:
        """Cards left in the shoe per rank (the hidden hole card counts as dealt)."""
        return {card_name(code): int(self._st[E.S_COUNTS + code]) for code in range(1, 14)}

    def round_summary(self) -> dict[str, Any]:
        """The settled round: every hand with its cards, bet, status and result, and the dealer.

        Mid-round it shows the table as the house sees it, hole card included: a tool for tests
        and analysis, never an input for an agent (the observation and render hide the hole card)."""
        hands = []
        for h in range(int(self._st[E.S_NUM_HANDS])):
            hands.append(
                {
                    "cards": card_names(self._hand_codes(h)),
                    "total": int(E.hand_total(self._hands, h)),
                    "bet": float(self._hands[h, E.H_BET]),
                    "doubled": bool(self._hands[h, E.H_DOUBLED]),
                    "split": bool(self._hands[h, E.H_SPLIT]),
                    "status": _STATUS_NAMES[int(self._hands[h, E.H_STATUS])],
                    "result": float(self._res[h]),
                }
            )
        return {
            "hands": hands,
            "dealer": {"cards": card_names(self._dealer_codes()), "total": self._dealer_total()},
            "insurance": float(self._res[E.RES_INSURANCE]),
            "insurance_state": _INSURANCE_NAMES[int(self._st[E.S_INS])],
            "result": float(self._res[E.RES_TOTAL]),
        }

    def _hand_codes(self, h: int) -> list[int]:
        return [int(c) for c in self._hands[h, E.H_CARDS : E.H_CARDS + self._hands[h, E.H_N]]]

    def _dealer_codes(self) -> list[int]:
        return [int(c) for c in self._st[E.S_DEALER : E.S_DEALER + self._st[E.S_DEALER_N]]]

    def _dealer_total(self) -> int:
        return int(E.best_total(self._st[E.S_DEALER_HARD], self._st[E.S_DEALER_ACES]))

    def _stack_cards(self, options: dict[str, Any] | None) -> None:
        """Load options['cards'] as the next cards to deal, checking they are in the shoe."""
        self._st[E.S_STACK_POS] = 0
        self._st[E.S_STACK_LEN] = 0
        unknown = set(options or {}) - {"cards"}
        if unknown:
            raise ValueError(f"unknown reset option {sorted(unknown)[0]!r}; the only option is 'cards'")
        if not options or options.get("cards") is None:
            return
        codes = card_codes(options["cards"])
        if len(codes) > E.MAX_STACK:
            raise ValueError(f"at most {E.MAX_STACK} stacked cards per round, got {len(codes)}")
        if not self.rules.infinite:
            wanted = np.bincount(codes, minlength=14)
            full = 4 * self.rules.decks
            over = [card_name(c) for c in range(1, 14) if wanted[c] > full]
            if over:
                raise ValueError(
                    f"stacked cards ask for {wanted[card_codes(over)[0]]} x {over[0]} but a "
                    f"{self.rules.decks}-deck shoe holds only {full}"
                )
            remaining = self._st[E.S_COUNTS : E.S_COUNTS + 14]
            if any(wanted[c] > remaining[c] for c in range(1, 14)):
                self._st[E.S_FORCE_SHUFFLE] = 1  # not enough left in this shoe: start a new one
        self._st[E.S_STACK : E.S_STACK + len(codes)] = codes
        self._st[E.S_STACK_LEN] = len(codes)

    def _raise_illegal(self, action: int) -> None:
        if self._st[E.S_PHASE] == E.P_OVER or not self._seeded:
            raise RuntimeError("the round is over (or was never dealt): call reset() before step()")
        legal = ", ".join(f"{int(a)} {a.name}" for a in Action if self._mask[a])
        name = Action(action).name if 0 <= action < E.N_ACTIONS else "not an action id"
        raise ValueError(f"illegal action {action} ({name}) now; legal actions: {legal}")

    def _table_text(self) -> str:
        dealer = card_names(self._dealer_codes())
        if self._st[E.S_HOLE_HIDDEN]:
            dealer_line = f"Dealer: {dealer[0]} ??"
        else:
            dealer_line = f"Dealer: {' '.join(dealer)}  ({self._dealer_total()})"
        lines = [f"Rules: {self.rules.describe()}", dealer_line]
        playing = self._st[E.S_PHASE] == E.P_PLAY
        for h in range(int(self._st[E.S_NUM_HANDS])):
            cards = card_names(self._hand_codes(h))
            total = int(E.hand_total(self._hands, h))
            soft = "soft " if E.is_soft(self._hands[h, E.H_HARD], self._hands[h, E.H_ACES]) else ""
            marker = "->" if playing and h == self._st[E.S_CUR] else "  "
            status = _STATUS_NAMES[int(self._hands[h, E.H_STATUS])]
            line = (
                f"{marker} Hand {h + 1}: {' '.join(cards):<16} {soft}{total:<3} bet {self._hands[h, E.H_BET]}  {status}"
            )
            if self._st[E.S_PHASE] == E.P_OVER:
                line += f"  result {self._res[h]:+g}"
            lines.append(line)
        if self._st[E.S_INS] != E.INS_NONE:
            lines.append(f"Insurance: {_INSURANCE_NAMES[int(self._st[E.S_INS])]}")
        if self._st[E.S_PHASE] == E.P_OVER:
            lines.append(f"Round result: {self._res[E.RES_TOTAL]:+g}")
        else:
            legal = ", ".join(a.name for a in Action if self._mask[a])
            lines.append(f"Legal: {legal}")
        return "\n".join(lines)
