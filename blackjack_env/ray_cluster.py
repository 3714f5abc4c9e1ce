"""The one way this package starts or joins Ray (``--backend ray``, ``--ray-address``).

:func:`start_or_join` starts a local Ray with a given number of CPUs, or joins the cluster at an
address; every Ray run of the package (the simulator's chunks, the shoe learners' chunks, the
ceiling's shoes, all mapped by ``blackjack_env.parallel``) goes through it. :func:`check_address` is
its fast refusal, which the commands call before they do any work or write anything: an address with
no cluster behind it is a :class:`RayUnavailable` (a ``ValueError``, so each command prints it as one
line and exits 2).

Ray itself retries a dead address for many minutes (measured with Ray 2.60: ``ray.init`` gave up on
``127.0.0.1:1`` after 820 s), so the address is probed first with one TCP connection that gives up
after ``CONNECT_SECONDS``. Ray is imported inside the functions: importing this module costs nothing.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

#: How long the probe of a cluster's address waits for a connection.
CONNECT_SECONDS = 5.0
#: The port of a ``ray://`` address that names none (Ray Client's default).
RAY_CLIENT_PORT = 10001
#: What to do when no cluster answers: said at the end of every such error.
ADVICE = (
    "start one with `ray start --head` (and give the address it prints), "
    "or leave out --ray-address to start a local Ray"
)
INSTALL = "the ray backend needs Ray: pip install 'blackjack-env[ray]'"
LOOPBACK = ("localhost", "127.0.0.1", "::1")


class RayUnavailable(ValueError):
    """Ray is not installed, or no Ray cluster answers at the address given (one line, for the user)."""


def _joined() -> bool:
    """Whether this process is already connected to a Ray (an address is then not used)."""
    ray = sys.modules.get("ray")
    return ray is not None and bool(ray.is_initialized())


def _import_ray() -> Any:
    try:
        import ray  # optional dependency: Ray (the ray extra)
    except ImportError:
        raise RayUnavailable(INSTALL) from None
    return ray


def _host_port(address: str) -> tuple[str, int]:
    """HOST:PORT or ray://HOST[:PORT] split, or a one-line refusal of any other form."""
    text = address.removeprefix("ray://")
    host, colon, port = text.rpartition(":")
    if not colon and address.startswith("ray://") and text:
        host, port = text, str(RAY_CLIENT_PORT)
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RayUnavailable(
            f"--ray-address {address}: not an address Ray joins; give auto, HOST:PORT (the address "
            "`ray start --head` prints, e.g. 10.0.0.5:6379) or ray://HOST:PORT"
        )
    return host.strip("[]"), int(port)


def _answers(host: str, port: int) -> str | None:
    """None when something accepts a TCP connection at host:port, else why not (a few words)."""
    try:
        with socket.create_connection((host, port), timeout=CONNECT_SECONDS):
            return None
    except socket.gaierror:
        return f"no such host {host!r}"
    except TimeoutError:
        return f"no answer within {CONNECT_SECONDS:g} s"
    except OSError as error:
        return (error.strerror or str(error)).lower()


def _resolve_auto(ray: Any) -> str:
    """``auto``'s cluster as Ray finds it (RAY_ADDRESS, then the last ``ray start`` on this machine,
    then any running one), or a one-line refusal when there is none."""
    if os.environ.get("RAY_ADDRESS", "auto") != "auto":
        return os.environ["RAY_ADDRESS"]
    try:
        from ray._private.services import canonicalize_bootstrap_address  # optional dependency: Ray
    except ImportError:  # another Ray version: ray.init's own lookup fails fast for auto
        return ""
    try:
        found = canonicalize_bootstrap_address("auto")
    except ValueError:  # an address Ray cannot parse: ray.init says so
        return ""
    except ConnectionError:
        raise RayUnavailable(f"--ray-address auto: no running Ray cluster found on this machine; {ADVICE}") from None
    return found or ""


def check_address(address: str | None) -> None:
    """Refuse, in one line (:class:`RayUnavailable`) and within seconds, a Ray that cannot be
    used: Ray not installed, or an ``address`` (``auto``, ``HOST:PORT``, ``ray://HOST:PORT``) where
    no cluster answers. No address (or ``local``) starts a local Ray, which needs only Ray."""
    if _joined():
        return
    ray = _import_ray()
    if not address or address == "local":
        return
    given = address
    if address == "auto":
        address = _resolve_auto(ray)
        if not address:
            return
        given = f"auto (RAY_ADDRESS={address})" if os.environ.get("RAY_ADDRESS") else f"auto ({address})"
    host, port = _host_port(address)
    why = _answers(host, port)
    if why is not None and host in LOOPBACK:
        # Ray joins a loopback address at this machine's own IP (where `ray start --head` listens)
        try:
            node = ray.util.get_node_ip_address()
        except Exception:  # no network to name: the loopback answer stands
            node = host
        if node != host and _answers(node, port) is None:
            why = None
    if why is not None:
        raise RayUnavailable(f"--ray-address {given}: no Ray cluster answers there ({why}); {ADVICE}")


def start_or_join(address: str | None, cpus: int) -> bool:
    """Join the Ray cluster at ``address``, or with none start a local Ray of ``cpus`` CPUs; True
    when this call connected (the caller calls ``ray.shutdown()`` when done), False when the process
    was already connected to a Ray, which is then used as it is. A Ray that cannot be reached is a
    :class:`RayUnavailable` naming the address and what to do, never Ray's traceback.

    While joining, what Ray's core writes to the terminal (a warning a second while it retries) is held
    back: on success it is shown as it was, on failure it is read for the reason (a cluster that wants
    an authentication token) and the reason is said in the one line."""
    ray = _import_ray()
    if ray.is_initialized():
        return False
    check_address(address)
    if not address:
        try:
            ray.init(num_cpus=max(1, int(cpus)), include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        except ConnectionError as error:
            raise RayUnavailable(f"--backend ray: a local Ray did not start ({_first_line(error)})") from None
        return True
    with _held_stderr() as held:
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
            refused = None
        except ConnectionError as failure:  # the probe answered, Ray did not
            refused = failure
    if refused is None:
        sys.stderr.write(held[0])
        return True
    if "InvalidAuthToken" in held[0] or "Unauthenticated" in held[0]:
        raise RayUnavailable(
            f"--ray-address {address}: the cluster wants its authentication token (`ray start` turns token "
            "authentication on by default); set RAY_AUTH_MODE=token here, with the token in ~/.ray/auth_token "
            "or RAY_AUTH_TOKEN (see `ray get-auth-token`)"
        ) from None
    raise RayUnavailable(f"--ray-address {address}: Ray could not connect ({_first_line(refused)}); {ADVICE}") from None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


@contextlib.contextmanager
def _held_stderr() -> Iterator[list[str]]:
    """Everything written to file descriptor 2 (Python's and Ray's C++ core's) kept in a temporary file
    while the block runs; the list then holds it as text. Without a real descriptor 2, nothing is held."""
    held = [""]
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield held
        return
    with tempfile.TemporaryFile() as keep:
        os.dup2(keep.fileno(), 2)
        try:
            yield held
        finally:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            keep.seek(0)
            held[0] = keep.read().decode(errors="replace")
