"""A composition model compiled: values linear in the unseen cards, played by the simulator.

The composition learner (:mod:`blackjack_env.agents.linear`) learns, per strategy-table cell and
action, a value ``w . x`` where ``x`` describes the cards not yet seen (:func:`features`):

    x = [1, e_A, e_2, ..., e_9, e_T],  e_v = 52 n_v / unseen - 52 p_v

``n_v`` the unseen cards of value v (the shoe's remaining cards plus a hole card still face down),
``unseen`` their number and ``p_v`` the value's share of a full shoe (1/13, tens 4/13): e_v is the
excess of value v per unseen deck, the composition's generalisation of a true count (a count with
tags t_v is ``-sum(t_v e_v)``). The ten excesses sum to 0, so only nine of them are free; the
learner's ridge fixes the direction along which they all move together (module
:mod:`blackjack_env.agents.linear`). Before a round whose shoe is due to be shuffled, x is that
of a full shoe (every excess 0).

A :class:`LinearModel` (the learned weights, the allowed bets) compiles to one float row: the
counting layout of :mod:`blackjack_env.count_policy` for Hi-Lo with a one-pair ramp (so the
simulator files the model's rounds by Hi-Lo true count, as it does a counter's), then the model's
block from ``LP_BASE`` on. The table driver plays a ``POLICY_LINEAR`` seat by
:func:`linear_decision` (the legal action with the largest value; insurance when taking it is
valued higher) and the simulator bets it by :func:`linear_bet`: the EV-maximising allowed bet for
the predicted value per unit bet of the coming round, i.e. the largest bet where it is positive,
the smallest (0 where allowed: the round sat out) where it is not.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import count_policy as CP
from . import engine as E
from . import slots
from ._jit import njit
from .counting import CountingStrategy, system
from .strategy import N_PLAY, N_ROWS, N_UP, row_label, table_cell, up_label

#: Features: the intercept and the excess of each value A, 2..9, T per unseen deck.
N_FEATURES = 11
FEATURE_NAMES = ("1", "A", "2", "3", "4", "5", "6", "7", "8", "9", "T")
#: Allowed bets a compiled model holds at most.
MAX_BETS = 16
#: The value of an action never tried while learning: below anything learned, so never chosen
#: while another legal action has data (a cell with no data at all stands where it may).
UNTRIED = -1.0e9
KIND = "composition-linear"
ACTION_NAMES = ("stand", "hit", "double", "split", "surrender")  # engine action ids 0..4
FORMAT = 1

LP_BASE = CP.N_PARAMS  # the model's block follows the counting layout
LP_N_BETS = LP_BASE
LP_BETS = LP_N_BETS + 1  # MAX_BETS slots, increasing
LP_BET_W = LP_BETS + MAX_BETS  # the round's value per unit bet before the deal
LP_INS = LP_BET_W + N_FEATURES  # [natural 0/1][decline, take][feature]
LP_PLAY = LP_INS + 4 * N_FEATURES  # [row][up][action][feature]
LP_KELLY = LP_PLAY + N_ROWS * N_UP * N_PLAY * N_FEATURES  # [Kelly fraction, bankroll]; fraction 0: EV-maximising
LP_SIZE = LP_KELLY + 2
#: The variance of a round's result per unit bet, squared units, that the Kelly bet divides by: basic
#: strategy's SD per round is 1.144 in the default game at 75% (1e7 rounds).
ROUND_VARIANCE = 1.3


@njit(cache=True, _nrt=False, inline="always")
def _unseen(st, v, hole):
    """The unseen cards of value v (1..10): the shoe's plus a hole card still face down (code ``hole``)."""
    if v < 10:
        return slots.cards_left(st, v) + (hole == v)
    tens = slots.cards_left(st, 10) + slots.cards_left(st, 11) + slots.cards_left(st, 12) + slots.cards_left(st, 13)
    return tens + (hole >= 10)


@njit(cache=True, _nrt=False, inline="always")
def _hole(st):
    return slots.hole_card(st)


@njit(cache=True, _nrt=False, inline="always")
def features(st, fresh, x):
    """Write x (float64[N_FEATURES]) for the cards not yet seen; ``fresh``: a full shoe (due a shuffle).
    Inlined: the learner calls it at every decision, where a call's argument passing costs as much."""
    x[0] = 1.0
    if fresh:
        for v in range(1, N_FEATURES):
            x[v] = 0.0
        return
    hole = _hole(st)
    unseen = slots.shoe_left(st) + (hole != 0)
    scale = 52.0 / max(unseen, 1)
    for v in range(1, 10):
        x[v] = _unseen(st, v, hole) * scale - 4.0
    x[10] = _unseen(st, 10, hole) * scale - 16.0


@njit(cache=True, _nrt=False, inline="always")
def _value(params, off, st, hole, scale):
    """w . x for the weights at ``params[off:off + N_FEATURES]``, x computed as :func:`features` does."""
    s = params[off]
    for v in range(1, 10):
        s += params[off + v] * (_unseen(st, v, hole) * scale - 4.0)
    return s + params[off + 10] * (_unseen(st, 10, hole) * scale - 16.0)


@njit(cache=True, _nrt=False, inline="always")
def _scale(st, hole):
    return 52.0 / max(slots.shoe_left(st) + (hole != 0), 1)


@njit(cache=True, _nrt=False)
def linear_decision(params, st, hands, mask):
    """The acting seat's action under a compiled model (the module docstring)."""
    phase = slots.phase(st)
    hole = _hole(st)
    scale = _scale(st, hole)
    if phase == E.P_INSURANCE:
        off = LP_INS + 2 * N_FEATURES * slots.natural(st)
        take = _value(params, off + N_FEATURES, st, hole, scale) > _value(params, off, st, hole, scale)
        return E.INSURANCE if take else E.NO_INSURANCE
    if phase != E.P_PLAY:
        return E.STAND
    E.legal_mask(st, hands, mask)
    row, col, _ = table_cell(st, hands)
    base = LP_PLAY + (row * N_UP + col) * N_PLAY * N_FEATURES
    best = E.STAND
    best_value = -math.inf
    for a in range(N_PLAY):
        if mask[a]:
            value = _value(params, base + a * N_FEATURES, st, hole, scale)
            if value > best_value:
                best, best_value = a, value
    return best


@njit(cache=True, _nrt=False)
def linear_bet(params, st, fresh):
    """The bet for the coming round: the largest allowed where the predicted value per unit bet
    is positive, else the smallest; with a Kelly fraction F of a bankroll B, where the value v is
    positive, the largest allowed bet at or below F B v / ROUND_VARIANCE (the smallest if none is).
    ``fresh``: the shoe is due a shuffle (a full shoe's value)."""
    if fresh:
        value = params[LP_BET_W]
    else:
        hole = _hole(st)
        value = _value(params, LP_BET_W, st, hole, _scale(st, hole))
    n_bets = int(params[LP_N_BETS])
    if value <= 0.0:
        return params[LP_BETS]
    if params[LP_KELLY] == 0.0:
        return params[LP_BETS + n_bets - 1]
    target = params[LP_KELLY] * params[LP_KELLY + 1] * value / ROUND_VARIANCE
    bet = params[LP_BETS]
    for i in range(1, n_bets):
        if params[LP_BETS + i] <= target:
            bet = params[LP_BETS + i]
    return bet


@dataclass(frozen=True)
class LinearModel:
    """Learned weights: ``play[row, up, action]`` (float[N_ROWS, N_UP, N_PLAY, N_FEATURES]; an
    action never tried has ``tried`` False), ``insurance[natural, take]``, ``bet`` (the round's
    value per unit bet before the deal) and the allowed ``bets`` (increasing; 0 sits out); ``kelly``
    (0 < F <= 1) and ``bankroll`` (table units, fixed) bet a Kelly fraction instead of the EV-maximising
    bet (``linear_bet``)."""

    play: np.ndarray
    tried: np.ndarray
    insurance: np.ndarray
    bet: np.ndarray
    bets: tuple[float, ...]
    name: str = "linear"
    kelly: float = 0.0
    bankroll: float = 0.0

    def __post_init__(self) -> None:
        if not 1 <= len(self.bets) <= MAX_BETS:
            raise ValueError(f"a composition model takes 1..{MAX_BETS} bets, got {len(self.bets)}")
        if (self.kelly or self.bankroll) and not (0.0 < self.kelly <= 1.0 and 0.0 < self.bankroll < math.inf):
            raise ValueError(
                f"a Kelly bet needs a fraction in (0, 1] and a bankroll > 0 (table units), "
                f"got fraction {self.kelly:g} and bankroll {self.bankroll:g}"
            )

    @property
    def sits_out(self) -> bool:
        return self.bets[0] == 0

    def with_bets(self, bets: Sequence[float]) -> LinearModel:
        """The same values with other allowed bets (``(1,)``: a flat bet of 1)."""
        return LinearModel(
            self.play,
            self.tried,
            self.insurance,
            self.bet,
            tuple(float(b) for b in bets),
            self.name,
            self.kelly,
            self.bankroll,
        )

    def params(self, rules: Any) -> np.ndarray:
        """The compiled row (module docstring) for these rules."""
        hilo = CountingStrategy(system("hilo"), ramp=((0.0, 1.0),), name=self.name)
        out = np.zeros(LP_SIZE, np.float64)
        out[:LP_BASE] = CP.policy_params(hilo, rules)
        out[LP_N_BETS] = len(self.bets)
        out[LP_BETS : LP_BETS + len(self.bets)] = self.bets
        out[LP_BET_W : LP_BET_W + N_FEATURES] = self.bet
        out[LP_INS:LP_PLAY] = self.insurance.ravel()
        play = np.where(self.tried[..., None], self.play, 0.0)
        play[..., 0] = np.where(self.tried, self.play[..., 0], UNTRIED)
        out[LP_PLAY:LP_KELLY] = play.ravel()
        out[LP_KELLY : LP_KELLY + 2] = self.kelly, self.bankroll
        return out

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON (``weights`` lists follow ``features``; untried actions are left out)."""
        play: dict[str, dict[str, dict[str, list[float]]]] = {}
        for row in range(N_ROWS):
            section, key = row_label(row)
            hand = {"hard": "hard", "soft": "soft", "pairs": "pair"}[section] + " " + key
            for col in range(N_UP):
                cell = {
                    ACTION_NAMES[a]: [float(w) for w in self.play[row, col, a]]
                    for a in range(N_PLAY)
                    if self.tried[row, col, a]
                }
                if cell:
                    play.setdefault(hand, {})[up_label(col + 1)] = cell
        return {
            "kind": KIND,
            "format": FORMAT,
            "name": self.name,
            "about": (
                "value = weights . features; features = [1, then per value A..T the excess of that value among "
                "the unseen cards per unseen deck: 52 n_v / unseen - 4 (tens: - 16)]; the unseen cards are the "
                "shoe's and a hole card still face down; before a round due a shuffle every excess is 0. "
                "Play: the legal action with the largest value (an action left out was never tried). "
                "Insurance: taken when 'take' > 'decline'. Bet: the largest of 'bets' where 'bet' . features > 0, "
                "else the smallest; with 'kelly' (fraction F, bankroll B in table units), where v = 'bet' . features "
                f"> 0, the largest of 'bets' at or below F B v / {ROUND_VARIANCE} (the smallest if none is)."
            ),
            "features": list(FEATURE_NAMES),
            "bets": list(self.bets),
            "bet": [float(w) for w in self.bet],
            "insurance": {
                natural: {
                    choice: [float(w) for w in self.insurance[i, j]] for j, choice in enumerate(("decline", "take"))
                }
                for i, natural in enumerate(("no natural", "natural"))
            },
            "play": play,
            **({"kelly": {"fraction": self.kelly, "bankroll": self.bankroll}} if self.kelly else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LinearModel:
        """The model from its JSON; ValueError naming what is wrong."""
        if not isinstance(data, dict) or data.get("kind") != KIND:
            raise ValueError(f'not a composition model (needs "kind": "{KIND}")')
        if list(data.get("features", [])) != list(FEATURE_NAMES):
            raise ValueError(f"a composition model's features must be {list(FEATURE_NAMES)}")

        def vector(value: Any, where: str) -> np.ndarray:
            out = np.asarray(value, np.float64)
            if out.shape != (N_FEATURES,) or not np.all(np.isfinite(out)):
                raise ValueError(f"{where}: needs {N_FEATURES} finite weights")
            return out

        rows = {}
        for row in range(N_ROWS):
            section, key = row_label(row)
            rows[{"hard": "hard", "soft": "soft", "pairs": "pair"}[section] + " " + key] = row
        cols = {up_label(col + 1): col for col in range(N_UP)}
        play = np.zeros((N_ROWS, N_UP, N_PLAY, N_FEATURES))
        tried = np.zeros((N_ROWS, N_UP, N_PLAY), np.bool_)
        for hand, by_up in data.get("play", {}).items():
            if hand not in rows:
                raise ValueError(f"play: unknown hand {hand!r}")
            for up, actions in by_up.items():
                if up not in cols:
                    raise ValueError(f"play {hand!r}: unknown up card {up!r}; one of {', '.join(cols)}")
                for name, weights in actions.items():
                    if name not in ACTION_NAMES:
                        raise ValueError(
                            f"play {hand!r} v {up}: unknown action {name!r}; one of {', '.join(ACTION_NAMES)}"
                        )
                    a = ACTION_NAMES.index(name)
                    play[rows[hand], cols[up], a] = vector(weights, f"play {hand!r} v {up} {name}")
                    tried[rows[hand], cols[up], a] = True
        insurance = np.zeros((2, 2, N_FEATURES))
        for i, natural in enumerate(("no natural", "natural")):
            for j, choice in enumerate(("decline", "take")):
                insurance[i, j] = vector(data["insurance"][natural][choice], f"insurance {natural} {choice}")
        bets = tuple(float(b) for b in data["bets"])
        if (
            not bets
            or any(b < 0 for b in bets)
            or any(b2 <= b1 for b1, b2 in itertools.pairwise(bets))
            or bets[-1] <= 0
        ):
            raise ValueError(f"bets must increase, be >= 0 and include one above 0, got {list(bets)}")
        kelly = data.get("kelly", {"fraction": 0.0, "bankroll": 0.0})
        return cls(
            play,
            tried,
            insurance,
            vector(data["bet"], "bet"),
            bets,
            str(data.get("name", "linear")),
            float(kelly["fraction"]),
            float(kelly["bankroll"]),
        )

    def save(self, path: str | Path) -> None:
        """Write the JSON atomically (a reader never sees half a file)."""
        path = Path(path)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.to_dict()))
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> LinearModel:
        try:
            data = json.loads(Path(path).read_text())
        except OSError as error:
            raise ValueError(f"{path}: cannot read it ({error.strerror})") from None
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: not JSON ({error})") from None
        try:
            return cls.from_dict(data)
        except (KeyError, TypeError) as error:
            raise ValueError(f"{path}: not a composition model (missing or bad {error})") from None
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None
