"""Card names at the edges of the project (the engine works with codes 1..13)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
_CODE_OF = {name: code for code, name in enumerate(RANK_NAMES, start=1)}
_CODE_OF.update({"T": 10, "1": 1, "11": 1, "ACE": 1, "JACK": 11, "QUEEN": 12, "KING": 13})


def card_code(card: str | int) -> int:
    """Engine code (1 = ace .. 10, 11 J, 12 Q, 13 K) of a rank name such as 'A', '10' or 'K'.

    Integers 1..10 are taken as card values (1 = ace, 10 = ten)."""
    if isinstance(card, bool):
        raise ValueError(f"card {card!r} is not a rank; use one of {', '.join(RANK_NAMES)}")
    if isinstance(card, int):
        if 1 <= card <= 10:
            return card
        raise ValueError(f"card {card!r} is not a rank; use one of {', '.join(RANK_NAMES)} (or 1..10)")
    if isinstance(card, str):
        code = _CODE_OF.get(card.strip().upper())
        if code is not None:
            return code
    raise ValueError(f"card {card!r} is not a rank; use one of {', '.join(RANK_NAMES)}")


def card_codes(cards: Iterable[str | int]) -> list[int]:
    if isinstance(cards, (str, bytes)):
        raise ValueError(f"cards must be a list of ranks such as ['A', 'K', '7'], got the string {cards!r}")
    return [card_code(card) for card in cards]


def card_name(code: int) -> str:
    return RANK_NAMES[int(code) - 1]


def card_names(codes: Sequence[int]) -> list[str]:
    return [card_name(code) for code in codes]
