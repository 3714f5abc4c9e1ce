"""The package's ``njit``: a kernel-to-kernel call compiles one copy per argument type, on a twin
dispatcher without Python's wrapper, while a Python call still gets a copy it can call."""

from __future__ import annotations

import numpy as np

from blackjack_env import _jit, engine


def _kernels():
    """A fresh callee and caller (uncached), so that each test sees its own compilations."""

    @_jit.njit(_nrt=False)
    def bump(a, i, by):
        a[i] += by
        return a[i]

    @_jit.njit(_nrt=False)
    def caller(a):
        bump(a, 0, 1)
        bump(a, 1, 2)  # other constants: the same types, so the same compiled copy
        return bump(a, np.int16(2), 3)  # a narrower integer: passed as int64, the same copy again

    return bump, caller


def test_a_kernel_called_from_a_kernel_compiles_once_per_type_on_its_twin() -> None:
    bump, caller = _kernels()
    a = np.zeros(3, np.int64)
    assert caller(a) == 3
    assert a.tolist() == [1, 2, 3]
    twin = bump._kernel_twin()
    assert len(twin.overloads) == 1  # not one per constant or integer width
    assert twin.targetoptions["no_cpython_wrapper"] and twin.targetoptions["no_cfunc_wrapper"]
    assert bump.overloads == {}  # Python never called it: no copy with a wrapper was compiled
    assert twin.py_func.__qualname__.endswith(_jit.TWIN_SUFFIX)


def test_python_calls_a_kernel_through_its_own_wrapped_copy_after_kernels_called_it() -> None:
    bump, caller = _kernels()
    caller(np.zeros(3, np.int64))
    a = np.zeros(2, np.int64)
    assert bump(a, 1, 5) == 5  # the twin's copy has no Python wrapper: this one does
    assert a.tolist() == [0, 5]
    assert len(bump.overloads) == 1
    assert bump._kernel_twin() is bump._kernel_twin()  # made once


def test_a_twin_caches_under_its_own_name() -> None:
    """The twin's cache entries never answer a Python call (numba's cache index does not key on the
    wrapper options): they are files of their own."""
    twin = engine.hand_total._kernel_twin()
    assert type(twin._cache).__name__ == "FunctionCache"
    ours, its = engine.hand_total._cache._cache_file._index_name, twin._cache._cache_file._index_name
    assert ours != its and _jit.TWIN_SUFFIX in its
