"""Pictures of the game: rgb_array frames of Blackjack-v0, BlackjackShoe-v0 and the PettingZoo
table (shape, a face-down hole card until shown, frames that change as the game moves),
Gymnasium's RecordVideo over them, and what frames and text say: each seat (numbered from 0) with
its bet, each hand's stake, total (soft ones marked) and result, the settled amounts equal to
the rewards."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("PIL", reason="rgb_array frames need Pillow (the render extra)")

import blackjack_env
from blackjack_env import Action
from blackjack_env import engine as E
from blackjack_env.render import (
    CARD_BACK,
    FRAME_HEIGHT,
    TableView,
    env_view,
    frame_size,
    hand_labels,
    seat_labels,
    table_view,
)


def back_pixels(frame: np.ndarray) -> int:
    """Pixels of the card-back colour: a face-down hole card shows them."""
    return int(np.all(frame == CARD_BACK, axis=-1).sum())


def test_blackjack_frames_show_the_hole_card_face_down_until_the_round_ends() -> None:
    env = gym.make(blackjack_env.ENV_ID, render_mode="rgb_array")
    env.reset(seed=0, options={"cards": ["10", "9", "6", "7", "K"]})  # 16 against 9 (7 in the hole)
    first = env.render()
    assert first.shape == (FRAME_HEIGHT, frame_size(1)[1], 3) and first.dtype == np.uint8
    assert back_pixels(first) > 500
    _, _, terminated, _, _ = env.step(Action.HIT)  # K: bust; the hole card is turned over
    assert terminated
    last = env.render()
    assert last.shape == first.shape
    assert back_pixels(last) == 0
    assert (last != first).any(axis=-1).sum() > 500


def test_shoe_and_table_frames_keep_one_size_and_change_as_the_game_moves() -> None:
    env = gym.make(blackjack_env.SHOE_ENV_ID, seats=3, seat=1, render_mode="rgb_array")
    env.reset(seed=1)
    frames = [env.render()]
    rng = np.random.default_rng(0)
    for _ in range(30):
        mask = env.unwrapped.action_masks()
        _, _, terminated, _, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        frames.append(env.render())
        if terminated:
            break
    assert {f.shape for f in frames} == {(FRAME_HEIGHT, frame_size(3)[1], 3)}
    assert sum((a != b).any() for a, b in itertools.pairwise(frames)) >= len(frames) // 2


def test_pettingzoo_table_renders_every_mode() -> None:
    pytest.importorskip("pettingzoo", reason="the multiagent extra")
    from blackjack_env.multiagent import raw_env

    table = raw_env(seats=4, game="shoe", render_mode="rgb_array")
    table.reset(seed=2)
    frame = table.render()
    assert frame.shape == (FRAME_HEIGHT, frame_size(4)[1], 3) and frame.dtype == np.uint8
    for _ in range(4):
        table.step(7)
    assert (table.render() != frame).any()
    text = raw_env(seats=2, render_mode="ansi")
    text.reset(seed=2)
    assert text.render().startswith("Dealer: ") and "seat_1" in text.render()


def test_record_video_records_an_episode(tmp_path: Path) -> None:
    pytest.importorskip("moviepy", reason="Gymnasium's RecordVideo needs moviepy")
    env = gym.wrappers.RecordVideo(
        gym.make(blackjack_env.SHOE_ENV_ID, render_mode="rgb_array", rules={"decks": 1, "penetration": 0.3}),
        str(tmp_path / "videos"),  # a folder RecordVideo makes (it warns about one that exists)
        episode_trigger=lambda episode: True,
        disable_logger=True,
    )
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        _, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
    env.close()
    assert list((tmp_path / "videos").glob("*.mp4"))


def test_the_readme_frame_script_writes_the_picture(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "examples" / "render_frame.py"
    out = tmp_path / "frame.png"
    subprocess.run([sys.executable, str(script), str(out)], check=True, capture_output=True, timeout=600)
    from PIL import Image

    with Image.open(out) as image:
        assert image.size == (frame_size(3)[1], FRAME_HEIGHT)


def test_human_mode_shows_the_rgb_frame_in_one_window_where_a_display_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "human" with a display: the rgb_array picture in a matplotlib window, one window updated per render.
    CI has no display, so the check that a display exists is made to answer yes, on matplotlib's Agg backend."""
    plt = pytest.importorskip("matplotlib.pyplot")
    import blackjack_env.render as render

    monkeypatch.setattr(render, "display_available", lambda: True)
    cards = {"cards": ["10", "9", "6", "7", "K"]}
    pictures = gym.make(blackjack_env.ENV_ID, render_mode="rgb_array")
    window = gym.make(blackjack_env.ENV_ID, render_mode="human")
    before = len(plt.get_fignums())
    try:
        for env in (pictures, window):
            env.reset(seed=0, options=cards)
        assert len(plt.get_fignums()) == before + 1  # reset renders in human mode: the window opens
        shown = plt.figure(plt.get_fignums()[-1]).axes[0].images[0]
        np.testing.assert_array_equal(shown.get_array(), pictures.render())
        for env in (pictures, window):
            env.step(Action.HIT)
        assert len(plt.get_fignums()) == before + 1  # the same window, its picture moved on
        np.testing.assert_array_equal(shown.get_array(), pictures.render())
    finally:
        plt.close("all")


# ---------------------------------------------------------------------- what the pictures and the text say
def drawn_text(monkeypatch: pytest.MonkeyPatch, env) -> list[str]:
    """Every string ``env.render()`` writes on its rgb_array frame (Pillow's text calls, recorded)."""
    from PIL import ImageDraw

    drawn: list[str] = []
    original = ImageDraw.ImageDraw.text

    def text(self, xy, words, *args, **kwargs):  # type: ignore[no-untyped-def]
        drawn.append(words)
        return original(self, xy, words, *args, **kwargs)

    monkeypatch.setattr(ImageDraw.ImageDraw, "text", text)
    env.render_mode = "rgb_array"
    try:
        frame = env.render()
    finally:
        env.render_mode = "ansi"
        monkeypatch.undo()
    assert frame.shape[-1] == 3
    return drawn


def labels(view: TableView) -> list[list[str]]:
    """Each seat's frame labels: its own lines, then each hand's."""
    return [
        seat_labels(seat, view.over) + [line for hand in seat["hands"] for line in hand_labels(hand, view.over)]
        for seat in view.seats
    ]


def test_a_settled_shoe_round_shows_the_bet_the_doubled_stake_and_the_reward(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seats 0-2 get 10,9 / 6,5 / A,7 against a 10 (7 in the hole). The agent (seat 1) bets 4 and
    doubles its 11 into 21 with a 10: +8, which the frame and the text show (not "bet 0", not +2);
    seat 2's A,7 reads soft 18 until it hits an 8 (16, which loses to 17)."""
    env = gym.make(blackjack_env.SHOE_ENV_ID, seats=3, seat=1, render_mode="ansi")
    env.reset(seed=0, options={"cards": ["10", "6", "A", "10", "9", "5", "7", "7", "10", "8"]})
    env.step(E.N_ACTIONS + 2)  # bets (1, 2, 4, 8): 4
    view = env_view(env.unwrapped)
    assert [seat["name"] for seat in view.seats] == ["Seat 0", "Seat 1 (you)", "Seat 2"]
    assert labels(view)[2] == ["Seat 2  bet 1", "soft 18  playing", "bet 1"]
    assert labels(view)[1] == ["Seat 1 (you)  bet 4", "11  playing", "bet 4"]
    text = env.render()
    assert "   Hand 1: A 7              soft 18  bet 1  playing" in text
    assert "Seat 1 (you): bet 4\n-> Hand 1: 6 5              11  bet 4  playing" in text
    assert "Round result" not in text

    _, reward, _, _, info = env.step(Action.DOUBLE)
    assert reward == info["round_result"] == 8.0
    view = env_view(env.unwrapped)
    assert view.over
    rewards = [seat["bet"] * seat["result"] for seat in info["seats"]]  # per unit bet times the bet
    assert [seat["result"] for seat in view.seats] == rewards == [1.0, 8.0, -1.0]
    assert [seat["bet"] for seat in view.seats] == [1.0, 4.0, 1.0]
    assert labels(view) == [
        ["Seat 0  bet 1", "result +1", "19  stood", "bet 1  +1"],
        ["Seat 1 (you)  bet 4", "result +8", "21  stood", "bet 8 (doubled)  +8"],
        ["Seat 2  bet 1", "result -1", "16  stood", "bet 1  -1"],
    ]
    text = env.render()
    for line in (
        "Seat 1 (you): bet 4, result +8",
        "   Hand 1: 6 5 10           21  bet 8 (doubled)  stood  result +8",
        "Seat 2: bet 1, result -1",
        "Round result: +8",
    ):
        assert line in text.splitlines(), text
    drawn = drawn_text(monkeypatch, env.unwrapped)
    for seat in labels(view):
        assert all(label in drawn for label in seat), (seat, drawn)
    assert "Dealer  17" in drawn


def test_a_split_and_doubled_hand_at_a_bet_of_2_show_the_reward() -> None:
    """Bet 2 on 8,8 against a 6 (10 in the hole): split; 8+10 stands, 8+3 doubles with a 10 to 21;
    the dealer's 16 draws a 9 and busts. The hands win 2 and 4, the round +6: the reward."""
    env = gym.make(blackjack_env.SHOE_ENV_ID, bets=(1, 2), render_mode="ansi")
    env.reset(seed=0, options={"cards": ["8", "6", "8", "10", "10", "3", "10", "9"]})
    env.step(E.N_ACTIONS + 1)
    for action in (Action.SPLIT, Action.STAND):
        env.step(action)
    _, reward, _, _, info = env.step(Action.DOUBLE)
    assert reward == info["round_result"] == 6.0
    view = env_view(env.unwrapped)
    (me,) = view.seats
    assert (me["bet"], me["result"]) == (2.0, 6.0)
    assert [(hand["bet"], hand["result"]) for hand in me["hands"]] == [(2.0, 2.0), (4.0, 4.0)]
    assert labels(view) == [
        ["Seat 0 (you)  bet 2", "result +6", "18  stood", "bet 2  +2", "21  stood", "bet 4 (doubled)  +4"]
    ]
    text = env.render().splitlines()
    assert "Seat 0 (you): bet 2, result +6" in text and "Round result: +6" in text
    assert "   Hand 2: 8 3 10           21  bet 4 (doubled)  stood  result +4" in text


def test_blackjack_v0_shows_a_lost_double_as_the_reward(monkeypatch: pytest.MonkeyPatch) -> None:
    """6,5 against a 10 (10 in the hole) doubles and draws a 2: 13 loses 2 initial bets, -2."""
    env = gym.make(blackjack_env.ENV_ID, render_mode="ansi")
    env.reset(seed=0, options={"cards": ["6", "10", "5", "10", "2"]})
    _, reward, _, _, info = env.step(Action.DOUBLE)
    assert reward == info["result"] == -2.0
    view = env_view(env.unwrapped)
    assert labels(view) == [["Seat 0 (you)  bet 1", "result -2", "13  stood", "bet 2 (doubled)  -2"]]
    text = env.render().splitlines()
    assert "Round result: -2" in text and "Seat 0 (you): bet 1, result -2" in text
    assert "   Hand 1: 6 5 2            13  bet 2 (doubled)  stood  result -2" in text
    drawn = drawn_text(monkeypatch, env.unwrapped)
    assert {"Seat 0 (you)  bet 1", "result -2", "bet 2 (doubled)  -2", "Dealer  20"} <= set(drawn)


def test_soft_totals_are_marked_in_frames_and_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A,7 against a 6 is soft 18 in the frame and the text; the dealer's A in the hole makes a
    soft 17, on which an S17 dealer stands."""
    env = gym.make(blackjack_env.ENV_ID, render_mode="ansi", rules={"hit_soft_17": False})
    env.reset(seed=0, options={"cards": ["A", "6", "7", "A"]})
    assert "-> Hand 1: A 7              soft 18  bet 1  playing" in env.render().splitlines()
    assert "soft 18  playing" in drawn_text(monkeypatch, env.unwrapped)
    _, reward, _, _, _ = env.step(Action.STAND)
    assert reward == 1.0
    text = env.render().splitlines()
    assert "Dealer: 6 A  (soft 17)" in text
    assert "   Hand 1: A 7              soft 18  bet 1  stood  result +1" in text
    assert {"Dealer  soft 17", "soft 18  stood", "bet 1  +1"} <= set(drawn_text(monkeypatch, env.unwrapped))


def test_the_pettingzoo_table_shows_each_seats_bet_stake_and_reward(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shoe table of three betting 1, 5 and 2: seat_0 10,9 stands, seat_1 6,5 doubles with a 10,
    seat_2 10,7 stands against the dealer's 10,7. Rewards +1, +10, 0, as the frame and the text show;
    they keep showing the settled round's bets while the next round's are taken."""
    pytest.importorskip("pettingzoo", reason="the multiagent extra")
    from blackjack_env.multiagent import raw_env

    table = raw_env(seats=3, game="shoe", bets=(1, 2, 5), render_mode="ansi")
    table.reset(seed=0, options={"cards": ["10", "6", "10", "10", "9", "5", "7", "7", "10"]})
    for bet in (7, 9, 8):
        table.step(bet)
    for action in (Action.STAND, Action.DOUBLE, Action.STAND):
        table.step(action)
    rewards = [table.rewards[agent] for agent in table.possible_agents]
    assert rewards == [table.infos[agent]["round_result"] for agent in table.possible_agents] == [1.0, 10.0, 0.0]
    expected = [
        ["seat_0  bet 1", "result +1", "19  stood", "bet 1  +1"],
        ["seat_1  bet 5", "result +10", "21  stood", "bet 10 (doubled)  +10"],
        ["seat_2  bet 2", "result +0", "17  stood", "bet 2  +0"],
    ]
    view = table_view(table)
    assert [seat["result"] for seat in view.seats] == rewards
    assert labels(view) == expected
    text = table.render().splitlines()
    assert "seat_1: bet 5, result +10" in text
    assert "   Hand 1: 6 5 10           21  bet 10 (doubled)  stood  result +10" in text
    table.step(9)  # seat_0 bets 5 on the next round; the settled round is still on the table
    view = table_view(table)
    assert labels(view) == expected
    assert view.footer[-1] == "seat_1: bet due (next round: seat_0 bet 5)"
    drawn = drawn_text(monkeypatch, table)
    assert all(label in drawn for seat in expected for label in seat)
