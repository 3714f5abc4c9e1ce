"""Write the presets' solutions that ship with the package (``blackjack_env/solver/bundled/``).

``solve`` reads a preset's shipped solution instead of compiling the solver and analysing it, which
spares a new user's first command (the quick start) the solver's compile. Run this after a change
to the solver's results or to the presets; ``tests/test_bundled_solutions.py`` fails until then::

    python tools/bundle_solutions.py
"""

from __future__ import annotations

from blackjack_env.rules import PRESETS
from blackjack_env.solver.solution import BUNDLE_DIR, solve


def main() -> None:
    BUNDLE_DIR.mkdir(exist_ok=True)
    for stale in BUNDLE_DIR.glob("*.npz"):
        stale.unlink()
    for name, preset in PRESETS.items():
        solve(preset.rules, cache=False).save(BUNDLE_DIR / f"{name}.npz", compressed=True)
        print(f"{name}: {(BUNDLE_DIR / f'{name}.npz').stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
