"""``blackjack-train --algo batch-ppo``: PPO in torch over thousands of tables stepped in one compiled call.

One file, read top to bottom as a CleanRL script is: the config, the tables, the rollout, GAE, the
update, and the learner ``blackjack-train`` drives (checkpoints, resume, evaluation); the network
and the agent it exports are ``blackjack_env.agents.batch_ppo`` (a masked categorical policy over
observations normalised for the network: one-hot components, large counts scaled to [0, 1]).
Here the compiled vector env steps ``num_tables`` tables per call, every tensor is a whole batch and
the network is small, so the whole loop runs tens of thousands of env steps per second on two cores
(SB3's MaskablePPO, ``--algo ppo``, takes these settings and runs at 60-80% of this pace on the compiled
VecEnv, its rollouts stepped through SB3's buffers).

* Throughput (benchmarks/deep_rl_speed.py, this 2-core machine, quiet): the whole loop on one torch
  thread (``blackjack-train``'s default) runs about 99,000 env steps per second on the one-round game
  paid the expected reward, 105,000 paid the dealt result (the env remembers the dealer's outcomes by up
  card and unseen cards); on the shoe, whose unseen cards are new almost every round, 54,000 against
  91,000 (collecting the rollouts takes 50% of the time against 17%).
  Two threads gave 152,000 with the dealt result on an idle machine but 5,000-9,000 beside one other
  busy process (torch's pool spins), so one it is.
* Episodes end at the same step (the next episode's first observation comes back at once); on the
  shoe each settled round is an episode (``agents.shoe_ppo``'s reason: a decision earns its round).
* Same seed, same run: the tables are seeded ``seed + i``, the initial weights by ``seed``, and
  torch's sampling and shuffling draw from one ``torch.Generator`` seeded ``seed``; a checkpoint
  keeps the tables mid-round, the generator, the optimiser and the network, so ``--resume``
  continues exactly (on the same machine and torch threads).
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from blackjack_env import engine as E
from blackjack_env.agents.batch_ppo import ActorCritic, BatchPPOAgent, network
from blackjack_env.rules import Rules
from blackjack_env.strategy import StrategyTable
from blackjack_env.vector import BlackjackShoeVectorEnv, BlackjackVectorEnv

from .evaluation import METRIC_COLUMNS, ROUND_SCALARS, Best, RoundGame, RoundPlay, round_summary, shoe_postfix
from .shoe_ppo import ShoeNetEvaluation

TRAINING_FILE = "batch_ppo_training.pkl"  # the tables mid-round, the optimiser, the generator: --resume


# ---------------------------------------------------------------------------- 1. the config
@dataclass
class BatchPPOConfig:
    """Every option of a batch-PPO run (``blackjack-train`` fills it from its command line)."""

    seed: int = 0
    total_steps: int = 30_000_000  # env steps (table decisions); a run ends at the first whole rollout past it
    num_tables: int = 4096  # tables stepped in one compiled call
    num_steps: int = 16  # steps per table per rollout: a batch of num_tables x num_steps
    # 16 minibatches x 2 epochs per rollout: 16,384 left 2.7 pp at 3M steps where 4,096 left 0.23 pp at
    # 5M; 4 epochs gain no more per second than 2 (0.17 pp at 5M steps in the time 2 take to 0.15 at 10M)
    minibatch_size: int = 4096
    update_epochs: int = 2
    learning_rate: float = 1e-3
    lr_schedule: str = "linear"  # "linear": down to 0 at total_steps; "constant"
    gamma: float = 1.0  # one round is the episode: its result is the return
    gae_lambda: float = 1.0  # 0.9 (bootstrapping from the critic) left 0.29 pp on seeds 203-204 where 1.0 left 0.06
    clip_coef: float = 0.2
    # the one-round game's defaults (the expected reward and 2e7 steps with ent_coef 0.02, then 0.04, then
    # 3e7 steps) against the first ones (0.01, the dealt result, 3e7), each change on fresh seeds:
    # docs/results/learning.md. 0.04 keeps a rare hand's right action from collapsing to a probability
    # near 0, where neither its gradient nor the bonus's can raise it. The shoe takes them too (for 3e7
    # steps): there the first ones learned to bet the minimum (docs/results/learning-to-count.md)
    ent_coef: float = 0.04
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: tuple[int, ...] = (128, 128)
    reward: str = "expected"  # removes the dealer's noise from a standing hand's result; "sampled": the dealt result
    # the one-round game: the share of rounds dealt a random two-card hand and up card (exploring
    # starts). Exact gaps at 1e7 steps: on seeds 11-13 0.057, 0.094, 0.098 pp with 0.5 against 0.099,
    # 0.114, 0.203 without; on fresh seeds 20-22 0.131, 0.149, 0.115 against 0.128, 0.113, 0.100: no
    # gain that holds, so off by default. On today's defaults, 0.25 on five seeds ended closer on four
    # (0.004 pp on average) and further on one, its best evaluation 0.020 pp behind: still off
    explore_starts: float = 0.0


# ---------------------------------------------------------------------------- 2. the tables
class Tables:
    """The compiled vector env with same-step episode ends: ``step`` returns the observations and
    masks to act on next, the rewards, and which tables' episodes just ended (those tables already
    show their next episode's start)."""

    starts: ExploringStarts | None = None  # (class defaults: a checkpoint from before exploring starts)
    explore_starts = 0.0

    def __init__(self, env: BlackjackVectorEnv, seed: int, round_episodes: bool, explore_starts: float = 0.0) -> None:
        self.env = env
        self.round_episodes = round_episodes
        self.explore_starts = explore_starts
        self.starts = ExploringStarts(env.rules, seed) if explore_starts > 0 else None
        self.obs, info = env.reset(seed=seed)
        self.mask = info["action_mask"]

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        obs, rewards, terminated, _, info = self.env.step(actions)
        done = terminated | (obs[:, E.O_PHASE] == E.P_BET) if self.round_episodes else terminated
        if terminated.any():
            if self.starts is not None:
                self.starts.stack(self.env, terminated, self.explore_starts)
            obs, info = self.env.reset(options={"reset_mask": terminated})
        self.obs, self.mask = obs, info["action_mask"]
        return rewards, done


class ExploringStarts:
    """Deals a share of the one-round game's rounds from one of the 54 two-card hands (36 hard, 8 soft,
    10 pairs: one ten stands for every ten-value card) drawn uniformly, against an up card drawn
    uniformly: those three cards are stacked on the shoe (the hole card and the rest stay random).
    As cards fall, a given pair or soft hand starts under 1% of rounds; each cell's best action is
    the same whatever share of rounds start there, so the tabulated policy is still the game's."""

    def __init__(self, rules: Rules, seed: int) -> None:
        self.rng = np.random.default_rng([seed, 7])  # its own stream: the tables' cards stay seeded as before
        hands = [(a, b) for a in range(2, 11) for b in range(a + 1, 11)]  # hard 5-19, no pair
        hands += [(1, b) for b in range(2, 10)]  # soft 13-20
        hands += [(v, v) for v in range(1, 11) if rules.split_to > 1]  # pairs
        self.hands = np.array(hands, np.int64)

    def stack(self, env: BlackjackVectorEnv, tables: np.ndarray, share: float) -> None:
        """Stack a random cell's cards (player, up card, player: the deal's order) on a ``share`` of ``tables``."""
        for i in np.flatnonzero(tables & (self.rng.random(len(tables)) < share)):
            first, second = self.hands[self.rng.integers(len(self.hands))]
            up = 1 + self.rng.integers(10)
            env.stack_cards(int(i), [int(first), int(up), int(second)])


def make_tables(rules: Rules, config: BatchPPOConfig, shoe: dict[str, Any] | None) -> Tables:
    """The one-round game, or (``shoe``: the shoe env's arguments) the shoe seen round by round."""
    if shoe is None:
        env: BlackjackVectorEnv = BlackjackVectorEnv(config.num_tables, rules, reward=config.reward)
        return Tables(env, config.seed, round_episodes=False, explore_starts=config.explore_starts)
    env = BlackjackShoeVectorEnv(config.num_tables, rules, reward=config.reward, **shoe)
    return Tables(env, config.seed, round_episodes=True)


# ---------------------------------------------------------------------------- 3. rollout, GAE, update
@dataclass
class EpisodeStats:
    """Episodes finished and their summed returns so far, and each table's running return."""

    running: np.ndarray
    episodes: float = 0.0
    returns: float = 0.0


@dataclass
class Rollout:
    """num_steps x num_tables of everything the update needs."""

    obs: torch.Tensor
    mask: torch.Tensor
    actions: torch.Tensor
    logp: torch.Tensor
    values: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor


@torch.no_grad()
def collect(net: ActorCritic, tables: Tables, num_steps: int, gen: torch.Generator, stats: EpisodeStats) -> Rollout:
    """Play num_steps steps at every table, sampling from the masked policy (Gumbel-max)."""
    n = tables.obs.shape[0]
    obs = torch.zeros((num_steps, *tables.obs.shape), dtype=torch.int64)
    mask = torch.zeros((num_steps, *tables.mask.shape), dtype=torch.bool)
    actions, dones = torch.zeros((num_steps, n), dtype=torch.int64), torch.zeros((num_steps, n))
    logp, values, rewards = torch.zeros((num_steps, n)), torch.zeros((num_steps, n)), torch.zeros((num_steps, n))
    for t in range(num_steps):
        obs[t], mask[t] = torch.from_numpy(tables.obs), torch.from_numpy(tables.mask)
        logp_all, values[t] = net(obs[t], mask[t])
        gumbel = -torch.log(-torch.log(torch.rand(logp_all.shape, generator=gen).clamp_min(1e-12)))
        actions[t] = (logp_all + gumbel).argmax(dim=1)
        logp[t] = logp_all.gather(1, actions[t, :, None]).squeeze(1)
        reward, done = tables.step(actions[t].numpy())
        rewards[t], dones[t] = torch.from_numpy(reward), torch.from_numpy(done)
        stats.running += reward
        stats.episodes += float(done.sum())
        stats.returns += float(stats.running[done].sum())
        stats.running[done] = 0.0
    return Rollout(obs, mask, actions, logp, values, rewards, dones)


def advantages(r: Rollout, next_value: torch.Tensor, gamma: float, lam: float) -> torch.Tensor:
    """GAE: an episode's end (dones[t]) cuts the bootstrap from step t's successor."""
    adv = torch.zeros_like(r.rewards)
    last = torch.zeros_like(next_value)
    for t in reversed(range(r.rewards.shape[0])):
        following = next_value if t == r.rewards.shape[0] - 1 else r.values[t + 1]
        live = 1.0 - r.dones[t]
        delta = r.rewards[t] + gamma * following * live - r.values[t]
        last = delta + gamma * lam * live * last
        adv[t] = last
    return adv


def update(
    net: ActorCritic, opt: torch.optim.Optimizer, r: Rollout, adv: torch.Tensor, c: BatchPPOConfig, gen: torch.Generator
) -> dict[str, float]:
    """update_epochs passes of clipped PPO over shuffled minibatches; the last minibatch's losses."""
    obs, mask = r.obs.flatten(0, 1), r.mask.flatten(0, 1)
    actions, old_logp, returns = r.actions.flatten(), r.logp.flatten(), (adv + r.values).flatten()
    adv = adv.flatten()
    size = adv.shape[0]
    for _ in range(c.update_epochs):
        order = torch.randperm(size, generator=gen)
        for start in range(0, size, c.minibatch_size):
            i = order[start : start + c.minibatch_size]
            logp_all, value = net(obs[i], mask[i])
            ratio = (logp_all.gather(1, actions[i, None]).squeeze(1) - old_logp[i]).exp()
            a = (adv[i] - adv[i].mean()) / (adv[i].std() + 1e-8)
            policy_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - c.clip_coef, 1 + c.clip_coef)).mean()
            value_loss = 0.5 * ((value - returns[i]) ** 2).mean()
            entropy = -(logp_all.exp() * logp_all).sum(dim=1).mean()
            loss = policy_loss - c.ent_coef * entropy + c.vf_coef * value_loss
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), c.max_grad_norm)
            opt.step()
    return {"policy_loss": policy_loss.item(), "value_loss": value_loss.item(), "entropy": entropy.item()}


# ---------------------------------------------------------------------------- 4. the learner blackjack-train drives
class BatchPPOLearner(RoundPlay):
    """Rollouts and updates in slices between evaluations; a rollout is the unit of checkpoints
    (a :class:`~blackjack_env.train.learner.Learner` of the one-round game).

    On the one-round game the run exports the network of its best evaluation (:class:`.evaluation.Best`
    says why); the network learning goes on from is kept in the checkpoint (``--resume``)."""

    columns: tuple[str, ...] = METRIC_COLUMNS
    scalar_keys: tuple[str, ...] = ROUND_SCALARS

    def __init__(
        self, config: BatchPPOConfig, rules: Rules, out: Path, resume: bool, shoe: dict[str, Any] | None = None
    ) -> None:
        self.config, self.rules, self.shoe = config, rules, shoe
        if resume:
            self.agent = BatchPPOAgent.load(out)
            self.agent.config = _jsonable(config)  # a resume may change total_steps
            with (out / TRAINING_FILE).open("rb") as f:
                state = pickle.load(f)  # written by this run's own checkpoint
            self.tables, self.steps = state["tables"], state["steps"]
            self.gen = torch.Generator()
            self.gen.set_state(state["generator"])
            self.stats = state["stats"]
            if "weights" in state:  # the network learning goes on from (the agent's files are the best one's)
                self.agent.net.load_state_dict(state["weights"])
            self.best: Best | None = state.get("best")
        else:
            torch.manual_seed(config.seed)  # the network's initial weights
            self.agent = BatchPPOAgent(rules, network(rules, config.hidden, shoe), _jsonable(config), shoe)
            self.tables = make_tables(rules, config, shoe)
            self.steps = 0
            self.gen = torch.Generator().manual_seed(config.seed)
            self.stats = EpisodeStats(np.zeros(config.num_tables))
            self.best = None
        self.net = self.agent.net
        self.opt = torch.optim.Adam(self.net.parameters(), lr=config.learning_rate, eps=1e-5)
        if resume:
            self.opt.load_state_dict(state["optimizer"])
        self.losses: dict[str, float] = {}
        self.mean_return = 0.0
        self.game = RoundGame(rules) if shoe is None else None

    def advance(self, target: int, stop: Callable[[], bool], progress: Callable[[int], None]) -> None:
        c = self.config
        while self.steps < target and not stop():
            if c.lr_schedule == "linear":
                for group in self.opt.param_groups:
                    group["lr"] = c.learning_rate * max(1.0 - self.steps / c.total_steps, 0.0)
            episodes, returns = self.stats.episodes, self.stats.returns
            rollout = collect(self.net, self.tables, c.num_steps, self.gen, self.stats)
            with torch.no_grad():
                _, next_value = self.net(torch.from_numpy(self.tables.obs), torch.from_numpy(self.tables.mask))
            adv = advantages(rollout, next_value, c.gamma, c.gae_lambda)
            self.losses = update(self.net, self.opt, rollout, adv, c, self.gen)
            self.mean_return = (self.stats.returns - returns) / max(self.stats.episodes - episodes, 1.0)
            self.steps += c.num_steps * c.num_tables
            progress(c.num_steps * c.num_tables)

    def evaluate(self, rounds: int, seed: int) -> dict[str, float]:
        row = super().evaluate(rounds, seed)
        if Best.beaten(self.best, row):
            self.best = Best(row["exact_ev_gap"], self.steps, copy.deepcopy(self.net.state_dict()))
        return row

    def train_scalars(self) -> dict[str, float]:
        return {"train/episode_return": self.mean_return, **{f"train/{k}": v for k, v in self.losses.items()}}

    def summary(self, last: Mapping[str, float], wall_s: float, out: Path) -> str:
        return round_summary("batch-ppo", self.steps, last, wall_s, out, self.best)

    def exported(self) -> BatchPPOAgent:
        """The agent the run's folder holds: the best evaluation's network (the one-round game), else the last."""
        if self.best is None:
            return self.agent
        net = copy.deepcopy(self.net)
        net.load_state_dict(self.best.weights)
        return BatchPPOAgent(self.rules, net, self.agent.config, self.shoe)

    def save(self, out: Path) -> None:
        self.exported().save(out)
        state = {
            "tables": self.tables,
            "steps": self.steps,
            "generator": self.gen.get_state(),
            "optimizer": self.opt.state_dict(),
            "stats": self.stats,
            "weights": self.net.state_dict(),
            "best": self.best,
        }
        target = out / TRAINING_FILE
        tmp = target.with_name(target.name + ".tmp")
        with tmp.open("wb") as f:
            pickle.dump(state, f)
        tmp.replace(target)


class ShoeBatchPPOLearner(BatchPPOLearner):
    """The shoe game seen round by round, evaluated as ``--env shoe --algo ppo`` is
    (``train/shoe_ppo.py``: paired with basic strategy on identical shoes, beside Hi-Lo I18 + Fab 4)."""

    columns = ShoeNetEvaluation.columns
    scalar_keys = ShoeNetEvaluation.scalar_keys

    def __init__(
        self, config: BatchPPOConfig, rules: Rules, out: Path, resume: bool, shoe: dict[str, Any], eval_rounds: int
    ) -> None:
        super().__init__(config, rules, out, resume, shoe)
        self.shoe_game = ShoeNetEvaluation(rules, shoe, config.seed, eval_rounds, out)

    def table(self) -> StrategyTable:
        raise ValueError("the shoe game's batch-PPO agent has no strategy table")

    def evaluate(self, rounds: int, seed: int) -> dict[str, float]:
        return self.shoe_game.evaluate(self.agent, rounds, seed)

    def postfix(self, row: Mapping[str, float]) -> dict[str, str]:
        return shoe_postfix(row)

    def summary(self, last: Mapping[str, float], wall_s: float, out: Path) -> str:
        return ShoeNetEvaluation.summary("batch-ppo", self.steps, last, wall_s, out)


def _jsonable(config: BatchPPOConfig) -> dict[str, Any]:
    """The config as agent.json keeps it."""
    return {**asdict(config), "hidden": list(config.hidden)}


__all__ = ["BatchPPOConfig", "BatchPPOLearner", "ShoeBatchPPOLearner"]
