"""Runs a Markdown page's code blocks as written, in order, in the current folder (README, docs).

A page's ```python blocks run in one namespace, its ```bash blocks' commands through the console
scripts' own ``main`` (the same code as the installed commands, without a process start per
command), every file an example reads made by an example before it. Where a page's sizes would take
minutes, ``shrink`` makes them small (``--rounds`` at most ``SMALL_ROUNDS``, one chunk or rollout of
training, fewer evaluation rounds, a smaller PPO rollout); everything else runs as written. The
exact analyses (``--removal``, ``--indices``: 10-15 s each on 2 cores) run apart (``only_analyses``),
so that CI's two workers share them. Commands that set up an environment (``pip``, ``python -m
venv``, the CI script, pytest, ruff), start a server (``tensorboard``) or a Ray cluster are not run
(``NOT_RUN`` says why each). Blocks fenced as ```text or ```console are shown, not run.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import shlex
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: What a command on a page is not run for, by its first words.
NOT_RUN = {
    "python3 -m venv": "sets up the environment this test runs in",
    "python -m venv": "sets up the environment this test runs in",
    ". .venv/bin/activate": "sets up the environment this test runs in",
    "pip install": "installs packages",
    "bash .ci/run": "the CI script: runs this test suite",
    "python -m pytest": "runs this test suite",
    "NUMBA_DISABLE_JIT=1 python -m pytest": "runs part of this test suite",
    "ruff check": "the linter (CI runs it)",
    "ruff format": "the formatter (CI runs it)",
    "tensorboard": "starts a server",
    "python -m sphinx": "builds this site (CI builds it, strictly)",
    "python -m http.server": "starts a server",
    "python benchmarks/": "a measurement of minutes to hours, run by hand (its figures are on the page)",
}
#: The largest --rounds a command on a page runs with here (as written, runs take seconds to minutes).
SMALL_ROUNDS = 20_000


def blocks(page: Path) -> list[tuple[str, str]]:
    """Every ```python and ```bash block of a page, in order: (language, text)."""
    return re.findall(r"^```(python|bash)\n(.*?)^```", page.read_text(), flags=re.DOTALL | re.MULTILINE)


def commands(block: str) -> Iterator[list[str] | tuple[str, str]]:
    """A bash block's commands as argument lists (comments dropped; ``&&`` splits a line), and the
    files it writes (``cat > FILE <<'EOF'``, ``echo 'TEXT' > FILE``) as (file, text)."""
    lines = iter(block.splitlines())
    for line in lines:
        here = re.fullmatch(r"cat > (\S+) <<'EOF'", line.strip())
        if here:
            text = "".join(f"{body}\n" for body in iter(lambda: next(lines), "EOF"))
            yield here.group(1), text
            continue
        words = shlex.split(line, comments=True)
        while words:
            part, words = (words[: words.index("&&")], words[words.index("&&") + 1 :]) if "&&" in words else (words, [])
            if part[0] == "echo" and len(part) == 4 and part[2] == ">":
                yield part[3], part[1] + "\n"  # echo 'TEXT' > FILE
            else:
                yield part


def why_not_run(words: list[str]) -> str | None:
    line = " ".join(words)
    if "--backend" in words and "ray" in words:
        return "starts a Ray cluster (tests/test_evaluate_cli.py runs Ray)"
    return next((why for start, why in NOT_RUN.items() if line.startswith(start)), None)


def shrink(words: list[str]) -> list[str]:
    """A page's command with the sizes that would take minutes made small."""
    out = list(words)
    for i, word in enumerate(out[:-1]):
        if word == "--rounds" and float(out[i + 1]) > SMALL_ROUNDS:
            out[i + 1] = str(SMALL_ROUNDS)
    if out[0] == "blackjack-evaluate" and "--rounds" not in out:
        out += ["--rounds", str(SMALL_ROUNDS)]  # its default, 1e7, is seconds
    if "--ceiling" in out:  # an exact analysis per sampled shoe takes seconds: two shoes each
        flag = "--samples" if out[0] == "blackjack-strategy" else "--ceiling-samples"
        out = [*out, flag, "2"] if flag not in out else out
        out[out.index(flag) + 1] = "2"
    if out[0] == "blackjack-train":
        ppo = "--algo" in out and out[out.index("--algo") + 1] == "ppo"
        resume = "--resume" in out
        # tabular: one chunk; PPO: one rollout of 2 envs x 512 steps (twice as many when resumed)
        steps = 1 << 18 if not ppo and not resume else (2048 if resume else 1024)
        for flag, value in (("--steps", steps), ("--eval-every", steps)):
            if flag in out:
                out[out.index(flag) + 1] = str(value)
            elif not resume:  # a command on the defaults (a shoe learner's is 2e9 rounds) is shrunk too
                out += [flag, str(value)]
        if not resume:
            out += ["--eval-rounds", str(SMALL_ROUNDS), "--no-progress"]
            if ppo:
                out += ["--n-envs", "2", "--n-steps", "512", "--batch-size", "512", "--n-epochs", "1"]
    return out


def entry_point(program: str) -> Callable[[list[str]], int]:
    from blackjack_env.evaluate.cli import main as evaluate
    from blackjack_env.evaluate.play import main as play
    from blackjack_env.evaluate.strategy import main as strategy
    from blackjack_env.train.cli import main as train

    if program == "blackjack-play":  # a game by hand: an empty input ends it with its summary
        return lambda argv: play(argv, stdin=io.StringIO(""), stdout=io.StringIO())
    return {"blackjack-evaluate": evaluate, "blackjack-strategy": strategy, "blackjack-train": train}[program]


def run_command(words: list[str]) -> None:
    start = time.perf_counter()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = entry_point(words[0])(words[1:])
        except SystemExit as exit_:  # argparse
            code = exit_.code
    assert code == 0, f"{' '.join(words)} exited {code}:\n{err.getvalue()}"
    print(f"{time.perf_counter() - start:6.1f} s  {' '.join(words)}")  # shown with -s or on a failure


def is_analysis(words: list[str]) -> bool:
    """``blackjack-strategy --removal`` and ``--indices``: exact analyses of 10-15 s each on 2 cores
    whatever the sizes, run by their own test so that the two tests share CI's two workers."""
    return words[0] == "blackjack-strategy" and ("--removal" in words or "--indices" in words)


def run_blocks(page: Path, only_analyses: bool) -> int:
    """Run a page's blocks in order in the current folder: every example (``only_analyses``
    False) but the exact analyses, or only those and the files their blocks write (True); the
    number of blocks and commands run."""
    ppo = importlib.util.find_spec("sb3_contrib") is not None  # else the PPO run's commands are left out
    namespace: dict = {"__name__": page.stem}
    ran = 0
    for i, (language, block) in enumerate(blocks(page)):
        if language == "python":
            if only_analyses:
                continue
            try:
                exec(compile(block, f"{page.name} block {i + 1}", "exec"), namespace)
            except Exception as error:  # name the block that failed
                raise AssertionError(f"{page.name} block {i + 1} failed: {error!r}\n{block}") from error
            ran += 1
            continue
        for command in commands(block):
            if isinstance(command, tuple):
                Path(command[0]).write_text(command[1])
            elif (
                why_not_run(command) is None
                and is_analysis(command) == only_analyses
                and (ppo or "runs/ppo" not in command)
            ):
                run_command(shrink(command))
                ran += 1
    return ran
