"""MaskablePPO (sb3-contrib) as an agent that never acts without the legal-action mask.

SB3 one-hot encodes the ``MultiDiscrete`` observation. For evaluation the network is tabulated
into a :class:`~blackjack_env.strategy.StrategyTable` (:meth:`PPOAgent.to_table`): for every cell
the greedy choice on the cell's first decision (an unsplit two-card hand, every action the rules
allow there legal) comes first, then the greedy choice between STAND and HIT on a multi-card hand
of the same total, then the rest by the first decision's logits. That is exact for a policy that
sees only the table's state (total, softness, pair, up card); PPO also sees the hand count and
split flags, so the table is its play on unsplit hands, which is where nearly all decisions fall.
"""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from blackjack_env import ENV_ID
from blackjack_env import engine as E
from blackjack_env.rules import Rules
from blackjack_env.strategy import HARD_MAX, N_PLAY, N_ROWS, N_UP, PAIR_BASE, SOFT_BASE, SOFT_MIN, StrategyTable

from .base import check_batch, read_manifest, write_manifest

MODEL_FILE = "ppo.zip"
TRAINING_FILE = "ppo_training.pkl"  # the envs mid-stream and the random generators, for --resume
TOTAL_21_ROWS = (HARD_MAX - 4, PAIR_BASE - 1)  # hard 21 and soft 21


def make_vec_env(rules: Rules, n_envs: int, seed: int, reward: str = "sampled") -> Any:
    """The compiled SB3 VecEnv of ``n_envs`` tables (``blackjack_env.sb3``; table i seeded seed + i),
    whose masks MaskablePPO reads: one compiled call steps every table, and the run is the one
    SB3's DummyVecEnv of single envs would give on the same seed (tests/test_sb3_vec.py)."""
    from blackjack_env.sb3 import make_sb3_vec_env  # optional dependency: stable-baselines3 (the train extra)

    return make_sb3_vec_env(ENV_ID, n_envs=n_envs, seed=seed, rules=rules, reward=reward)


class LinearDecay:
    """A learning rate falling linearly from ``initial`` to 0 at the run's ``total`` env steps.

    SB3 hands a schedule the progress of the current ``learn()`` call, 1 - steps / target; a run
    that learns in slices (between evaluations) sets this per slice with that slice's target, so
    the rate follows the run's own step count."""

    def __init__(self, initial: float, total: int, target: int) -> None:
        self.initial, self.total, self.target = initial, total, target

    def __call__(self, progress_remaining: float) -> float:
        steps = (1.0 - progress_remaining) * self.target
        return self.initial * max(1.0 - steps / self.total, 0.0)


def cell_observations(rules: Rules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observations of every table cell: (first decision obs, its mask, multi-card obs).

    Shapes int64[38, 10, 12], bool[38, 10, 7], int64[38, 10, 12]."""
    first = np.zeros((N_ROWS, N_UP, E.OBS_BASE), np.int64)
    masks = np.zeros((N_ROWS, N_UP, E.N_ACTIONS), np.bool_)
    double_on, surrender, vs_ace_ten, split_to, resplit_aces = (
        int(v) for v in rules.to_array()[[E.R_DOUBLE_ON, E.R_SURRENDER, E.R_SURR_VS_ACE_TEN, E.R_SPLIT_TO, E.R_RSA]]
    )
    for row in range(N_ROWS):
        if row < SOFT_BASE:
            total, soft, pair = row + 4, 0, 0
        elif row < PAIR_BASE:
            total, soft, pair = row - SOFT_BASE + SOFT_MIN, 1, 0
        else:
            pair = row - PAIR_BASE + 1
            total, soft = (12, 1) if pair == 1 else (2 * pair, 0)
        for col in range(N_UP):
            up = col + 1
            can_double = total < HARD_MAX and bool(E.may_double(double_on, total))  # 21 is never played
            can_surrender = bool(E.may_surrender_vs(surrender, vs_ace_ten, up))
            can_split = pair > 0 and bool(E.may_split(split_to, resplit_aces, 1, False))  # an unsplit pair
            first[row, col] = [E.P_PLAY, total, soft, pair, can_double, can_split, can_surrender, up, 1, 0, 0, 0]
            masks[row, col, [E.STAND, E.HIT]] = True
            masks[row, col, E.DOUBLE] = can_double
            masks[row, col, E.SPLIT] = can_split
            masks[row, col, E.SURRENDER] = can_surrender
    multi = first.copy()
    multi[:, :, E.O_PAIR : E.O_CAN_SURRENDER + 1] = 0
    return first, masks, multi


class PPOAgent:
    """A MaskablePPO model playing with masks; ``to_table()`` tabulates its greedy play.

    Args:
        rules: the game.
        model: a trained ``sb3_contrib.MaskablePPO`` (None: build one later with :meth:`build`).
    """

    kind = "ppo"

    def __init__(self, rules: Rules | str | Mapping[str, Any] | None = None, model: Any = None) -> None:
        self.rules = Rules.coerce(rules)
        self.model = model
        self.resumed: dict[str, Any] = {}  # a resumed checkpoint's trainer state (resume)

    @classmethod
    def build(cls, rules: Rules, env: Any, seed: int, **hyperparameters: Any) -> PPOAgent:
        """A fresh MaskablePPO on ``env`` (an SB3 VecEnv); hyperparameters go to MaskablePPO."""
        from sb3_contrib import MaskablePPO  # optional dependency: sb3-contrib (the train extra)

        net = hyperparameters.pop("net_arch", [256, 256])
        model = MaskablePPO("MlpPolicy", env, seed=seed, policy_kwargs={"net_arch": net}, verbose=0, **hyperparameters)
        return cls(rules, _quiet(model))

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(obs)[None], np.asarray(mask)[None])[0])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = check_batch(obs, masks)
        actions, _ = self.model.predict(obs, deterministic=True, action_masks=masks)
        return np.asarray(actions, np.int64)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Unmasked action logits float[N, 7] (masking does not change their order)."""
        import torch  # optional dependency: torch (the train extra)

        with torch.no_grad():
            tensor, _ = self.model.policy.obs_to_tensor(np.asarray(obs, np.int64))
            return self.model.policy.get_distribution(tensor).distribution.logits.cpu().numpy()

    def to_table(self) -> StrategyTable:
        first, masks, multi = cell_observations(self.rules)
        shape = (N_ROWS, N_UP, E.N_ACTIONS)
        first_logits = self.logits(first.reshape(-1, E.OBS_BASE)).reshape(shape)[..., :N_PLAY]
        multi_logits = self.logits(multi.reshape(-1, E.OBS_BASE)).reshape(shape)[..., :N_PLAY]
        actions = np.zeros((N_ROWS, N_UP, N_PLAY), np.int64)
        for row in range(N_ROWS):
            for col in range(N_UP):
                ranked = list(np.argsort(-first_logits[row, col], kind="stable"))
                legal = [a for a in ranked if masks[row, col, a]]
                top = legal[0]
                fallback = E.STAND if multi_logits[row, col, E.STAND] >= multi_logits[row, col, E.HIT] else E.HIT
                if row in TOTAL_21_ROWS:
                    top = fallback = E.STAND  # the env never asks at 21: the net's output there is untrained
                order = [top] + [a for a in (fallback,) if a != top]
                actions[row, col] = order + [a for a in ranked if a not in order]
        return StrategyTable(actions, self._insurance(), name="MaskablePPO (tabulated)")

    def _insurance(self) -> np.ndarray:
        """Take insurance / even money if most two-card totals against an ace would."""
        obs = []
        for natural in (0, 1):
            totals = [(21, 1)] if natural else [(t, 0) for t in range(5, 21)] + [(t, 1) for t in range(13, 21)]
            obs += [[E.P_INSURANCE, t, s, 0, 0, 0, 0, 1, 1, 0, 0, natural] for t, s in totals]
        logits = self.logits(np.array(obs))
        takes = logits[:, E.INSURANCE] > logits[:, E.NO_INSURANCE]
        n_plain = len(obs) - 1
        return np.array([takes[:n_plain].mean() > 0.5, bool(takes[n_plain])])

    def save(self, path: str | Path) -> None:
        """agent.json + strategy.json (the tabulation) + ppo.zip (the SB3 model)."""
        path = write_manifest(path, self.kind, self.rules, self.to_table())
        self.model.save(path / MODEL_FILE)

    @classmethod
    def load(cls, path: str | Path, env: Any = None) -> PPOAgent:
        """Load for play (env None) or to train on (an SB3 VecEnv)."""
        from sb3_contrib import MaskablePPO  # optional dependency: sb3-contrib (the train extra)

        rules = Rules.from_dict(read_manifest(path)["rules"])
        return cls(rules, _quiet(MaskablePPO.load(Path(path) / MODEL_FILE, env=env, device="cpu")))

    def save_training_state(self, path: str | Path, extra: Mapping[str, Any] | None = None) -> None:
        """What a resumed run needs beyond the model to go on exactly as an uninterrupted one: the
        envs mid-stream (shoes, card generators, rounds in play) and the random generators of
        torch, numpy and Python (the model's zip keeps its last observations); ``extra``, the
        trainer's own (``resumed`` gives it back)."""
        import torch  # optional dependency: torch (the train extra)

        state = {
            "env": self.model.get_env(),
            "torch": torch.get_rng_state(),
            "numpy": np.random.get_state(),
            "python": random.getstate(),
            "extra": dict(extra or {}),
        }
        target = Path(path) / TRAINING_FILE
        tmp = target.with_name(target.name + ".tmp")
        with tmp.open("wb") as f:
            pickle.dump(state, f)
        tmp.replace(target)

    @classmethod
    def resume(cls, path: str | Path, make_env: Callable[[], Any]) -> PPOAgent:
        """Load a checkpoint to train on where it stopped (see save_training_state); a checkpoint
        without that state trains on make_env()'s fresh envs instead."""
        from sb3_contrib import MaskablePPO  # optional dependency: sb3-contrib (the train extra)

        target = Path(path) / TRAINING_FILE
        if not target.is_file():
            return cls.load(path, env=make_env())
        import torch  # optional dependency: torch (the train extra)

        with target.open("rb") as f:
            state = pickle.load(f)  # written by this run's own checkpoint
        rules = Rules.from_dict(read_manifest(path)["rules"])
        model = MaskablePPO.load(Path(path) / MODEL_FILE, env=state["env"], device="cpu", force_reset=False)
        torch.set_rng_state(state["torch"])  # after load, which reseeds them from the saved seed
        np.random.set_state(state["numpy"])
        random.setstate(state["python"])
        agent = cls(rules, _quiet(model))
        agent.resumed = state.get("extra", {})
        return agent


def _quiet(model: Any) -> Any:
    """A logger that writes nothing: without one SB3's learn() makes a /tmp/SB3-* folder.
    (blackjack-train replaces it with TensorBoard output in the run directory.)"""
    from stable_baselines3.common.logger import Logger  # optional dependency: stable-baselines3 (the train extra)

    model.set_logger(Logger(folder=None, output_formats=[]))
    return model
