"""The learners ``blackjack-train --algo`` knows, by name, each with the games it plays.

An entry says how a learner is configured from a run's settings (:class:`~blackjack_env.train.settings.Args`)
and made (new, or loaded to resume), which of the command's options it reads, its default budget and
reward, and the other ``--algo`` spellings that mean it in its games (``--algo tabular --env shoe`` is
the count-table learner). The command's ``--algo`` choices, its ``--env`` x ``--algo`` matrix and its
errors for an option a learner does not read all come from these entries, so a new learner is an
entry here (:func:`register`), not a change to the command.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blackjack_env.ray_cluster import check_address
from blackjack_env.rules import Rules

from .ceiling import CeilingConfig, check_ceiling
from .learner import GAMES, Learner
from .linear import CompositionConfig, CompositionLearner, composition_agent
from .ppo import PPOConfig, PPOLearner, layer_widths
from .settings import Args
from .shoe import (
    COUNT_TABLE_SYSTEM,
    ChunkRun,
    CountTableConfig,
    CountTableLearner,
    count_table_agent,
    default_rounds,
)
from .shoe_args import shoe_game_of
from .shoe_ppo import ShoePPOConfig, ShoePPOLearner, shoe_arguments_of
from .tabular import TabularConfig, TabularLearner

if TYPE_CHECKING:
    from .batch_ppo import BatchPPOConfig

#: The options every learner takes: the run's own, not a learner's (checked by the command itself).
RUN_OPTIONS = frozenset(
    ("algo", "env", "rules", "settings", "steps", "seed", "out", "eval_every", "eval_rounds", "progress", "reward")
)


@dataclass(frozen=True)
class LearnerEntry:
    """A learner as ``blackjack-train`` knows it."""

    name: str
    games: tuple[str, ...]  # of GAMES; a learner is chosen by --algo and the game (--env)
    about: str  # what it learns, in a few words (said when it is asked for the wrong game)
    #: Its typed config from a run's settings and rules, checked: one line per bad value, before
    #: anything is written.
    config_of: Callable[[Args, Rules], Any]
    #: The learner: new, or (resume) loaded from the run directory.
    start: Callable[[Any, Rules, Path, bool], Learner]
    options: frozenset[str] = frozenset()  # the Args fields it reads beyond RUN_OPTIONS
    also: tuple[str, ...] = ()  # other --algo names that mean it in its games
    default_steps: Callable[[Args], int] = lambda args: 1_000_000
    default_reward: str = "sampled"
    needs: tuple[str, ...] = ()  # modules it imports that the core install lacks
    #: Its own defaults for some options (Args fields), where they differ from Args'.
    defaults: Callable[[], dict[str, Any]] | None = None
    #: Why it refuses an option, where the reason helps more than naming the learners that take it.
    refusals: Mapping[str, str] = field(default_factory=dict)

    def spelling(self) -> str:
        """How today's command line names it: ``--algo NAME``, with ``--env`` where the game is not the
        one its --algo name means by default."""
        algo = self.also[0] if self.also else self.name
        env = self.games[0]
        return f"--algo {algo}" if env == default_game(algo) else f"--env {env} --algo {algo}"


_REGISTRY: dict[str, LearnerEntry] = {}


def register(entry: LearnerEntry) -> LearnerEntry:
    """Add a learner (or replace the one of its name); returns it."""
    bad = [g for g in entry.games if g not in GAMES]
    if not entry.games or bad:
        raise ValueError(f"learner {entry.name!r}: its games must be some of {', '.join(GAMES)}, got {entry.games}")
    _REGISTRY[entry.name] = entry
    return entry


def unregister(name: str) -> None:
    """Remove a learner (a test's own)."""
    _REGISTRY.pop(name, None)


def entries() -> tuple[LearnerEntry, ...]:
    """Every registered learner, in the order registered."""
    return tuple(_REGISTRY.values())


def algo_choices() -> tuple[str, ...]:
    """What --algo accepts: every learner's name and other spellings."""
    names: list[str] = []
    for entry in entries():
        names += [n for n in (entry.name, *entry.also) if n not in names]
    return tuple(names)


def default_game(algo: str) -> str:
    """The game an --algo means without --env: the game of the learner of that name, else the first."""
    entry = _REGISTRY.get(algo)
    return entry.games[0] if entry is not None else GAMES[0]


def find(algo: str, game: str) -> LearnerEntry:
    """The learner ``--algo algo --env game`` means; a ValueError that says which game it plays if none."""
    named = [e for e in entries() if algo == e.name or algo in e.also]
    for entry in named:
        if game in entry.games:
            return entry
    if not named:
        raise ValueError(f"--algo must be one of {', '.join(algo_choices())}, got {algo!r}")
    games = sorted({g for e in named for g in e.games})
    about = "; ".join(e.about for e in named)
    return _refuse(f"--algo {algo} learns the {' or '.join(games)} game ({about}): add --env {games[0]}")


def where(option: str) -> str:
    """The learners that read an option, as the command line spells them (for its errors)."""
    readers = [e for e in entries() if option in e.options]
    groups: dict[str, list[str]] = {}
    for entry in readers:
        spelled = entry.spelling()
        env, _, algo = spelled.rpartition("--algo ")
        if algo not in groups.setdefault(env, []):
            groups[env].append(algo)
    return " or ".join(f"{env}--algo {_either(algos)}" for env, algos in groups.items())


def check_options(entry: LearnerEntry, algo: str, given: Mapping[str, Any]) -> None:
    """Refuse, in one line, the given options that the learner does not read."""
    unread = [k for k in given if k not in RUN_OPTIONS and k not in entry.options]
    if not unread:
        return
    first = unread[0]
    if first in entry.refusals:
        spelled = f"--algo {algo}" if default_game(algo) in entry.games else f"--env {entry.games[0]} --algo {algo}"
        why = entry.refusals[first]
        raise ValueError(f"{_flag(first)} is not used by the {entry.name} learner ({spelled}): {why}")
    same = [k for k in unread if where(k) == where(first) and k not in entry.refusals]
    flags = [_flag(k) for k in same]
    listed = flags[0] if len(flags) == 1 else ", ".join(flags[:-1]) + " and " + flags[-1]
    raise ValueError(f"{listed} only with {where(first)}" if where(first) else f"{listed} is read by no learner")


def missing_modules(entry: LearnerEntry) -> list[str]:
    """The modules the learner needs that are not installed."""
    return [name for name in entry.needs if importlib.util.find_spec(name) is None]


def _flag(option: str) -> str:
    return "--" + option.replace("_", "-")


def _either(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _refuse(message: str) -> Any:
    raise ValueError(message)


__all__ = ["LearnerEntry", "algo_choices", "entries", "find", "register", "unregister"]


# ---------------------------------------------------------------------------- the built-in learners
SHOE_OPTIONS = frozenset(("bets", "spread", "seats", "seat"))
CHUNK_OPTIONS = frozenset(
    ("chunk_steps", "sync_chunks", "backend", "workers", "ray_address", "ceiling", "ceiling_samples", "ceiling_strata")
)
NET_OPTIONS = frozenset(
    ("n_envs", "n_steps", "batch_size", "n_epochs", "learning_rate", "lr_schedule", "gamma", "gae_lambda")
) | frozenset(("ent_coef", "net_arch", "torch_threads"))
TORCH = ("torch",)
SB3 = ("torch", "stable_baselines3", "sb3_contrib")


def _epsilon(args: Args) -> float:
    if not 0.0 < args.epsilon < 1.0:
        raise ValueError(f"--epsilon must be in (0, 1), got {args.epsilon}")
    return args.epsilon


def _tabular_config(args: Args, rules: Rules) -> TabularConfig:
    return TabularConfig(seed=args.seed, epsilon=_epsilon(args), chunk_steps=args.chunk_steps, reward=args.reward)


def _chunk_run(args: Args, rules: Rules, seats: int, seat: int) -> ChunkRun:
    """How a chunk learner's run plays and is evaluated; the backend and --ceiling checked."""
    if args.reward != "sampled":
        raise ValueError("--env shoe learns from the dealt results (--reward sampled)")
    ceiling = CeilingConfig(args.ceiling_samples, args.ceiling_strata) if args.ceiling else None
    run = ChunkRun(
        seed=args.seed,
        eval_rounds=args.eval_rounds,
        chunk_rounds=args.chunk_steps,
        sync_chunks=args.sync_chunks,
        backend=args.backend,
        workers=args.workers,
        ray_address=args.ray_address,
        ceiling=ceiling,
    )
    if run.backend == "ray":
        check_address(run.ray_address or None)  # a cluster that is not there: one line, before the run folder
    if ceiling is not None:
        check_ceiling(ceiling, rules, seats, seat)
    return run


def _count_table_config(args: Args, rules: Rules) -> CountTableConfig:
    game = shoe_game_of(args.bets, args.spread, args.seats, args.seat)
    config = CountTableConfig(args.system, game, _chunk_run(args, rules, game.seats, game.seat))
    count_table_agent(config, rules)  # everything the learner refuses, before anything is written
    return config


def _composition_config(args: Args, rules: Rules) -> CompositionConfig:
    game = shoe_game_of(args.bets, args.spread, args.seats, args.seat)
    run = _chunk_run(args, rules, game.seats, game.seat)
    config = CompositionConfig(
        game, run, epsilon=_epsilon(args), kelly=args.kelly, bankroll=args.bankroll, depth_bands=args.depth_bands
    )
    composition_agent(config, rules)
    return config


def _ppo_config(args: Args, rules: Rules) -> PPOConfig:
    return PPOConfig(
        seed=args.seed,
        total_steps=args.steps,
        n_envs=args.n_envs,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        learning_rate=args.learning_rate,
        lr_schedule=args.lr_schedule,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        ent_coef=args.ent_coef,
        net_arch=layer_widths(args.net_arch),
        reward=args.reward,
        torch_threads=args.torch_threads,
    )


def _shoe_of(args: Args, rules: Rules) -> dict[str, Any]:
    """The shoe env's arguments of a network learner."""
    game = shoe_game_of(args.bets, args.spread, args.seats, args.seat)
    return shoe_arguments_of(rules, args.system, game.bets, game.seats, game.seat)


def _shoe_ppo_config(args: Args, rules: Rules) -> ShoePPOConfig:
    return ShoePPOConfig(_ppo_config(args, rules), _shoe_of(args, rules), args.eval_rounds)


#: --algo batch-ppo: each option and its field of train/batch_ppo.py's BatchPPOConfig, whose defaults
#: it takes unless given.
BATCH_PPO_FIELDS = {
    "n_envs": "num_tables",
    "n_steps": "num_steps",
    "batch_size": "minibatch_size",
    "n_epochs": "update_epochs",
    "learning_rate": "learning_rate",
    "lr_schedule": "lr_schedule",
    "gamma": "gamma",
    "gae_lambda": "gae_lambda",
    "ent_coef": "ent_coef",
    "net_arch": "hidden",
    "explore_starts": "explore_starts",
}


@dataclass(frozen=True)
class BatchPPORun:
    """--algo batch-ppo's config, its torch threads, and on the shoe the env's arguments and evaluation."""

    config: BatchPPOConfig
    torch_threads: int = 1
    shoe: dict[str, Any] | None = None
    eval_rounds: int = 0


def _batch_ppo_defaults() -> dict[str, Any]:
    from .batch_ppo import BatchPPOConfig  # optional dependency: torch (the train extra)

    defaults = BatchPPOConfig()
    values = {name: getattr(defaults, f) for name, f in BATCH_PPO_FIELDS.items()}
    values["net_arch"] = ",".join(map(str, values["net_arch"]))
    return values


def _batch_ppo_config(args: Args, rules: Rules) -> BatchPPORun:
    from .batch_ppo import BatchPPOConfig  # optional dependency: torch (the train extra)

    hidden = layer_widths(args.net_arch)
    for name in ("n_envs", "n_steps", "batch_size", "n_epochs"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if not 0.0 <= args.explore_starts <= 1.0:
        raise ValueError(f"--explore-starts must be a share from 0 to 1, got {args.explore_starts}")
    if args.torch_threads < 0:
        raise ValueError(f"--torch-threads must be >= 0 (0: one per core), got {args.torch_threads}")
    values = {f: getattr(args, name) for name, f in BATCH_PPO_FIELDS.items()}
    config = BatchPPOConfig(
        **{**values, "hidden": hidden, "seed": args.seed, "total_steps": args.steps, "reward": args.reward}
    )
    if config.lr_schedule not in ("constant", "linear"):
        raise ValueError(f"--lr-schedule must be one of constant, linear, got {config.lr_schedule!r}")
    return BatchPPORun(config, args.torch_threads)


def _shoe_batch_ppo_config(args: Args, rules: Rules) -> BatchPPORun:
    run = _batch_ppo_config(args, rules)
    return BatchPPORun(run.config, run.torch_threads, _shoe_of(args, rules), args.eval_rounds)


def _start_batch_ppo(run: BatchPPORun, rules: Rules, out: Path, resume: bool) -> Learner:
    """train/batch_ppo.py's learner of the run's game, on its torch threads."""
    # optional dependency: torch (the train extra)
    import torch

    from .batch_ppo import BatchPPOLearner, ShoeBatchPPOLearner

    if run.torch_threads > 0:
        torch.set_num_threads(run.torch_threads)
    if run.shoe is None:
        return BatchPPOLearner(run.config, rules, out, resume)
    return ShoeBatchPPOLearner(run.config, rules, out, resume, run.shoe, run.eval_rounds)


def _steps(n: int) -> Callable[[Args], int]:
    return lambda args: n


def _shoe_rounds(args: Args) -> int:
    # 2e9 rounds per learning seat at 6 decks dealt to 75%, scaled to the game (train/shoe.py budget_scale)
    rules = args.game()
    try:
        return default_rounds(args.seats, args.seat, rules.decks, rules.penetration)
    except ValueError:  # no shoe to scale by: the learner refuses the game in its own words before it runs
        return default_rounds(args.seats, args.seat)


register(
    LearnerEntry(
        "tabular",
        ("round",),
        "Monte Carlo control over the strategy table's cells",
        _tabular_config,
        TabularLearner,
        options=frozenset(("epsilon", "chunk_steps")),
        # about 40 s of learning, about 0.015 pp from basic strategy
        default_steps=_steps(500_000_000),
    )
)
register(
    LearnerEntry(
        "count-table",
        ("shoe",),
        "playing and betting by the count",
        _count_table_config,
        CountTableLearner,
        options=frozenset(("system",)) | SHOE_OPTIONS | CHUNK_OPTIONS,
        also=("tabular",),
        default_steps=_shoe_rounds,
        defaults=lambda: {"system": COUNT_TABLE_SYSTEM},
        refusals={"epsilon": "it explores by rolling out every legal answer of each decision on the same cards"},
    )
)
register(
    LearnerEntry(
        "composition",
        ("shoe",),
        "values linear in the unseen cards",
        _composition_config,
        CompositionLearner,
        options=frozenset(("epsilon", "kelly", "bankroll", "depth_bands")) | SHOE_OPTIONS | CHUNK_OPTIONS,
        also=("linear",),
        default_steps=_shoe_rounds,
        refusals={"system": "it sees every value of the unseen cards, not a count"},
    )
)
# PPO is paid the expected reward: the dealer's noise removed gains more per step (0.43 -> 0.17 pp at
# 2M steps) than the slower env costs, its network being the bottleneck (the docs' learning results)
register(
    LearnerEntry(
        "ppo",
        ("round",),
        "MaskablePPO on the one-round game",
        _ppo_config,
        PPOLearner,
        options=NET_OPTIONS,
        default_steps=_steps(20_000_000),  # batch PPO's settings and steps: docs/results/learning.md
        default_reward="expected",
        needs=SB3,
    )
)
register(
    LearnerEntry(
        "shoe-ppo",
        ("shoe",),
        "MaskablePPO on the shoe, its bets included",
        _shoe_ppo_config,
        ShoePPOLearner,
        options=NET_OPTIONS | SHOE_OPTIONS | {"system"},
        also=("ppo",),
        # batched PPO's settings and steps on the shoe too: on seed 611 it learned to bet with the count,
        # +0.90 per 100 rounds scored on 1e7 (docs/results/learning-to-count.md)
        default_steps=_steps(30_000_000),
        default_reward="expected",
        needs=SB3,
    )
)
# batch-ppo is paid the expected result in both games: on the one-round game 2e7 steps of it ended closer to
# basic strategy than 3e7 dealt, and 3e7 of it put the network it exports within 0.02 pp on every seed tried,
# where 2e7 left one of sixteen at 0.023 (docs/results/learning.md); on the shoe, with the one-round game's entropy
# bonus, it learned to bet with the count and win on every seed where the dealt result learned to bet the
# minimum (docs/results/learning-to-count.md)
register(
    LearnerEntry(
        "batch-ppo",
        ("round",),
        "PPO in torch over thousands of tables",
        _batch_ppo_config,
        _start_batch_ppo,
        options=NET_OPTIONS | {"explore_starts"},
        default_steps=_steps(30_000_000),
        default_reward="expected",
        needs=TORCH,
        defaults=_batch_ppo_defaults,
    )
)
register(
    LearnerEntry(
        "shoe-batch-ppo",
        ("shoe",),
        "PPO in torch over thousands of shoes, its bets included",
        _shoe_batch_ppo_config,
        _start_batch_ppo,
        options=NET_OPTIONS | SHOE_OPTIONS | {"system"},
        also=("batch-ppo",),
        default_steps=_steps(30_000_000),
        default_reward="expected",
        needs=TORCH,
        defaults=_batch_ppo_defaults,
        refusals={"explore_starts": "it is for the one-round game (--env round); a shoe is dealt as it comes"},
    )
)
