"""``blackjack-train --algo count-table`` (``--env shoe``): the chunk learners' run and evaluation.

Every ``--eval-every`` rounds the learned counting strategy (as exported: ramp and index entries,
played by the compiled simulator exactly as ``blackjack-evaluate --policy RUN_DIR`` plays it) is
simulated on identical shoes with

* Hi-Lo I18 + Fab 4 with the EV-maximising use of the same bets: the smallest bet at a whole true
  count where its EV per unit bet is negative, the largest where it is positive, the counts' EVs
  taken once from a separate flat-bet run of ``CALIBRATION_FACTOR`` x ``eval_rounds`` (seed + 2),
  so the bets are chosen on one run and scored on another (a shorter run can put the crossing a
  count too low: measured, 2e6 rounds chose +0 where +1 is right, which flatters the learner);
* basic strategy at a flat bet of 1;

and, at a flat bet of 1 (the ramp set aside), the learned strategy against basic strategy on
identical shoes (the gain from playing the count). Gains are per round, learned minus the other,
with 95% intervals. The Hi-Lo baseline is written to the run directory (``HILO_FILE``), so
``blackjack-evaluate --policy RUN_DIR --baseline RUN_DIR/hilo-i18-fab4-ev-max.json`` repeats the
comparison at any length.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from blackjack_env.agents.base import ChunkAgent
from blackjack_env.agents.count_table import CountTableAgent
from blackjack_env.counting import built_in_strategy, load_system
from blackjack_env.evaluate.columns import SHOE_COLUMNS
from blackjack_env.evaluate.runner import simulate
from blackjack_env.rules import Rules
from blackjack_env.simulate import Z95, Policy, Table
from blackjack_env.strategy import StrategyTable

from .backends import DEFAULT_SYNC_CHUNKS, ChunkRunner, check_backend, make_backend
from .ceiling import CEILING_COLUMNS, CeilingConfig, TrainCeiling
from .evaluation import shoe_postfix
from .shoe_args import ShoeGame

#: The Hi-Lo baseline with the EV-maximising ramp, written into the run directory.
HILO_FILE = "hilo-i18-fab4-ev-max.json"
#: The calibration run of the Hi-Lo baseline's bets is this many times --eval-rounds.
CALIBRATION_FACTOR = 10

#: The count-table learner's counting system unless told (--system). Its indices can only be as good as
#: its count tells the play: Omega II's tags (level 2, aces not counted) follow the play's effects of
#: removal more closely than Hi-Lo's. Runs on training seed 7, scored on 5e7 paired rounds of seed 777
#: at seat 1 of 3 (per 100 rounds at a flat bet over basic strategy), gained +0.955 at one deck on its
#: default budget (Hi-Lo +0.762, Hi-Opt II +0.938) and +0.154 at six on 5e8 rounds (Hi-Lo +0.119, Hi-Opt
#: II +0.157, Zen +0.148, Halves +0.135), and more with bets 1-8 in both games; the grid of the docs'
#: learning-to-count results scores the choice on other seeds.
COUNT_TABLE_SYSTEM = "omega2"

# ---------------------------------------------------------------------------- the default budget
#: Rounds per learning seat a run of the count-table (tabular) and composition (linear) learners takes
#: unless told (--steps), in the reference game (``REFERENCE_SHOE``): every learning seat's decisions train
#: the learner, so a table of N seats with ``--seat all`` learns from N times the decisions per round and
#: takes 1/N of the rounds. One seat: 2e9 rounds, the runs measured in the docs' learning-to-count results
#: (their figures are those of this budget). Other games scale it by ``budget_scale``.
SEAT_ROUNDS = 2_000_000_000
#: The shoe SEAT_ROUNDS was measured in: 6 decks dealt to 75% penetration.
REFERENCE_SHOE = (6, 0.75)
#: Seconds per round of a whole default run, one seat, one core (evaluations and compiling included):
#: the measured runs of the docs' learning-to-count results, 2e9 rounds in 1,332 s (count-table) and
#: 550 s (composition) on a 2-core machine, the other core busy; the composition learner's depth bands
#: (3 by default) cost it about 20% more CPU time per round since (``benchmarks/count_table_speed.py
#: --learner linear``, alternating with the learner before them).
ONE_SEAT_SECONDS = {"count-table": 1332 / 2e9, "composition": 1.2 * 550 / 2e9}
#: A round's cost at a table of S seats, L of them learning (with ``--seat all`` L = S, else 1), as
#: (a + b S) L + c (S - L) in microseconds of one core: ``a + b S`` a learning seat's decisions and
#: rollouts (which finish the round at every seat, hence b), ``c`` a seat playing basic strategy. Fitted
#: to the learning rates of ``python benchmarks/count_table_speed.py --learner L --seats S --seat X
#: --skip 60`` (1, 2, 3, 5 seats with --seat all, 3 seats with one learning; within 10% of each).
ROUND_COST = {"count-table": (0.256, 0.106, 0.136), "composition": (0.205, 0.0, 0.096)}
#: Speed of K workers over one: measured 1.85-1.90x for 2 (the docs' speed results), taken as 0.9 per added worker.
WORKER_GAIN = 0.9


def learning_seats(seats: int, seat: int | str) -> int:
    """The seats whose decisions train the learner: every seat with --seat all (-1), else one."""
    return max(1, int(seats)) if seat in ("all", -1) else 1


def count_spread(decks: int, penetration: float) -> float:
    """How far the shoe's composition strays from a full shoe's, averaged over the rounds it deals: the
    variance of a balanced count's true count per unit variance of its tags, up to a factor common to
    every game. After a share x of N cards is seen, the running count's variance is x N (1 - x) N / (N - 1)
    per unit tag variance (cards drawn without replacement) and the true count divides it by the unseen
    decks, (1 - x) N / 52, so its variance is 52^2 x / ((1 - x)(N - 1)); rounds are dealt evenly over
    x from 0 to the penetration p, whose average of x / (1 - x) is -ln(1 - p) / p - 1."""
    if decks < 1 or not 0 < penetration < 1:
        raise ValueError(f"a shoe needs decks >= 1 and 0 < penetration < 1, got {decks} and {penetration}")
    return 52.0 / (52 * decks - 1) * (-math.log1p(-penetration) / penetration - 1.0)


def budget_scale(decks: int, penetration: float) -> float:
    """The default budget of a game over the reference game's (``REFERENCE_SHOE``), to two significant
    figures: the reference's spread over the game's. Both learners fit their values as lines in what
    they see of the shoe (the count, the unseen cards), and a line's slope is known to a standard error
    of 1 / sqrt(decisions x the spread of what it is fitted on): with this budget every game's slopes are
    known as well as the reference game's are on 2e9 rounds. One deck dealt to 65% strays about four
    times as far and needs about a quarter of the rounds; six decks dealt to 50%, half as far, twice as many."""
    return float(f"{count_spread(*REFERENCE_SHOE) / count_spread(decks, penetration):.2g}")


def default_rounds(
    seats: int, seat: int | str, decks: int = REFERENCE_SHOE[0], penetration: float = REFERENCE_SHOE[1]
) -> int:
    """--steps unless told: ``SEAT_ROUNDS`` scaled to the game (``budget_scale``) per learning seat
    (rounded up), so every table learns from as many decisions as one seat in that game."""
    return -(-round(SEAT_ROUNDS * budget_scale(decks, penetration)) // learning_seats(seats, seat))


def expected_seconds(
    learner: str, rounds: int, seats: int, seat: int | str, workers: int = 1, sync_chunks: int = 16
) -> float:
    """The wall time ``rounds`` of learning are expected to take: the one-seat whole-run rate measured
    (``ONE_SEAT_SECONDS``) times this table's cost per round relative to one seat's (``ROUND_COST``),
    over the workers' measured gain (at most ``sync_chunks`` chunks run at once)."""
    a, b, c = ROUND_COST[learner]
    n, learning = max(1, int(seats)), learning_seats(seats, seat)
    relative = ((a + b * n) * learning + c * (n - learning)) / (a + b)
    parallel = 1 + WORKER_GAIN * (min(max(1, workers), max(1, sync_chunks)) - 1)
    return rounds * ONE_SEAT_SECONDS[learner] * relative / parallel


def format_duration(seconds: float) -> str:
    """A duration for a person: seconds, minutes or hours."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} minutes"
    return f"{seconds / 3600:.1f} hours"


def budget_line(
    learner: str,
    steps: int,
    seats: int,
    seat: int | str,
    shoe: tuple[int, float] = REFERENCE_SHOE,
    workers: int = 1,
    sync_chunks: int = 16,
    done: int = 0,
) -> str:
    """The line a run of ``steps`` rounds starts with: its budget (said to be the default where it is,
    for the game's ``shoe``: decks and penetration) and the time it is expected to take from ``done``
    rounds on (``expected_seconds``)."""
    learning = learning_seats(seats, seat)
    why = "the run's budget" if done else "--steps"
    if steps == default_rounds(seats, seat, *shoe):
        mantissa, exponent = f"{SEAT_ROUNDS * budget_scale(*shoe):.1e}".split("e")
        per_seat = f"{mantissa.removesuffix('.0')}e{int(exponent)}"  # 4.6e8, 2e9
        game = f"{shoe[0]} deck{'s' if shoe[0] > 1 else ''} dealt to {shoe[1]:.0%}"
        why = f"default: {per_seat} per learning seat for {game}" + (f", {learning} learning" if learning > 1 else "")
    start = f", from {done:,}" if done else ""
    seconds = expected_seconds(learner, steps - done, seats, seat, workers, sync_chunks)
    plural = f"{workers} workers" if workers > 1 else "1 worker"
    return (
        f"{steps:,} rounds ({why}){start}; expected about {format_duration(seconds)} on {plural} "
        "(the measured rates of the docs' speed results; the bar shows this machine's)"
    )


def ev_max_ramp(by_count: list[dict[str, Any]], bets: tuple[float, ...]) -> tuple[tuple[float, float], ...]:
    """The EV-maximising ramp over ``bets`` from a flat-bet run's EV per unit bet by whole true count:
    the smallest bet, and the largest from one true count on ("8 from the true count where it
    turns positive"), that count chosen to maximise the calibration run's EV with those
    bets: the threshold t maximising the summed results of the rounds at t or above. A count with
    few rounds weighs by its few rounds, so a sparse count's noise cannot drop the bet back. A count
    no round was played at (true count -1 at one deck, where the floored count skips it) adds nothing:
    its EV is NaN, and a NaN in the sums would choose a threshold at random."""
    low, high = bets[0], bets[-1]
    played = [row for row in by_count if row["rounds_played"]]
    if not played:
        raise ValueError("the calibration run played no rounds: give it rounds to read the EV by true count from")
    counts = [float(row["true_count"]) for row in played]
    results = [row["ev_per_unit_bet"] * row["rounds_played"] for row in played]
    tails = [sum(results[i:]) for i in range(len(results))]  # high from counts[i] on
    best = max(range(len(tails)), key=lambda i: (tails[i], -i))
    if tails[best] <= 0:
        return ((counts[0], low),)
    if best == 0:
        return ((counts[0], high),)
    return ((counts[0], low), (counts[best], high))


def hilo_ev_max(
    rules: Rules, bets: tuple[float, ...], basic: StrategyTable, table: Table, eval_rounds: int, seed: int, out: Path
) -> Policy:
    """Hi-Lo I18 + Fab 4 with the EV-maximising use of ``bets`` (module docstring: its bets from a
    flat-bet calibration run of CALIBRATION_FACTOR x ``eval_rounds`` on seed + 2), also written to
    ``out / HILO_FILE`` for the same comparison with ``blackjack-evaluate --baseline``."""
    strategy = built_in_strategy("hilo-i18-fab4", rules.hit_soft_17)
    flat = Policy.from_counting(strategy, rules, basic)
    run = simulate(rules, flat, CALIBRATION_FACTOR * eval_rounds, seed + 2, table=table)
    by_count = run.result.by_true_count() or []
    ramped = replace(strategy.with_ramp(ev_max_ramp(by_count, bets)), name="hilo-i18-fab4-ev-max")
    tmp = out / (HILO_FILE + ".tmp")
    tmp.write_text(json.dumps(ramped.to_dict(), indent=2))
    tmp.replace(out / HILO_FILE)
    return Policy.from_counting(ramped, rules, basic)


@dataclass(frozen=True)
class ChunkRun:
    """How a chunk learner's run is played and evaluated (train/backends.py's schedule and backend)."""

    seed: int
    eval_rounds: int
    chunk_rounds: int = 1 << 18
    sync_chunks: int = DEFAULT_SYNC_CHUNKS
    backend: str = "local"
    workers: int = 1
    ray_address: str = ""
    ceiling: CeilingConfig | None = None  # --ceiling: every evaluation's share of it

    def __post_init__(self) -> None:
        check_backend(self.backend, self.workers)
        if self.sync_chunks < 1:
            raise ValueError(f"--sync-chunks must be >= 1, got {self.sync_chunks}")


@dataclass(frozen=True)
class CountTableConfig:
    """The count-table learner's options: its counting system (a name or a JSON file), the game, the run."""

    system: str
    game: ShoeGame
    run: ChunkRun


class ChunkLearner:
    """A shoe learner that learns in the compiled engine, chunk by chunk (the count-table and composition
    learners); a chunk is the unit of checkpoints. Evaluated by the paired evaluation of the module
    docstring; a subclass says what it exports (``learned_policies``, ``learned_figures``)."""

    columns: tuple[str, ...] = SHOE_COLUMNS
    scalar_keys: tuple[str, ...] = ("ev", "gain_vs_hilo", "gain_vs_basic", "flat_gain", "deviations")
    #: Its name in the registry and the file its learned policy is exported to.
    name = "count-table"
    export_file = "counting-strategy.json"

    def __init__(self, agent: ChunkAgent, run: ChunkRun, rules: Rules, out: Path, resume: bool) -> None:
        self.agent = agent
        self.run = run
        backend = make_backend(run.backend, run.workers, run.ray_address)
        self.runner = ChunkRunner(self.agent, run.sync_chunks, backend)
        if resume:
            self.runner.load(out)
        self.rules = rules
        self.out = out
        self.eval_rounds = run.eval_rounds
        self.seed = run.seed
        self.behaviour_ev = 0.0
        self._hilo: Policy | None = None
        self.ceiling: TrainCeiling | None = None
        if run.ceiling is not None:
            self.ceiling = TrainCeiling.of(run.ceiling, run.seed, rules, out, self.agent)
            self.columns = SHOE_COLUMNS + CEILING_COLUMNS
            self.scalar_keys = ("ev", "gain_vs_hilo", "gain_vs_basic", "flat_gain", "deviations", "flat_share")

    @property
    def steps(self) -> int:
        return self.agent.rounds

    def advance(self, target: int, stop: Callable[[], bool], progress: Callable[[int], None]) -> None:
        """Chunks up to ``target`` rounds on the run's backend (train/backends.py: the policy
        refreshed every --sync-chunks chunks, merged in chunk order whatever the backend)."""
        self.runner.advance(target, stop, progress)
        self.behaviour_ev = self.runner.behaviour_ev

    def train_scalars(self) -> dict[str, float]:
        return {"train/behaviour_ev": self.behaviour_ev}

    def postfix(self, row: Mapping[str, float]) -> dict[str, str]:
        return shoe_postfix(row)

    def plan(self, total: int) -> str:
        agent, run = self.agent, self.run
        shoe = (self.rules.decks, self.rules.penetration)
        return budget_line(self.name, total, agent.seats, agent.seat, shoe, run.workers, run.sync_chunks, agent.rounds)

    def save(self, out: Path) -> None:
        self.agent.save(out)
        self.runner.save(out)

    def close(self) -> None:
        """Stop the backend's workers (local processes, Ray actors; a Ray started here)."""
        self.runner.close()

    def table(self) -> Table:
        """Where the evaluation plays: the learner's seat (seat 0 for --seat all), basic strategy
        in the others."""
        agent = self.agent
        basic = Policy.from_table(agent.basic_table())
        return Table(agent.seats, max(agent.seat, 0), basic if agent.seats > 1 else None)

    def hilo_policy(self) -> Policy:
        """Hi-Lo I18 + Fab 4 with the EV-maximising use of the bets (module docstring), computed once."""
        if self._hilo is None:
            agent = self.agent
            self._hilo = hilo_ev_max(
                self.rules, agent.bets, agent.basic_table(), self.table(), self.eval_rounds, self.seed, self.out
            )
        return self._hilo

    def learned_policies(self) -> tuple[Policy, Policy]:
        """The learned policy as exported (with its bets), and the same at a flat bet of 1."""
        raise NotImplementedError

    def learned_figures(self) -> dict[str, float]:
        """The export's own columns (``deviations``, ``max_bet_from``)."""
        raise NotImplementedError

    def evaluate(self, rounds: int, seed: int) -> dict[str, float]:
        """The paired evaluation of the module docstring (per round, learned minus the other)."""
        basic_table = self.agent.basic_table()
        basic = Policy.from_table(basic_table)
        learned, flat_learned = self.learned_policies()
        table = self.table()
        bet_run = simulate(self.rules, learned, rounds, seed, baseline=self.hilo_policy(), others=[basic], table=table)
        hilo_flat = built_in_strategy("hilo-i18-fab4", self.rules.hit_soft_17)
        flat_run = simulate(
            self.rules,
            flat_learned,
            rounds,
            seed,
            baseline=basic,
            others=[Policy.from_counting(hilo_flat, self.rules, basic_table)],
            table=table,
        )
        res, flat = bet_run.result, flat_run.result
        row: dict[str, float] = {"ev": res.ev(0), "ev_hilo": res.ev(1), "ev_basic": res.ev(2)}
        for name, result, policy in (("gain_vs_hilo", res, 1), ("gain_vs_basic", res, 2), ("flat_gain", flat, 1)):
            mean, stderr, _ = result.diff(policy)
            row.update({name: mean, f"{name}_low": mean - Z95 * stderr, f"{name}_high": mean + Z95 * stderr})
        row["flat_gain_hilo"] = flat.diff(1)[0] - flat.diff(2)[0]
        row.update(self.learned_figures())
        if self.ceiling is not None:
            row.update(self.ceiling.columns(row))
        return row

    def summary(self, last: Mapping[str, float], wall_s: float, out: Path) -> str:
        share = ""
        if "flat_share" in last:  # --ceiling (train/ceiling.py)
            share = (
                f", {100 * last['flat_share']:.1f}% of the ceiling [{100 * last['flat_share_low']:.1f}%, "
                f"{100 * last['flat_share_high']:.1f}%]"
            )
        return (
            f"{self.name}: {self.steps} rounds in {wall_s:.1f} s; "
            f"per 100 rounds: EV {100 * last['ev']:+.3f}, "
            f"vs Hi-Lo I18+Fab4 {100 * last['gain_vs_hilo']:+.3f} [{100 * last['gain_vs_hilo_low']:+.3f}, "
            f"{100 * last['gain_vs_hilo_high']:+.3f}], flat-bet gain over basic {100 * last['flat_gain']:+.3f} "
            f"[{100 * last['flat_gain_low']:+.3f}, {100 * last['flat_gain_high']:+.3f}]{share}; strategy in "
            f"{out / self.export_file}"
        )


def count_table_agent(config: CountTableConfig, rules: Rules) -> CountTableAgent:
    """A new count-table learner; everything its options can refuse, refused in one line."""
    game, run = config.game, config.run
    system = load_system(config.system, "--system")
    return CountTableAgent(rules, system, game.bets, game.seats, game.seat, run.seed, run.chunk_rounds)


class CountTableLearner(ChunkLearner):
    """The count-table learner (:mod:`blackjack_env.agents.count_table`): its export is a counting strategy."""

    agent: CountTableAgent

    def __init__(self, config: CountTableConfig, rules: Rules, out: Path, resume: bool) -> None:
        agent = CountTableAgent.load(out) if resume else count_table_agent(config, rules)
        super().__init__(agent, config.run, rules, out, resume)

    def learned_policies(self) -> tuple[Policy, Policy]:
        basic_table = self.agent.basic_table()
        strategy = self.agent.to_strategy()
        flat = strategy.with_ramp([(0.0, 1.0)])
        return Policy.from_counting(strategy, self.rules, basic_table), Policy.from_counting(
            flat, self.rules, basic_table
        )

    def learned_figures(self) -> dict[str, float]:
        """Its deviations, and the count from which it bets the most."""
        strategy = self.agent.to_strategy()
        ramp = strategy.ramp
        top = [count for count, bet in ramp if bet == max(b for _, b in ramp)]
        return {"deviations": float(len(strategy.indices)), "max_bet_from": top[0] if len(ramp) > 1 else math.nan}
