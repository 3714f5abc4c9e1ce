"""The learner's pages: what a ``blackjack-train --env shoe`` run learned, from what its folder keeps.

A count-table run (``--algo tabular``: ``counting-strategy.json``) or a composition run (``--algo
linear``: ``linear-model.json``) given as ``--policy`` gets, besides the counter's pages, its

* learning curve (``metrics.csv``): the EV with its bets, its paired gains with their 95% CIs over
  basic strategy and over Hi-Lo I18 + Fab 4 with the EV-maximising use of the same bets, the flat-bet
  gain over basic strategy, and (a run trained with ``--ceiling``) the flat-bet share of the
  ceiling, each against rounds and against wall time;
* learned ramp: the bet and the learned round value per count bucket. A count-table run's values
  and CIs come from its statistics (``count_table.npz`` with ``agent.json``) where the folder keeps
  them, else the bets alone come from the exported ramp (and the report says so); a composition
  model's round value by Hi-Lo true count is the one its betting weights give at the composition
  expected at that count (:func:`implied_slope`). Beside them, this report's own simulated EV per
  unit bet by count, with CIs;
* learned deviations beside the generated indices of the same system (the solver's
  ``generate_indices``), each question marked as agreeing, differing, learned only or generated
  only; for a composition model, the index its weights imply along the Hi-Lo count;
* for a composition model, the learned count: its betting weights per value A..T as tags, beside
  the built-in systems' tags, scaled alike (balanced, the ten's tag -1), with each system's
  correlation with it.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from blackjack_env import engine as E
from blackjack_env.agents.count_table import STATS_FILE, CountTableAgent, bucket_spec
from blackjack_env.counting import (
    CARDS_MARK,
    ENTRY_KEYS,
    SYSTEMS,
    VALUE_WEIGHTS,
    VALUES,
    CountingStrategy,
    CountingSystem,
    IndexEntry,
)
from blackjack_env.linear_policy import LinearModel
from blackjack_env.rules import Rules
from blackjack_env.simulate import Z95, Policy
from blackjack_env.solver import generate_indices
from blackjack_env.strategy import (
    N_PLAY,
    N_ROWS,
    N_UP,
    PAIR_BASE,
    StrategyTable,
    row_label,
    row_of_label,
    up_label,
    up_of_label,
)
from blackjack_env.train.trainer import METRICS_FILE

from ..columns import CURVE_COLUMNS
from ..options import CliError
from ..policies import AGENT_FILE, COUNTING_FILE, LINEAR_FILE, RULES_FILE

#: The ceiling columns of a run trained with ``--ceiling`` (may be NaN: a ceiling of 0 gain): the
#: flat-bet share of the ceiling and the share with its bets (``train/ceiling.py``).
SHARE_COLUMNS = ("flat_share", "flat_share_low", "flat_share_high", "bets_share", "bets_share_low", "bets_share_high")
#: The composition model's implied ramp and indices are drawn over these Hi-Lo true counts.
IMPLIED_COUNTS = np.arange(-8.0, 10.5, 0.5)
#: Systems drawn beside the learned count (all built-in systems are in its table).
COUNT_FIGURE_SYSTEMS = ("hilo", "halves", "omega2")
#: Each value's share of a full shoe (A, 2..9, T).
P_VALUE = VALUE_WEIGHTS / VALUE_WEIGHTS.sum()
KINDS = {"count-table": "the count-table learner", "composition": "the composition learner"}


@dataclass
class Learner:
    """What the learner's pages show (``to_dict`` is summary.json's ``learner``)."""

    kind: str  # "count-table" or "composition"
    source: str  # the run folder, or the model file
    system: CountingSystem  # the count its ramp and deviations are told by (Hi-Lo for a composition model)
    bets: tuple[float, ...]
    curve: list[dict[str, float]] | None
    ramp: list[dict[str, Any]]
    ramp_source: str
    deviations: list[dict[str, Any]] = field(default_factory=list)
    deviations_source: str = ""
    indices_note: str | None = None
    width: float = 1.0  # an index within this of the other agrees
    count_tags: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    rules_source: str | None = None  # the run's file the game was taken from (None: its folder keeps none)
    trained = "rounds trained"  # what the learning curve's steps count

    @property
    def title(self) -> str:
        return KINDS[self.kind]

    @property
    def count_name(self) -> str:
        return self.system.count_name

    @property
    def has_share(self) -> bool:
        return self.curve is not None and bool(self.curve) and all(c in self.curve[0] for c in SHARE_COLUMNS)

    def marks(self) -> tuple[dict[tuple[int, int], str], dict[tuple[int, int], str]]:
        """The chart's marks and frame colours by cell (row, up card): "L" the learned entry, "G" the
        generated one, the frame coloured by the worst status of the cell's questions."""
        marks: dict[tuple[int, int], str] = {}
        status: dict[tuple[int, int], str] = {}
        for d in self.deviations:
            if d["hand"] == "insurance":
                continue
            key = (d["row"], d["up_card"])
            lines = [f"{who[0].upper()} {d[who]}" for who in ("learned", "generated") if d[who]]
            marks[key] = "\n".join([*([marks[key]] if key in marks else []), *lines])
            order = list(STATUS)
            if key not in status or order.index(d["status"]) > order.index(status[key]):
                status[key] = d["status"]
        return marks, status

    def status_counts(self) -> dict[str, int]:
        return {s: sum(1 for d in self.deviations if d["status"] == s) for s in STATUS}

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "system": self.system.name,
            "bets": list(self.bets),
            "learning_curve": self.curve,
            "ramp": self.ramp,
            "ramp_source": self.ramp_source,
            "deviations": [{k: v for k, v in d.items() if k not in ("row", "up_card")} for d in self.deviations],
            "deviations_source": self.deviations_source,
            "deviation_status": self.status_counts(),
            "indices_note": self.indices_note,
            "agreement_width": self.width,
            "learned_count": self.count_tags,
            "notes": self.notes,
            "rules_source": self.rules_source,
        }


#: A question's status beside the generated indices, mildest first (the chart's frame colours).
STATUS = {
    "agree": ("#2e7d32", "agree (same play, index within the bucket width)"),
    "learned only": ("#1565c0", "learned only"),
    "generated only": ("#9e9e9e", "generated only"),
    "differ": ("#c62828", "differ (other direction or index)"),
}


# ----------------------------------------------------------------------------- which run
def learner_kind(spec: str, policy: Policy) -> str | None:
    """ "composition" for a composition model, "count-table" for a count-table run's folder, else None."""
    if policy.linear is not None:
        return "composition"
    path = Path(spec)
    if policy.counting is not None and path.is_dir() and (path / COUNTING_FILE).is_file():
        return "count-table"
    return None


def build_learner(
    spec: str, kind: str, rules: Rules, policy: Policy, basic: StrategyTable, rules_source: Path | None = None
) -> Learner:
    """The learner's pages for ``--policy spec`` (see the module docstring), played in ``rules``: the run's
    own game, read from ``rules_source`` (``policy_rules``), or where its folder keeps none the game given."""
    path = Path(spec)
    folder = path if path.is_dir() else path.parent
    notes: list[str] = []
    if rules_source is None:
        notes.append(
            f"{folder} keeps no {RULES_FILE} or {AGENT_FILE}: the run is played in the game --rules/--set give "
            f"({rules.describe()}), which may not be the one it learned in."
        )
    curve = None
    metrics = folder / METRICS_FILE
    if path.is_dir() and metrics.is_file():
        curve = read_learner_metrics(metrics)
    else:
        notes.append(f"No learning curve: {metrics} is not there.")
    # what the run learned, as its files keep it (a --spread given to the report changes what is played only)
    if kind == "count-table":
        learner = _count_table(folder, CountingStrategy.load(folder / COUNTING_FILE), rules, curve, notes)
    else:
        model = LinearModel.load(path / LINEAR_FILE if path.is_dir() else path)
        learner = _composition(model, rules, basic, curve, notes)
    learner.source = str(path)
    learner.rules_source = None if rules_source is None else str(rules_source)
    return learner


def has_hilo_flat(curve: list[dict[str, float]] | None) -> bool:
    """Whether a run's curve has Hi-Lo I18 + Fab 4's flat-bet gain on the same shoes (a network's has not)."""
    return curve is not None and len(curve) > 0 and "flat_gain_hilo" in curve[0]


def read_learner_metrics(path: Path) -> list[dict[str, float]]:
    """A shoe run's metrics.csv (``CURVE_COLUMNS``, and ``SHARE_COLUMNS`` where present), checked row by row."""
    return read_run_metrics(path, CURVE_COLUMNS, SHARE_COLUMNS, "a blackjack-train --env shoe run writes")


def read_run_metrics(
    path: Path,
    columns: tuple[str, ...],
    optional: tuple[str, ...] = (),
    writer: str = "a network's shoe run writes",
) -> list[dict[str, float]]:
    """A run's metrics.csv by step: ``columns`` (each a finite number) and ``optional`` where every one
    of them is there (numbers, NaN allowed: a share of a ceiling of 0); a CliError names a missing
    column or a bad line (``writer``: who writes the file, for the message)."""
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        names = reader.fieldnames or []
        missing = [c for c in columns if c not in names]
        if missing:
            raise CliError(f"{path}: missing column(s) {', '.join(missing)}; {writer} " + ", ".join(columns))
        read = columns + (optional if all(c in names for c in optional) else ())
        rows = []
        for line, record in enumerate(reader, start=2):
            try:
                row = {c: float(record[c]) for c in read}
            except (TypeError, ValueError):
                raise CliError(f"{path} line {line}: every column of {', '.join(read)} must be a number") from None
            if not all(math.isfinite(row[c]) for c in columns):
                raise CliError(f"{path} line {line}: {', '.join(columns)} must be finite")
            rows.append(row)
    if not rows:
        raise CliError(f"{path}: no rows after the header")
    return sorted(rows, key=lambda r: r["step"])


# ----------------------------------------------------------------------------- count-table
def _count_table(
    folder: Path, strategy: CountingStrategy, rules: Rules, curve: list[dict[str, float]] | None, notes: list[str]
) -> Learner:
    agent = None
    if (folder / "agent.json").is_file() and (folder / STATS_FILE).is_file():
        agent = CountTableAgent.load(folder)
    spec = agent.spec if agent is not None else bucket_spec(strategy.system, rules)
    if agent is not None:
        values, errs, weights = agent.round_values()
        bets = agent.bucket_bets()
        ramp = []
        for i in range(spec.n):
            finite = bool(np.isfinite(errs[i]))
            ramp.append(
                {
                    "count": spec.edge(i) if i else spec.lo,
                    "label": _bucket_label(spec, i),
                    "bet": float(bets[i]),
                    "value": float(values[i]) if weights[i] > 0 else None,
                    "ci95": [float(values[i] - Z95 * errs[i]), float(values[i] + Z95 * errs[i])] if finite else None,
                    "rounds": float(weights[i]),
                }
            )
        source = (
            f"the run's statistics ({STATS_FILE}): per {strategy.system.count_name} bucket the learned value per unit "
            "bet of the greedy policy's round (95% CI) and the greedy rounds behind it (weighted), and the bet the "
            "export takes from it"
        )
        bet_levels = agent.bets
    else:
        ramp = [
            {"count": count, "label": label, "bet": bet, "value": None, "ci95": None, "rounds": None}
            for (count, bet), label in zip(strategy.ramp, _ramp_labels(strategy.ramp), strict=True)
        ]
        source = (
            f"the exported ramp ({COUNTING_FILE}): the run folder keeps no statistics ({STATS_FILE} with agent.json), "
            "so the learned round values and their CIs are not known here; the simulated EV per unit bet by count "
            "is this report's own run"
        )
        bet_levels = tuple(sorted({bet for _, bet in strategy.ramp}))
    learned = [{**e.to_dict(), "gain_per_100": None} for e in strategy.indices]
    gains = _learned_gains(folder / COUNTING_FILE)
    for entry, gain in zip(learned, gains, strict=False):
        entry["gain_per_100"] = gain
    learner = Learner(
        "count-table", str(folder), strategy.system, bet_levels, curve, ramp, source, width=spec.width, notes=notes
    )
    learner.deviations_source = (
        f"the learned index entries ({COUNTING_FILE}) beside the solver's generated {strategy.system.name} indices "
        "for the same game"
    )
    _compare(learner, learned, rules, strategy.system)
    return learner


def _learned_gains(path: Path) -> list[float | None]:
    """Each exported entry's learned gain per 100 rounds (None where the file does not give one)."""
    try:
        items = json.loads(path.read_text()).get("indices", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [item.get("gain_per_100") if isinstance(item, dict) else None for item in items]


def _bucket_label(spec: Any, i: int) -> str:
    if i == 0:
        return f"< {spec.edge(1):+g}"
    if i == spec.n - 1:
        return f">= {spec.edge(i):+g}"
    return f"{spec.edge(i):+g} .. {spec.edge(i + 1):+g}"


def _ramp_labels(ramp: tuple[tuple[float, float], ...]) -> list[str]:
    if len(ramp) == 1:
        return ["any"]
    labels = [f"< {ramp[1][0]:+g}"]
    labels += [f"{c:+g} .. {ramp[i + 2][0]:+g}" for i, (c, _) in enumerate(ramp[1:-1])]
    return [*labels, f">= {ramp[-1][0]:+g}"]


# ----------------------------------------------------------------------------- indices side by side
def entry_key(entry: dict[str, Any]) -> tuple[str, str, str, str]:
    """(hand, up card, question, cards) of an index entry (an H entry is the stand question's). A
    two-card entry shares its key with an entry for any cards (the generated indices are read off
    two-card hands); an entry for hands of three or more cards has its own."""
    if entry["hand"] == "insurance":
        return ("insurance", "A", "I", "any")
    parsed = _parsed(entry)
    cards = "three_or_more" if parsed.cards == "three_or_more" else "any"
    return (entry["hand"], str(entry["up"]), parsed.stand_form[0], cards)


def _parsed(entry: dict[str, Any]) -> IndexEntry:
    return IndexEntry.from_dict({k: entry[k] for k in ENTRY_KEYS if k in entry}, "entry")


def entry_text(entry: dict[str, Any]) -> str:
    """An entry as the chart marks it: its play in stand form, ≥ or <, and the index to one decimal
    (e.g. "S≥+1"; summary.json keeps the index itself)."""
    note = ""
    if entry["hand"] == "insurance":
        action, when = "I", entry.get("when", "at_or_above")
    else:
        parsed = _parsed(entry)
        action, when = parsed.stand_form
        note = CARDS_MARK[parsed.cards]
    return f"{action}{'≥' if when == 'at_or_above' else '<'}{round(float(entry['index']), 1):+g}{note}"


def compare_entries(
    learned: list[dict[str, Any]], generated: list[dict[str, Any]], width: float
) -> list[dict[str, Any]]:
    """One row per question either side has: both texts, both gains, the index difference and the
    status (``STATUS``): agree where both say the same play in the same direction within ``width``."""
    rows: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for who, entries in (("learned", learned), ("generated", generated)):
        for entry in entries:
            key = entry_key(entry)
            row = rows.setdefault(
                key,
                {"hand": key[0], "up": key[1], "question": key[2], "cards": key[3], "learned": None, "generated": None},
            )
            row[who] = entry_text(entry)
            row[f"{who}_index"] = float(entry["index"])
            row[f"{who}_gain_per_100"] = entry.get("gain_per_100")
    out = []
    for row in rows.values():
        if row["learned"] and row["generated"]:
            same_way = row["learned"][:2] == row["generated"][:2]
            close = abs(row["learned_index"] - row["generated_index"]) <= width + 1e-9
            row["status"] = "agree" if same_way and close else "differ"
        else:
            row["status"] = "learned only" if row["learned"] else "generated only"
        if row["hand"] != "insurance":
            section, key = row["hand"].split()
            row["row"] = row_of_label({"pair": "pairs"}.get(section, section), key)
            row["up_card"] = up_of_label(row["up"])
        out.append(row)
    order = {"insurance": -1}
    return sorted(
        out, key=lambda r: (order.get(r["hand"], r.get("row", 0)), r.get("up_card", 0) % 10 or 10, r["cards"] != "any")
    )


def _compare(learner: Learner, learned: list[dict[str, Any]], rules: Rules, system: CountingSystem) -> None:
    """Fill the learner's deviations beside the generated indices (a note where they cannot be generated)."""
    generated: list[dict[str, Any]] = []
    try:
        generated = generate(rules, system)
    except ValueError as error:
        learner.indices_note = f"The {system.name} indices could not be generated for this game ({error})."
    learner.deviations = compare_entries(learned, generated, learner.width)


def generate(rules: Rules, system: CountingSystem) -> list[dict[str, Any]]:
    """The solver's generated indices for the game and system (cached on disk by the solver)."""
    return list(generate_indices(rules, system).entries)


# ----------------------------------------------------------------------------- composition
def implied_slope(weights: np.ndarray, system: CountingSystem) -> np.ndarray:
    """d value / d true count along the composition expected at a true count of ``system`` (balanced):
    the mean excess given the count, ``Sigma a t / (a' Sigma a)`` with ``a`` = -tags (a true count is
    ``-sum(tag_v e_v)``) and ``Sigma`` = diag(p) - p p', the shape of the excesses' covariance under
    random dealing. ``weights``: [..., N_FEATURES] (the intercept first); returns [...]."""
    a = -np.asarray(system.tags, dtype=float)
    sigma = np.diag(P_VALUE) - np.outer(P_VALUE, P_VALUE)
    direction = sigma @ a / float(a @ sigma @ a)
    return np.asarray(weights)[..., 1:] @ direction


def learned_tags(model: LinearModel) -> dict[str, Any]:
    """The betting weights as a count's tags (``balanced_tags``) beside every built-in system's, with
    the correlation of each with the learned one (weighted by each value's share of the shoe)."""
    raw = -np.asarray(model.bet[1:], dtype=float)  # more tens unseen = better: a ten seen counts down
    tags, scaled_to_ten = balanced_tags(raw)
    systems = {name: balanced_tags(np.asarray(s.tags, dtype=float))[0] for name, s in SYSTEMS.items()}
    return {
        "values": list(VALUES),
        "learned": [float(t) for t in tags],
        "raw_weights": [float(w) for w in model.bet[1:]],
        "scaled": "the ten's tag -1" if scaled_to_ten else "unit spread (the ten's tag is not negative)",
        "systems": {name: [float(t) for t in s] for name, s in systems.items()},
        "correlation": {name: correlation(tags, s) for name, s in systems.items()},
    }


def balanced_tags(tags: np.ndarray) -> tuple[np.ndarray, bool]:
    """Tags shifted to balance over a full shoe (which changes no true count: the excesses sum to 0)
    and scaled so the ten's tag is -1 (True), or to unit spread where the ten's is not negative."""
    centred = tags - float(P_VALUE @ tags)
    if centred[-1] < 0:
        return centred / -centred[-1], True
    spread = math.sqrt(float(P_VALUE @ centred**2)) or 1.0
    return centred / spread, False


def correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Correlation of two balanced tag vectors over the cards of a full shoe (a betting correlation)."""
    norm = math.sqrt(float(P_VALUE @ x**2) * float(P_VALUE @ y**2))
    return float(P_VALUE @ (x * y)) / norm if norm > 0 else math.nan


def implied_indices(model: LinearModel, basic: StrategyTable, rules: Rules) -> list[dict[str, Any]]:
    """The index entries a composition model's play weights imply along the Hi-Lo true count (at the
    composition expected there, ``implied_slope``): per question of a cell (surrender, split, double,
    stand, in the casino's order) its answer "yes" (that action's value above the best of the
    actions after it) on ``IMPLIED_COUNTS``; where that answer differs from basic strategy's on one
    side of a count, the entry is that count and side. Answers that flip more than once are left out.
    Insurance likewise, from the weights of taking it over declining without a natural."""
    hilo = SYSTEMS["hilo"]
    t = IMPLIED_COUNTS
    slopes = implied_slope(model.play, hilo)  # [row, up, action]
    lines = model.play[..., 0][..., None] + slopes[..., None] * t  # [row, up, action, count]
    order = ((E.SURRENDER, "R"), (E.SPLIT, "P"), (E.DOUBLE, "D"), (E.STAND, "S"))
    out: list[dict[str, Any]] = []
    if rules.insurance:
        take = model.insurance[0, 1] - model.insurance[0, 0]  # no natural: insure or not
        found = _threshold(take[0] + implied_slope(take, hilo) * t > 0, bool(basic.insurance[0]), t)
        if found is not None:
            out.append({"hand": "insurance", "up": "A", "index": found[0], "when": found[1]})
    for row in range(N_ROWS):
        pair = row >= PAIR_BASE
        for col in range(N_UP):
            tried = model.tried[row, col]
            allowed = {a for a in range(N_PLAY) if tried[a]}
            allowed -= set() if pair else {E.SPLIT}
            if rules.surrender != "late":
                allowed.discard(E.SURRENDER)
            basic_order = [int(a) for a in basic.actions[row, col]]
            for action, letter in order:
                if action not in allowed:
                    continue
                allowed.discard(action)
                if not allowed or (pair and letter not in ("R", "P")):
                    continue
                basic_first = next((a for a in basic_order if a in allowed | {action}), None)
                basic_yes = basic_first == action
                no = lines[row, col, sorted(allowed)].max(axis=0)
                yes = lines[row, col, action] > no
                entry = _threshold(yes, basic_yes, t)
                if entry is None:
                    continue
                index, when = entry
                section, key = row_label(row)
                hand = {"hard": "hard", "soft": "soft", "pairs": "pair"}[section] + " " + key
                out.append({"hand": hand, "up": up_label(col + 1), "index": index, "action": letter, "when": when})
    return out


def _threshold(yes: np.ndarray, basic_yes: bool, counts: np.ndarray) -> tuple[float, str] | None:
    """The one count where the learned answer ``yes`` (over ``counts``) leaves basic strategy's, as
    (index, "at_or_above" or "below" for the answer "yes"); None if it never does or flips twice."""
    differ = yes != basic_yes
    if not differ.any():
        return None
    flips = np.flatnonzero(yes[1:] != yes[:-1])
    if len(flips) != 1:
        return None
    k = int(flips[0]) + 1
    return float(counts[k]), "at_or_above" if yes[k] else "below"


def _composition(
    model: LinearModel, rules: Rules, basic: StrategyTable, curve: list[dict[str, float]] | None, notes: list[str]
) -> Learner:
    hilo = SYSTEMS["hilo"]
    slope = float(implied_slope(model.bet, hilo))
    ramp = []
    for t in IMPLIED_COUNTS[np.round(IMPLIED_COUNTS) == IMPLIED_COUNTS]:
        value = float(model.bet[0] + slope * t)
        bet = model.bets[-1] if value > 0 else model.bets[0]
        ramp.append({"count": float(t), "label": f"{t:+g}", "bet": bet, "value": value, "ci95": None, "rounds": None})
    source = (
        "the betting weights (linear-model.json) at the composition expected at each Hi-Lo true count (the mean "
        f"excess of each value given the count under random dealing): value = {model.bet[0]:+.5f} "
        f"{slope:+.5f} x true count; a line, with no CI (the run keeps no residuals); the model bets on the whole "
        "composition, not this line, and the simulated EV per unit bet by Hi-Lo true count is this report's own run"
    )
    learner = Learner("composition", "", hilo, model.bets, curve, ramp, source, notes=notes)
    learner.deviations_source = (
        "the index each cell's learned play weights imply along the Hi-Lo true count (at the composition expected "
        f"there, counts {IMPLIED_COUNTS[0]:+g} to {IMPLIED_COUNTS[-1]:+g} in steps of "
        f"{IMPLIED_COUNTS[1] - IMPLIED_COUNTS[0]:g}) beside the solver's generated Hi-Lo indices for the same game; "
        "the model itself plays on the whole composition"
    )
    learner.width = 1.0
    _compare(learner, implied_indices(model, basic, rules), rules, hilo)
    learner.count_tags = learned_tags(model)
    return learner
