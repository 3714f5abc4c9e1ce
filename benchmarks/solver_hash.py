"""A fingerprint of what the exact analysis computes, to prove a solver refactor left its results alone.

Run it before and after a change to ``blackjack_env/solver`` and compare the printed hash: it is
equal exactly when, bit for bit, every optimised table and its per-cell EVs, frequencies and decision
sums, every evaluated table, the composition-dependent EVs, single hands' EVs, ``solve().to_json_dict()``,
the effects of removal and a few points of an index grid are the same, over six rule sets (one deck,
6D H17 DAS LS, an infinite deck, no hole card, early surrender, 2D no hole card without OBO).
The solver's disk cache is a fresh temporary folder, so nothing is read back from an earlier run.

    python benchmarks/solver_hash.py [--verbose]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import tempfile

import numpy as np

from blackjack_env import Rules
from blackjack_env.solver import effects_of_removal, hand_ev, solve
from blackjack_env.solver._analysis import analyse, composition_ev
from blackjack_env.solver.indices import _analyse_point, load_system, tilted_shoe
from blackjack_env.strategy import StrategyTable

RULE_SETS = (
    Rules(decks=1, hit_soft_17=False, double_after_split=False, surrender="none"),
    Rules(decks=6, hit_soft_17=True, double_after_split=True, surrender="late"),
    Rules(decks=0, surrender="late"),
    Rules(decks=6, peek=False, surrender="none"),
    Rules(decks=8, surrender="early", resplit_aces=True, hit_split_aces=True),
    Rules(decks=2, peek=False, obo=False, double_on="9-11", split_to=4),
)
#: (cards, up card) of the single hands priced exactly.
HANDS = (([10, 6], 10), ([8, 8], 10), ([1, 7], 9), ([5, 6], 1), ([2, 3, 4, 5], 6))
#: Index-grid points (true count, decks unseen) analysed for a Hi-Lo grid of the first two rule sets.
GRID_POINTS = ((-6.0, 2.0), (4.0, 1.5))


def _update(digest: hashlib._Hash, label: str, value: object, verbose: bool) -> None:
    """Add one named result: arrays by their exact bytes, everything else as canonical JSON."""
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value).tobytes() + str(value.dtype).encode() + str(value.shape).encode()
    else:
        data = json.dumps(value, sort_keys=True, default=float).encode()
    digest.update(label.encode() + b"\0" + data)
    if verbose:
        print(f"{hashlib.sha256(data).hexdigest()[:16]}  {label}")


def _analysis(digest: hashlib._Hash, label: str, result: object, verbose: bool) -> None:
    for name, value in dataclasses.asdict(result).items():
        _update(digest, f"{label}.{name}", np.asarray(value) if not isinstance(value, np.ndarray) else value, verbose)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print each result's own hash")
    args = parser.parse_args()
    os.environ["BLACKJACK_ENV_CACHE"] = tempfile.mkdtemp(prefix="bj-solver-hash-")
    digest = hashlib.sha256()
    tables: list[StrategyTable] = []
    for i, rules in enumerate(RULE_SETS):
        label = rules.describe()
        optimum = analyse(rules)
        _analysis(digest, f"{label} optimise", optimum, args.verbose)
        tables.append(StrategyTable(optimum.actions, optimum.insurance))
        solution = solve(rules, cache=False)
        _update(digest, f"{label} solve", solution.to_json_dict(), args.verbose)
        if i:  # another rule set's basic strategy, evaluated exactly under these rules
            _analysis(digest, f"{label} evaluate", analyse(rules, tables[i - 1]), args.verbose)
            deviations = [dataclasses.asdict(d) for d in solution.deviations(tables[i - 1])]
            _update(digest, f"{label} deviations", deviations, args.verbose)
        _update(digest, f"{label} composition", composition_ev(rules), args.verbose)
        for cards, up in HANDS:
            _update(digest, f"{label} hand {cards} v {up}", hand_ev(rules, cards, up), args.verbose)
            _update(digest, f"{label} hand {cards} v {up} by table", hand_ev(rules, cards, up, tables[i]), args.verbose)
    removal = effects_of_removal(RULE_SETS[0], cache=False)
    _update(digest, "removal", removal.to_json_dict(), args.verbose)
    hilo = load_system("hilo")
    for rules in RULE_SETS[:2]:
        for tc, decks in GRID_POINTS:
            point = _analyse_point(rules, tilted_shoe(rules, hilo, tc, decks))
            for name, value in point.items():
                _update(digest, f"{rules.describe()} grid {tc:+} @ {decks}: {name}", value, args.verbose)
    print(digest.hexdigest())


if __name__ == "__main__":
    main()
