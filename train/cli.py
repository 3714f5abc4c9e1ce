"""blackjack-train: train a tabular or MaskablePPO agent, evaluating it against basic strategy.

    blackjack-train --algo tabular --steps 2e9 --out runs/tabular
    blackjack-train --algo ppo --rules vegas-strip --set decks=2 --steps 2e6 --eval-every 1e5 --out runs/ppo
    blackjack-train --out runs/ppo --resume --steps 4e6       # continue a run (its saved config)
    blackjack-train --env shoe --system hilo --bets 1,2,4,8 --seats 3 --set penetration=0.75 --out runs/count
    blackjack-train --env shoe --algo linear --set penetration=0.75 --backend ray --workers 2 --out runs/linear
    blackjack-train --env shoe --algo linear --bets 1,2,4,8 --seats 3 --seat all --set penetration=0.75 --out runs/lin
    blackjack-train --env shoe --algo ppo --system composition --bets 1,2,4,8 --set penetration=0.75 --out runs/shoe-ppo

``--env shoe`` learns the shoe game (the count-table learner, ``train/shoe.py``): its steps are
rounds, and the run directory holds the learned counting strategy (``counting-strategy.json``),
which ``blackjack-evaluate --policy DIR`` plays. Its chunks can run on local processes or on Ray
(``--backend local|ray --workers K``, ``train/backends.py``), the same run for any K.
``--env shoe --algo linear`` is the composition learner
(``train/linear.py``: values linear in the unseen cards, ``linear-model.json``; it takes no ``--system``).
``--env shoe --algo ppo`` trains MaskablePPO on
BlackjackShoe-v0 instead, its bets included (``train/shoe_ppo.py``: ``--system hilo|composition`` is what it
observes; it is evaluated in the vector env, paired with basic strategy on identical shoes).
``--ceiling`` adds the count-table and composition learners' share of the ceiling to every evaluation
(``train/ceiling.py``).

The run directory holds the agent (``agent.json``, ``strategy.json`` and ``q.npz`` or ``ppo.zip``,
so ``blackjack-evaluate --policy DIR`` plays it), ``rules.json``, ``config.json``, ``state.json``,
``metrics.csv`` (the learning curve) and ``tb/`` (TensorBoard). Every ``--eval-every`` steps the
current policy, as a strategy table, is simulated on the same cards as basic strategy (paired EV
gap with a 95% interval), priced exactly by the solver, and compared cell by cell (agreement);
then a checkpoint is written. Ctrl-C finishes the current chunk or PPO step, writes a checkpoint
and exits; ``--resume`` continues from it with the same step count and learning state.

Same seed, same run: the tabular learner is reproduced exactly (also across a resume: chunks are
seeded by their index); PPO is seeded everywhere (torch, envs), reproducible on one core, and its
checkpoint keeps the envs and random generators, so a resumed run equals an uninterrupted one.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import importlib.util
import json
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from blackjack_env.agents.tabular import TabularAgent
from blackjack_env.env_kit import REWARD_MODES
from blackjack_env.evaluate.options import CEILING_SAMPLES, CEILING_STRATA, OneLineParser, add_ceiling_arguments
from blackjack_env.ray_cluster import check_address
from blackjack_env.rules import DEFAULT_PRESET, PRESETS, Rules
from blackjack_env.solver import solve
from blackjack_env.strategy import StrategyTable

from .backends import BACKENDS, DEFAULT_SYNC_CHUNKS, check_backend
from .ceiling import check_ceiling_args
from .evaluation import METRIC_COLUMNS, evaluate_table
from .linear import LinearTrainer, check_linear_args
from .ppo import PPOTrainer
from .scalars import ScalarWriter
from .shoe import CountTableTrainer, budget_line, check_count_table_args, default_rounds
from .shoe_ppo import ShoePPOTrainer, shoe_arguments_of

ALGOS = ("tabular", "ppo", "linear", "batch-ppo")  # linear: the composition learner, --env shoe only
LR_SCHEDULES = ("constant", "linear")
#: Steps a run takes unless told: about 40 s of tabular learning (about 0.015 pp from basic
#: strategy), and 2e6 steps of PPO (0.05-0.2 pp from it).
DEFAULT_STEPS = {"tabular": 500_000_000, "ppo": 2_000_000, "linear": 300_000_000, "batch-ppo": 30_000_000}
#: What each learner is paid unless told: whichever closes the gap to basic strategy sooner in wall
#: time (the docs' learning results). The expected reward removes the dealer's noise, but walks the
#: dealer's outcomes every round: PPO's network is the bottleneck and gains (0.43 -> 0.17 pp at 2M
#: steps), while the compiled tabular learner would run about 100x slower, which no gain per step repays.
#: batch-ppo is paid the dealt result: the compiled engine steps it ~40x faster than the expectation,
#: which would be most of its loop's time.
DEFAULT_REWARD = {"tabular": "sampled", "ppo": "expected", "linear": "sampled", "batch-ppo": "sampled"}
#: The modules --algo ppo needs (the ``train`` extra); batch-ppo needs torch alone.
PPO_MODULES = ("torch", "stable_baselines3", "sb3_contrib")
NEURAL = ("ppo", "batch-ppo")  # learners of the shoe game round by round, evaluated in the vector env
#: --algo batch-ppo: each hyperparameter option and its field of train/batch_ppo.py's BatchPPOConfig,
#: whose defaults it takes unless given.
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
#: What a resumed run may set anew; everything else comes from its config.json.
RESUME_MAY_CHANGE = ("steps", "out", "progress", "torch_threads", "backend", "workers", "ray_address")
#: Args fields with their own option above the hyperparameters.
RUN_SETTINGS = (
    *("algo", "rules", "settings", "steps", "seed", "out", "eval_every", "eval_rounds", "progress", "reward"),
    *("env", "system", "bets", "spread", "seats", "seat", "backend", "workers", "ray_address"),
    *("ceiling", "ceiling_samples", "ceiling_strata"),
)
#: The options that say where and how a shoe learner's chunks run (train/backends.py).
SCALE_OUT = ("backend", "workers", "ray_address", "sync_chunks")
ENVS = ("round", "shoe")
STATE_FILE = "state.json"
METRICS_FILE = "metrics.csv"


@dataclass
class Args:
    """Every setting of a run (saved as config.json; a resumed run reads it back)."""

    algo: str = "tabular"
    env: str = "round"  # "shoe": the shoe game (train/shoe.py), its steps are rounds
    system: str = "hilo"  # --env shoe: the counting system (a name or a JSON file)
    bets: str = ""  # --env shoe: the allowed bets ("" and no spread: 1,2,4,8)
    spread: str = ""
    seats: int = 1
    seat: str = "0"  # a seat, or "all"
    # --env shoe --algo tabular|linear: every evaluation's share of the ceiling (train/ceiling.py)
    ceiling: bool = False
    ceiling_samples: int = CEILING_SAMPLES
    ceiling_strata: int = CEILING_STRATA
    # --env shoe --algo tabular|linear: where the chunks are played (train/backends.py); not part of
    # the run's meaning (a resume may change them), unlike sync_chunks below
    backend: str = "local"
    workers: int = 1
    ray_address: str = ""
    rules: str = DEFAULT_PRESET
    settings: list[str] = field(default_factory=list)
    steps: int = 0  # 0: the learner's default, DEFAULT_STEPS
    seed: int = 0
    out: str = ""
    eval_every: int = 0  # 0: steps / 20
    eval_rounds: int = 1_000_000
    progress: bool = True
    # what the learner is paid: "sampled" (the dealt result) or "expected" (the env option that
    # averages out the dealer's unseen cards: same values, less noise). "": DEFAULT_REWARD[algo].
    # Evaluation always plays the real game.
    reward: str = ""
    # tabular Monte Carlo control
    epsilon: float = 0.1
    chunk_steps: int = 1 << 18
    # --env shoe: the policy chunks play with is refreshed every sync_chunks chunks, whatever the
    # backend and worker count (train/backends.py; the default measured in the docs' learning-to-count results)
    sync_chunks: int = DEFAULT_SYNC_CHUNKS
    # --env shoe --algo linear: the exported model bets a Kelly fraction of a bankroll (table units; 0: the
    # EV-maximising bet; blackjack_env/linear_policy.py linear_bet)
    kelly: float = 0.0
    bankroll: float = 0.0
    # MaskablePPO (measured in the docs' learning results: gamma 1, a 256x256 net, entropy bonus)
    # on the compiled VecEnv (blackjack_env.sb3): 250 tables in one call. The whole learning loop
    # runs 1.7-1.9x as many steps per second as on SB3's DummyVecEnv of 8 single envs
    # (benchmarks/deep_rl_speed.py, both games: 64, 250, 256, 1000 and 1024 tables measure alike,
    # the 10 epochs of updates being ~80% of the time; 8 tables 1.1x); 250 x 64 keeps the rollout
    # of 16,000 steps whole
    n_envs: int = 250
    # rollouts of 250 x 64 = 16,000 steps, 4x the old 4,096: each update sees more hands of the rare
    # close cells (0.05-0.14 pp at 2M steps over six seeds, where 4,096 left 0.12 and 0.52 pp
    # on two); 2e6 is a whole number of rollouts, so a default run ends at exactly 2M steps
    n_steps: int = 64
    batch_size: int = 4000
    n_epochs: int = 10
    learning_rate: float = 1e-3
    lr_schedule: str = "linear"  # down to 0 at --steps (a resume with more steps stretches it), or "constant"
    gamma: float = 1.0
    gae_lambda: float = 1.0
    ent_coef: float = 0.01  # keeps rarely right actions (surrender, double) explored: 0 plateaus at 0.4 pp
    net_arch: str = "256,256"
    # --algo batch-ppo, one-round game: the share of rounds dealt a random two-card hand (exploring
    # starts; train/batch_ppo.py BatchPPOConfig.explore_starts, measured there); 0 elsewhere
    explore_starts: float = 0.0
    # torch's intra-op threads; 0: torch's default (one per core). 1 is the fastest measured for this
    # small network (the docs' training guide): with a thread per core, torch's pool spins
    # against any other busy process, 13x slower on a busy 2-core machine, for identical results
    torch_threads: int = 1


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
    p.add_argument("--algo", choices=ALGOS, default=None, help=f"learner (default {d.algo})")
    p.add_argument("--env", choices=ENVS, default=None, help="the one-round game (default) or the shoe game")
    shoe = p.add_argument_group("the shoe game (--env shoe)")
    shoe.add_argument("--system", default=None, help="counting system: a built-in name or a JSON file (default hilo)")
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
    scale = p.add_argument_group("scale-out (--env shoe --algo tabular|linear)")
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
        help="total env steps (default tabular 5e8, ppo 2e6; --env shoe tabular and linear: rounds, 2e9 per "
        "learning seat, so --seats 3 --seat all 6.7e8); learners step in whole chunks or rollouts "
        "(ppo: n_envs x n_steps), so a run ends at the first boundary at or past this",
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
        + ", ".join(f"{algo} {reward}" for algo, reward in DEFAULT_REWARD.items())
        + ")",
    )
    p.add_argument("--no-progress", dest="progress", action="store_false", default=None, help="no progress bar")
    hyper = p.add_argument_group(
        "hyperparameters",
        "defaults are MaskablePPO's; --algo batch-ppo has its own (train/batch_ppo.py BatchPPOConfig: "
        "n-envs is its tables, n-steps each table's steps per rollout, batch-size its minibatch)",
    )
    for f in dataclasses.fields(Args):
        if f.name in RUN_SETTINGS:
            continue
        default = getattr(d, f.name)
        kind = parse_count if f.name == "chunk_steps" else type(default)
        hyper.add_argument("--" + f.name.replace("_", "-"), type=kind, default=None, help=f"default {default}")
    return p


def resolve_args(ns: argparse.Namespace) -> Args:
    """Command line over (a resumed run's saved config, else) the defaults."""
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
        changed = [k for k, v in given.items() if k not in RESUME_MAY_CHANGE and v != saved.get(k)]
        if changed:
            raise ValueError(f"--resume keeps the run's config; these differ from it: {', '.join(sorted(changed))}")
        args = Args(**{**saved, **given})
    else:
        args = Args(**given)
    if args.env not in ENVS:
        raise ValueError(f"--env must be one of {', '.join(ENVS)}, got {args.env!r}")
    if args.env == "round" and args.algo == "linear":
        raise ValueError("--algo linear learns the shoe game (values linear in the unseen cards): add --env shoe")
    if args.algo == "linear" and "system" in given:
        raise ValueError("--system is not used by --algo linear: it sees every value of the unseen cards, not a count")
    if args.algo != "linear" and ("kelly" in given or "bankroll" in given):
        raise ValueError("--kelly and --bankroll only with --env shoe --algo linear (the composition model's bet)")
    if args.env == "round":
        shoe_only = [f"--{k}" for k in ("system", "bets", "spread", "seats", "seat") if k in given]
        if shoe_only:
            raise ValueError(f"{', '.join(shoe_only)} only with --env shoe")
    scaled = [f"--{k.replace('_', '-')}" for k in SCALE_OUT if k in given]
    if scaled and (args.env != "shoe" or args.algo in NEURAL):
        raise ValueError(f"{', '.join(scaled)} only with --env shoe --algo tabular or linear")
    check_backend(args.backend, args.workers)
    if args.sync_chunks < 1:
        raise ValueError(f"--sync-chunks must be >= 1, got {args.sync_chunks}")
    ceiling = [f"--{k.replace('_', '-')}" for k in ("ceiling", "ceiling_samples", "ceiling_strata") if k in given]
    if ceiling and (args.env != "shoe" or args.algo in NEURAL):
        raise ValueError(f"{', '.join(ceiling)} only with --env shoe --algo tabular or linear")
    if "epsilon" in given and args.env == "shoe" and args.algo == "tabular":
        raise ValueError(
            "--epsilon is not used by the count-table learner (--env shoe --algo tabular): it explores "
            "by rolling out every legal answer of each decision on the same cards"
        )
    if args.steps == 0 and args.env == "shoe" and args.algo not in NEURAL:
        # 2e9 rounds per learning seat (train/shoe.py SEAT_ROUNDS)
        args.steps = default_rounds(args.seats, args.seat)
    elif args.steps == 0:
        args.steps = DEFAULT_STEPS[args.algo]
    if not args.reward:
        args.reward = DEFAULT_REWARD[args.algo]
    if not args.out:
        args.out = f"runs/{args.algo}-{args.rules}-s{args.seed}"
    if args.eval_every == 0:
        args.eval_every = max(args.steps // 20, 1)
    if not 0.0 < args.epsilon < 1.0:
        raise ValueError(f"--epsilon must be in (0, 1), got {args.epsilon}")
    if args.lr_schedule not in LR_SCHEDULES:
        raise ValueError(f"--lr-schedule must be one of {', '.join(LR_SCHEDULES)}, got {args.lr_schedule!r}")
    if args.torch_threads < 0:
        raise ValueError(f"--torch-threads must be >= 0 (0: one per core), got {args.torch_threads}")
    if args.reward not in REWARD_MODES:
        raise ValueError(f"--reward must be one of {', '.join(REWARD_MODES)}, got {args.reward!r}")
    if args.explore_starts and args.algo != "batch-ppo":
        raise ValueError(f"--explore-starts is for --algo batch-ppo, not {args.algo}")
    if args.algo == "batch-ppo" and not ns.resume:
        check_learner_installed(args.algo)
        from .batch_ppo import BatchPPOConfig  # optional dependency: torch (the train extra)

        defaults = dataclasses.replace(BatchPPOConfig(), explore_starts=0.0) if args.env == "shoe" else BatchPPOConfig()
        for name, field_name in BATCH_PPO_FIELDS.items():
            if name not in given:
                value = getattr(defaults, field_name)
                setattr(args, name, ",".join(map(str, value)) if name == "net_arch" else value)
    if args.algo == "batch-ppo":
        batch_ppo_config(args)  # its own checks, before anything is written
    return args


def batch_ppo_config(args: Args) -> Any:
    """train/batch_ppo.py's config from a run's settings (one line per bad value)."""
    from .batch_ppo import BatchPPOConfig  # optional dependency: torch (the train extra)

    try:
        hidden = tuple(int(x) for x in args.net_arch.split(","))
    except ValueError:
        raise ValueError(f"--net-arch must be layer widths such as 128,128, got {args.net_arch!r}") from None
    for name in ("n_envs", "n_steps", "batch_size", "n_epochs"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if not 0.0 <= args.explore_starts <= 1.0:
        raise ValueError(f"--explore-starts must be a share from 0 to 1, got {args.explore_starts}")
    if args.explore_starts > 0 and args.env == "shoe":
        raise ValueError("--explore-starts is for the one-round game (--env round): a shoe is dealt as it comes")
    if any(h < 1 for h in hidden):
        raise ValueError(f"--net-arch must be layer widths >= 1, got {args.net_arch!r}")
    values = {field_name: getattr(args, name) for name, field_name in BATCH_PPO_FIELDS.items()}
    return BatchPPOConfig(
        **{**values, "hidden": hidden, "seed": args.seed, "total_steps": args.steps, "reward": args.reward}
    )


# ---------------------------------------------------------------------------- learners
class TabularTrainer:
    """Monte Carlo control chunks (see blackjack_env.agents.tabular); a chunk is the unit of checkpoints."""

    def __init__(self, args: Args, rules: Rules, out: Path, resume: bool) -> None:
        if resume:
            self.agent = TabularAgent.load(out)
        else:
            self.agent = TabularAgent(
                rules, epsilon=args.epsilon, seed=args.seed, chunk_steps=args.chunk_steps, reward=args.reward
            )
        self.behaviour_ev = 0.0

    @property
    def steps(self) -> int:
        return self.agent.steps

    def advance(self, target: int, stop: Any, progress: Any) -> None:
        while self.agent.steps < target and not stop():
            before = self.agent.steps
            _, self.behaviour_ev = self.agent.learn_chunk()
            progress(self.agent.steps - before)

    def train_scalars(self) -> dict[str, float]:
        return {"train/behaviour_ev": self.behaviour_ev}

    def table(self) -> StrategyTable:
        return self.agent.to_table()

    def save(self, out: Path) -> None:
        self.agent.save(out)


# ---------------------------------------------------------------------------- the run
def check_learner_installed(algo: str) -> None:
    """PPO needs the ``train`` extra (batch-ppo: torch): say so in one line before anything is written."""
    if algo not in NEURAL:
        return
    needed = ("torch",) if algo == "batch-ppo" else PPO_MODULES
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise ValueError(
            f"--algo {algo} needs {', '.join(missing)}: pip install 'blackjack-env[train]' "
            "(for a CPU-only torch, install it first: pip install torch --index-url https://download.pytorch.org/whl/cpu)"
        )


def check_shoe_args(args: Args, rules: Rules) -> None:
    """Everything --env shoe can refuse, before anything is written (one line each): the backend,
    --ceiling, then the learner's own checks."""
    if args.backend == "ray" and args.algo not in NEURAL:
        check_address(args.ray_address or None)  # a cluster that is not there: one line, before the run folder
    if args.ceiling:
        check_ceiling_args(args, rules)
    if args.algo in NEURAL:
        shoe_arguments_of(args, rules)
    elif args.algo == "linear":
        check_linear_args(args, rules)
    elif args.algo == "tabular":
        check_count_table_args(args, rules)
    else:
        raise ValueError(
            f"--env shoe --algo {args.algo} is not built yet; --env shoe takes --algo tabular, linear, ppo or batch-ppo"
        )


def train(args: Args, resume: bool = False) -> int:
    """Run (or continue) training; returns the exit status."""
    check_learner_installed(args.algo)
    rules = Rules.preset(args.rules).with_settings(args.settings)
    if args.env == "shoe":
        check_shoe_args(args, rules)
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
    trainer: Any
    if args.algo == "batch-ppo":
        trainer = batch_ppo_trainer(args, rules, out, resume)
        if args.env == "round":
            solution = solve(rules)
    elif args.env == "shoe" and args.algo == "ppo":
        trainer = ShoePPOTrainer(args, rules, out, resume)
    elif args.env == "shoe" and args.algo == "linear":
        trainer = LinearTrainer(args, rules, out, resume)
    elif args.env == "shoe":
        trainer = CountTableTrainer(args, rules, out, resume)
    else:
        solution = solve(rules)
        trainer = (TabularTrainer if args.algo == "tabular" else PPOTrainer)(args, rules, out, resume)
    if args.env == "shoe" and args.algo not in NEURAL:
        print(f"blackjack-train: {budget_line(args, trainer.steps)}", file=sys.stderr, flush=True)
    state = json.loads((out / STATE_FILE).read_text()) if resume else {"wall_s": 0.0}
    columns = getattr(trainer, "columns", METRIC_COLUMNS)
    metrics = MetricsLog(out / METRICS_FILE, keep_up_to=trainer.steps if resume else -1, columns=columns)
    writer = ScalarWriter(out / "tb")
    stop_requested = False

    def on_sigint(signum: int, frame: Any) -> None:
        nonlocal stop_requested
        stop_requested = True

    previous_handler = signal.signal(signal.SIGINT, on_sigint)
    bar = tqdm(total=args.steps, initial=trainer.steps, unit="step", unit_scale=True, disable=not args.progress)
    started = time.perf_counter() - state["wall_s"]

    def checkpoint() -> None:
        trainer.save(out)
        state.update(steps=trainer.steps, wall_s=time.perf_counter() - started)
        (out / STATE_FILE).write_text(json.dumps(state, indent=2))

    def evaluate() -> None:
        if args.env == "shoe":
            row = trainer.evaluate(args.eval_rounds, seed=args.seed + 1)
            keys: tuple[str, ...] = getattr(
                trainer, "scalar_keys", ("ev", "gain_vs_hilo", "gain_vs_basic", "flat_gain", "deviations")
            )
        else:
            row = evaluate_table(rules, trainer.table(), solution, args.eval_rounds, seed=args.seed + 1)
            keys = ("ev", "ev_gap", "exact_ev_gap", "agreement")
        row.update(step=trainer.steps, wall_s=time.perf_counter() - started)
        metrics.append(row)
        for key in keys:
            writer.add_scalar(f"eval/{key}", row[key], trainer.steps)
        for key, value in trainer.train_scalars().items():
            writer.add_scalar(key, value, trainer.steps)
        if args.env == "shoe":
            bar.set_postfix(
                vs_hilo_per100=f"{100 * row['gain_vs_hilo']:+.3f}", flat_per100=f"{100 * row['flat_gain']:+.3f}"
            )
        else:
            bar.set_postfix(exact_gap_pp=f"{100 * row['exact_ev_gap']:.3f}", agree=f"{row['agreement']:.3f}")

    try:
        if not metrics.rows:
            evaluate()  # the starting point of the learning curve
        while trainer.steps < args.steps and not stop_requested:
            next_eval = min((trainer.steps // args.eval_every + 1) * args.eval_every, args.steps)
            trainer.advance(next_eval, lambda: stop_requested, bar.update)
            if trainer.steps >= next_eval:
                evaluate()
            checkpoint()
        checkpoint()
    finally:
        if hasattr(trainer, "close"):
            trainer.close()
        bar.close()
        writer.close()
        signal.signal(signal.SIGINT, previous_handler)
    if stop_requested:
        print(f"interrupted at step {trainer.steps}: checkpoint in {out}; continue with --resume", file=sys.stderr)
        return 130
    last = metrics.rows[-1]
    if hasattr(trainer, "summary"):
        print(trainer.summary(last, state["wall_s"], out))
        return 0
    if args.env == "shoe":
        share = ""
        if "flat_share" in last:  # --ceiling (train/ceiling.py)
            share = (
                f", {100 * last['flat_share']:.1f}% of the ceiling [{100 * last['flat_share_low']:.1f}%, "
                f"{100 * last['flat_share_high']:.1f}%]"
            )
        print(
            f"{'composition' if args.algo == 'linear' else 'count-table'}: {trainer.steps} rounds in "
            f"{state['wall_s']:.1f} s; "
            f"per 100 rounds: EV {100 * last['ev']:+.3f}, "
            f"vs Hi-Lo I18+Fab4 {100 * last['gain_vs_hilo']:+.3f} [{100 * last['gain_vs_hilo_low']:+.3f}, "
            f"{100 * last['gain_vs_hilo_high']:+.3f}], flat-bet gain over basic {100 * last['flat_gain']:+.3f} "
            f"[{100 * last['flat_gain_low']:+.3f}, {100 * last['flat_gain_high']:+.3f}]{share}; strategy in "
            f"{out / ('linear-model.json' if args.algo == 'linear' else 'counting-strategy.json')}"
        )
        return 0
    print(
        f"{args.algo}: {trainer.steps} steps in {state['wall_s']:.1f} s; EV {last['ev']:+.5f}, "
        f"gap to basic strategy {last['ev_gap']:+.5f} [{last['ev_gap_low']:+.5f}, {last['ev_gap_high']:+.5f}] "
        f"(exact {last['exact_ev_gap']:+.6f}), agreement {last['agreement']:.4f}; run in {out}"
    )
    return 0


def batch_ppo_trainer(args: Args, rules: Rules, out: Path, resume: bool) -> Any:
    """train/batch_ppo.py's trainer of the run's game, on ``--torch-threads`` threads."""
    # optional dependency: torch (the train extra)
    import torch

    from .batch_ppo import BatchPPOTrainer, ShoeBatchPPOTrainer

    config = batch_ppo_config(args)
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    if args.env == "round":
        return BatchPPOTrainer(config, rules, out, resume)
    return ShoeBatchPPOTrainer(config, rules, out, resume, shoe_arguments_of(args, rules), args.eval_rounds)


class MetricsLog:
    """metrics.csv, rewritten whole on each row (a resumed run drops rows past its checkpoint)."""

    def __init__(self, path: Path, keep_up_to: int, columns: Sequence[str] = METRIC_COLUMNS) -> None:
        self.path = path
        self.columns = tuple(columns)
        self.rows: list[dict[str, float]] = []
        if keep_up_to >= 0 and path.is_file():
            with path.open(newline="") as f:
                self.rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
            self.rows = [r for r in self.rows if r["step"] <= keep_up_to]

    def append(self, row: dict[str, float]) -> None:
        self.rows.append(row)
        tmp = self.path.with_suffix(".tmp")
        with tmp.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self.columns)
            writer.writeheader()
            for r in self.rows:
                writer.writerow({k: (int(r[k]) if k == "step" else repr(float(r[k]))) for k in self.columns})
        tmp.replace(self.path)


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    try:
        args = resolve_args(ns)
        return train(args, resume=ns.resume)
    except ValueError as error:
        print(f"blackjack-train: error: {error}", file=sys.stderr)
        return 2


__all__ = ["Args", "build_parser", "main", "train"]


if __name__ == "__main__":
    sys.exit(main())
