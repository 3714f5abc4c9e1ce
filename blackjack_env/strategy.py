"""Strategy tables: a total-dependent policy as data the compiled simulator runs directly.

A :class:`StrategyTable` stores, for every hand class and dealer up card, the five playing
actions in order of preference; a policy plays the first legal one. That one list carries a
chart cell's fallbacks (``Dh`` = double, else hit) without special cases. Rows:

* 0-17: hard totals 4..21, 18-27: soft totals 12..21, 28-37: pairs of value 1..10 (1 = aces).

A pair row is consulted only while SPLIT is legal; otherwise the hand's total row is.
Columns are the dealer's up card value 1..10 (column 0 = ace). ``insurance[0]`` says whether to
insure a hand that is not a blackjack, ``insurance[1]`` whether to take even money (or insure)
holding one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import engine as E
from . import slots
from ._jit import njit

HARD_MIN, HARD_MAX = 4, 21
SOFT_MIN, SOFT_MAX = 12, 21
SOFT_BASE = HARD_MAX - HARD_MIN + 1  # 18
PAIR_BASE = SOFT_BASE + SOFT_MAX - SOFT_MIN + 1  # 28
N_ROWS = PAIR_BASE + 10  # 38
N_UP = 10
PLAY_ACTIONS = (E.STAND, E.HIT, E.DOUBLE, E.SPLIT, E.SURRENDER)
N_PLAY = len(PLAY_ACTIONS)

#: Column order of printed charts: dealer 2..10, then ace.
CHART_UPS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)
CHART_CODES = ("H", "S", "Dh", "Ds", "P", "Rh", "Rs", "Rp")
_LETTER = {E.STAND: "S", E.HIT: "H", E.DOUBLE: "D", E.SPLIT: "P", E.SURRENDER: "R"}
_ACTION_OF = {letter: action for action, letter in _LETTER.items()}


@njit(cache=True, _nrt=False)
def hand_row(total, soft, pair, split_legal):
    """Row of a hand: its pair row while it may split, else its soft or hard total row."""
    if pair > 0 and split_legal:
        return PAIR_BASE + pair - 1
    if soft:
        return SOFT_BASE + total - SOFT_MIN
    return max(total, HARD_MIN) - HARD_MIN


def row_label(row: int) -> tuple[str, str]:
    """(section, key) of a row as used in charts and JSON: ('hard', '16'), ('pairs', 'A')."""
    if row < SOFT_BASE:
        return "hard", str(row + HARD_MIN)
    if row < PAIR_BASE:
        return "soft", str(row - SOFT_BASE + SOFT_MIN)
    value = row - PAIR_BASE + 1
    return "pairs", "A" if value == 1 else str(value)


def row_of_label(section: str, key: str) -> int:
    if section == "hard":
        return int(key) - HARD_MIN
    if section == "soft":
        return SOFT_BASE + int(key) - SOFT_MIN
    if section == "pairs":
        return PAIR_BASE + (0 if key.upper() == "A" else int(key) - 1)
    raise ValueError(f"chart section must be hard, soft or pairs, got {section!r}")


def up_label(up: int) -> str:
    return "A" if up == 1 else str(up)


def up_of_label(label: str) -> int:
    return 1 if label.upper() in ("A", "1", "11") else int(label)


def code_of_order(order: np.ndarray | list[int]) -> str:
    """Chart code of a preference list: the first action, plus the fallback a chart shows."""
    first = int(order[0])
    letter = _LETTER[first]
    if first in (E.STAND, E.HIT, E.SPLIT):
        return letter
    fallback_choices = (E.HIT, E.STAND) if first == E.DOUBLE else (E.HIT, E.STAND, E.SPLIT)
    for action in order[1:]:
        if int(action) in fallback_choices:
            return letter + _LETTER[int(action)].lower()
    return letter


def order_of_code(code: str) -> list[int]:
    """A full preference list from a chart code (remaining actions in a fixed order)."""
    code = code.strip()
    if code not in CHART_CODES:
        raise ValueError(f"chart code {code!r} is not one of {', '.join(CHART_CODES)}")
    order = [_ACTION_OF[code[0]]]
    if len(code) > 1:
        order.append(_ACTION_OF[code[1].upper()])
    for action in (E.HIT, E.STAND, E.DOUBLE, E.SPLIT, E.SURRENDER):
        if action not in order:
            order.append(action)
    return order


@dataclass
class StrategyTable:
    """A total-dependent playing strategy (see the module docstring for the layout)."""

    actions: np.ndarray  # int64[N_ROWS, N_UP, N_PLAY]: preference order per cell
    insurance: np.ndarray = field(default_factory=lambda: np.zeros(2, np.bool_))
    name: str = "strategy"

    def __post_init__(self) -> None:
        self.actions = np.ascontiguousarray(self.actions, dtype=np.int64)
        self.insurance = np.ascontiguousarray(self.insurance, dtype=np.bool_)
        if self.actions.shape != (N_ROWS, N_UP, N_PLAY):
            raise ValueError(f"strategy actions must have shape {(N_ROWS, N_UP, N_PLAY)}, got {self.actions.shape}")
        if self.insurance.shape != (2,):
            raise ValueError(f"strategy insurance must have shape (2,), got {self.insurance.shape}")
        for row in self.actions.reshape(-1, N_PLAY):
            if sorted(row.tolist()) != sorted(PLAY_ACTIONS):
                raise ValueError(f"each strategy cell must order the five play actions 0-4 once, got {row.tolist()}")

    # --------------------------------------------------------------- playing
    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The action for one env observation and mask."""
        return int(table_action(self.actions, self.insurance, np.asarray(obs, np.int64), np.asarray(mask, np.bool_)))

    def cell_code(self, row: int, up: int) -> str:
        return code_of_order(self.actions[row, up - 1])

    # --------------------------------------------------------------- charts
    def to_chart(self) -> dict[str, dict[str, dict[str, str]]]:
        """{"hard": {"16": {"10": "Rh", ...}}, "soft": {...}, "pairs": {"8": ..., "A": ...}}."""
        chart: dict[str, dict[str, dict[str, str]]] = {"hard": {}, "soft": {}, "pairs": {}}
        for row in range(N_ROWS):
            section, key = row_label(row)
            chart[section][key] = {up_label(up): self.cell_code(row, up) for up in CHART_UPS}
        return chart

    @classmethod
    def from_chart(cls, chart: dict[str, dict[str, dict[str, str]]], name: str = "chart") -> StrategyTable:
        """Build a table from chart codes (``to_chart``'s layout, ``CHART_CODES``): how a table is made by
        hand. Cells a chart leaves out hit hard totals below 12 and stand the rest, split aces and eights;
        insurance is never taken (a chart has no insurance row). ``from_chart(t.to_chart())`` plays every
        hand as ``t`` does (a code keeps the first action and the fallback where it may be illegal; the
        rest of a cell's order is fixed), not its insurance."""
        actions = np.zeros((N_ROWS, N_UP, N_PLAY), np.int64)
        for row in range(N_ROWS):
            section, key = row_label(row)
            default = "H" if section == "hard" and int(key) < 12 else "S"
            if section == "pairs":
                default = "P" if key in ("A", "8") else "S"
            for up in range(1, 11):
                code = chart.get(section, {}).get(key, {}).get(up_label(up), default)
                actions[row, up - 1] = order_of_code(code)
        return cls(actions, name=name)

    def format_chart(self) -> str:
        """The familiar printed chart: hard 5-21, soft 13-21 and pairs against 2..10, A."""
        header = "        " + " ".join(f"{up_label(up):>3}" for up in CHART_UPS)
        lines = [f"Strategy: {self.name}"]
        for section, keys in (
            ("hard", [str(t) for t in range(5, 22)]),
            ("soft", [str(t) for t in range(13, 22)]),
            ("pairs", ["2", "3", "4", "5", "6", "7", "8", "9", "10", "A"]),
        ):
            lines.append("")
            lines.append(section.upper() + header[len(section) :])
            for key in keys:
                row = row_of_label(section, key)
                label = f"{key},{key}" if section == "pairs" else key
                cells = " ".join(f"{self.cell_code(row, up):>3}" for up in CHART_UPS)
                lines.append(f"{label:<8}{cells}")
        lines.append("")
        lines.append(
            f"Insurance: {'take' if self.insurance[0] else 'never'}; "
            f"even money with a blackjack: {'take' if self.insurance[1] else 'decline'}"
        )
        return "\n".join(lines)

    # --------------------------------------------------------------- files
    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "actions": self.actions.tolist(),
            "insurance": self.insurance.tolist(),
            "chart": self.to_chart(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StrategyTable:
        return cls(np.array(data["actions"]), np.array(data["insurance"]), name=data.get("name", "strategy"))

    def save(self, path: str | Path) -> None:
        """Write the table as JSON (``to_dict``: the full preference order of every cell, insurance and
        the chart for reading): the file ``blackjack-evaluate --policy PATH`` plays and ``load`` reads."""
        Path(path).write_text(json.dumps(self.to_dict()))

    @classmethod
    def load(cls, path: str | Path) -> StrategyTable:
        """Read a table ``save`` wrote (its ``actions`` and ``insurance``; the chart is for reading only)."""
        return cls.from_dict(json.loads(Path(path).read_text()))


@njit(cache=True, _nrt=False)
def table_action(actions, insurance, obs, mask):
    """First legal action of the table's preference list for an observation (compiled)."""
    phase = obs[E.O_PHASE]
    if phase == E.P_INSURANCE:
        return E.INSURANCE if insurance[obs[E.O_NATURAL]] else E.NO_INSURANCE
    if phase != E.P_PLAY:
        return E.STAND
    row = hand_row(obs[E.O_TOTAL], obs[E.O_SOFT], obs[E.O_PAIR], obs[E.O_CAN_SPLIT])
    col = obs[E.O_UP] - 1
    for k in range(N_PLAY):
        action = actions[row, col, k]
        if mask[action]:
            return action
    return E.STAND


@njit(cache=True, _nrt=False, inline="always")
def table_cell(st, hands):
    """(row, column, split legal) of the current hand's decision, read from the engine state:
    the one cell lookup of the simulator's tables and the tabular learner."""
    h = slots.current_row(st)
    hard = hands[h, E.H_HARD]
    aces = hands[h, E.H_ACES]
    split_legal = E.can_split(st, hands, h)
    pair = E.card_value(hands[h, E.H_CARDS]) if split_legal else 0
    return hand_row(E.best_total(hard, aces), E.is_soft(hard, aces), pair, split_legal), E.up_value(st) - 1, split_legal


@njit(cache=True, _nrt=False, forceinline=True)
def table_decision(actions, insurance, st, hands):
    """The same choice as ``table_action`` read straight from the engine state (the simulator's
    hot path: it checks only the legality of the actions it considers)."""
    phase = slots.phase(st)
    if phase == E.P_INSURANCE:
        return E.INSURANCE if insurance[slots.natural(st)] else E.NO_INSURANCE
    if phase != E.P_PLAY:
        return E.STAND
    row, col, split_legal = table_cell(st, hands)
    return table_play(actions, st, hands, row, col, split_legal)


@njit(cache=True, _nrt=False, forceinline=True)
def table_play(actions, st, hands, row, col, split_legal):
    """The first legal action of a cell's preference list for the current hand."""
    h = slots.current_row(st)
    for k in range(N_PLAY):
        action = actions[row, col, k]
        if action == E.STAND:
            return action
        if action == E.SPLIT:
            if split_legal:
                return action
        elif action == E.HIT:
            if not E.split_ace_locked(st, hands, h):
                return action
        elif action == E.DOUBLE:
            if E.can_double(st, hands, h):
                return action
        elif E.can_surrender(st, hands, h):
            return action
    return E.STAND


__all__ = [
    "CHART_CODES",
    "CHART_UPS",
    "PLAY_ACTIONS",
    "StrategyTable",
]
