"""Ctrl-C during ``blackjack-evaluate report``'s simulation: exit 130, one line, and nothing written
(no report files, no temporary folder beside --out), as the README promises.

The report runs in a child process on a pseudo-terminal, so it draws its progress bar; SIGINT is
sent once the bar is up (the simulation has started), as a user's Ctrl-C would be."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

#: Far more rounds than the few seconds the test waits: the simulation is surely still running.
ROUNDS = "1e10"


def _read_until(fd: int, marker: bytes, seconds: float) -> bytes:
    """What the child wrote to the terminal, up to ``marker`` (or the deadline, or its exit)."""
    seen = b""
    deadline = time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_ctrl_c_in_the_simulation_writes_nothing_and_exits_130(tmp_path: Path) -> None:
    out = tmp_path / "report"
    command = [sys.executable, "-m", "blackjack_env.evaluate", "report", "--policy", "basic"]
    command += ["--rounds", ROUNDS, "--workers", "1", "--out", str(out)]
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a bar needs columns
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    try:
        # the bar's unit appears once the timed simulation starts (after any compile of the kernels)
        shown = _read_until(leader, b"round", 300)
        assert b"round" in shown and process.poll() is None, shown.decode(errors="replace")
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        shown += _read_until(leader, b"no report written", 60)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(leader)
    err = shown.decode(errors="replace")
    assert process.returncode == 130, err
    assert "interrupted; no report written" in err and "Traceback" not in err, err
    assert process.stdout is not None and process.stdout.read() == b""
    assert list(tmp_path.iterdir()) == []  # no --out, no temporary folder beside it
