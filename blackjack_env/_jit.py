"""numba's ``njit`` for this package's compiled modules, with the package's cache locator installed first.

numba picks a kernel's cache place when the kernel is decorated, so the locator (``_source.use_numba_cache``)
must be in place before the first ``@njit`` of the package runs. Every compiled module takes ``njit`` from
here, so the first of them to be imported installs it, and ``import blackjack_env`` alone imports no numba
(a quarter of a second of CPU that registering the envs does not need).

A kernel called from another kernel is compiled once per argument *type*. numba's own dispatcher types
a constant argument as its value (``seat_slot(0, 5)`` as ``Literal[int](0), Literal[int](5)``) and
compiles a copy of the callee, and of everything it calls, for each constant; the env's first step
compiled seat_slot 12 times. LLVM still folds the constants once it inlines the callee. A narrower
integer argument is passed as int64 for the same reason (one copy, not one per integer width).

A kernel called from another kernel is also compiled without the two wrappers numba gives every
kernel by default, one that Python calls it through (unboxing each array) and one for C callers:
only the kernels Python calls need them, and leaving them out of the others takes about an eighth
off an env's first compile (``benchmarks/first_step.py``). That copy is a twin dispatcher of the
same function (``_twin_of``), made on the first kernel-to-kernel call and cached under its own
name, so a Python call never lands on a copy without its wrapper.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from types import FunctionType
from typing import Any

from ._source import use_numba_cache

#: numba's cache folder for this package's kernels (None where the user's NUMBA_CACHE_DIR stands).
CACHE_FOLDER = use_numba_cache()

import numba  # noqa: E402  (after the locator: see the module's docstring)
from numba.core import types  # noqa: E402
from numba.core.caching import NullCache  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402


def _call_type(arg: Any) -> Any:
    """The type a kernel-to-kernel call compiles for: a constant as its type, and a narrower integer
    (an ``int16`` read from the hands array) as int64, which holds its every value."""
    arg = types.unliteral(arg)
    # numba's Integer sets bitwidth and signed in its __init__, which its annotations leave out
    if isinstance(arg, types.Integer) and arg.bitwidth < 64 and (arg.signed or arg.bitwidth < 32):  # type: ignore[attr-defined]
        return types.int64
    return arg


#: The suffix of a kernel twin's qualified name: its own entries in numba's cache.
TWIN_SUFFIX = ".kernel"


def _twin_of(kernel: Any) -> Any:
    """The copy of ``kernel`` that other kernels call: the same code and options, no Python or C wrapper."""
    function = kernel.py_func
    code, defaults, closure = function.__code__, function.__defaults__, function.__closure__
    twin = FunctionType(code, function.__globals__, function.__name__, defaults, closure)
    twin.__qualname__ = function.__qualname__ + TWIN_SUFFIX
    twin.__kwdefaults__, twin.__doc__ = function.__kwdefaults__, function.__doc__
    options = {key: value for key, value in kernel.targetoptions.items() if key != "nopython"}  # njit's own
    options.update(no_cpython_wrapper=True, no_cfunc_wrapper=True)
    return numba.njit(cache=not isinstance(kernel._cache, NullCache), **options)(twin)


class _TypeDispatcher(CPUDispatcher):
    """numba's CPU dispatcher, for Python's calls; a kernel-to-kernel call goes to its twin (``_twin_of``),
    compiled for the arguments' types, not their values."""

    _twin_kernel: Any = None

    def _kernel_twin(self) -> Any:
        if self._twin_kernel is None:
            self._twin_kernel = _twin_of(self)
        return self._twin_kernel

    def get_call_template(self, args: Any, kws: Any) -> Any:
        return self._kernel_twin().get_call_template(
            tuple(_call_type(arg) for arg in args), {key: _call_type(arg) for key, arg in kws.items()}
        )

    def get_overload(self, sig: Any) -> Any:
        """The twin's compiled function: what a kernel-to-kernel call (typed by ``get_call_template``) links."""
        return self._kernel_twin().get_overload(sig)


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` (same arguments), its kernels compiled once per argument type (see the module's docstring)."""
    if args and callable(args[0]):
        return njit(**options)(args[0])
    decorate = numba.njit(*args, **options)

    def wrap(function: Callable[..., Any]) -> Any:
        kernel = decorate(function)
        if isinstance(kernel, CPUDispatcher):  # not under NUMBA_DISABLE_JIT
            kernel.__class__ = _TypeDispatcher
        return kernel

    return wrap


#: A kernel's first call still running after this many seconds is compiling (loading numba's cache
#: takes well under a second), and ``compiling_notice`` says so.
NOTICE_AFTER_SECONDS = 1.0

#: What compiling an env's kernels takes, said while it happens (``benchmarks/first_step.py``, cold).
COMPILE_ESTIMATE = "about 8-10 s of CPU"

_noticed = threading.Event()  # one notice a process: later kernels compile while the user already knows


def silence_compiling_notice() -> None:
    """For a command that says itself what it compiles (``blackjack-compile``)."""
    _noticed.set()


def compiles_on_call(kernel: Any) -> bool:
    """True before a kernel's first call in this process: that call compiles it or loads numba's cache."""
    return not getattr(kernel, "overloads", True)  # a plain function under NUMBA_DISABLE_JIT never compiles


def first_call_notice(kernel: Any, what: str) -> AbstractContextManager[None]:
    """``compiling_notice(what)`` around a kernel's first call in this process; nothing around later calls."""
    return compiling_notice(what) if compiles_on_call(kernel) else nullcontext()


@contextmanager
def compiling_notice(what: str) -> Iterator[None]:
    """Around a kernel's first call: one line on stderr if it is still running after
    ``NOTICE_AFTER_SECONDS`` (numba compiling it), so a user knows why the first step waits."""
    if _noticed.is_set():
        yield
        return

    def say() -> None:
        if not _noticed.is_set():
            _noticed.set()
            print(
                f"blackjack_env: compiling {what} (once, {COMPILE_ESTIMATE}; numba caches it for later runs, "
                "and `blackjack-compile` does it up front)...",
                file=sys.stderr,
                flush=True,
            )

    timer = threading.Timer(NOTICE_AFTER_SECONDS, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


__all__ = [
    "CACHE_FOLDER",
    "COMPILE_ESTIMATE",
    "compiles_on_call",
    "compiling_notice",
    "first_call_notice",
    "njit",
    "silence_compiling_notice",
]
