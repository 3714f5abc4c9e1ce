"""A PettingZoo table: every seat an agent, the dealer the engine.

``env(seats=3, game="round" | "shoe", ...)`` returns the table wrapped in PettingZoo's usual
checks, ``raw_env(...)`` the bare :class:`BlackjackTableEnv`. It is a thin adapter over the
engine's table driver (``table.play_until``, as the single envs are), stopping at every seat's
decision, so the game is the one the single envs and the simulator play, card for card.
PettingZoo is an optional dependency (``pip install "blackjack-env[multiagent]"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from . import engine as E
from . import render as R
from . import table as T
from .cards import card_name
from .env_kit import (
    COUNT_MODES,
    INFO_KEYS,
    OBS_NAMES,
    Action,
    check_options,
    count_names,
    load_stack,
    observation_nvec,
    seed_table,
    stacked_codes,
)
from .rules import MAX_HANDS, Rules
from .shoe_env import DEFAULT_BETS, SHOE_OBS_NAMES, check_bets, shoe_nvec, shoe_rules
from .slots import View
from .summary import dealer_summary, seat_summary

try:
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "blackjack_env.multiagent needs PettingZoo: pip install 'blackjack-env[multiagent]' (or pettingzoo>=1.24)"
    ) from error

GAMES = ("round", "shoe")
VALUES = T.VALUES
#: What component ``seat_{seat}_{value}`` of an agent's observation means (``str.format``).
SEAT_OBS_MEANING = "cards of value {value} in seat {seat}'s hands (every player card is dealt face up)"
#: Every key of ``infos[agent]``: (when, what), as ``env.INFO_KEYS``. Empty after ``reset``; the
#: step that settles a round sets every agent's, which stay until the next round is settled.
TABLE_INFO_KEYS = {
    **{key: INFO_KEYS[key] for key in ("seat", "playing", "hands", "insurance", "insurance_state", "result")},
    "bet": ("settled", "the seat's bet this round (table-minimum units; 1 in round games), 0 if it sat out"),
    "dealer": INFO_KEYS["dealer"],
    "round_result": ("settled", "the seat's result of the round in table-minimum units (bet x result; the reward)"),
}


class BlackjackTableEnv(AECEnv):
    """Casino blackjack at a table of 1-7 agents (PettingZoo AEC), the dealer played by the engine.

    ## Description
    The game of ``Blackjack-v0`` (``game="round"``: one round an episode, a fresh shuffle every
    round unless the rules have a cut card) or of ``BlackjackShoe-v0`` (``game="shoe"``: one shoe
    an episode, dealt to the cut card, every seat choosing its bet before every round), with every
    seat an agent: ``"seat_0"`` .. ``"seat_{N-1}"``, dealt and played in that order. Turn order is
    the casino's, as the engine deals it: bets seat by seat (shoe games), the insurance question
    asked of each seat in order (against an ace), then each seat plays all its hands in order;
    ``agent_selection`` is the seat whose decision is due. A seat with nothing to decide (a
    natural, a dealer blackjack found by the peek) still takes one STAND step, as in the single
    envs. The same seed deals the same cards as the single envs and the simulator's table.

    ## Action Space
    Per agent ``Discrete(7)`` (:class:`blackjack_env.Action`: 0 STAND, 1 HIT, 2 DOUBLE, 3 SPLIT,
    4 SURRENDER, 5 INSURANCE, 6 NO_INSURANCE); a shoe game adds ``7 + i``, placing ``bets[i]``. A bet
    of 0 sits the round out (not for the last seat to bet when every other seat sat out: someone
    plays every round). An illegal action raises ``ValueError`` and changes nothing.

    ## Observation Space
    PettingZoo's convention: ``{"observation": MultiDiscrete, "action_mask": int8 Box}``. The
    observation is the single env's as this seat sees the table (``observation_names``: its
    current hand, the dealer's up card, the count of ``count_obs``, and in shoe games its bet level
    and the 52nds of the shoe dealt; the phase is the table's), then for every other seat in seat
    order 10 entries ``seat_{j}_{A..10}``: how many cards of each value its hands hold (all player
    cards are dealt face up). In the BET phase the hand components are 0 and the phase is 4. The
    mask is non-zero only for the agent whose turn it is (PettingZoo's rule).

    ## Rewards
    0 but on the step that settles a round: there every playing seat gets its net result in
    table-minimum units (its bet times its result per unit bet; ``reward="expected"`` as in the
    single envs). A seat that sat the round out gets 0.

    ## Episode End
    Every agent terminates together: when the round is settled (``game="round"``) or when the
    round in which the cut card came out is settled (``game="shoe"``). Never truncated (an
    episode is finite by the rules), so PettingZoo's ``max_cycles`` does not apply.

    ## Arguments
    ``seats`` (1-7), ``game`` ("round" or "shoe"), ``rules`` (a ``Rules``, preset name or dict;
    shoe games need a cut card, default the default preset at ``penetration=0.75``), ``bets`` (shoe
    games, default ``(1, 2, 4, 8)``), ``count_obs`` ("none", "composition", "hilo"; default "none"
    for rounds, "hilo" for shoes), ``reward`` ("sampled" or "expected"), ``render_mode`` ("ansi",
    "human" or "rgb_array"). ``reset(seed=...)`` seeds the cards; ``reset(options={"cards": [...]})``
    deals those ranks first, in deal order (a round game: one round's; a shoe game: the shoe's
    top). ``infos[agent]`` on the settling step holds the seat's summary (``hands``, ``result``
    ...), ``bet``, ``dealer`` and ``round_result``.

    ## Version History
    * v0: initial version.
    """

    metadata: dict[str, Any] = {
        "name": "blackjack_table_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "render_fps": 2,
    }
    metadata["is_parallelizable"] = False

    def __init__(
        self,
        seats: int = 3,
        game: str = "round",
        rules: Rules | str | Mapping[str, Any] | None = None,
        bets: Sequence[float] | None = None,
        count_obs: str | None = None,
        reward: str = "sampled",
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.seats = E.check_seats(seats)  # one agent each
        if game not in GAMES:
            raise ValueError(f"game must be 'round' (a round an episode) or 'shoe' (a shoe an episode), got {game!r}")
        self.game = game
        if game == "shoe":
            self.rules = shoe_rules(rules)
            self.bets = check_bets(DEFAULT_BETS if bets is None else bets, self.seats)
        else:
            if bets is not None:
                raise ValueError(f"bets= applies to game='shoe' (a round game bets 1 a seat), got bets={bets!r}")
            self.rules = Rules.coerce(rules)
            self.bets = (1.0,)
        self.count_obs = count_obs if count_obs is not None else ("hilo" if game == "shoe" else "none")
        check_options(self.rules, self.count_obs, reward, self.seats, 0)
        self.reward = reward
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            modes = ", ".join(self.metadata["render_modes"])
            raise ValueError(f"render_mode must be one of {modes} or None, got {render_mode!r}")
        self.render_mode = render_mode

        self.possible_agents = [f"seat_{s}" for s in range(self.seats)]
        self._seat_of = {agent: s for s, agent in enumerate(self.possible_agents)}
        single = observation_nvec(self.rules, self.count_obs)
        if game == "shoe":
            single = shoe_nvec(self.rules, self.count_obs, len(self.bets))
            self._extra = len(observation_nvec(self.rules, self.count_obs))
        self._cards_base = len(single)
        decks = self.rules.decks
        most = (MAX_HANDS * E.MAX_CARDS,) * 2 if self.rules.infinite else (4 * decks, 16 * decks)  # per value, tens
        per_seat = [most[0] + 1] * (VALUES - 1) + [most[1] + 1]
        nvec = np.concatenate([single, np.tile(per_seat, self.seats - 1)]).astype(np.int64)
        self._n_actions = E.N_ACTIONS + (len(self.bets) if game == "shoe" else 0)
        self._observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.MultiDiscrete(nvec),
                    "action_mask": spaces.Box(0, 1, (self._n_actions,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self._action_spaces = {agent: spaces.Discrete(self._n_actions) for agent in self.possible_agents}
        bet_names = [f"BET {b:g}" for b in self.bets] if game == "shoe" else []
        self._action_names = [a.name for a in Action] + bet_names
        self.observation_names = self._names()

        self._rv = self.rules.to_array()
        self._st = np.zeros(E.ST_SIZE, np.int64)
        self._hands = E.new_hands(self.seats)
        self._shoe = E.new_shoe(self.rules.decks)
        self._res = E.new_res(self.seats)
        E.set_seats(self._st, self.seats)
        E.load_rules(self._st, self._rv)
        self._view = View(self._st)
        self._view.reward_mode = 1 if reward == "expected" else 0
        self._at_table = E.table_kind(self.seats)
        # the driver's policy arrays: no seat is played by a policy here (play_until stops at every seat)
        self._policies = T.table_policies(T.POLICY_RANDOM, None)
        self._prngs = self._policies.prngs
        self._mask = np.zeros(E.N_ACTIONS, np.bool_)
        self._obs = np.zeros(len(nvec), np.int64)
        self._dealer = E.new_dealer_cache(reward == "expected")
        self._table = T.Table(
            self._st, self._hands, self._shoe, self._rv, self._res, self._obs, self._mask, self._dealer
        )
        self._levels = np.full(self.seats, -1, np.int64)  # each seat's bet this round (shoe games)
        self._dealt_levels = self._levels.copy()  # the bets of the round on the table (its pictures)
        self._betting = -1  # the seat whose bet is due (shoe games), else -1
        self._seeded = False
        self.agents: list[str] = []

    # ------------------------------------------------------------------ spaces and names
    def observation_space(self, agent: str) -> spaces.Dict:
        return self._observation_spaces[self._agent(agent)]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_spaces[self._agent(agent)]

    def _agent(self, agent: Any) -> str:
        """``agent`` if it is one of the table's agents; else a ValueError naming them."""
        if agent not in self._seat_of:
            raise ValueError(f"unknown agent {agent!r}; this table's agents are seat_0 .. seat_{self.seats - 1}")
        return agent

    def _names(self) -> tuple[str, ...]:
        names = [*OBS_NAMES, *count_names(self.count_obs)]
        if self.game == "shoe":
            names += SHOE_OBS_NAMES
        return tuple(names)

    def observation_names_of(self, agent: str) -> tuple[str, ...]:
        """Every component of ``agent``'s observation, the other seats' card counts included."""
        seat = self._seat_of[self._agent(agent)]
        values = [card_name(v) for v in range(1, VALUES + 1)]
        others = [f"seat_{j}_{v}" for j in range(self.seats) if j != seat for v in values]
        return (*self.observation_names, *others)

    # ------------------------------------------------------------------ the AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        cards = (options or {}).get("cards")
        unknown = set(options or {}) - {"cards"}
        if unknown:  # PettingZoo's api_test passes an unknown option and expects it to be taken
            gym.logger.warn(f"reset options {sorted(unknown)} ignored; the table's only option is 'cards'")
        most = len(self._shoe) if self.game == "shoe" and not self.rules.infinite else E.MAX_STACK
        codes = [] if cards is None else stacked_codes(self.rules, cards, most, self.game)
        if seed is not None or not self._seeded:
            rng, _ = seeding.np_random(seed)
            seed_table(self._st, self._shoe, self._prngs, int(rng.integers(0, 2**63)))
            self._seeded = True
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._skip_agent_selection = None
        self._dealt_levels[:] = -1
        if self.game == "shoe":
            self._view.stack([])
            T.start_shoe(self._st, self._shoe, codes)
            self._open_bets()
        else:
            load_stack(self._st, self.rules, codes)
            self._advance(-1)
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat_of[self._agent(agent)]
        obs = self._obs
        T.write_seat_obs(self._st, self._hands, obs, seat, COUNT_MODES[self.count_obs], self._cards_base)
        if self.game == "shoe":
            if self._betting >= 0:  # a bet is due: the last round's hands are history
                obs[: E.OBS_BASE] = 0
                obs[E.O_PHASE] = E.P_BET
            obs[self._extra] = self._levels[seat] + 1
            pos, n = int(self._view.shoe_pos), max(int(self._view.shoe_len), 1)
            obs[self._extra + 1] = min(T.SHOE_STEPS, pos * T.SHOE_STEPS // n)
        mask = np.zeros(self._n_actions, np.int8)
        if agent == self.agent_selection and not self.terminations.get(agent, True):
            mask[:] = self._legal()
        return {"observation": obs.copy(), "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations.get(agent, False) or self.truncations.get(agent, False):
            self._was_dead_step(action)
            return
        if not self.agents:
            raise RuntimeError("the episode is over (or was never started): call reset() before step()")
        action = self._action_id(action, agent)
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if self._betting >= 0:
            self._bet(action)
        else:
            self._advance(action)
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def action_mask(self, agent: str) -> np.ndarray:
        """``agent``'s legal actions now as bool (all False when it is not its turn)."""
        return self.observe(agent)["action_mask"].astype(bool)

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ the table
    def _legal(self) -> np.ndarray:
        """The acting agent's legal actions (bool[n_actions])."""
        legal = np.zeros(self._n_actions, np.bool_)
        if self._betting >= 0:
            legal[E.N_ACTIONS :] = True
            others_out = all(self.bets[self._levels[s]] == 0 for s in range(self._betting))
            if self._betting == self.seats - 1 and others_out and self.bets[0] == 0:
                legal[E.N_ACTIONS] = False  # someone plays every round
        else:
            legal[: E.N_ACTIONS] = self._mask
        return legal

    def _action_id(self, action: Any, agent: str) -> int:
        """The acting agent's action as a legal id; else a ValueError naming the legal ones."""
        legal = self._legal()
        ok = isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))
        if isinstance(action, np.ndarray) and action.size == 1 and np.issubdtype(action.dtype, np.integer):
            action, ok = int(action.reshape(())), True
        if ok and 0 <= int(action) < self._n_actions and legal[int(action)]:
            return int(action)
        names = self._action_names
        shown = ", ".join(f"{a} {names[a]}" for a in np.flatnonzero(legal))
        what = f"{int(action)} ({names[int(action)]})" if ok and 0 <= int(action) < self._n_actions else repr(action)
        raise ValueError(f"illegal action {what} for {agent} (whose turn it is) now; legal actions: {shown}")

    def _open_bets(self) -> None:
        """A shoe game's bets are due, seat 0 first."""
        self._betting = 0
        self._levels[:] = -1
        self.agent_selection = self.possible_agents[0]

    def _bet(self, action: int) -> None:
        self._levels[self._betting] = action - E.N_ACTIONS
        if self._betting < self.seats - 1:
            self._betting += 1
            self.agent_selection = self.possible_agents[self._betting]
            return
        self._betting = -1
        for s in range(self.seats):
            self._view.set_active(s, self.bets[self._levels[s]] > 0)
        self._dealt_levels[:] = self._levels
        self._advance(-1)

    def _advance(self, action: int) -> None:
        """One compiled transition; then the next agent, or the round's rewards."""
        T.table_advance(tuple(self._table), tuple(self._policies), action, self._at_table)
        if self._view.phase != E.P_OVER:
            self.agent_selection = self.possible_agents[int(self._view.acting_seat)]
            return
        dealer = dealer_summary(self._st)
        for s, agent in enumerate(self.possible_agents):
            summary = seat_summary(self._st, self._hands, self._res, s)
            bet = self.bets[self._levels[s]] if self.game == "shoe" else 1.0
            playing = summary["playing"]
            reward = bet * float(self._res[s * E.RES_SIZE + E.RES_REWARD]) if playing else 0.0
            self.rewards[agent] = reward
            self.infos[agent] = {**summary, "bet": bet if playing else 0.0, "dealer": dealer}
            self.infos[agent]["round_result"] = bet * summary["result"] if playing else 0.0
        if self.game == "shoe" and not T.shoe_ended(self._st):
            self._open_bets()
            return
        self.terminations = dict.fromkeys(self.agents, True)

    # ------------------------------------------------------------------ pictures
    def render(self) -> str | np.ndarray | None:
        if not self._seeded:
            raise RuntimeError("no round has been dealt: call reset() before render()")
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'")
            return None
        view = R.table_view(self)
        if self.render_mode == "rgb_array":
            return R.draw_table(view)
        if self.render_mode == "human" and R.display_available():
            R.show(R.draw_table(view), self.__dict__.setdefault("_window", {}))
            return None
        text = R.table_text(view)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def view_seats(self) -> list[dict[str, Any]]:
        """Every seat as the picture shows it: its round summary (per unit bet), the bet it placed
        for the round on the table (kept while the next round's bets are taken) and the hand whose
        decision is due."""
        acting = -1 if self._view.phase == E.P_OVER else int(self._view.acting_seat)
        seats = []
        for s in range(self.seats):
            summary = seat_summary(self._st, self._hands, self._res, s)
            level = self._dealt_levels[s]
            summary["bet"] = (self.bets[level] if level >= 0 else 0.0) if self.game == "shoe" else 1.0
            summary["acting_hand"] = (
                self._view.seat(s)["row"] - s * MAX_HANDS if s == acting and self._betting < 0 else -1
            )
            summary["name"] = self.possible_agents[s]
            seats.append(summary)
        return seats


def raw_env(**kwargs: Any) -> BlackjackTableEnv:
    """The bare table (``BlackjackTableEnv``): see its docstring for the arguments."""
    return BlackjackTableEnv(**kwargs)


def env(**kwargs: Any) -> AECEnv:
    """The table in PettingZoo's usual wrappers (order enforcing; actions checked by the table
    itself, which names the legal ones)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


__all__ = ["GAMES", "SEAT_OBS_MEANING", "TABLE_INFO_KEYS", "BlackjackTableEnv", "env", "raw_env"]
