"""Random rule sets over every Rules field, shared by the differential and consistency tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from blackjack_env import Rules


def random_rules(
    rng: np.random.Generator,
    decks: Sequence[int] = (0, 1, 2, 6, 8),
    penetrations: Sequence[float] = (0.0,),
) -> Rules:
    """A random rule set, the unusual corners included."""
    return Rules(
        decks=int(rng.choice(decks)),
        hit_soft_17=bool(rng.integers(2)),
        blackjack_pays=float(rng.choice([1.5, 1.2, 1.0])),
        double_on=str(rng.choice(["any", "9-11", "10-11"])),
        double_after_split=bool(rng.integers(2)),
        split_to=int(rng.integers(1, 9)),
        split_by_value=bool(rng.integers(2)),
        resplit_aces=bool(rng.integers(2)),
        hit_split_aces=bool(rng.integers(2)),
        surrender=str(rng.choice(["none", "late", "early"])),
        surrender_vs_ace_ten=bool(rng.integers(2)),
        peek=bool(rng.integers(2)),
        obo=bool(rng.integers(2)),
        insurance=bool(rng.integers(2)),
        even_money=bool(rng.integers(2)),
        penetration=float(rng.choice(penetrations)),
    )


def rules_strategy(penetration: bool = True) -> Any:
    """Hypothesis strategy over every Rules field (shared by the property tests); with
    ``penetration`` also shoes dealt to a cut card."""
    from hypothesis import strategies as st

    from blackjack_env.rules import DOUBLE_ON_CHOICES, MAX_HANDS, SURRENDER_CHOICES

    return st.builds(
        Rules,
        decks=st.sampled_from([0, 1, 2, 6, 8]),
        hit_soft_17=st.booleans(),
        blackjack_pays=st.sampled_from([1.0, 1.2, 1.5, 2.0]),
        double_on=st.sampled_from(DOUBLE_ON_CHOICES),
        double_after_split=st.booleans(),
        split_to=st.integers(1, MAX_HANDS),
        split_by_value=st.booleans(),
        resplit_aces=st.booleans(),
        hit_split_aces=st.booleans(),
        surrender=st.sampled_from(SURRENDER_CHOICES),
        surrender_vs_ace_ten=st.booleans(),
        peek=st.booleans(),
        obo=st.booleans(),
        insurance=st.booleans(),
        even_money=st.booleans(),
        penetration=st.one_of(st.just(0.0), st.floats(0.05, 0.95)) if penetration else st.just(0.0),
    )
