"""numba's ``njit`` for this package's compiled modules, with the package's cache locator installed first.

numba picks a kernel's cache place when the kernel is decorated, so the locator (``_source.use_numba_cache``)
must be in place before the first ``@njit`` of the package runs. Every compiled module takes ``njit`` from
here, so the first of them to be imported installs it, and ``import blackjack_env`` alone imports no numba
(a quarter of a second of CPU that registering the envs does not need).
"""

from __future__ import annotations

from ._source import use_numba_cache

#: numba's cache folder for this package's kernels (None where the user's NUMBA_CACHE_DIR stands).
CACHE_FOLDER = use_numba_cache()

from numba import njit  # noqa: E402  (after the locator: see the module's docstring)

__all__ = ["CACHE_FOLDER", "njit"]
