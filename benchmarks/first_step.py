"""CPU seconds of a user's first steps, in fresh processes, with an empty and with a warm numba cache.

Each case runs in a new Python process whose caches (numba's compiled kernels, the solver's results)
live in a temporary folder: "cold" is the first run there (everything compiled), "warm" a later run
(everything loaded). CPU time (user + system of the process) is what load on a shared machine
inflates least; wall time is printed beside it. ``import gymnasium`` alone is the baseline the
import figures are read against.

    python benchmarks/first_step.py                 # every case, cold then warm
    python benchmarks/first_step.py --warm-only     # warm figures (the cache of an earlier run kept)
    python benchmarks/first_step.py --case env      # one case
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: What each case runs in its fresh process, after which it reports its own CPU time.
CASES: dict[str, str] = {
    "gymnasium": "import gymnasium",
    "import": "import gymnasium\nimport blackjack_env",
    "env": (
        "import gymnasium as gym\nimport blackjack_env\n"
        "env = gym.make('blackjack_env/Blackjack-v0')\nenv.reset(seed=0)\nenv.step(0)"
    ),
    "shoe": (
        "import gymnasium as gym\nimport blackjack_env\n"
        "env = gym.make('blackjack_env/BlackjackShoe-v0')\nobs, info = env.reset(seed=0)\n"
        "import numpy as np\nenv.step(int(np.flatnonzero(info['action_mask'])[0]))"
    ),
    "vector": (
        "import gymnasium as gym\nimport numpy as np\nimport blackjack_env\n"
        "envs = gym.make_vec('blackjack_env/Blackjack-v0', 64, vectorization_mode='vector_entry_point')\n"
        "obs, info = envs.reset(seed=0)\nenvs.step(np.argmax(info['action_mask'], axis=1))"  # a legal action each
    ),
    "quickstart": (
        "import sys\nfrom blackjack_env.evaluate.cli import main\n"
        "sys.argv = ['blackjack-evaluate']\nmain(['--policy', 'basic', '--rounds', '1e7', '--no-progress'])"
    ),
}
REPORT = (
    "\nimport json, resource, sys\nu = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print('FIRST-STEP ' + json.dumps({'cpu': u.ru_utime + u.ru_stime}), file=sys.__stderr__)\n"
)


def run_case(code: str, home: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of ``code`` in a fresh process whose caches are under ``home``."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")}
    env.update(XDG_CACHE_HOME=str(home / "xdg"), BLACKJACK_ENV_CACHE=str(home / "solver"))
    import time

    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code + REPORT], env=env, capture_output=True, text=True, cwd=home)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"case failed:\n{code}\n{done.stderr[-2000:]}")
    line = next(line for line in done.stderr.splitlines() if line.startswith("FIRST-STEP "))
    return json.loads(line.removeprefix("FIRST-STEP "))["cpu"], wall


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="only these cases (repeatable)")
    parser.add_argument("--warm-only", action="store_true", help="skip the cold runs")
    parser.add_argument("--repeats", type=int, default=3, help="warm runs per case (the least CPU is shown)")
    parser.add_argument("--cache", type=Path, default=None, help="keep the caches here (default: a temporary folder)")
    args = parser.parse_args(argv)
    names = args.case or list(CASES)
    with tempfile.TemporaryDirectory() as scratch:
        root = args.cache or Path(scratch)
        print(f"{'case':<12} {'cold CPU s':>10} {'cold wall s':>11} {'warm CPU s':>10} {'warm wall s':>11}")
        base = None
        for name in names:
            cold = ("-", "-")
            if not args.warm_only and name != "gymnasium":
                home = root / f"cold-{name}"  # an empty cache per case: each pays only its own compiles
                home.mkdir(parents=True, exist_ok=True)
                cpu, wall = run_case(CASES[name], home)
                cold = (f"{cpu:.2f}", f"{wall:.1f}")
            warm_home = root / "warm"
            warm_home.mkdir(parents=True, exist_ok=True)
            run_case(CASES[name], warm_home)  # fills the shared warm cache (a no-op once filled)
            runs = [run_case(CASES[name], warm_home) for _ in range(args.repeats)]
            cpu, wall = min(runs)
            if name == "gymnasium":
                base = cpu
            beyond = f" ({cpu - base:+.2f} beyond gymnasium)" if base is not None and name != "gymnasium" else ""
            print(f"{name:<12} {cold[0]:>10} {cold[1]:>11} {cpu:>10.2f} {wall:>11.1f}{beyond}", flush=True)


if __name__ == "__main__":
    main()
