"""Pictures of the table: ``render_mode="rgb_array"`` frames and the text they share.

Every env describes its table as a :class:`TableView` (plain data: the dealer's cards, each seat's
hands, bets and totals, the acting hand, a footer with the count and the shoe's depth);
``draw_table`` paints it as an ``(H, W, 3) uint8`` frame with Pillow, ``table_text`` writes it
as text. Frames keep one size for an env's whole life (video writers need that): ``FRAME_HEIGHT``
and ``SEAT_WIDTH`` per seat. Pillow is an optional dependency (``blackjack-env[render]``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FRAME_HEIGHT = 480
SEAT_WIDTH = 200  # pixels a seat's column takes; a frame is at least MIN_WIDTH wide
MIN_WIDTH = 480
CARD_W, CARD_H = 40, 56
FELT = (22, 96, 56)
CARD_FACE = (250, 250, 245)
CARD_BACK = (40, 70, 160)
INK = (20, 20, 20)
LABEL = (235, 235, 220)
ACTING = (255, 210, 40)


@dataclass
class TableView:
    """What a picture of the table shows (every field plain Python)."""

    dealer: list[str]  # the dealer's cards, the hole card first among the hidden ones
    hole_hidden: bool  # the hole card is face down (drawn as a card back)
    dealer_total: int | None  # None while the hole card is hidden
    seats: list[dict[str, Any]]  # each: name, playing, bet, hands (cards, total, bet, status, result), acting_hand
    over: bool  # the round is settled (results shown)
    footer: list[str] = field(default_factory=list)  # rules, count, shoe depth, the phase's question


def env_view(env: Any) -> TableView:
    """The view of a single env (``BlackjackEnv`` or ``BlackjackShoeEnv``): every seat, the
    agent's marked "you", its acting hand marked while it decides."""
    from . import engine as E

    summary = env.round_summary()
    seats = summary.get("seats") or [{k: v for k, v in summary.items() if k != "dealer"}]
    over = env._st[E.S_PHASE] == E.P_OVER
    playing = env._st[E.S_PHASE] in (E.P_PLAY, E.P_INSURANCE, E.P_SETTLE) and env._mask[: E.N_ACTIONS].any()
    bets = getattr(env, "bets", None)
    level = int(env._st[E.S_BET_LEVEL]) if bets else 0
    for seat in seats:
        mine = seat["seat"] == env.seat
        seat["name"] = "you" if mine else f"seat {seat['seat']}"
        stake = (bets[level] if mine else 1.0) if bets else 1.0
        seat["bet"] = stake if seat["playing"] and not env._st[E.S_BETTING] else 0.0
        seat["acting_hand"] = int(env._st[E.S_CUR]) - env.seat * E.MAX_HANDS if mine and playing else -1
    footer = [env.rules.describe()]
    if hasattr(env, "hilo_count"):
        footer.append(count_line(env._st, env.rules.decks, len(env._shoe)))
    if env._st[E.S_BETTING]:
        footer.append("Your bet is due")
    return _view(env._st, seats, over, footer)


def table_view(table: Any) -> TableView:
    """The view of the PettingZoo table (``multiagent.BlackjackTableEnv``)."""
    from . import engine as E

    seats = table.view_seats()
    over = table._st[E.S_PHASE] == E.P_OVER
    footer = [table.rules.describe()]
    if not table.rules.infinite:
        footer.append(count_line(table._st, table.rules.decks, len(table._shoe)))
    if table.agents and table._betting >= 0:
        footer.append(f"{table.agent_selection}: bet due")
    elif table.agents and not over:
        footer.append(f"{table.agent_selection} to act")
    return _view(table._st, seats, over, footer)


def count_line(st: np.ndarray, decks: int, shoe_size: int) -> str:
    """The count and the shoe's depth in words: ``Hi-Lo running +3, true +1.2; 40 of 312 cards dealt``."""
    from . import engine as E
    from .shoe_env import hilo_count

    running, unseen = hilo_count(st, decks)
    return (
        f"Hi-Lo running {running:+d}, true {E.per_unseen_deck(running, unseen):+.1f}; "
        f"{int(st[E.S_SHOE_POS])} of {shoe_size} cards dealt"
    )


def _view(st: np.ndarray, seats: list[dict[str, Any]], over: bool, footer: list[str]) -> TableView:
    from . import engine as E
    from .env import dealer_summary

    dealer = dealer_summary(st)
    hidden = bool(st[E.S_HOLE_HIDDEN])
    return TableView(dealer["cards"], hidden, None if hidden else dealer["total"], seats, bool(over), footer)


def table_text(view: TableView) -> str:
    """The view as text (the PettingZoo table's ``ansi`` and ``human`` modes)."""
    cards = [view.dealer[0], "??"] if view.hole_hidden else view.dealer
    total = "" if view.dealer_total is None else f"  ({view.dealer_total})"
    lines = [f"Dealer: {' '.join(cards)}{total}"]
    for seat in view.seats:
        bet = f"bet {seat['bet']:g}" if seat["playing"] else "sits out"
        lines.append(f"{seat['name']}: {bet}")
        for i, hand in enumerate(seat["hands"]):
            marker = "->" if i == seat["acting_hand"] else "  "
            result = f"  result {hand['result']:+g}" if view.over else ""
            lines.append(f"{marker} {' '.join(hand['cards']):<16} {hand['total']:<3} {hand['status']}{result}")
    return "\n".join(lines + view.footer)


@functools.lru_cache(maxsize=4)
def _font(size: int) -> Any:
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


def _pil() -> Any:
    try:
        from PIL import Image, ImageDraw
    except ImportError as error:  # pragma: no cover - exercised only without Pillow
        raise ImportError("render_mode='rgb_array' needs Pillow: pip install 'blackjack-env[render]'") from error
    return Image, ImageDraw


def frame_size(seats: int) -> tuple[int, int]:
    """(height, width) of every frame of a table of ``seats``."""
    return FRAME_HEIGHT, max(MIN_WIDTH, SEAT_WIDTH * seats)


def draw_table(view: TableView) -> np.ndarray:
    """The view as an ``(H, W, 3) uint8`` picture: the dealer's cards at the top (the hole card
    face down while hidden), each seat's column below with its bet, hands and totals, the acting
    hand framed in yellow, and the footer's lines at the bottom."""
    image_module, draw_module = _pil()
    height, width = frame_size(len(view.seats))
    image = image_module.new("RGB", (width, height), FELT)
    draw = draw_module.Draw(image)
    big, small = _font(20), _font(14)

    dealer = list(view.dealer)
    x0 = width // 2 - (len(dealer) * (CARD_W + 6)) // 2
    for i, card in enumerate(dealer):
        _card(draw, x0 + i * (CARD_W + 6), 30, card, big, face_down=view.hole_hidden and i == 1)
    total = "" if view.dealer_total is None else f"  {view.dealer_total}"
    draw.text((width // 2, 12), f"Dealer{total}", fill=LABEL, font=small, anchor="mm")

    column = width / max(len(view.seats), 1)
    top, bottom = 120, height - 18 * len(view.footer) - 10
    for s, seat in enumerate(view.seats):
        left = int(s * column) + 8
        bet = f"bet {seat['bet']:g}" if seat["playing"] else "sits out"
        draw.text((left, top - 22), f"{seat['name']}  {bet}", fill=LABEL, font=small)
        hands = seat["hands"]
        step = min(CARD_H + 26, (bottom - top) // max(len(hands), 1))
        for i, hand in enumerate(hands):
            y = top + i * step
            offset = min(CARD_W + 4, int((column - 24 - CARD_W) / max(len(hand["cards"]) - 1, 1)))
            for c, card in enumerate(hand["cards"]):
                _card(draw, left + c * offset, y, card, big)
            if i == seat["acting_hand"]:
                right = left + (len(hand["cards"]) - 1) * offset + CARD_W
                draw.rectangle((left - 4, y - 4, right + 4, y + CARD_H + 4), outline=ACTING, width=3)
            label = f"{hand['total']}  x{hand['bet']:g}  {hand['status']}"
            if view.over:
                label += f"  {hand['result']:+g}"
            draw.text((left, y + CARD_H + 6), label, fill=LABEL, font=small)
    for i, line in enumerate(view.footer):
        draw.text((8, height - 18 * (len(view.footer) - i) - 4), line[: width // 7], fill=LABEL, font=small)
    return np.asarray(image, dtype=np.uint8)


def _card(draw: Any, x: int, y: int, rank: str, font: Any, face_down: bool = False) -> None:
    """One card: a white face with its rank in the corner and the middle, or a blue back."""
    box = (x, y, x + CARD_W, y + CARD_H)
    if face_down:
        draw.rounded_rectangle(box, radius=5, fill=CARD_BACK, outline=CARD_FACE, width=2)
        return
    draw.rounded_rectangle(box, radius=5, fill=CARD_FACE, outline=INK, width=1)
    draw.text((x + CARD_W // 2, y + CARD_H // 2), rank, fill=INK, font=font, anchor="mm")


def display_available() -> bool:
    """Whether "human" mode can open a window: matplotlib with an interactive backend (a
    display); else the envs print their text."""
    try:
        import matplotlib
        from PIL import Image  # noqa: F401  (the frames need Pillow)
    except ImportError:
        return False
    return matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "ps", "cairo", "template")


def show(frame: np.ndarray, state: dict[str, Any]) -> None:
    """Show a frame in the window kept in ``state`` (opened on the first call)."""
    import matplotlib.pyplot as plt

    if "figure" not in state or not plt.fignum_exists(state["figure"].number):
        state["figure"], axes = plt.subplots()
        axes.axis("off")
        state["image"] = axes.imshow(frame)
    else:
        state["image"].set_data(frame)
    plt.pause(0.001)


__all__ = [
    "FRAME_HEIGHT",
    "TableView",
    "count_line",
    "display_available",
    "draw_table",
    "env_view",
    "frame_size",
    "show",
    "table_text",
    "table_view",
]
