"""Every setting of a ``blackjack-train`` run, as one record: what the command line fills, what a run
directory keeps (``config.json``) and a resumed run reads back. Each learner reads the fields it needs
into its own typed config (:mod:`blackjack_env.train.registry`); the command's options are made from
these fields, so a learner's new option is a field here."""

from __future__ import annotations

from dataclasses import dataclass, field

from blackjack_env.evaluate.options import CEILING_SAMPLES, CEILING_STRATA
from blackjack_env.rules import DEFAULT_PRESET

from .backends import DEFAULT_SYNC_CHUNKS


@dataclass
class Args:
    """Every setting of a run (saved as config.json; a resumed run reads it back)."""

    algo: str = "tabular"
    env: str = "round"  # the game: "round" or "shoe" (one learner may play both)
    system: str = "hilo"  # --env shoe: the counting system (a name or a JSON file)
    bets: str = ""  # --env shoe: the allowed bets ("" and no spread: 1,2,4,8)
    spread: str = ""
    seats: int = 1
    seat: str = "0"  # a seat, or "all"
    # --env shoe --algo tabular|linear: every evaluation's share of the ceiling (train/ceiling.py)
    ceiling: bool = False
    ceiling_samples: int = CEILING_SAMPLES
    ceiling_strata: int = CEILING_STRATA
    # --env shoe --algo tabular|linear: where the chunks are played (train/backends.py); not part of
    # the run's meaning (a resume may change them), unlike sync_chunks below
    backend: str = "local"
    workers: int = 1
    ray_address: str = ""
    rules: str = DEFAULT_PRESET
    settings: list[str] = field(default_factory=list)
    steps: int = 0  # 0: the learner's default (its entry in train/registry.py)
    seed: int = 0
    out: str = ""
    eval_every: int = 0  # 0: steps / 20
    eval_rounds: int = 1_000_000
    progress: bool = True
    # what the learner is paid: "sampled" (the dealt result) or "expected" (the env option that
    # averages out the dealer's unseen cards: same values, less noise). "": the learner's default.
    # Evaluation always plays the real game.
    reward: str = ""
    # tabular Monte Carlo control
    epsilon: float = 0.1
    chunk_steps: int = 1 << 18
    # --env shoe: the policy chunks play with is refreshed every sync_chunks chunks, whatever the
    # backend and worker count (train/backends.py; the default measured in the docs' learning-to-count results)
    sync_chunks: int = DEFAULT_SYNC_CHUNKS
    # --env shoe --algo linear: the exported model bets a Kelly fraction of a bankroll (table units; 0: the
    # EV-maximising bet; blackjack_env/linear_policy.py linear_bet)
    kelly: float = 0.0
    bankroll: float = 0.0
    # MaskablePPO (measured in the docs' learning results: gamma 1, a 256x256 net, entropy bonus)
    # on the compiled VecEnv (blackjack_env.sb3): 250 tables in one call. The whole learning loop
    # runs 1.7-1.9x as many steps per second as on SB3's DummyVecEnv of 8 single envs
    # (benchmarks/deep_rl_speed.py, both games: 64, 250, 256, 1000 and 1024 tables measure alike,
    # the 10 epochs of updates being ~80% of the time; 8 tables 1.1x); 250 x 64 keeps the rollout
    # of 16,000 steps whole
    n_envs: int = 250
    # rollouts of 250 x 64 = 16,000 steps, 4x the old 4,096: each update sees more hands of the rare
    # close cells (0.05-0.14 pp at 2M steps over six seeds, where 4,096 left 0.12 and 0.52 pp
    # on two); 2e6 is a whole number of rollouts, so a default run ends at exactly 2M steps
    n_steps: int = 64
    batch_size: int = 4000
    n_epochs: int = 10
    learning_rate: float = 1e-3
    lr_schedule: str = "linear"  # down to 0 at --steps (a resume with more steps stretches it), or "constant"
    gamma: float = 1.0
    gae_lambda: float = 1.0
    ent_coef: float = 0.01  # keeps rarely right actions (surrender, double) explored: 0 plateaus at 0.4 pp
    net_arch: str = "256,256"
    # --algo batch-ppo, one-round game: the share of rounds dealt a random two-card hand (exploring
    # starts; train/batch_ppo.py BatchPPOConfig.explore_starts, measured there); 0 elsewhere
    explore_starts: float = 0.0
    # torch's intra-op threads; 0: torch's default (one per core). 1 is the fastest measured for this
    # small network (the docs' training guide): with a thread per core, torch's pool spins
    # against any other busy process, 13x slower on a busy 2-core machine, for identical results
    torch_threads: int = 1


__all__ = ["Args"]
