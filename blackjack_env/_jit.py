"""numba's ``njit`` for this package's compiled modules, with the package's cache locator installed first.

numba picks a kernel's cache place when the kernel is decorated, so the locator (``_source.use_numba_cache``)
must be in place before the first ``@njit`` of the package runs. Every compiled module takes ``njit`` from
here, so the first of them to be imported installs it, and ``import blackjack_env`` alone imports no numba
(a quarter of a second of CPU that registering the envs does not need).

A kernel called from another kernel is compiled once per argument *type*. numba's own dispatcher types
a constant argument as its value (``seat_slot(0, 5)`` as ``Literal[int](0), Literal[int](5)``) and
compiles a copy of the callee, and of everything it calls, for each constant; the env's first step
compiled seat_slot 12 times. LLVM still folds the constants once it inlines the callee.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._source import use_numba_cache

#: numba's cache folder for this package's kernels (None where the user's NUMBA_CACHE_DIR stands).
CACHE_FOLDER = use_numba_cache()

import numba  # noqa: E402  (after the locator: see the module's docstring)
from numba.core import types  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402


class _TypeDispatcher(CPUDispatcher):
    """numba's CPU dispatcher, compiling a kernel-to-kernel call for its arguments' types, not their values."""

    def get_call_template(self, args: Any, kws: Any) -> Any:
        return super().get_call_template(
            tuple(types.unliteral(arg) for arg in args), {key: types.unliteral(arg) for key, arg in kws.items()}
        )


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


__all__ = ["CACHE_FOLDER", "njit"]
