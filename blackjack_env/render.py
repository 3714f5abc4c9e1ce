"""Pictures of the table: ``render_mode="rgb_array"`` frames and the text they share.

Every env describes its table as a :class:`TableView` (plain data: the dealer's cards, each seat's
hands, bets, totals and results in table-minimum units, the acting hand, a footer with the count
and the shoe's depth); ``draw_table`` paints it as an ``(H, W, 3) uint8`` frame with Pillow,
``table_lines``/``table_text`` write it as text. Both take their words from the same functions
(``seat_labels``, ``hand_labels`` and the text helpers), so a frame and the text say the same
amounts: a seat's result is its reward. Seats are numbered from 0, as the envs' ``seat`` argument
and the PettingZoo agents (``seat_0``) number them. Frames keep one size for an env's whole life
(video writers need that): ``FRAME_HEIGHT`` and ``SEAT_WIDTH`` per seat. Pillow is a core
dependency; matplotlib, for ``"human"`` mode's window, is the ``report`` extra's.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from . import engine as E
from .cards import card_codes
from .counting import hilo_count
from .slots import View
from .summary import dealer_summary

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
SEATS_TOP = 136  # the first hand's cards; a seat's labels are written in the lines above
LINE = 16  # pixels a line of label text takes


@dataclass
class TableView:
    """What a picture of the table shows (every field plain Python).

    Money is in table-minimum units, as the envs' rewards are: each seat's ``bet`` is the bet it
    placed for the round on the table (1 in ``Blackjack-v0`` and at the PettingZoo round table; the
    bet chosen in shoe games; ``None`` while nothing is dealt), each hand's ``bet`` its stake (a
    doubled hand twice the seat's bet, each split hand the seat's bet), each ``result`` the amount
    won or lost, and a seat's ``result`` its net result of the round: the env's reward for that
    seat (with ``reward="sampled"``; with ``"expected"`` the reward is the expectation and the
    picture shows the result as dealt, ``info["result"]`` times the bet).

    Each seat: ``seat`` (its box, 0 first dealt), ``name``, ``you`` (the agent's box of a single
    env), ``playing`` (False: it sits the round out), ``bet``, ``hands`` (each: ``cards``,
    ``total``, ``soft``, ``bet``, ``doubled``, ``split``, ``status``, ``result``),
    ``insurance_state``, ``insurance`` (its result), ``result`` and ``acting_hand`` (the index of
    the hand whose decision is due, else -1).
    """

    dealer: list[str]  # the dealer's cards, the hole card second
    hole_hidden: bool  # the hole card is face down (drawn as a card back)
    dealer_total: int | None  # None while the hole card is hidden
    seats: list[dict[str, Any]]
    over: bool  # a round is settled on the table (results shown)
    footer: list[str] = field(default_factory=list)  # rules, count, shoe depth, the phase's question

    @property
    def dealer_soft(self) -> bool:
        return self.dealer_total is not None and is_soft(self.dealer, self.dealer_total)


def is_soft(cards: list[str], total: int) -> bool:
    """Whether a hand of these cards with this best total counts an ace as 11."""
    return total > sum(min(code, 10) for code in card_codes(cards))


def total_text(total: int, soft: bool) -> str:
    """A total as players say it: ``18``, or ``soft 18`` when an ace counts 11."""
    return f"soft {total}" if soft else str(total)


def seat_view(
    summary: dict[str, Any], bet: float, name: str, acting_hand: int = -1, you: bool = False
) -> dict[str, Any]:
    """A seat of the view from its round summary (``env.seat_summary``: amounts per unit bet) and
    the bet it placed: every amount in table-minimum units (the summary's times ``bet``)."""
    dealt = summary["playing"] and bool(summary["hands"])
    return {
        "seat": summary["seat"],
        "name": name,
        "you": you,
        "playing": summary["playing"],
        "bet": float(bet) if dealt else None,
        "hands": [
            {
                **hand,
                "soft": is_soft(hand["cards"], hand["total"]),
                "bet": hand["bet"] * bet,
                "result": hand["result"] * bet,
            }
            for hand in summary["hands"]
        ],
        "insurance_state": summary["insurance_state"],
        "insurance": summary["insurance"] * bet,
        "result": summary["result"] * bet if dealt else 0.0,
        "acting_hand": acting_hand,
    }


def env_view(env: Any) -> TableView:
    """The view of a single env (``BlackjackEnv`` or ``BlackjackShoeEnv``): every seat, the
    agent's marked "you", its acting hand marked while it decides."""
    summary = env.round_summary()
    seats = summary.get("seats") or [{k: v for k, v in summary.items() if k != "dealer"}]
    view = View(env._st)
    phase = view.phase
    deciding = phase in (E.P_PLAY, E.P_INSURANCE, E.P_SETTLE) and env._mask[: E.N_ACTIONS].any()
    views = []
    for seat in seats:
        s = seat["seat"]
        mine = s == env.seat
        acting = int(view.current_row) - s * E.MAX_HANDS if mine and deciding else -1
        name = f"Seat {s} (you)" if mine else f"Seat {s}"
        views.append(seat_view(seat, seat.get("bet", 1.0), name, acting, you=mine))
    footer = [env.rules.describe()]
    if hasattr(env, "hilo_count"):
        footer.append(count_line(env._st, len(env._shoe)))
    if view.betting:
        footer.append("Your bet is due")
    return _view(env._st, views, footer)


def table_view(table: Any) -> TableView:
    """The view of the PettingZoo table (``multiagent.BlackjackTableEnv``)."""
    seats = [seat_view(seat, seat["bet"], seat["name"], seat["acting_hand"]) for seat in table.view_seats()]
    over = View(table._st).phase == E.P_OVER
    footer = [table.rules.describe()]
    if not table.rules.infinite:
        footer.append(count_line(table._st, len(table._shoe)))
    if table.agents and table._betting >= 0:
        placed = ", ".join(
            f"{table.possible_agents[s]} bet {amount(table.bets[table._levels[s]])}" for s in range(table._betting)
        )
        footer.append(f"{table.agent_selection}: bet due" + (f" (next round: {placed})" if placed else ""))
    elif table.agents and not over:
        footer.append(f"{table.agent_selection} to act")
    return _view(table._st, seats, footer)


def count_line(st: np.ndarray, shoe_size: int) -> str:
    """The count and the shoe's depth in words: ``Hi-Lo running +3, true +1.2; 40 of 312 cards dealt``."""
    running, unseen = hilo_count(st)
    return (
        f"Hi-Lo running {running:+d}, true {E.per_unseen_deck(running, unseen):+.1f}; "
        f"{int(View(st).shoe_pos)} of {shoe_size} cards dealt"
    )


def _view(st: np.ndarray, seats: list[dict[str, Any]], footer: list[str]) -> TableView:
    dealer = dealer_summary(st)
    view = View(st)
    hidden = bool(view.hole_hidden)
    over = view.phase == E.P_OVER and any(seat["hands"] for seat in seats)  # a fresh shoe has no round yet
    return TableView(dealer["cards"], hidden, None if hidden else dealer["total"], seats, bool(over), footer)


# ---------------------------------------------------------------------- words: the text and the frames' labels
def amount(value: float, sign: bool = False) -> str:
    """An amount in table-minimum units: ``4``, ``2.5``, ``+8`` (no ``-0``)."""
    value = 0.0 if abs(value) < 5e-10 else value
    return f"{value:+g}" if sign else f"{value:g}"


def stake_text(hand: dict[str, Any]) -> str:
    """A hand's stake: ``bet 4``, ``bet 8 (doubled)``."""
    return f"bet {amount(hand['bet'])}" + (" (doubled)" if hand["doubled"] else "")


def seat_text(seat: dict[str, Any], over: bool) -> str:
    """A seat's bet and, once settled, its result: ``bet 4, result +8``; ``sits out``; ``""`` before a deal."""
    if not seat["playing"]:
        return "sits out"
    if seat["bet"] is None:
        return ""
    return f"bet {amount(seat['bet'])}" + (f", result {amount(seat['result'], sign=True)}" if over else "")


def insurance_text(seat: dict[str, Any], over: bool) -> str:
    """The seat's insurance: ``taken, bet 2, result +4``, ``even money``, ``declined``; ``""`` if none was offered."""
    state = seat["insurance_state"]
    if state == "not offered":
        return ""
    if state != "taken":
        return state
    stake = f"taken, bet {amount(0.5 * (seat['bet'] or 0.0))}"
    return stake + (f", result {amount(seat['insurance'], sign=True)}" if over else "")


def hand_head(number: int, hand: dict[str, Any], acting: bool) -> str:
    """The start of a hand's line of text: the acting marker, its number (from 1), cards and total."""
    total = ("soft " if hand["soft"] else "") + f"{hand['total']:<3}"
    return f"{'->' if acting else '  '} Hand {number}: {' '.join(hand['cards']):<16} {total}"


def dealer_line(view: TableView) -> str:
    """``Dealer: 10 ??`` while the hole card is hidden, else ``Dealer: 10 7  (17)`` (``(soft 17)``)."""
    if view.hole_hidden:
        return f"Dealer: {view.dealer[0]} ??" if view.dealer else "Dealer:"
    if not view.dealer or view.dealer_total is None:
        return f"Dealer: {' '.join(view.dealer)}".rstrip()
    return f"Dealer: {' '.join(view.dealer)}  ({total_text(view.dealer_total, view.dealer_soft)})"


def table_lines(view: TableView) -> list[str]:
    """The table as lines of text: the dealer, then each seat (its bet and result), its hands
    (cards, total, stake, status, result) and its insurance. The single envs' ``ansi`` text and
    the PettingZoo table's are made of these lines."""
    lines = [dealer_line(view)]
    for seat in view.seats:
        money = seat_text(seat, view.over)
        lines.append(f"{seat['name']}: {money}" if money else seat["name"])
        for i, hand in enumerate(seat["hands"]):
            line = f"{hand_head(i + 1, hand, i == seat['acting_hand'])} {stake_text(hand)}  {hand['status']}"
            if view.over:
                line += f"  result {amount(hand['result'], sign=True)}"
            lines.append(line)
        insurance = insurance_text(seat, view.over)
        if insurance:
            lines.append(f"Insurance: {insurance}")
    return lines


def table_text(view: TableView) -> str:
    """The view as text (the PettingZoo table's ``ansi`` and ``human`` modes): its lines, then the footer."""
    return "\n".join(table_lines(view) + view.footer)


def seat_labels(seat: dict[str, Any], over: bool) -> list[str]:
    """The lines a frame writes above a seat's hands: its name and bet, then its result once
    settled and its insurance (``result +8``, ``insurance bet 2 -2``, ``even money``)."""
    lines = [f"{seat['name']}  {seat_text(seat, False)}".rstrip()]
    second = []
    if over and seat["playing"] and seat["bet"] is not None:
        second.append(f"result {amount(seat['result'], sign=True)}")
    state = seat["insurance_state"]
    if state == "taken":
        insured = f"insurance bet {amount(0.5 * (seat['bet'] or 0.0))}"
        second.append(insured + (f" {amount(seat['insurance'], sign=True)}" if over else ""))
    elif state in ("offered", "even money"):
        second.append("insurance offered" if state == "offered" else state)
    return lines + ([", ".join(second)] if second else [])


def hand_labels(hand: dict[str, Any], over: bool) -> list[str]:
    """The two lines a frame writes under a hand: ``soft 18  stood``, then ``bet 8 (doubled)  +8``."""
    money = stake_text(hand) + (f"  {amount(hand['result'], sign=True)}" if over else "")
    return [f"{total_text(hand['total'], hand['soft'])}  {hand['status']}", money]


@functools.lru_cache(maxsize=4)
def _font(size: int) -> Any:
    return ImageFont.load_default(size=size)


def frame_size(seats: int) -> tuple[int, int]:
    """(height, width) of every frame of a table of ``seats``."""
    return FRAME_HEIGHT, max(MIN_WIDTH, SEAT_WIDTH * seats)


def draw_table(view: TableView) -> np.ndarray:
    """The view as an ``(H, W, 3) uint8`` picture: the dealer's cards at the top (the hole card
    face down while hidden), each seat's column below with its name, bet and result
    (``seat_labels``), its hands with their totals, stakes, status and results (``hand_labels``),
    the acting hand framed in yellow, and the footer's lines at the bottom. Cards shrink when a
    seat holds more hands than fit at full size."""
    height, width = frame_size(len(view.seats))
    image = Image.new("RGB", (width, height), FELT)
    draw = ImageDraw.Draw(image)
    small = _font(14)

    dealer = list(view.dealer)
    x0 = width // 2 - (len(dealer) * (CARD_W + 6)) // 2
    for i, card in enumerate(dealer):
        _card(draw, x0 + i * (CARD_W + 6), 30, card, CARD_H, face_down=view.hole_hidden and i == 1)
    total = "" if view.dealer_total is None or not dealer else "  " + total_text(view.dealer_total, view.dealer_soft)
    draw.text((width // 2, 12), f"Dealer{total}", fill=LABEL, font=small, anchor="mm")

    column = width / max(len(view.seats), 1)
    top, bottom = SEATS_TOP, height - 18 * len(view.footer) - 8
    for s, seat in enumerate(view.seats):
        left = int(s * column) + 8
        for i, line in enumerate(seat_labels(seat, view.over)):
            draw.text((left, top - 40 + 18 * i), line, fill=LABEL, font=small)
        hands = seat["hands"]
        step = min(CARD_H + 6 + 2 * LINE, (bottom - top) // max(len(hands), 1))
        lines = 2 if step - 6 - 2 * LINE >= 24 else 1  # few hands: two label lines; many: one, beside smaller cards
        card_h = max(14, min(CARD_H, step - 6 - lines * LINE))
        for i, hand in enumerate(hands):
            y = top + i * step
            offset = min(CARD_W + 4, int((column - 24 - CARD_W) / max(len(hand["cards"]) - 1, 1)))
            for c, card in enumerate(hand["cards"]):
                _card(draw, left + c * offset, y, card, card_h)
            if i == seat["acting_hand"]:
                right = left + (len(hand["cards"]) - 1) * offset + CARD_W
                draw.rectangle((left - 4, y - 4, right + 4, y + card_h + 4), outline=ACTING, width=3)
            labels = hand_labels(hand, view.over)
            if lines == 1:
                labels = ["  ".join(labels)]
            for j, label in enumerate(labels):
                draw.text((left, y + card_h + 4 + LINE * j), label, fill=LABEL, font=small)
    for i, line in enumerate(view.footer):
        draw.text((8, height - 18 * (len(view.footer) - i) - 4), line[: width // 7], fill=LABEL, font=small)
    return np.asarray(image, dtype=np.uint8)


def _card(draw: Any, x: int, y: int, rank: str, height: int, face_down: bool = False) -> None:
    """One card: a white face with its rank in the middle, or a blue back."""
    box = (x, y, x + CARD_W, y + height)
    if face_down:
        draw.rounded_rectangle(box, radius=5, fill=CARD_BACK, outline=CARD_FACE, width=2)
        return
    draw.rounded_rectangle(box, radius=5, fill=CARD_FACE, outline=INK, width=1)
    font = _font(20 if height >= 36 else max(10, height - 4))
    draw.text((x + CARD_W // 2, y + height // 2), rank, fill=INK, font=font, anchor="mm")


def display_available() -> bool:
    """Whether "human" mode can open a window: matplotlib with an interactive backend (a
    display); else the envs print their text."""
    try:
        import matplotlib  # optional dependency: matplotlib (the report extra)
    except ImportError:
        return False
    return matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "ps", "cairo", "template")


def show(frame: np.ndarray, state: dict[str, Any]) -> None:
    """Show a frame in the window kept in ``state`` (opened on the first call)."""
    import matplotlib.pyplot as plt  # optional dependency: matplotlib (the report extra)

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
    "amount",
    "count_line",
    "dealer_line",
    "display_available",
    "draw_table",
    "env_view",
    "frame_size",
    "hand_head",
    "hand_labels",
    "insurance_text",
    "is_soft",
    "seat_labels",
    "seat_text",
    "seat_view",
    "show",
    "stake_text",
    "table_lines",
    "table_text",
    "table_view",
    "total_text",
]
