"""The one line a user sees while a first step compiles, and silence once the kernels are loaded."""

from __future__ import annotations

import threading
import time

import gymnasium as gym
import numpy as np
import pytest

import blackjack_env
from blackjack_env import _jit
from blackjack_env import env as env_module
from blackjack_env import vector as vector_module


@pytest.fixture
def quick_notice(monkeypatch: pytest.MonkeyPatch) -> None:
    """A notice after 0.1 s, and none said yet in this process."""
    monkeypatch.setattr(_jit, "NOTICE_AFTER_SECONDS", 0.1)
    monkeypatch.setattr(_jit, "_noticed", threading.Event())


class UncompiledKernel:
    """A dispatcher before its first call: no overloads yet; calling it takes a while."""

    def __init__(self, seconds: float) -> None:
        self.overloads: dict = {}
        self.seconds = seconds

    def __call__(self) -> None:
        time.sleep(self.seconds)
        self.overloads["sig"] = object()


def test_a_slow_first_call_says_one_line(quick_notice: None, capsys: pytest.CaptureFixture[str]) -> None:
    kernel = UncompiledKernel(0.6)
    with _jit.first_call_notice(kernel, "the test's kernels"):
        kernel()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("blackjack_env: compiling the test's kernels (once,")
    other = UncompiledKernel(0.6)
    with _jit.first_call_notice(other, "other kernels"):  # one notice a process
        other()
    assert capsys.readouterr().err == ""


def test_a_quick_first_call_and_later_calls_say_nothing(quick_notice: None, capsys: pytest.CaptureFixture[str]) -> None:
    """A load from numba's cache takes well under a second; a compiled kernel is not watched at all."""
    kernel = UncompiledKernel(0.0)
    with _jit.first_call_notice(kernel, "the test's kernels"):
        kernel()
    time.sleep(0.3)  # past the notice's time: its timer was cancelled
    assert not _jit.compiles_on_call(kernel)
    assert isinstance(_jit.first_call_notice(kernel, "x"), type(_jit.nullcontext()))
    assert capsys.readouterr().err == ""


def test_a_plain_function_never_compiles() -> None:
    """Under NUMBA_DISABLE_JIT the kernels are Python functions."""
    assert not _jit.compiles_on_call(lambda: None)


def test_the_envs_first_transition_is_watched(
    quick_notice: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = gym.make(blackjack_env.ENV_ID)
    env.reset(seed=0)
    monkeypatch.setattr(_jit, "_noticed", threading.Event())  # a slow load above may have said it already
    capsys.readouterr()
    transition = env.unwrapped._transition
    monkeypatch.setattr(env_module, "compiles_on_call", lambda kernel: True)  # as before the first call
    monkeypatch.setattr(env.unwrapped, "_transition", lambda action: (time.sleep(0.6), transition(action))[1])
    env.reset(seed=1)
    assert "compiling the env's kernels" in capsys.readouterr().err


def test_the_vector_envs_first_calls_are_watched(
    quick_notice: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    envs = gym.make_vec(blackjack_env.ENV_ID, 4, vectorization_mode="vector_entry_point")
    _, info = envs.reset(seed=0)
    monkeypatch.setattr(_jit, "_noticed", threading.Event())  # a slow load above may have said it already
    capsys.readouterr()
    step_tables = vector_module._step_tables
    monkeypatch.setattr(vector_module, "_step_tables", lambda *a: (time.sleep(0.6), step_tables(*a))[1])
    monkeypatch.setattr(vector_module, "first_call_notice", lambda kernel, what: _jit.compiling_notice(what))
    envs.step(blackjack_env.sample_legal(info["action_mask"], np.random.default_rng(0)))
    assert "compiling the vector env's kernels" in capsys.readouterr().err
