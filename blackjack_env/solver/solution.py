"""Public results of the exact analysis: the optimal table, its EVs, policy evaluation, disk cache.

Every on-disk cache of the solver (solutions here, effects of removal, index grids, the ceiling) keys
its files by ``code_key(__name__)`` (``from .solution import code_key``; it lives in
``blackjack_env/_source.py``) of the module that computes them (a hash of that module's source and of
every module of the package it imports) beside the inputs, so a result computed by other code is never
read back: ``path = cache_dir() / f"ceiling-{hash of (code_key(__name__), inputs)}.npz"``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from .. import engine as E
from .._source import cache_root, code_key, prune, touch
from ..rules import PRESETS, Rules
from ..strategy import CHART_UPS, N_ROWS, N_UP, PAIR_BASE, StrategyTable, row_label, row_of_label, up_label, up_of_label
from . import _kernels as K
from ._analysis import Analysis, analyse, dealer_arrays, hand_evs, shoe_vector

ACTION_NAMES = ("stand", "hit", "double", "split", "surrender")
_CHART_KEYS = {
    section: [row_label(r)[1] for r in range(N_ROWS) if row_label(r)[0] == section]
    for section in ("hard", "soft", "pairs")
}
_ARRAYS = (
    "actions",
    "insurance",
    "action_ev",
    "freq",
    "obj",
    "obj_split",
    "obj_multi",
    "legal2",
    "legal_split",
    "insurance_ev",
)


#: The names of the solver's cache files (solutions, effects of removal, index grids, the ceiling)
#: and of a temporary one a killed process left: the only files pruning may remove from a folder
#: that $BLACKJACK_ENV_CACHE may point anywhere.
CACHE_FILE = re.compile(r"(?:[a-z]+-)?[0-9a-f]{32}\.(?:npz|json)|tmp\w+\.tmp")


def cache_dir() -> Path:
    """Where solutions are kept: $BLACKJACK_ENV_CACHE, else ~/.cache/blackjack-env/solver
    ($XDG_CACHE_HOME in place of ~/.cache where set)."""
    env = os.environ.get("BLACKJACK_ENV_CACHE")
    return Path(env) if env else cache_root() / "solver"


def _analysis_fields(rules: Rules) -> dict[str, Any]:
    """The rules' fields a fresh-shoe analysis reads: all but penetration."""
    fields = rules.to_dict()
    fields.pop("penetration", None)
    return fields


def rules_key(rules: Rules) -> str:
    """Cache key of a solution: every field that changes a fresh-shoe analysis (penetration does not)
    and the code that computes it (``code_key``), so changed code never reads an old result."""
    text = json.dumps({"code": code_key(__name__), "rules": _analysis_fields(rules)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@contextlib.contextmanager
def atomic_file(path: Path, mode: str = "wb") -> Iterator[IO[Any]]:
    """A file written under a temporary name beside ``path`` and renamed over it once complete, so
    concurrent readers (other processes sharing the cache) never see half a file; on an error
    nothing is left behind. Once it is written, the cache files beside it unused for a month
    (``_source.prune``: most were computed by code changed since) are removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    prune(path.parent, path.name, CACHE_FILE)


@dataclass(frozen=True)
class Deviation:
    """One cell where a table plays differently from basic strategy.

    cost: EV lost each time the situation arises (units of the initial bet); frequency: chance
    per round that it arises. cost * frequency is what the deviation costs per round."""

    section: str
    key: str
    up: str
    basic: str
    played: str
    cost: float
    frequency: float

    @property
    def cost_per_round(self) -> float:
        return self.cost * self.frequency


@dataclass(frozen=True)
class Evaluation:
    """Exact EV of a given table under the rules, and its deviations from basic strategy."""

    ev: float
    basic_ev: float
    deviations: list[Deviation]

    @property
    def loss(self) -> float:
        """EV given up per round against basic strategy."""
        return self.basic_ev - self.ev

    def __float__(self) -> float:
        """float(evaluation) is the table's EV, so callers wanting just the number can say so."""
        return self.ev


@dataclass
class Solution:
    """Basic strategy for one rule set and the exact numbers behind it.

    Attributes:
        rules: the game.
        ev: EV per round (per initial bet) of playing ``table`` off the top of a fresh shoe,
            naturals, insurance and even-money decisions, peek and surrender included.
        table: the total-dependent optimal strategy; each cell lists the actions best first.
        action_ev: float[38, 10, 5] EV of each play action per (row, up card value - 1) for the
            cell's unsplit two-card hands (split or multi-card hands where a row has none),
            NaN where the action is not legal there. Frame: given no dealer blackjack where
            the dealer peeks and in OBO no-hole-card games (whose blackjack loss is one unit
            whatever is played); blackjack losses included in full-loss no-hole-card games.
            Early surrender against an ace or ten, decided before the peek, is put in the same
            frame: (-0.5 + P(bj)) / P(no bj), so comparisons stay right.
        freq: float[38, 10] expected number of decisions per round made in the cell (unsplit,
            split and multi-card hands; a round can decide in several cells).
        insurance_ev: float[39] against an ace, the insurance bet's EV (costs 0.5, pays 2:1)
            for each row's two-card hands (NaN: none), and last the natural's gain from even
            money (or insuring it) over declining.
        obj, obj_split, obj_multi, legal2, legal_split: the weighted sums behind the choice of
            each cell (see ``_analysis``), kept for pricing deviations.
    """

    rules: Rules
    ev: float
    table: StrategyTable
    action_ev: np.ndarray
    freq: np.ndarray
    obj: np.ndarray
    obj_split: np.ndarray
    obj_multi: np.ndarray
    legal2: np.ndarray
    legal_split: np.ndarray
    insurance_ev: np.ndarray

    # ------------------------------------------------------------------ views
    def cell_ev(self, section: str, key: str, up: str | int) -> dict[str, float]:
        """EV of each legal action in one chart cell, e.g. cell_ev("hard", "16", "10")."""
        row = row_of_label(section, key)
        col = (up_of_label(up) if isinstance(up, str) else int(up)) - 1
        return {
            ACTION_NAMES[a]: float(self.action_ev[row, col, a])
            for a in range(5)
            if not np.isnan(self.action_ev[row, col, a])
        }

    def action_ev_chart(self) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
        """{"hard": {"16": {"10": {"stand": -0.54, "hit": ..., ...}}}, "soft": ..., "pairs": ...}."""
        chart: dict[str, dict[str, dict[str, dict[str, float]]]] = {"hard": {}, "soft": {}, "pairs": {}}
        for row in range(N_ROWS):
            section, key = row_label(row)
            chart[section][key] = {up_label(up): self.cell_ev(section, key, up) for up in CHART_UPS}
        return chart

    def to_json_dict(self) -> dict[str, Any]:
        """The CLI's JSON object: rules, ev, chart, action_ev, insurance."""
        return {
            "rules": self.rules.to_dict(),
            "description": self.rules.describe(),
            "ev": self.ev,
            "chart": self.table.to_chart(),
            "insurance": {
                "insure": bool(self.table.insurance[0]),
                "even_money": bool(self.table.insurance[1]),
                "insurance_ev_vs_ace": {
                    section: {
                        key: float(self.insurance_ev[row_of_label(section, key)])
                        for key in keys
                        if not np.isnan(self.insurance_ev[row_of_label(section, key)])
                    }
                    for section, keys in _CHART_KEYS.items()
                },
                "even_money_gain": float(self.insurance_ev[N_ROWS]),
            },
            "action_ev": self.action_ev_chart(),
        }

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, table: StrategyTable) -> Evaluation:
        """Exact EV of playing ``table`` under these rules and the cost of each deviation."""
        result = analyse(self.rules, table)
        return Evaluation(ev=result.ev, basic_ev=self.ev, deviations=self.deviations(table))

    def deviations(self, table: StrategyTable) -> list[Deviation]:
        """Cells where ``table`` plays otherwise than basic strategy, with exact single costs.

        (Insurance choices are not cells: their effect is in ``evaluate(table).ev``.)

        Each cost changes only that cell, every other decision staying basic strategy, with the
        analysis' own weights for the three kinds of hands deciding there (unsplit two-card,
        two-card split and multi-card hands)."""
        shoe = shoe_vector(self.rules)[0]
        p_ups = shoe / shoe.sum()
        out = []
        for row in range(N_ROWS):
            for col in range(N_UP):
                freq = float(self.freq[row, col])
                mine = self._behaviour(table.actions[row, col], row, col)
                basic = self._behaviour(self.table.actions[row, col], row, col)
                if mine == basic or freq <= 0:
                    continue
                loss = self._objective(basic, row, col) - self._objective(mine, row, col)
                section, key = row_label(row)
                out.append(
                    Deviation(
                        section=section,
                        key=key,
                        up=up_label(col + 1),
                        basic=self.table.cell_code(row, col + 1),
                        played=table.cell_code(row, col + 1),
                        cost=float(p_ups[col] * loss / freq),
                        frequency=freq,
                    )
                )
        return out

    def _behaviour(self, order: np.ndarray, row: int, col: int) -> tuple[int, int, int]:
        """What the order plays for each kind of hand in the cell."""
        return (
            int(K.first_legal(order, self.legal2[row, col])),
            int(K.first_legal(order, self.legal_split[row, col])) if self.legal_split[row, col].any() else -1,
            int(K.first_of(order, E.STAND, E.HIT)) if row < PAIR_BASE else -1,
        )

    def _objective(self, behaviour: tuple[int, int, int], row: int, col: int) -> float:
        first, split, multi = behaviour
        value = float(self.obj[row, col, first])
        if split >= 0:
            value += float(self.obj_split[row, col, split])
        if multi >= 0:
            value += float(self.obj_multi[row, col, multi])
        return value

    # ------------------------------------------------------------------ storage
    def save(self, path: str | Path, *, compressed: bool = False) -> None:
        """Write atomically (``atomic_file``); ``compressed`` for the solutions the package ships."""
        path = Path(path)
        arrays: dict[str, Any] = {  # Any: mypy reads **arrays as maybe savez's allow_pickle
            "actions": self.table.actions,
            "insurance": self.table.insurance,
            "action_ev": self.action_ev,
            "freq": self.freq,
            "obj": self.obj,
            "obj_split": self.obj_split,
            "obj_multi": self.obj_multi,
            "legal2": self.legal2,
            "legal_split": self.legal_split,
            "insurance_ev": self.insurance_ev,
        }
        meta = json.dumps({"ev": self.ev, "rules": self.rules.to_dict(), "code": code_key(__name__)})
        with atomic_file(path) as f:
            (np.savez_compressed if compressed else np.savez)(f, meta=np.array(meta), **arrays)

    @classmethod
    def load(cls, path: str | Path) -> Solution:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            arrays = {name: data[name] for name in _ARRAYS}
        rules = Rules.from_dict(meta["rules"])
        return cls._from_arrays(rules, float(meta["ev"]), arrays)

    @classmethod
    def _from_arrays(cls, rules: Rules, ev: float, a: Mapping[str, np.ndarray]) -> Solution:
        table = StrategyTable(a["actions"], a["insurance"], name=f"basic strategy ({rules.describe()})")
        return cls(
            rules=rules,
            ev=ev,
            table=table,
            action_ev=np.asarray(a["action_ev"], np.float64),
            freq=np.asarray(a["freq"], np.float64),
            obj=np.asarray(a["obj"], np.float64),
            obj_split=np.asarray(a["obj_split"], np.float64),
            obj_multi=np.asarray(a["obj_multi"], np.float64),
            legal2=np.asarray(a["legal2"], np.bool_),
            legal_split=np.asarray(a["legal_split"], np.bool_),
            insurance_ev=np.asarray(a["insurance_ev"], np.float64),
        )

    @classmethod
    def from_analysis(cls, rules: Rules, result: Analysis) -> Solution:
        return cls._from_arrays(rules, result.ev, dataclasses.asdict(result))


#: The presets' solutions ship with the package (``tools/bundle_solutions.py`` writes them; a test holds
#: each to a fresh analysis bit for bit), so a preset game's first ``solve`` compiles no solver kernel.
BUNDLE_DIR = Path(__file__).resolve().parent / "bundled"


def bundled_solution(rules: Rules) -> Solution | None:
    """The shipped solution of a preset these rules play (any penetration), else None."""
    wanted = _analysis_fields(rules)
    for name, preset in PRESETS.items():
        path = BUNDLE_DIR / f"{name}.npz"
        if _analysis_fields(preset.rules) == wanted and path.exists():
            return dataclasses.replace(Solution.load(path), rules=rules)
    return None


def solve(rules: Rules | str | Mapping[str, Any] | None = None, *, cache: bool = True) -> Solution:
    """Basic strategy and its exact EV for a rule set (a Rules, preset name or dict of fields).

    Results are kept on disk (see :func:`cache_dir`) keyed by the rules, so a second call in any
    process is a file read; a damaged or foreign cache file is ignored and rewritten. A preset's
    solution ships with the package (``BUNDLE_DIR``). ``cache=False`` analyses afresh, reading
    and writing neither."""
    rules = Rules.coerce(rules)
    path = cache_dir() / f"{rules_key(rules)}.npz"
    if cache and path.exists():
        try:
            solution = Solution.load(path)
            touch(path)
            return dataclasses.replace(solution, rules=rules)
        except Exception:
            pass
    shipped = bundled_solution(rules) if cache else None
    if shipped is not None:
        return shipped
    solution = Solution.from_analysis(rules, analyse(rules))
    if cache:
        with contextlib.suppress(OSError):
            solution.save(path)
    return solution


def evaluate(rules: Rules | str | Mapping[str, Any] | None, table: StrategyTable) -> Evaluation:
    """Exact EV of a table under the rules (shorthand for ``solve(rules).evaluate(table)``)."""
    return solve(rules).evaluate(table)


OUTCOMES = ("17", "18", "19", "20", "21", "bust", "blackjack")


def dealer_probabilities(
    rules: Rules | str | Mapping[str, Any] | None,
    up: int,
    removed: Iterable[int] = (),
    *,
    after_peek: bool = False,
) -> dict[str, float]:
    """Dealer final-total distribution for an up card (value 1..10, 1 = ace).

    removed: values of other cards known to be out of the shoe (the player's cards).
    after_peek: condition on the dealer not holding a blackjack (as after a peek)."""
    rules = Rules.coerce(rules)
    if not 1 <= int(up) <= 10:
        raise ValueError(f"up card value must be 1 (ace) .. 10, got {up!r}")
    shoe, infinite = shoe_vector(rules)
    rem = shoe.copy()
    if not infinite:
        rem[int(up) - 1] -= 1
        for value in removed:
            if not 1 <= int(value) <= 10:
                raise ValueError(f"removed card values must be 1..10, got {value!r}")
            rem[int(value) - 1] -= 1
        if (rem < 0).any():
            raise ValueError("more cards removed than the shoe holds")
    out = np.zeros(K.N_OUT)
    ds = dealer_arrays(rules.hit_soft_17)
    K.dealer_fill(rem, float(rem.sum()), int(up), infinite, shoe, *ds, np.zeros(len(ds[1])), out)
    if after_peek:
        out[: K.O_BJ] /= 1.0 - out[K.O_BJ]
        out[K.O_BJ] = 0.0
    return {name: float(out[i]) for i, name in enumerate(OUTCOMES)}


def hand_ev(
    rules: Rules | str | Mapping[str, Any] | None,
    cards: Iterable[int],
    up: int,
    table: StrategyTable | None = None,
) -> dict[str, float]:
    """EV of each action for one exact hand (card values, 1 = ace) against an up card.

    The hand's cards and the up card are out of the shoe. After a hit the hand plays on by its
    own composition (table None, the composition-dependent optimum) or by ``table``. Given no
    dealer blackjack where the dealer peeks."""
    rules = Rules.coerce(rules)
    values = [int(v) for v in cards]
    if not 1 <= int(up) <= 10 or not all(1 <= v <= 10 for v in values):
        raise ValueError(f"card values must be 1 (ace) .. 10, got cards {values} and up card {up!r}")
    return hand_evs(rules, values, int(up), table)
