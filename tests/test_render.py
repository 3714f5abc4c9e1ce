"""Pictures of the game: rgb_array frames of Blackjack-v0, BlackjackShoe-v0 and the PettingZoo
table (shape, a face-down hole card until shown, frames that change as the game moves), and
Gymnasium's RecordVideo over them."""

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
from blackjack_env.render import CARD_BACK, FRAME_HEIGHT, frame_size


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
