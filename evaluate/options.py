"""Command-line pieces shared by ``blackjack-evaluate``, its ``report`` command and ``blackjack-strategy``.

They live here, not in one of those commands, so that no command module imports another
(``blackjack_env.evaluate.cli`` only reaches ``blackjack_env.evaluate.report`` lazily, to dispatch ``report``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

from tqdm import tqdm

from blackjack_env import __version__
from blackjack_env.engine import check_seat, check_seats
from blackjack_env.rules import DEFAULT_PRESET, PRESETS, Rules, field_names
from blackjack_env.simulate import Policy, Table
from blackjack_env.solver.ceiling import STRATA as CEILING_STRATA
from blackjack_env.solver.ceiling import ceiling, policy_bets

from . import runner
from .policies import POLICY_CHOICES, basic_strategy_table, load_agent_of, run_rules
from .runner import RunOutcome, default_workers

#: What a first compile of a simulation kernel takes on a 2-core machine, cold caches (the quick start's
#: first run: 11-11.5 s of CPU on an idle machine, ``benchmarks/first_step.py``; minutes at a high load
#: average): said before the compile so that a silent wait has a reason.
COMPILE_ESTIMATE = "about 10-20 s on 2 cores, minutes on a busy machine"


class CliError(Exception):
    """A bad argument: reported as one line, exit code 2."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors (a bad number, an unknown choice) are one line,
    ``PROG: error: ...``, exit code 2, like every other error of the commands: no usage block
    before the message (``--help`` shows it). Every command built on it answers ``--version``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.add_argument("--version", action="version", version=f"%(prog)s {__version__}")

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def parse_rounds(text: str) -> int:
    """Accept 1000000, 1e8 or 1_000_000."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"rounds must be a number such as 1000000 or 1e8, got {text!r}") from None
    if not math.isfinite(value) or value < 1 or value != int(value):
        raise argparse.ArgumentTypeError(f"rounds must be a whole number >= 1, got {text!r}")
    return int(value)


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def add_rules_arguments(parser: argparse.ArgumentParser, run_default: bool = False) -> None:
    """--rules PRESET and repeated --set key=value (shared by every command). ``run_default``: a learner
    run given as --policy plays in its own game unless --rules/--set are given (``policy_rules``)."""
    default = f"the game a learner run given as --policy was trained in, else {DEFAULT_PRESET}"
    parser.add_argument(
        "--rules",
        default=None if run_default else DEFAULT_PRESET,
        help=f"rules preset (default {default if run_default else DEFAULT_PRESET}); one of: {', '.join(PRESETS)}",
    )
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change one rules field, e.g. --set decks=2 --set hit_soft_17=no (repeatable)",
    )


def rules_from_args(args: argparse.Namespace) -> Rules:
    return Rules.preset(args.rules or DEFAULT_PRESET).with_settings(args.settings)


def policy_rules(args: argparse.Namespace) -> tuple[Rules, Path | None]:
    """The game ``--policy`` is played in, and the run's file it came from: a shoe learner's run plays in
    the game it was trained in (``run_rules``) where --rules and --set are left out, and given ones must
    be that game (else a CliError naming both); any other policy, or a run whose folder keeps no rules,
    plays the game --rules/--set give (None)."""
    given = rules_from_args(args)
    run = run_rules(args.policy)
    if run is None:
        return given, None
    rules, source = run
    if (args.rules is not None or args.settings) and given != rules:
        differ = [name for name in field_names() if getattr(given, name) != getattr(rules, name)]

        def fields(r: Rules) -> str:
            return ", ".join(f"{name}={getattr(r, name)}" for name in differ)

        raise CliError(
            f"--policy {args.policy} was trained in {rules.describe()} ({fields(rules)}; {source}), but --rules/--set "
            f"give {given.describe()} ({fields(given)}): leave them out to play the run's own game"
        )
    return rules, source


def table_from_args(args: argparse.Namespace, rules: Rules) -> Table:
    """Where the evaluated policy sits (--seats, --seat); the other boxes play basic strategy."""
    try:
        check_seats(args.seats, "--seats")
        check_seat(args.seat, args.seats, "--seat")
    except ValueError as error:
        raise CliError(str(error)) from None
    others = Policy.from_table(basic_strategy_table(rules)) if args.seats > 1 else None
    return Table(args.seats, args.seat, others)


def add_simulation_arguments(parser: argparse.ArgumentParser, policy: bool = True, run_default: bool = False) -> None:
    """--policy, --rules, --set, --rounds, --seed, --seats, --seat, --spread, --bankroll and --workers
    (shared by evaluate, report and sweep); ``policy=False`` leaves out --policy and --spread, for
    ``sweep``, which takes lists of strategies and spreads instead; ``run_default``: --rules defaults to a
    learner run's own game (``policy_rules``)."""
    if policy:
        parser.add_argument("--policy", default="basic", help=f"{POLICY_CHOICES} (default basic)")
    add_rules_arguments(parser, run_default)
    parser.add_argument("--rounds", type=parse_rounds, default=10_000_000, help="rounds to play (e.g. 1e8)")
    parser.add_argument("--seed", type=int, default=0, help="seed: the same seed gives the same result")
    parser.add_argument(
        "--seats", type=positive_int, default=1, help="boxes at the table, 1-7 (the others play basic strategy)"
    )
    parser.add_argument("--seat", type=int, default=0, help="the policy's box, 0..seats-1 (0 is dealt first)")
    if policy:
        parser.add_argument(
            "--spread",
            default=None,
            metavar="MIN-MAX",
            help="bet ramp of a counting strategy, e.g. 1-8: MIN up to a true count below +2, MAX from +5 "
            "(1-8: 1, 2, 4, 6, 8 at +1 .. +5); replaces the strategy's own ramp",
        )
    parser.add_argument(
        "--bankroll",
        type=positive_float,
        default=None,
        metavar="UNITS",
        help="bankroll in table-minimum units: also report the risk of ruin (exponential approximation)",
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        help=f"parallel workers (default: all {default_workers()} cores; on a Ray cluster, all of its CPUs)",
    )


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """--backend and --ray-address: where a run's chunks go (shared by evaluate and sweep)."""
    parser.add_argument("--backend", choices=("local", "ray"), default="local", help="where chunks run")
    parser.add_argument("--ray-address", default=None, help="Ray cluster address (default: start a local Ray)")


#: Round-start shoes a command's --ceiling analyses by default.
CEILING_SAMPLES = 600


def add_ceiling_arguments(parser: argparse.ArgumentParser, what: str, samples: str = "round-start shoes") -> None:
    """--ceiling, --ceiling-samples and --ceiling-strata (alias --strata) (blackjack-evaluate, its report
    and sweep; read by ``game_ceiling``): ``what`` says what --ceiling adds to the command, ``samples``
    what is sampled. A bad --ceiling-strata is argparse's one line, exit 2."""
    parser.add_argument(
        "--ceiling",
        action="store_true",
        help=f"{what} (blackjack-strategy --ceiling; needs a cut card; seconds per sampled shoe)",
    )
    parser.add_argument(
        "--ceiling-samples",
        type=int,
        default=CEILING_SAMPLES,
        help=f"{samples} the ceiling analyses (default {CEILING_SAMPLES})",
    )
    parser.add_argument(
        "--ceiling-strata",
        "--strata",
        dest="ceiling_strata",
        type=positive_int,
        default=CEILING_STRATA,
        metavar="K",
        help=f"strata of the ceiling's shoes by its gain predictor (default {CEILING_STRATA}; 1: plain sampling); "
        "see the docs' ceiling guide",
    )


def game_ceiling(rules: Rules, args: argparse.Namespace) -> Any:
    """The ceiling of the game a command simulates (its seats, seed, workers and backend), for
    ``--ceiling`` in blackjack-evaluate and its sweep: one call, so both price the same game."""
    return ceiling(
        rules,
        seats=args.seats,
        seat=args.seat,
        samples=args.ceiling_samples,
        strata=getattr(args, "ceiling_strata", CEILING_STRATA),
        seed=args.seed,
        workers=args.workers,
        backend=args.backend,
        ray_address=args.ray_address,
    )


def ceiling_bets(policy: Policy) -> tuple[float, ...] | None:
    """The bets the perfect counter is given beside ``policy`` (``--ceiling`` in blackjack-evaluate
    and its report): a counting strategy's (``policy_bets``), a composition model's allowed bets;
    None for a flat bet of one unit."""
    if policy.linear is not None and policy.linear.bets != (1.0,):
        return tuple(float(b) for b in policy.linear.bets)
    return policy_bets(policy.counting)


def shoe_agent_for(args: argparse.Namespace, refused: dict[str, bool], baseline: str | None = None) -> Any:
    """The network of the shoe game ``--policy`` names (``shoe_agent_run``), loaded to play on one torch
    thread at the seat it learned (``args.seats`` and ``args.seat`` set to it). A CliError names what
    cannot apply to it: the flags of ``refused`` given (flag: given), a ``baseline`` other than basic
    strategy (it is played beside basic strategy at a flat bet), another seat."""
    from blackjack_env.agents.loading import one_torch_thread  # start-up time: torch only on this path

    what = f"--policy {args.policy} is a network of the shoe game, played in the vector env with its own bets"
    given = [flag for flag, on in refused.items() if on]
    if given:
        raise CliError(f"{what}: leave out {', '.join(given)}")
    if baseline not in (None, "basic"):
        raise CliError(f"{what} beside basic strategy at a flat bet: give --baseline basic or none, not {baseline!r}")
    try:
        agent = load_agent_of(args.policy)
    except ValueError as error:
        raise CliError(str(error)) from None
    one_torch_thread()
    own_seat = (agent.shoe["seats"], agent.shoe["seat"])
    if (args.seats, args.seat) not in ((1, 0), own_seat):
        raise CliError(
            f"{what}, at the seat it learned: seat {own_seat[1]} of {own_seat[0]}; leave out --seats and --seat "
            f"(got seat {args.seat} of {args.seats})"
        )
    args.seats, args.seat = own_seat
    return agent


def note_compile(outcome: RunOutcome, prog: str) -> None:
    """Say once, on stderr, that this run compiled the simulator: its time is not in the reported rate."""
    if outcome.compile_seconds > runner.COMPILING_AFTER_SECONDS:  # the threshold of RunFeedback.compiling
        print(
            f"{prog}: compiled the simulator in {outcome.compile_seconds:.1f} s (cached for later runs)",
            file=sys.stderr,
        )


class RunFeedback:
    """What a command shows on stderr while a simulation runs: a line as the kernels start compiling
    (the first run sits still for many seconds otherwise), then a progress bar that starts with the
    simulation, so that its rate is the simulation's rate. Pass ``compiling``, ``started`` and
    ``update`` to ``runner.simulate`` (``on_compiling``, ``on_start``, ``progress``); ``close`` at
    the end. A sweep passes one to every run: the bar starts once and counts all of them."""

    def __init__(self, prog: str, total: int, bar: bool) -> None:
        self.prog, self.total, self.show_bar = prog, total, bar
        self.bar: Any = None
        self.description = ""

    def compiling(self) -> None:
        print(
            f"{self.prog}: compiling the simulator (once: {COMPILE_ESTIMATE}; numba caches it for later runs)...",
            file=sys.stderr,
            flush=True,
        )

    def started(self) -> None:
        if self.show_bar and self.bar is None:
            self.bar = tqdm(total=self.total, unit="round", unit_scale=True, file=sys.stderr)
        if self.bar is not None and self.description:
            self.bar.set_description(self.description)

    def update(self, rounds: int) -> None:
        if self.bar is not None:
            self.bar.update(rounds)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def simulate(
        self, args: argparse.Namespace, rules: Rules, policy: Policy, table: Table | None, **policies: Any
    ) -> RunOutcome:
        """``runner.simulate`` with the command's run options (``--rounds``, ``--seed``,
        ``--workers``, ``--backend``, ``--ray-address``) and this feedback's hooks: the one way the
        commands start a simulation. ``policies``: ``baseline=`` and ``others=``."""
        return runner.simulate(
            rules,
            policy,
            args.rounds,
            seed=args.seed,
            workers=args.workers,
            backend=args.backend,
            ray_address=args.ray_address,
            progress=self.update,
            table=table,
            on_compiling=self.compiling,
            on_start=self.started,
            **policies,
        )


@contextlib.contextmanager
def warnings_as_lines(prog: str) -> Iterator[None]:
    """Show warnings (e.g. a saved agent whose strategy.json is not what it plays) as one readable
    stderr line each, ``PROG: warning: ...``, instead of Python's file-and-line format."""

    def show(message: Warning | str, category: type[Warning], *args: object, **kwargs: object) -> None:
        print(f"{prog}: warning: {message}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = show
        yield


def console_entry(prog: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """A command's ``main`` that ends on Ctrl-C or a closed pipe (``| head``) with one line or none,
    never a traceback: Ctrl-C not handled deeper (e.g. while kernels compile) exits 130 saying so; a
    reader that stopped reading is left alone (stdout to /dev/null, exit 141 as a shell's SIGPIPE)."""

    def wrap(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def entry(*args: Any, **kwargs: Any) -> int:
            try:
                code = main(*args, **kwargs)
                sys.stdout.flush()  # a closed pipe shows here, not at the interpreter's exit
                return code
            except KeyboardInterrupt:
                print(f"{prog}: interrupted", file=sys.stderr)
                return 130
            except BrokenPipeError:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return 141

        return entry

    return wrap
