"""A fingerprint of what the engine deals and pays, to prove an engine change left results alone.

Run it before and after a change (numba's cache follows the source, see the README's Development
section: nothing to delete) and compare the printed hashes: they are equal exactly when every simulated
statistic, every single- and vector-env observation, reward and round summary, and the tabular
learner's tables are bit for bit the same, over every preset and five rule sets with early
surrender, no hole card, cut cards and an infinite deck, with sampled and expected rewards.

    python benchmarks/results_hash.py
"""

from __future__ import annotations

import hashlib

import gymnasium as gym
import numpy as np

import blackjack_env  # noqa: F401  (registers the envs)
from blackjack_env import Rules
from blackjack_env import simulate as S
from blackjack_env.agents.tabular import TabularAgent
from blackjack_env.rules import PRESETS
from blackjack_env.solver import solve

EXTRA_RULES = (
    Rules(surrender="early"),
    Rules(surrender="early", decks=1, penetration=0.5),
    Rules(peek=False, surrender="early"),
    Rules(peek=False, obo=False, penetration=0.6, decks=2),
    Rules(decks=0, surrender="early"),
)
LEGACY_STATS = 11  # the statistics every version of the simulator records (win ... insurance)


def chunk_fingerprint(rules: Rules, policies: list[S.Policy], rounds: int) -> np.ndarray:
    """One chunk's statistics in a layout that does not depend on how many the kernel keeps."""
    table = (S.Table(),) if hasattr(S, "Table") else ()  # the simulator before seats had no table argument
    out = S.run_chunk(rules.to_array(), policies, S.chunk_words(5, 1, len(policies))[0], *table, rounds)
    parts = [out[:1]]
    for p in range(len(policies)):
        base = S.OUT_STATS + p * S.N_STATS
        parts.append(out[base : base + LEGACY_STATS])
    diffs = S.OUT_STATS + len(policies) * S.N_STATS
    parts.append(out[diffs : diffs + (len(policies) - 1) * S.N_DIFF])  # later slots are newer statistics
    return np.concatenate(parts)


def main() -> None:
    digest = hashlib.sha256()
    for rules in [Rules.preset(name) for name in PRESETS] + list(EXTRA_RULES):
        table = S.Policy.from_table(solve(rules).table)
        digest.update(chunk_fingerprint(rules, [table, S.Policy.random(), table], 30_000).tobytes())
        for reward in ("sampled", "expected"):
            env = gym.make("blackjack_env/Blackjack-v0", rules=rules, reward=reward)
            rng = np.random.default_rng(1)
            for episode in range(300):
                obs, info = env.reset(seed=11 if episode == 0 else None)
                digest.update(obs.tobytes())
                done = False
                while not done:
                    obs, reward_paid, done, _, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
                    digest.update(obs.tobytes() + np.float64(reward_paid).tobytes())
                for key in ("hands", "dealer", "result"):
                    digest.update(repr(info[key]).encode())
    for reward in ("sampled", "expected"):
        envs = gym.make_vec(
            "blackjack_env/Blackjack-v0", num_envs=16, vectorization_mode="vector_entry_point",
            rules={"penetration": 0.7}, reward=reward,
        )  # fmt: skip
        _, info = envs.reset(seed=3)
        rng = np.random.default_rng(2)
        for _ in range(500):
            actions = np.argmax(rng.random((16, 7)) * info["action_mask"], axis=1)
            obs, rewards, terminated, _, info = envs.step(actions)
            digest.update(obs.tobytes() + rewards.tobytes() + terminated.tobytes())
        agent = TabularAgent(Rules(), seed=3, chunk_steps=1 << 15, reward=reward)
        for _ in range(3):
            agent.learn_chunk()
        digest.update(agent.to_table().actions.tobytes())
    print(digest.hexdigest())


if __name__ == "__main__":
    main()
