"""The vector-env play of a shoe agent that acts from its observation (evaluate/shoe_agents.py): every
table plays exactly its first shoe, its bets counted, the same seeds the same shoes."""

from __future__ import annotations

import numpy as np

from blackjack_env import Rules
from blackjack_env import engine as E
from blackjack_env.agents.basic_strategy import BasicStrategyAgent
from blackjack_env.evaluate.shoe_agents import play_shoes

SHOE = {"bets": [1.0, 2.0, 4.0, 8.0], "seats": 1, "seat": 0, "count_obs": "hilo"}


def test_each_table_plays_its_first_shoe_and_its_bets_are_counted() -> None:
    rules = Rules().replace(penetration=0.75)
    basic = BasicStrategyAgent(rules)

    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        betting = obs[:, E.O_PHASE] == E.P_BET
        return np.where(betting, E.N_ACTIONS + 1, basic.act_batch(obs, masks[:, : E.N_ACTIONS]))  # a bet of 2

    totals, rounds, bets = play_shoes(rules, SHOE, act, [3, 4, 5])
    # six decks to a 75% cut card: some 40-50 rounds a shoe, each bet 2
    assert ((rounds > 30) & (rounds < 70)).all() and np.array_equal(bets, 2 * rounds)
    again = play_shoes(rules, SHOE, act, [3, 4, 5])
    assert np.array_equal(again, np.stack([totals, rounds, bets]))
