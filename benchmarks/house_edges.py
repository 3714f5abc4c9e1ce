"""The exact analysis against published house edges, written to benchmarks/results/house-edges/.

For every published full-game figure in tests/data/published_game_ev.json (the Wizard of Odds
Appendix 9 and house edge calculator, blackjackinfo.com; each with its source and rules): the
solver's exact value for the same game, composition-dependent or total-dependent basic strategy as
the source states, off the top of a fresh shoe. Then basic strategy dealt to a cut card against the
published cut-card house edge (tests/data/published_cut_card.json), simulated. The docs' results
page is generated from the JSON this writes (docs/_ext/blackjack_docs/results_page.py).

    python benchmarks/house_edges.py [--rounds 1e8] [--seed 12]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from blackjack_env import Rules
from blackjack_env.evaluate.runner import simulate
from blackjack_env.simulate import Z95, Policy
from blackjack_env.solver import solve
from blackjack_env.solver._analysis import composition_ev

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
OUT = ROOT / "benchmarks" / "results" / "house-edges" / "house-edges.json"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=float, default=1e8, help="rounds of the cut-card simulation")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    game = json.loads((DATA / "published_game_ev.json").read_text())
    cases = []
    for kind, key in (("composition-dependent", "composition_dependent"), ("basic strategy", "basic_strategy")):
        for case in game[key]:
            rules = Rules(**{**game["common_rules"], **case["rules"]})
            exact = composition_ev(rules) if key == "composition_dependent" else solve(rules).ev
            cases.append(
                {
                    "name": case["name"],
                    "kind": kind,
                    "game": str(rules.describe()),
                    "rules": rules.to_dict(),
                    "published_ev": case["ev"],
                    "exact_ev": exact,
                    "basic_ev": solve(rules).ev,
                    "source": case["source"],
                }
            )
            print(f"{kind:<22} {case['name']:<32} published {case['ev']:+.7f}  exact {exact:+.7f}", flush=True)
    cut = json.loads((DATA / "published_cut_card.json").read_text())
    rules = Rules.from_dict({**Rules().to_dict(), **cut["rules"]})
    rounds = int(args.rounds)
    run = simulate(rules, Policy.from_table(solve(rules).table), rounds, seed=args.seed)
    edge, half = -100 * run.result.ev(), 100 * Z95 * run.result.stderr()
    print(f"cut card: {rules.describe()}  simulated house edge {edge:.4f}% +- {half:.4f}")
    result = {
        "command": "python benchmarks/house_edges.py"
        + (f" --rounds {args.rounds:g}" if args.rounds != 1e8 else "")
        + (f" --seed {args.seed}" if args.seed != 12 else ""),
        "games": cases,
        "cut_card": {
            "game": str(rules.describe()),
            "cut_card": cut["cut_card"],
            "published_house_edge_percent": cut["house_edge_percent"],
            "published_range_percent": cut["accepted_range_percent"],
            "sources": cut["sources"],
            "rounds": run.result.rounds,
            "seed": args.seed,
            "simulated_house_edge_percent": edge,
            "simulated_house_edge_percent_ci95": [edge - half, edge + half],
            "exact_off_the_top_house_edge_percent": -100 * solve(rules.replace(penetration=0.0)).ev,
        },
        "seconds": round(time.perf_counter() - start, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out} ({result['seconds']} s)")


if __name__ == "__main__":
    main()
