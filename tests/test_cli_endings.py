"""How a command ends when the user stops it: Ctrl-C anywhere (a kernel compiling, a solver running)
is one line and exit 130; a reader that closes the pipe (``| head``) gets no traceback."""

from __future__ import annotations

import subprocess
import sys

from blackjack_env.evaluate.options import console_entry


def test_ctrl_c_is_one_line_and_exit_130(capsys) -> None:
    @console_entry("blackjack-demo")
    def main() -> int:
        raise KeyboardInterrupt

    assert main() == 130
    assert capsys.readouterr().err == "blackjack-demo: interrupted\n"


def test_a_returned_status_passes_through() -> None:
    assert console_entry("blackjack-demo")(lambda code: code)(3) == 3


def _reader_leaves_after_one_line(code: str) -> tuple[int, bytes]:
    """Run ``code`` writing into a pipe whose reader leaves after the first line."""
    command = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert command.stdout is not None and command.stdout.readline()
    command.stdout.close()  # the reader leaves; the command writes on into a closed pipe
    _, err = command.communicate(timeout=120)
    return command.returncode, err


#: A command printing far more than a pipe buffers (64 KiB), as ``--format csv --removal | head`` does.
CHATTY = (
    "import sys\nfrom blackjack_env.evaluate.options import console_entry\n"
    "def main():\n    for i in range(100_000):\n        print('row', i)\n    return 0\n"
)


def test_a_closed_pipe_is_no_traceback() -> None:
    code, err = _reader_leaves_after_one_line(CHATTY + "sys.exit(console_entry('blackjack-demo')(main)())")
    assert (code, err) == (141, b"")
    code, err = _reader_leaves_after_one_line(CHATTY + "sys.exit(main())")  # what the wrapper spares
    assert b"BrokenPipeError" in err
