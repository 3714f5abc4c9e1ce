"""blackjack-train: train a learner of the one-round game or the shoe, evaluating it against basic strategy.

    blackjack-train --algo tabular --steps 2e9 --out runs/tabular
    blackjack-train --algo ppo --rules vegas-strip --set decks=2 --steps 2e6 --eval-every 1e5 --out runs/ppo
    blackjack-train --out runs/ppo --resume --steps 4e6       # continue a run (its saved config)
    blackjack-train --algo count-table --bets 1,2,4,8 --seats 3 --set penetration=0.75 --out runs/count
    blackjack-train --algo composition --set penetration=0.75 --backend ray --workers 2 --out runs/linear
    blackjack-train --env shoe --algo linear --bets 1,2,4,8 --seats 3 --seat all --set penetration=0.75 --out runs/lin
    blackjack-train --algo shoe-ppo --system composition --bets 1,2,4,8 --set penetration=0.75 --out runs/shoe-ppo

``--algo`` names a learner (``train/registry.py``), ``--env`` the game, ``round`` (one round from a fresh
shoe) or ``shoe`` (the shoe played to its cut card, a bet before each round); a learner's name alone
says its game. The older spellings name the same learners: ``--env shoe --algo tabular`` is the
count-table learner (``train/shoe.py``: its steps are rounds, its export the counting strategy
``counting-strategy.json``), ``--env shoe --algo linear`` the composition learner (``train/linear.py``:
values linear in the unseen cards, ``linear-model.json``; it takes no ``--system``), ``--env shoe --algo
ppo`` MaskablePPO on BlackjackShoe-v0, its bets included (``train/shoe_ppo.py``: ``--system
hilo|composition`` is what it observes), and ``--env shoe --algo batch-ppo`` the batched PPO on the shoe.
The chunk learners' chunks can run on local processes or on Ray (``--backend local|ray --workers K``,
``train/backends.py``), the same run for any K; ``--ceiling`` adds their share of the ceiling to every
evaluation (``train/ceiling.py``). An option the learner does not read is refused in one line.

The run directory holds the agent (``agent.json``, ``strategy.json`` and ``q.npz`` or ``ppo.zip``,
so ``blackjack-evaluate --policy DIR`` plays it), ``rules.json``, ``config.json``, ``state.json``,
``metrics.csv`` (the learning curve) and ``tb/`` (TensorBoard). Every ``--eval-every`` steps the
current policy is evaluated (``train/trainer.py``): on the one-round game, as a strategy table,
simulated on the same cards as basic strategy (paired EV gap with a 95% interval), priced exactly by the
solver, and compared cell by cell (agreement); then a checkpoint is written. Ctrl-C finishes the
current chunk or PPO step, writes a checkpoint and exits; ``--resume`` continues from it with the same
step count and learning state.

Same seed, same run: the tabular learner is reproduced exactly (also across a resume: chunks are
seeded by their index); PPO is seeded everywhere (torch, envs), reproducible on one core, and its
checkpoint keeps the envs and random generators, so a resumed run equals an uninterrupted one.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from blackjack_env.env_kit import REWARD_MODES
from blackjack_env.evaluate.options import OneLineParser, add_ceiling_arguments, console_entry
from blackjack_env.rules import PRESETS

from .backends import BACKENDS
from .learner import GAMES
from .registry import LearnerEntry, algo_choices, check_options, default_game, entries, find, missing_modules
from .settings import Args
from .shoe import COUNT_TABLE_SYSTEM
from .trainer import STATE_FILE, Schedule, Trainer

#: What a resumed run may set anew; everything else comes from its config.json.
RESUME_MAY_CHANGE = ("steps", "out", "progress", "torch_threads", "backend", "workers", "ray_address")
#: Args fields with their own option above the hyperparameters.
RUN_SETTINGS = (
    *("algo", "rules", "settings", "steps", "seed", "out", "eval_every", "eval_rounds", "progress", "reward"),
    *("env", "system", "bets", "spread", "seats", "seat", "backend", "workers", "ray_address"),
    *("ceiling", "ceiling_samples", "ceiling_strata"),
)


def parse_count(text: str) -> int:
    """A whole number >= 1, also written like 2e6."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number such as 1000000 or 1e6, got {text!r}") from None
    if value < 1 or value != int(value):
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return int(value)


def build_parser() -> argparse.ArgumentParser:
    d = Args()
    p = OneLineParser(prog="blackjack-train", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--algo",
        choices=algo_choices(),
        default=None,
        help=f"learner (default {d.algo}): " + "; ".join(f"{e.name}: {describe(e)}" for e in entries()),
    )
    p.add_argument(
        "--env", choices=GAMES, default=None, help="the one-round game or the shoe game (default: the learner's own)"
    )
    shoe = p.add_argument_group("the shoe game (--env shoe)")
    shoe.add_argument(
        "--system",
        default=None,
        help=f"counting system: a built-in name or a JSON file (default: {COUNT_TABLE_SYSTEM} for the count-table "
        "learner, hilo for the networks)",
    )
    shoe.add_argument("--bets", default=None, help="allowed bets, increasing, 0 sits out (default 1,2,4,8)")
    shoe.add_argument("--spread", default=None, help="MIN-MAX: the bets MIN, doubling, up to MAX (1-8: 1,2,4,8)")
    shoe.add_argument("--seats", type=int, default=None, help="boxes at the table, 1-7 (default 1)")
    shoe.add_argument("--seat", default=None, help="the learner's box, or all (one policy in every box; default 0)")
    add_ceiling_arguments(
        shoe,  # type: ignore[arg-type]  # an argument group takes the same add_argument
        "add the learner's flat-bet share of the ceiling (and with its bets) to every evaluation in metrics.csv, "
        "the ceiling computed once for the run's game, seats and seat",
    )
    # None: not given (a resumed run keeps its own)
    p.set_defaults(ceiling=None, ceiling_samples=None, ceiling_strata=None)
    scale = p.add_argument_group("scale-out (--algo count-table or composition)")
    scale.add_argument("--backend", choices=BACKENDS, default=None, help="where chunks are played (default local)")
    scale.add_argument(
        "--workers", type=int, default=None, help="chunks played at once: local processes or Ray actors (default 1)"
    )
    scale.add_argument("--ray-address", default=None, help="a Ray cluster to join (default: start a local Ray)")
    p.add_argument("--rules", default=None, help=f"rules preset (default {d.rules}); one of: {', '.join(PRESETS)}")
    p.add_argument("--set", dest="settings", action="append", default=None, metavar="KEY=VALUE", help="rules field")
    p.add_argument(
        "--steps",
        type=parse_count,
        default=None,
        help="total env steps (default tabular 5e8, ppo 2e7, batch-ppo and both shoes 3e7; count-table and "
        "composition: rounds, 2e9 per learning seat at 6 decks dealt to 75%%, scaled to the game's shoe, e.g. "
        "4.6e8 at 1 deck dealt to 65%%, and --seats 3 --seat all takes a third); learners step in whole "
        "chunks or rollouts (ppo: n_envs x n_steps), so a run ends at the first boundary at or past this",
    )
    p.add_argument("--seed", type=int, default=None, help=f"seed of everything (default {d.seed})")
    p.add_argument("--out", default=None, help="run directory (default runs/ALGO-RULES-sSEED)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out with its saved config")
    p.add_argument("--eval-every", type=parse_count, default=None, help="steps between evaluations (default steps/20)")
    p.add_argument("--eval-rounds", type=parse_count, default=None, help=f"paired rounds (default {d.eval_rounds:g})")
    p.add_argument(
        "--reward",
        choices=tuple(REWARD_MODES),
        default=None,
        help="what the learner is paid: the dealt result, or its expectation over the dealer's unseen cards "
        "(same values, less noise, far slower per step; evaluation always plays the real game; default "
        + ", ".join(f"{e.name} {e.default_reward}" for e in entries())
        + ")",
    )
    p.add_argument("--no-progress", dest="progress", action="store_false", default=None, help="no progress bar")
    hyper = p.add_argument_group(
        "hyperparameters",
        "the networks' defaults are MaskablePPO's and batch-ppo's alike (train/batch_ppo.py BatchPPOConfig): "
        "n-envs is the tables, n-steps each table's steps per rollout, batch-size the minibatch",
    )
    for f in dataclasses.fields(Args):
        if f.name in RUN_SETTINGS:
            continue
        default = getattr(d, f.name)
        kind = parse_count if f.name == "chunk_steps" else type(default)
        hyper.add_argument("--" + f.name.replace("_", "-"), type=kind, default=None, help=f"default {default}")
    return p


def describe(entry: LearnerEntry) -> str:
    """A learner in --algo's help: what it learns, its games and its other spellings."""
    also = f", also {' or '.join(f'--env {entry.games[0]} --algo {a}' for a in entry.also)}" if entry.also else ""
    return f"{entry.about} ({'/'.join(entry.games)}{also})"


def resolve_args(ns: argparse.Namespace) -> Args:
    """Command line over (a resumed run's saved config, else) the defaults; the learner's options checked
    against what its registry entry reads."""
    given = {k: v for k, v in vars(ns).items() if v is not None and k != "resume"}
    if ns.resume:
        if not ns.out:
            raise ValueError("--resume needs --out DIR (the run to continue)")
        config = Path(ns.out) / "config.json"
        if not config.is_file():
            raise ValueError(f"--resume: {config} does not exist (no run there to continue)")
        saved = json.loads(config.read_text())["args"]
        saved.setdefault("reward", "sampled")  # runs from before the option was paid the dealt result
        saved.setdefault("sync_chunks", 1)  # runs from before the option refreshed the policy every chunk
        saved.setdefault("depth_bands", 1)  # composition runs from before depth bands fitted one model
        changed = [k for k, v in given.items() if k not in RESUME_MAY_CHANGE and v != saved.get(k)]
        if changed:
            raise ValueError(f"--resume keeps the run's config; these differ from it: {', '.join(sorted(changed))}")
        args = Args(**{**saved, **given})
    else:
        args = Args(**given)
        if "env" not in given:
            args.env = default_game(args.algo)
    if args.env not in GAMES:
        raise ValueError(f"--env must be one of {', '.join(GAMES)}, got {args.env!r}")
    entry = find(args.algo, args.env)
    check_options(entry, args.algo, given)
    if entry.defaults is not None and not ns.resume:
        check_installed(entry, args.algo)
        for name, value in entry.defaults().items():
            if name not in given:
                setattr(args, name, value)
    if args.steps == 0:
        args.steps = entry.default_steps(args)
    if not args.reward:
        args.reward = entry.default_reward
    if not args.out:
        args.out = f"runs/{args.algo}-{args.rules}-s{args.seed}"
    if args.eval_every == 0:
        args.eval_every = max(args.steps // 20, 1)
    if args.reward not in REWARD_MODES:
        raise ValueError(f"--reward must be one of {', '.join(REWARD_MODES)}, got {args.reward!r}")
    return args


def check_installed(entry: LearnerEntry, algo: str) -> None:
    """A learner's optional dependencies (the ``train`` extra): said in one line before anything is written."""
    missing = missing_modules(entry)
    if missing:
        raise ValueError(
            f"--algo {algo} needs {', '.join(missing)}: pip install 'blackjack-env[train]' "
            "(for a CPU-only torch, install it first: pip install torch --index-url https://download.pytorch.org/whl/cpu)"
        )


def train(args: Args, resume: bool = False) -> int:
    """Run (or continue) training; returns the exit status."""
    entry = find(args.algo, args.env)
    check_installed(entry, args.algo)
    rules = args.game()
    config = entry.config_of(args, rules)  # every bad value refused in one line, before anything is written
    out = Path(args.out)
    if not resume and (out / STATE_FILE).exists():
        raise ValueError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    if resume and not (out / STATE_FILE).exists():
        raise ValueError(f"{out} has no checkpoint yet (no {STATE_FILE}); start it again without --resume")
    out.mkdir(parents=True, exist_ok=True)
    (out / "rules.json").write_text(json.dumps(rules.to_dict(), indent=2))
    (out / "config.json").write_text(
        json.dumps({"args": dataclasses.asdict(args), "rules": rules.describe()}, indent=2)
    )
    learner = entry.start(config, rules, out, resume)
    schedule = Schedule(args.steps, args.eval_every, args.eval_rounds, args.seed, args.progress)
    return Trainer(learner, schedule, out).run(resume)


@console_entry("blackjack-train")
def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    try:
        args = resolve_args(ns)
        return train(args, resume=ns.resume)
    except ValueError as error:
        print(f"blackjack-train: error: {error}", file=sys.stderr)
        return 2


__all__ = ["build_parser", "main", "resolve_args", "train"]


if __name__ == "__main__":
    sys.exit(main())
