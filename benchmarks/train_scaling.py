"""The shoe learners on 2 workers against 1 (rounds learned per second), and the driver's work per chunk.

    python benchmarks/train_scaling.py                                  # count-table learner, Ray
    python benchmarks/train_scaling.py --backend local                  # local processes instead
    python benchmarks/train_scaling.py --learner linear --seat all --json out.json

The game (default rules at 75% penetration, 3 seats, the learner in seat 0 or every seat), chunks
of 262,144 rounds, the policy refreshed every --sync-chunks chunks (train/backends.py). First one refresh
period in this process (the serial backend: a chunk's play time, the driver's refresh and merge), then
--repeats alternating pairs of runs of --periods periods on 1 and on 2 workers of the backend (order
swapped every repeat, so a change in the machine's load falls on both alike), each printing its rate; the
2-vs-1 ratio of each pair, their spread, and the 1-minute load average before each run. Beside each pair,
a control: plain Python loops on 1 and on 2 processes (--control-s seconds each), whose ratio is what the
machine gave two processes over one just then (on a shared machine it can be far below 2). Workers are
started and warmed up before each timed run (the first chunk's cost is reported apart: the driver's
compile or numba-cache load, Ray's start, each actor's warm-up).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from multiprocessing import Pool
from typing import Any

from shoe_learners import add_learner_options, benchmark_learner

from blackjack_env.train.backends import DEFAULT_SYNC_CHUNKS, ChunkRunner, SerialBackend, make_backend, warm_up


def _spin(seconds: float) -> int:
    """Count up for ``seconds``: pure CPU, no memory traffic, no I/O."""
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        for _ in range(10_000):
            n += 1
    return n


def control_ratio(seconds: float) -> float:
    """Loop iterations per second on 2 processes over 1 (each run ``seconds``): the machine's own
    2-vs-1 just now."""
    rates = {}
    for workers in (1, 2):
        pool = Pool(workers)
        rates[workers] = sum(pool.map(_spin, [seconds] * workers)) / seconds
        pool.close()  # (not terminate: its SIGTERM would set off the handler Ray installed before the fork)
        pool.join()
    return rates[2] / rates[1]


def timed_run(agent: Any, backend: Any, sync_chunks: int, periods: int) -> dict[str, float]:
    """Start ``backend`` (untimed), then learn ``periods`` refresh periods on it (timed)."""
    clock = time.perf_counter()
    backend.start(agent)
    started = time.perf_counter() - clock
    runner = ChunkRunner(agent, sync_chunks, backend)
    runner.started = True
    load = os.getloadavg()[0]
    before = agent.rounds
    clock = time.perf_counter()
    runner.advance(before + periods * sync_chunks * agent.chunk_rounds, lambda: False, lambda rounds: None)
    seconds = time.perf_counter() - clock
    runner.close()
    return {
        "workers": backend.workers,
        "rounds_per_s": (agent.rounds - before) / seconds,
        "seconds": seconds,
        "start_s": started,
        "load_1min": load,
        "refresh_s": runner.refresh_seconds / max(runner.refreshes, 1),
        "merge_s": runner.merge_seconds / max(runner.merges, 1),
        "warm_up_s": list(getattr(backend, "warm_up_seconds", [])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_learner_options(parser)
    parser.add_argument("--backend", choices=("ray", "local"), default="ray")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--periods", type=int, default=2, help="refresh periods per timed run")
    parser.add_argument("--sync-chunks", type=int, default=DEFAULT_SYNC_CHUNKS)
    parser.add_argument("--control-s", type=float, default=3.0, help="seconds of each control loop run")
    parser.add_argument("--json", default="", help="also write every figure here")
    args = parser.parse_args()
    agent = benchmark_learner(args.learner, args.seat, args.seats)
    g = args.sync_chunks
    report: dict[str, Any] = {"args": vars(args), "cpus": os.cpu_count()}
    report["driver_warm_up_s"] = warm_up(agent)  # compile, or load numba's cache
    serial = timed_run(agent, SerialBackend(), g, 1)
    chunk_s = agent.chunk_rounds / serial["rounds_per_s"]
    report["serial"] = serial
    print(
        f"serial: {serial['rounds_per_s']:,.0f} rounds/s, a chunk {chunk_s:.3f} s; driver: refresh "
        f"{serial['refresh_s'] * 1e3:.1f} ms per period of {g}, merge {serial['merge_s'] * 1e3:.2f} ms per chunk "
        f"(first chunk's warm-up here {report['driver_warm_up_s']:.2f} s)"
    )
    if args.backend == "ray":
        import ray

        clock = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        report["ray_init_s"] = time.perf_counter() - clock
        print(f"ray.init: {report['ray_init_s']:.1f} s")
    runs: list[dict[str, float]] = []
    ratios: list[float] = []
    controls: list[float] = []
    try:
        for repeat in range(args.repeats):
            pair: dict[int, dict[str, float]] = {}
            for workers in (1, 2) if repeat % 2 == 0 else (2, 1):
                run = timed_run(agent, make_backend(args.backend, workers), g, args.periods)
                pair[workers] = run
                runs.append(run)
                print(
                    f"repeat {repeat} {args.backend} x{workers}: {run['rounds_per_s']:,.0f} rounds/s "
                    f"({run['seconds']:.1f} s; start {run['start_s']:.1f} s, warm-up per worker "
                    f"{', '.join(f'{w:.2f}' for w in run['warm_up_s'])} s; load {run['load_1min']:.1f}; driver "
                    f"refresh {run['refresh_s'] * 1e3:.1f} ms, merge {run['merge_s'] * 1e3:.2f} ms)"
                )
            ratios.append(pair[2]["rounds_per_s"] / pair[1]["rounds_per_s"])
            controls.append(control_ratio(args.control_s))
            print(f"repeat {repeat}: 2 workers / 1 = {ratios[-1]:.2f}; control (plain loops) {controls[-1]:.2f}")
    finally:
        if args.backend == "ray":
            ray.shutdown()
    driver_s = serial["refresh_s"] / g + serial["merge_s"]
    report.update(runs=runs, ratios=ratios, controls=controls, chunk_s=chunk_s, driver_per_chunk_s=driver_s)
    print(
        f"2 workers / 1: median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f}) "
        f"over {len(ratios)} alternating pairs (controls {', '.join(f'{c:.2f}' for c in controls)}); "
        f"driver per chunk {driver_s * 1e3:.2f} ms = "
        f"{driver_s / chunk_s:.2%} of a chunk's play ({chunk_s:.3f} s)"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
