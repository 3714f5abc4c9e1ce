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

A model may split the dealt shoe into depth bands (:attr:`LinearModel.depth_edges`, unseen-card
counts where each deeper band starts): a decision then values its actions with the play weights of the
band its unseen cards fall in, so a value may depend on the composition differently early and late in
the shoe (how far one card moves the odds grows as the shoe runs down). Insurance and the bet keep one
set of weights.

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
#: Depth bands a model plays at most (:attr:`LinearModel.bands`).
MAX_BANDS = 4
#: The value of an action never tried while learning: below anything learned, so never chosen
#: while another legal action has data (a cell with no data at all stands where it may).
UNTRIED = -1.0e9
KIND = "composition-linear"
ACTION_NAMES = ("stand", "hit", "double", "split", "surrender")  # engine action ids 0..4
#: The JSON's format: 2 adds ``depth`` (depth bands); a model without bands is written as format 1,
#: which every reader of format 1 plays the same.
FORMAT = 2

LP_BASE = CP.N_PARAMS  # the model's block follows the counting layout
LP_N_BETS = LP_BASE
LP_BETS = LP_N_BETS + 1  # MAX_BETS slots, increasing
LP_BET_W = LP_BETS + MAX_BETS  # the round's value per unit bet before the deal
LP_INS = LP_BET_W + N_FEATURES  # [natural 0/1][decline, take][feature]
LP_PLAY = LP_INS + 4 * N_FEATURES  # [row][up][action][feature]
PLAY_BLOCK = N_ROWS * N_UP * N_PLAY * N_FEATURES
LP_KELLY = LP_PLAY + PLAY_BLOCK  # [Kelly fraction, bankroll]; fraction 0: EV-maximising
LP_N_BANDS = LP_KELLY + 2  # depth bands: 1 plays LP_PLAY at every depth
LP_EDGES = LP_N_BANDS + 1  # MAX_BANDS - 1 slots: a band's deepest unseen-card count, decreasing
LP_BANDS = LP_EDGES + MAX_BANDS - 1  # per band one play block like LP_PLAY's (only with 2 bands or more)
LP_SIZE = LP_BANDS  # a model's row with one band; each band adds PLAY_BLOCK
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
def unseen_cards(st, hole):
    """The cards not yet seen: the shoe's, and a hole card still face down (code ``hole``)."""
    return slots.shoe_left(st) + (hole != 0)


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
    unseen = unseen_cards(st, hole)
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
    return 52.0 / max(unseen_cards(st, hole), 1)


@njit(cache=True, _nrt=False, inline="always")
def depth_band(edges, first, n_edges, unseen):
    """The depth band of ``unseen`` cards: how many of the band edges ``edges[first:first + n_edges]``
    (decreasing unseen-card counts, each where a deeper band starts) are at or above it."""
    band = 0
    for k in range(first, first + n_edges):
        if unseen <= edges[k]:
            band += 1
    return band


def band_edges(full: int, penetration: float, bands: int) -> tuple[int, ...]:
    """Edges splitting the dealt part of a shoe of ``full`` cards (dealt to ``penetration``) into
    ``bands`` bands of equal depth: the unseen-card count at which each band after the first starts."""
    return tuple(round(full * (1.0 - penetration * k / bands)) for k in range(1, bands))


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
    n_bands = int(params[LP_N_BANDS])
    block = LP_PLAY
    if n_bands > 1:
        block = LP_BANDS + depth_band(params, LP_EDGES, n_bands - 1, unseen_cards(st, hole)) * PLAY_BLOCK
    base = block + (row * N_UP + col) * N_PLAY * N_FEATURES
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
    bet (``linear_bet``). ``depth_edges`` (decreasing unseen-card counts, each where a deeper band
    starts) and ``bands`` (``float[len(depth_edges) + 1, *play.shape]``) play each depth band by its own
    weights; ``play`` is then the fit of every depth (what the reports show)."""

    play: np.ndarray
    tried: np.ndarray
    insurance: np.ndarray
    bet: np.ndarray
    bets: tuple[float, ...]
    name: str = "linear"
    kelly: float = 0.0
    bankroll: float = 0.0
    depth_edges: tuple[int, ...] = ()
    bands: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not 1 <= len(self.bets) <= MAX_BETS:
            raise ValueError(f"a composition model takes 1..{MAX_BETS} bets, got {len(self.bets)}")
        edges = self.depth_edges
        # (equal edges leave a band empty: a shoe dealt to fewer cards than it has bands)
        if len(edges) >= MAX_BANDS or any(b > a for a, b in itertools.pairwise(edges)) or any(e < 1 for e in edges):
            raise ValueError(
                f"depth edges must be at most {MAX_BANDS - 1} unseen-card counts >= 1, none above the one before, "
                f"got {list(edges)}"
            )
        if edges and (self.bands is None or self.bands.shape != (len(edges) + 1, *self.play.shape)):
            raise ValueError(f"{len(edges)} depth edges need {len(edges) + 1} bands of play weights shaped like play's")
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
            self.depth_edges,
            self.bands,
        )

    def params(self, rules: Any) -> np.ndarray:
        """The compiled row (module docstring) for these rules."""
        hilo = CountingStrategy(system("hilo"), ramp=((0.0, 1.0),), name=self.name)
        n_bands = len(self.depth_edges) + 1
        out = np.zeros(LP_SIZE + (PLAY_BLOCK * n_bands if n_bands > 1 else 0), np.float64)
        out[:LP_BASE] = CP.policy_params(hilo, rules)
        out[LP_N_BETS] = len(self.bets)
        out[LP_BETS : LP_BETS + len(self.bets)] = self.bets
        out[LP_BET_W : LP_BET_W + N_FEATURES] = self.bet
        out[LP_INS:LP_PLAY] = self.insurance.ravel()
        out[LP_PLAY:LP_KELLY] = self._compiled_play(self.play)
        out[LP_KELLY : LP_KELLY + 2] = self.kelly, self.bankroll
        out[LP_N_BANDS] = n_bands
        out[LP_EDGES : LP_EDGES + n_bands - 1] = self.depth_edges
        if self.bands is not None and n_bands > 1:
            out[LP_BANDS:] = np.concatenate([self._compiled_play(band) for band in self.bands])
        return out

    def _compiled_play(self, play: np.ndarray) -> np.ndarray:
        """A play block's weights, an action never tried valued UNTRIED."""
        out = np.where(self.tried[..., None], play, 0.0)
        out[..., 0] = np.where(self.tried, play[..., 0], UNTRIED)
        return out.ravel()

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON (``weights`` lists follow ``features``; untried actions are left out)."""
        depth = {}
        if self.bands is not None and self.depth_edges:
            depth = {
                "depth": {
                    "edges": list(self.depth_edges),
                    "bands": [self._play_dict(band, self.tried & (band != self.play).any(-1)) for band in self.bands],
                }
            }
        return {
            "kind": KIND,
            "format": FORMAT if depth else 1,
            "name": self.name,
            "about": (
                "value = weights . features; features = [1, then per value A..T the excess of that value among "
                "the unseen cards per unseen deck: 52 n_v / unseen - 4 (tens: - 16)]; the unseen cards are the "
                "shoe's and a hole card still face down; before a round due a shuffle every excess is 0. "
                "Play: the legal action with the largest value (an action left out was never tried). "
                "Insurance: taken when 'take' > 'decline'. Bet: the largest of 'bets' where 'bet' . features > 0, "
                "else the smallest; with 'kelly' (fraction F, bankroll B in table units), where v = 'bet' . features "
                f"> 0, the largest of 'bets' at or below F B v / {ROUND_VARIANCE} (the smallest if none is). "
                "Depth: with 'depth', a decision with u unseen cards plays band k, k the number of 'edges' >= u; "
                "a band's weights are 'play''s but where the band lists its own."
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
            "play": self._play_dict(self.play, self.tried),
            **depth,
            **({"kelly": {"fraction": self.kelly, "bankroll": self.bankroll}} if self.kelly else {}),
        }

    @staticmethod
    def _play_dict(play: np.ndarray, listed: np.ndarray) -> dict[str, dict[str, dict[str, list[float]]]]:
        """The play weights by hand, up card and action name, of the (cell, action)s ``listed``."""
        out: dict[str, dict[str, dict[str, list[float]]]] = {}
        for row in range(N_ROWS):
            for col in range(N_UP):
                cell = {
                    ACTION_NAMES[a]: [float(w) for w in play[row, col, a]] for a in range(N_PLAY) if listed[row, col, a]
                }
                if cell:
                    out.setdefault(_hand_name(row), {})[up_label(col + 1)] = cell
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LinearModel:
        """The model from its JSON; ValueError naming what is wrong."""
        if not isinstance(data, dict) or data.get("kind") != KIND:
            raise ValueError(f'not a composition model (needs "kind": "{KIND}")')
        if not isinstance(data.get("format", 1), int) or not 1 <= data.get("format", 1) <= FORMAT:
            raise ValueError(f"a composition model's format must be 1..{FORMAT}, got {data.get('format')!r}")
        if list(data.get("features", [])) != list(FEATURE_NAMES):
            raise ValueError(f"a composition model's features must be {list(FEATURE_NAMES)}")

        play = np.zeros((N_ROWS, N_UP, N_PLAY, N_FEATURES))
        tried = np.zeros((N_ROWS, N_UP, N_PLAY), np.bool_)
        _read_play(data.get("play", {}), "play", play, tried)
        insurance = np.zeros((2, 2, N_FEATURES))
        for i, natural in enumerate(("no natural", "natural")):
            for j, choice in enumerate(("decline", "take")):
                insurance[i, j] = _weights(data["insurance"][natural][choice], f"insurance {natural} {choice}")
        edges, bands = _read_depth(data.get("depth"), play, tried)
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
            _weights(data["bet"], "bet"),
            bets,
            str(data.get("name", "linear")),
            float(kelly["fraction"]),
            float(kelly["bankroll"]),
            edges,
            bands,
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


def _hand_name(row: int) -> str:
    section, key = row_label(row)
    return {"hard": "hard", "soft": "soft", "pairs": "pair"}[section] + " " + key


def _weights(value: Any, where: str) -> np.ndarray:
    out = np.asarray(value, np.float64)
    if out.shape != (N_FEATURES,) or not np.all(np.isfinite(out)):
        raise ValueError(f"{where}: needs {N_FEATURES} finite weights")
    return out


def _read_play(by_hand: Any, where: str, play: np.ndarray, listed: np.ndarray) -> None:
    """Fill ``play`` and mark ``listed`` from a JSON play dict (hand -> up card -> action -> weights)."""
    rows = {_hand_name(row): row for row in range(N_ROWS)}
    cols = {up_label(col + 1): col for col in range(N_UP)}
    for hand, by_up in by_hand.items():
        if hand not in rows:
            raise ValueError(f"{where}: unknown hand {hand!r}")
        for up, actions in by_up.items():
            if up not in cols:
                raise ValueError(f"{where} {hand!r}: unknown up card {up!r}; one of {', '.join(cols)}")
            for name, weights in actions.items():
                if name not in ACTION_NAMES:
                    raise ValueError(
                        f"{where} {hand!r} v {up}: unknown action {name!r}; one of {', '.join(ACTION_NAMES)}"
                    )
                a = ACTION_NAMES.index(name)
                play[rows[hand], cols[up], a] = _weights(weights, f"{where} {hand!r} v {up} {name}")
                listed[rows[hand], cols[up], a] = True


def _read_depth(depth: Any, play: np.ndarray, tried: np.ndarray) -> tuple[tuple[int, ...], np.ndarray | None]:
    """A model's depth edges and bands from its JSON ``depth`` (None: one band); a band's own
    weights are allowed only where ``play`` has the action (``tried``)."""
    if depth is None:
        return (), None
    edges = tuple(int(e) for e in depth["edges"])
    if len(depth["bands"]) != len(edges) + 1:
        raise ValueError(f"depth: {len(edges)} edges need {len(edges) + 1} bands, got {len(depth['bands'])}")
    bands = np.repeat(play[None], len(edges) + 1, axis=0)
    for k, band in enumerate(depth["bands"]):
        own = np.zeros(tried.shape, np.bool_)
        _read_play(band, f"depth band {k}", bands[k], own)
        if (own & ~tried).any():
            raise ValueError(f"depth band {k}: weights for an action 'play' does not have")
    return edges, bands
