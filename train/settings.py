"""Every setting of a ``blackjack-train`` run, as one record: what the command line fills, what a run
directory keeps (``config.json``) and a resumed run reads back. Each learner reads the fields it needs
into its own typed config (:mod:`blackjack_env.train.registry`); the command's options are made from
these fields, so a learner's new option is a field here."""

from __future__ import annotations

from dataclasses import dataclass, field

from blackjack_env.agents.linear import DEPTH_BANDS
from blackjack_env.evaluate.options import CEILING_SAMPLES, CEILING_STRATA
from blackjack_env.rules import DEFAULT_PRESET, Rules

from .backends import DEFAULT_SYNC_CHUNKS


@dataclass
class Args:
    """Every setting of a run (saved as config.json; a resumed run reads it back)."""

    algo: str = "tabular"
    env: str = "round"  # the game: "round" or "shoe" (one learner may play both)
    # --env shoe: the counting system (a name or a JSON file); the count-table learner has its own default
    # (train/shoe.py COUNT_TABLE_SYSTEM)
    system: str = "hilo"
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
    # --env shoe --algo linear: the dealt shoe's depth bands, each (cell, action) fitted per band where the
    # data show depth changes it (agents/linear.py band_weights); 1: one linear fit at every depth
    depth_bands: int = DEPTH_BANDS
    # The networks' learners (MaskablePPO and batch PPO alike; train/batch_ppo.py BatchPPOConfig holds the
    # same numbers, each measured there): 4096 tables stepped in one call, rollouts of 4096 x 16 = 65,536
    # steps cut in minibatches of 4096 for 2 epochs, a 128x128 net, gamma and lambda 1, an entropy bonus
    # of 0.04. MaskablePPO on the compiled VecEnv with them ended 0.009-0.014 pp from basic strategy after
    # 2e7 steps on five fresh seeds (6-8 minutes with two runs sharing 2 cores); its first defaults (250 x
    # 64 tables, 10 epochs of a 256x256 net, 0.01) ran 8,000 steps/s and ended 0.05-0.14 pp after 2e6
    # steps, 0.089 after 1e7 (the docs' learning results)
    n_envs: int = 4096
    n_steps: int = 16
    batch_size: int = 4096
    n_epochs: int = 2
    learning_rate: float = 1e-3
    lr_schedule: str = "linear"  # down to 0 at --steps (a resume with more steps stretches it), or "constant"
    gamma: float = 1.0
    gae_lambda: float = 1.0
    ent_coef: float = 0.04  # keeps rarely right actions (surrender, double) explored: 0 plateaus at 0.4 pp
    net_arch: str = "128,128"
    # --algo batch-ppo, one-round game: the share of rounds dealt a random two-card hand (exploring
    # starts; train/batch_ppo.py BatchPPOConfig.explore_starts, measured there); 0 elsewhere
    explore_starts: float = 0.0
    # torch's intra-op threads; 0: torch's default (one per core). 1 is the fastest measured for this
    # small network (the docs' training guide): with a thread per core, torch's pool spins
    # against any other busy process, 13x slower on a busy 2-core machine, for identical results
    torch_threads: int = 1

    def game(self) -> Rules:
        """The run's game: the --rules preset with every --set over it."""
        return Rules.preset(self.rules).with_settings(self.settings)


__all__ = ["Args"]
