"""What a stale policy costs a shoe learner: --sync-chunks G against 1, paired on identical shoes.

    python benchmarks/sync_chunks.py --rounds 2e7 --sync 1,8,16
    python benchmarks/sync_chunks.py --learner linear --seat all --rounds 2e7 --sync 1,8

The game (default rules at 75% penetration, 3 seats, the learner in seat 0 or every seat),
chunks of 262,144 rounds. The learner is trained for --rounds rounds with each G (the policy chunks
play with refreshed every G chunks, train/backends.py; same seed), and once more with G = 1 on another
seed: the spread between two seeds is the yardstick for a difference between schedules. Each learned
policy is then played at seat 0 on identical shoes (--eval-rounds, one worker), against the G = 1
learner of the same seed: at a flat bet of 1 and with its bets 1, 2, 4, 8, the difference per 100
rounds with its 95% interval. A shorter run is the harder test: a period of G chunks is a larger
share of it.
"""

from __future__ import annotations

import argparse
import json
import time
from types import SimpleNamespace
from typing import Any

from blackjack_env.agents.count_table import CountTableAgent
from blackjack_env.agents.linear import LinearAgent
from blackjack_env.counting import system
from blackjack_env.evaluate.runner import simulate
from blackjack_env.rules import Rules
from blackjack_env.simulate import Z95, Policy, Table
from blackjack_env.train.backends import ChunkRunner, SerialBackend
from blackjack_env.train.linear import CompositionLearner
from blackjack_env.train.shoe import CountTableLearner


def train(learner: str, rules: Rules, seat: int, seed: int, sync_chunks: int, rounds: int) -> Any:
    """A learner trained for ``rounds`` rounds in this process with the policy refreshed every ``sync_chunks``."""
    agent: CountTableAgent | LinearAgent
    if learner == "linear":
        agent = LinearAgent(rules, bets=(1, 2, 4, 8), seats=3, seat=seat, seed=seed, chunk_rounds=1 << 18)
    else:
        agent = CountTableAgent(
            rules, system("hilo"), bets=(1, 2, 4, 8), seats=3, seat=seat, seed=seed, chunk_rounds=1 << 18
        )
    ChunkRunner(agent, sync_chunks, SerialBackend()).advance(rounds, lambda: False, lambda n: None)
    return agent


def policies(learner: str, agent: Any, rules: Rules) -> tuple[Policy, Policy]:
    """The learned policy with its bets and at a flat bet, exactly as the trainer evaluates it (its
    own method, given the only two attributes it reads)."""
    learner_class = CompositionLearner if learner == "linear" else CountTableLearner
    return learner_class.learned_policies(SimpleNamespace(agent=agent, rules=rules))  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learner", choices=("count-table", "linear"), default="count-table")
    parser.add_argument("--seat", choices=("0", "all"), default="0")
    parser.add_argument("--rounds", type=float, default=2e7)
    parser.add_argument("--sync", default="1,8,16", help="the G values (1 first: the reference)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--eval-rounds", type=float, default=2e7)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    rules = Rules.preset("ultimatebet").with_settings(["penetration=0.75"])
    seat = -1 if args.seat == "all" else 0
    syncs = [int(g) for g in args.sync.split(",")]
    runs = [(f"G={g}", args.seed, g) for g in syncs] + [(f"G=1 seed {args.seed + 1}", args.seed + 1, 1)]
    learned: dict[str, tuple[Policy, Policy]] = {}
    report: dict[str, Any] = {"args": vars(args), "train_s": {}, "flat": {}, "bets": {}}
    for name, seed, g in runs:
        clock = time.perf_counter()
        agent = train(args.learner, rules, seat, seed, g, int(args.rounds))
        report["train_s"][name] = time.perf_counter() - clock
        learned[name] = policies(args.learner, agent, rules)
        print(f"trained {name}: {agent.rounds} rounds in {report['train_s'][name]:.0f} s", flush=True)
        basic = agent.basic_table()
    names = list(learned)
    reference, others = names[0], names[1:]
    table = Table(3, 0, Policy.from_table(basic))
    n = int(args.eval_rounds)
    for kind, which in (("flat", 1), ("bets", 0)):
        run = simulate(
            rules,
            learned[reference][which],
            n,
            args.seed + 100,
            others=[learned[o][which] for o in others] + ([Policy.from_table(basic)] if kind == "flat" else []),
            table=table,
            workers=1,
        ).result
        for i, other in enumerate(others, start=1):
            mean, stderr, _ = run.diff(i)  # reference - other
            gap = -100 * mean  # other - reference, per 100 rounds
            report[kind][other] = {"diff_per_100": gap, "ci95": [gap - 100 * Z95 * stderr, gap + 100 * Z95 * stderr]}
            print(
                f"{kind}: {other} minus {reference}: {gap:+.3f} per 100 rounds "
                f"({gap - 100 * Z95 * stderr:+.3f} .. {gap + 100 * Z95 * stderr:+.3f}; {n:,} paired rounds)",
                flush=True,
            )
        if kind == "flat":
            mean, stderr, _ = run.diff(len(others) + 1)
            report["flat_gain_reference"] = 100 * mean
            print(f"flat: {reference} minus basic strategy: {100 * mean:+.3f} +- {100 * Z95 * stderr:.3f} per 100")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
