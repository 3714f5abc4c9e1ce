"""The ceiling's sampled shoes (``blackjack_env.solver.ceiling``'s method): the compiled simulator plays the
game to the cut card, every seat basic strategy, and records the unseen composition at the start of one
round in every ``stride`` rounds, with the seat's result of that round."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import engine as E
from .. import slots
from .._jit import njit
from ..rules import Rules
from ..strategy import StrategyTable
from ..table import POLICY_TABLE, Chunk, new_table, play_until, seed_generator, start_chunk, table_policies

#: Rounds the sampling run plays at least: basic strategy's simulated EV beside the exact mean
#: (a 95% CI of about +-0.23 per 100 rounds).
SIM_ROUNDS = 1_000_000


@njit(cache=True, nogil=True, _nrt=False)
def record_chunk(table, policies, chunk, stride, out):
    """Play ``chunk.rounds`` from a fresh shoe, every seat by policy 0 (a strategy table), and record
    the unseen composition per value (A, 2..10) before rounds stride - 1, 2 stride - 1, ... (a
    shoe due for shuffling is full; the first sample is a shoe or more past the fresh start), with
    ``chunk.seat``'s result of that round, until ``comps`` is full. ``out``: (comps, rewards, sums),
    sums: [result, result squared, rounds, shoes begun] over every round played."""
    comps, rewards, sums = out
    st = table.st
    decks = int(table.rv[E.R_DECKS])
    start_chunk(table, chunk.seats, chunk.words, 0)  # where every seeded shoe starts (the simulator's too)
    seed_generator(policies.prngs[0], chunk.words, 1)
    reward_slot = chunk.seat * E.RES_SIZE + E.RES_REWARD
    sample = 0
    for r in range(chunk.rounds):
        record = (r + 1) % stride == 0 and sample < comps.shape[0]
        if record:
            due = E.shuffle_due(st)
            for v in range(10):
                comps[sample, v] = 0.0
            for code in range(1, 14):
                value = min(code, 10) - 1
                comps[sample, value] += 4 * decks if due else slots.cards_left(st, code)
        play_until(table, policies, -1, -1, chunk.at_table)
        reward = table.res[reward_slot]
        sums[0] += reward
        sums[1] += reward * reward
        sums[2] += 1
        if record:
            rewards[sample] = reward
            sample += 1
    sums[3] += slots.shuffles(st)


def sample_stride(rules: Rules, seats: int) -> int:
    """Rounds between samples: more than any shoe lasts (a round takes at least 2 cards per seat
    and 2 for the dealer), so every sample comes from its own shoe."""
    cut = int(rules.penetration * 52 * rules.decks)
    return max(101, cut // (2 * seats + 2) + 2)


@dataclass
class Recording:
    """Sampled round-start compositions and the simulated results of the game that dealt them."""

    shoes: np.ndarray  # float[N, 10] unseen cards per value (A, 2..10)
    rewards: np.ndarray  # float[N] the seat's result in each sampled round (basic strategy)
    sums: np.ndarray  # [result, result^2, rounds, shoes begun] over every round played
    stride: int

    @property
    def sim_ev(self) -> float:
        return float(self.sums[0] / self.sums[2])

    @property
    def sim_stderr(self) -> float:
        n = self.sums[2]
        mean = self.sums[0] / n
        return math.sqrt(max(self.sums[1] / n - mean * mean, 0.0) / (n - 1))

    @property
    def second_moment(self) -> float:
        """E[result^2] of a flat-bet round (basic strategy), for the perfect bettor's SD."""
        return float(self.sums[1] / self.sums[2])


def record_shoes(
    rules: Rules,
    basic: StrategyTable,
    samples: int,
    seed: int,
    seats: int = 1,
    seat: int = 0,
    min_rounds: int | None = None,
) -> Recording:
    """Play the game (every seat ``basic``) and sample ``samples`` round-start shoes (see module);
    the game is played on to ``min_rounds`` rounds at least for its simulated EV (about a second)."""
    stride = sample_stride(rules, seats)
    words = E.seed_words(np.random.SeedSequence(seed), 2)
    out = (np.zeros((samples, 10)), np.zeros(samples), np.zeros(4))
    n_rounds = max(samples * stride, SIM_ROUNDS if min_rounds is None else min_rounds)
    chunk = Chunk(words, n_rounds, seats, seat, E.table_kind(seats))
    record_chunk(new_table(rules.to_array(), seats), table_policies(POLICY_TABLE, basic), chunk, stride, out)
    comps, rewards, sums = out
    return Recording(comps, rewards, sums, stride)
