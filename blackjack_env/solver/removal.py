"""Effects of removal from the exact analysis, and the BC, PE and IC of counting systems.

An effect of removal (EOR) is the change of the player's EV, in percent of the initial bet, when
one card of a value is taken out of the rules' full shoe, off the top. Two are reported, because
published tables differ on this:

* ``eor`` (re-optimised): the basic strategy is solved again for the depleted shoe (the Wizard of
  Odds / bjstrat six-deck table is of this kind);
* ``eor_fixed``: the full shoe's basic strategy is held fixed and evaluated on the depleted shoe
  (Griffin's classic kind); never above the re-optimised one.

Both are total-dependent (as the solver's basic strategy); composition-dependent analysers differ
slightly. ``insurance_eor`` is the change of the insurance bet's EV (as placed: half the initial
bet, pays 2:1, in percent of the initial bet) against an ace up card, the hole card drawn from
the shoe less that ace; it does not depend on the player's cards or on the insurance rule.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._source import code_key, touch
from ..counting import SYSTEMS, VALUE_WEIGHTS, VALUES, CountingSystem, weighted_correlation
from ..rules import Rules
from ..strategy import N_ROWS, N_UP, row_label, up_label
from ._analysis import Analysis, _insurance_value, analyse, shoe_vector
from .solution import ACTION_NAMES, atomic_file, cache_dir, rules_key, solve

#: The value labels of the contract, in its order (ten-value cards as "10", the ace last).
LABELS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "A")
#: Share of the shoe dealt before the shuffle assumed for PE when the rules shuffle every round.
DEFAULT_PE_PENETRATION = 0.75
_PE_DEPTHS = 48  # depths averaged over in PE (evenly spaced cards-dealt counts)


@dataclass(frozen=True)
class Decision:
    """One chart cell's decision between its two best actions, and how the count moves it.

    margin: EV(best) - EV(second) per decision off the top under basic strategy (percent of the
    initial bet, the cell's own hands as in ``Solution.action_ev``); eor: change of that margin per
    card of each value removed, later play held to basic strategy; frequency: decisions per round
    made in the cell (all its hands)."""

    section: str
    key: str
    up: str
    best: str
    second: str
    margin: float
    frequency: float
    eor: dict[str, float]


@dataclass(frozen=True)
class Removal:
    """Effects of removal of one rule set (percent of the initial bet per card removed)."""

    rules: Rules
    eor: dict[str, float]
    eor_fixed: dict[str, float]
    insurance_eor: dict[str, float]
    decisions: tuple[Decision, ...]

    def to_json_dict(self) -> dict[str, dict[str, float]]:
        """The CLI's keys: ``eor`` (re-optimised), ``eor_fixed`` and ``insurance_eor``."""
        return {"eor": dict(self.eor), "eor_fixed": dict(self.eor_fixed), "insurance_eor": dict(self.insurance_eor)}

    def efficiencies(self, systems: Mapping[str, CountingSystem] = SYSTEMS) -> dict[str, dict[str, float]]:
        """{name: {"bc", "pe", "ic"}} of each system.

        BC: weighted correlation (ten-value cards weigh 4) of the tags with the re-optimised EORs;
        IC: with the insurance EORs (equal to ``CountingSystem.insurance_correlation``); PE: see
        :func:`playing_efficiency`, the shoe dealt to the rules' penetration (75% where the rules
        shuffle every round)."""
        penetration = self.rules.penetration or DEFAULT_PE_PENETRATION
        eor = _ace_first(self.eor)
        insurance = _ace_first(self.insurance_eor)
        return {
            name: {
                "bc": s.correlation(eor),
                "pe": playing_efficiency(self, np.asarray(s.tags, float), penetration),
                "ic": s.correlation(insurance),
            }
            for name, s in systems.items()
        }


def _by_label(ace_first: np.ndarray) -> dict[str, float]:
    """A vector over values A, 2..10 as a dict in the contract's label order."""
    return {label: float(ace_first[VALUES.index(label)]) for label in LABELS}


def _ace_first(effects: Mapping[str, float]) -> np.ndarray:
    return np.array([effects[v] for v in VALUES], float)


def _cache_path(rules: Rules) -> Path:
    """The cache file of the rules' effects, keyed by the code that computes them (``code_key``)."""
    text = json.dumps({"removal": code_key(__name__), "rules": rules_key(rules)}, sort_keys=True)
    return cache_dir() / f"removal-{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"


def _insurance_eor(full: np.ndarray) -> np.ndarray:
    """Change of the insurance bet's EV (percent of the initial bet) per card removed, ace up."""
    after_up = full.copy()
    after_up[0] -= 1
    before = _insurance_value(after_up[9] / after_up.sum())
    out = np.zeros(10)
    for v in range(10):
        shoe = after_up.copy()
        shoe[v] -= 1
        out[v] = 100.0 * (_insurance_value(shoe[9] / shoe.sum()) - before)
    return out


def _decision_cells(base: Analysis) -> list[tuple[int, int, int, int]]:
    """(row, column, best, second) of every cell decided off the top with two or more actions."""
    cells = []
    for row in range(N_ROWS):
        for col in range(N_UP):
            evs = base.action_ev[row, col]
            legal = np.flatnonzero(~np.isnan(evs))
            if base.freq[row, col] <= 0 or len(legal) < 2:
                continue
            ranked = legal[np.argsort(-evs[legal], kind="stable")]
            cells.append((row, col, int(ranked[0]), int(ranked[1])))
    return cells


def _compute(rules: Rules) -> Removal:
    solution = solve(rules)
    full = shoe_vector(rules)[0]
    base = analyse(rules, solution.table)  # the full shoe's EV of the fixed table, and its cells
    cells = _decision_cells(base)
    eor = np.zeros(10)
    eor_fixed = np.zeros(10)
    margin_eor = np.zeros((len(cells), 10))
    for v in range(10):
        shoe = full.copy()
        shoe[v] -= 1
        eor[v] = 100.0 * (analyse(rules, shoe=shoe).ev - solution.ev)
        fixed = analyse(rules, solution.table, shoe=shoe)
        eor_fixed[v] = 100.0 * (fixed.ev - base.ev)
        for i, (row, col, a, b) in enumerate(cells):
            change = (fixed.action_ev[row, col, a] - fixed.action_ev[row, col, b]) - (
                base.action_ev[row, col, a] - base.action_ev[row, col, b]
            )
            margin_eor[i, v] = 100.0 * change
    decisions = []
    for i, (row, col, a, b) in enumerate(cells):
        section, key = row_label(row)
        decisions.append(
            Decision(
                section=section,
                key=key,
                up=up_label(col + 1),
                best=ACTION_NAMES[a],
                second=ACTION_NAMES[b],
                margin=float(100.0 * (base.action_ev[row, col, a] - base.action_ev[row, col, b])),
                frequency=float(base.freq[row, col]),
                eor=_by_label(margin_eor[i]),
            )
        )
    return Removal(
        rules=rules,
        eor=_by_label(eor),
        eor_fixed=_by_label(eor_fixed),
        insurance_eor=_by_label(_insurance_eor(full)),
        decisions=tuple(decisions),
    )


def _save(removal: Removal, path: Path) -> None:
    """Into the cache, atomically (``atomic_file``)."""
    fields = asdict(removal)
    fields["rules"] = removal.rules.to_dict()
    with atomic_file(path, "w") as f:
        json.dump({"code": code_key(__name__), **fields}, f)


def _load(path: Path, rules: Rules) -> Removal:
    data = json.loads(path.read_text())
    if data.get("code") != code_key(__name__):
        raise ValueError("removal cache written by other code")
    touch(path)  # used: kept by the cache's pruning
    return Removal(
        rules=rules,
        eor=data["eor"],
        eor_fixed=data["eor_fixed"],
        insurance_eor=data["insurance_eor"],
        decisions=tuple(Decision(**d) for d in data["decisions"]),
    )


def effects_of_removal(rules: Rules | str | Mapping[str, Any] | None = None, *, cache: bool = True) -> Removal:
    """Effects of removal of one card of each value from the rules' full shoe (see the module).

    About twenty exact analyses (seconds); kept on disk beside the solutions (``cache_dir()``)
    keyed by the rules, so a second call in any process is a file read."""
    rules = Rules.coerce(rules)
    if rules.infinite:
        raise ValueError(
            "effects of removal need a finite shoe (decks >= 1): no card can be removed from an infinite deck"
        )
    path = _cache_path(rules)
    if cache and path.exists():
        with contextlib.suppress(Exception):
            return _load(path, rules)
    removal = _compute(rules)
    if cache:
        with contextlib.suppress(OSError):
            _save(removal, path)
    return removal


def _unit_loss(z: np.ndarray) -> np.ndarray:
    """E[max(0, Z - z)] for a standard normal Z: the normal loss integral phi(z) - z (1 - Phi(z))."""
    phi = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    tail = 0.5 * np.array([math.erfc(x / math.sqrt(2.0)) for x in z.ravel()]).reshape(z.shape)
    return phi - z * tail


def playing_efficiency(removal: Removal, tags: np.ndarray, penetration: float) -> float:
    """Griffin-style playing efficiency: the share of the gain from perfect (linear) knowledge of
    every chart decision that a count's index plays capture, normal approximation.

    Each decision's margin after k random cards are dealt is taken as normal with mean its margin
    off the top and SD sqrt(k (N - 1) / (N - k)) x the card-weighted SD of its EOR vector
    (sampling without replacement, effects linear in the composition). Perfect knowledge gains
    SD x L(margin / SD) per decision (L the normal loss integral); a count whose tags correlate
    rho with the EORs estimates the margin with SD ``|rho| x SD``, gaining ``|rho| SD x L(margin /
    (|rho| SD))``. Gains are weighted by each cell's frequency and averaged over the rounds of a
    shoe dealt evenly to ``penetration``; insurance is left out (that is the IC). A cell's margin
    and EORs are those of its own hands as in ``Solution.action_ev`` (unsplit two-card hands where
    it has them), its weight counts every decision made there."""
    n = float(shoe_vector(removal.rules)[0].sum())
    dealt = np.linspace(1.0, penetration * n, _PE_DEPTHS)
    scale = np.sqrt(dealt * (n - 1.0) / (n - dealt))
    weights = VALUE_WEIGHTS / VALUE_WEIGHTS.sum()
    perfect = captured = 0.0
    for d in removal.decisions:
        e = _ace_first(d.eor)
        sd = math.sqrt(float(weights @ (e - weights @ e) ** 2))
        if sd == 0.0:
            continue
        rho = abs(weighted_correlation(tags, e))
        sigma = scale * sd
        perfect += d.frequency * float(np.mean(sigma * _unit_loss(d.margin / sigma)))
        if rho > 0.0:
            captured += d.frequency * float(np.mean(rho * sigma * _unit_loss(d.margin / (rho * sigma))))
    return captured / perfect if perfect > 0 else float("nan")


def system_efficiencies(
    rules: Rules | str | Mapping[str, Any] | None = None,
    systems: Mapping[str, CountingSystem] = SYSTEMS,
) -> dict[str, dict[str, float]]:
    """{name: {"bc", "pe", "ic"}} of each system under the rules (see :meth:`Removal.efficiencies`)."""
    return effects_of_removal(rules).efficiencies(systems)
