"""The README is true as written: its examples run, in order, from a fresh folder.

Its ```python blocks run in one namespace, its ```bash blocks' commands through the console scripts'
own ``main`` (the same code as the installed commands, without a process start per command),
every file an example reads made by an example before it. Where the README's sizes would take
minutes, the test shrinks them (``shrink``: ``--rounds`` at most ``SMALL_ROUNDS``, one chunk or
rollout of training, fewer evaluation rounds, a smaller PPO rollout); everything else runs as
written. The exact analyses (``--removal``, ``--indices``: 10-15 s each on 2 cores) run in a test of
their own, so that the two share CI's workers. Commands that set up an environment (``pip``,
``python -m venv``, the CI script, pytest, ruff), start a server (``tensorboard``) or a Ray cluster
are not run (``NOT_RUN`` says why each).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"

#: What a README command is not run for, by its first words.
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
}
#: The largest --rounds a README command runs with here (the README's runs take seconds to minutes).
SMALL_ROUNDS = 20_000


def blocks() -> list[tuple[str, str]]:
    """Every ```python and ```bash block, in README order: (language, text)."""
    return re.findall(r"```(python|bash)\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_the_readme_has_python_examples() -> None:
    assert sum(language == "python" for language, _ in blocks()) >= 3


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
    """The README's command with the sizes that would take minutes made small (``SMALL``)."""
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


def run_blocks(only_analyses: bool) -> int:
    """Run the README's blocks in order in the current folder: every example (``only_analyses``
    False) but the exact analyses, or only those and the files their blocks write (True)."""
    ppo = importlib.util.find_spec("sb3_contrib") is not None  # else the PPO run's commands are left out
    namespace: dict = {"__name__": "readme"}
    ran = 0
    for i, (language, block) in enumerate(blocks()):
        if language == "python":
            if only_analyses:
                continue
            try:
                exec(compile(block, f"README.md block {i + 1}", "exec"), namespace)
            except Exception as error:  # name the block that failed
                raise AssertionError(f"README block {i + 1} failed: {error!r}\n{block}") from error
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


@pytest.mark.slow
def test_readme_analyses_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    pytest.importorskip("matplotlib")  # --plot
    assert run_blocks(only_analyses=True) >= 5


@pytest.mark.slow
def test_readme_examples_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a fresh folder: every file an example reads, an example made
    monkeypatch.setattr(sys, "argv", ["readme"])
    pytest.importorskip("matplotlib")  # the plots the examples ask for
    assert run_blocks(only_analyses=False) >= 15
