"""``PPOConfig``: every knob of the recurrent PPO pipeline, validated before any work (SPEC 1.1).

Defaults follow SPEC 1.1 except the rollout shape: 64 envs x 16 steps with 16
whole trajectories per minibatch (SPEC: 16 x 128, 4 per minibatch). On
CartPoleNoVel it reached a greedy 475 in a median 6.8 s of training against
13.0 s for 16 x 64 (benchmarks/results/sweep_*.json); the LSTM state is
carried across windows, so short windows lose nothing at collection. Tasks
whose memory gap is longer than the window need ``rollout_len`` above it for
backprop-through-time to reach the cue (T-maze 50: ``--rollout-len 64``).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from components.config_validation import check, check_choice, check_float, check_int


@dataclass
class PPOConfig:
    # task and budget
    env_id: str = "CartPoleNoVel"
    total_steps: int = 100_000
    num_envs: int = 64
    rollout_len: int = 16
    seed: int = 0
    device: str = "auto"
    num_threads: int = 1  # CPU intra-op threads (device.set_cpu_threads); 0 = torch's default
    # model
    model: str = "lstm"  # "mlp": the memoryless baseline arm (same GAE, loss and trainer)
    hidden_size: int = 64
    normalize_obs: bool = True
    reward_scaling: bool = True  # divide rewards by the running std of the discounted return
    # PPO
    learning_rate: float = 1.5e-3
    lr_schedule: str = "linear"
    lr_floor: float = 0.05
    n_epochs: int = 4
    envs_per_minibatch: int = 16
    chunk_len: int | None = None
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    clip_range_vf: float | None = 0.2
    vf_coef: float = 0.5
    ent_coef: float = 0.01
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    kl_stop: str = "update"
    entropy_guard: bool = True
    entropy_threshold: float = 0.05
    entropy_patience: int = 3
    # env extras
    flicker_mode: str = "iid"
    flicker_burst: float = 4.0
    # run management
    eval_every: int = 10  # updates; 0 = only the final evaluation
    eval_episodes: int = 16
    checkpoint_every: int = 10  # updates
    keep_checkpoints: int = 3
    logger: str = "csv"
    run_root: str = "runs"
    run_name: str = "recurrent_ppo"
    plot: bool = True

    @property
    def frames_per_batch(self) -> int:
        return self.num_envs * self.rollout_len

    @property
    def num_updates(self) -> int:
        return max(1, self.total_steps // self.frames_per_batch)

    def validate(self) -> "PPOConfig":
        check("env_id", self.env_id, isinstance(self.env_id, str) and bool(self.env_id), "a gymnasium id or a built-in task")
        check_int("total_steps", self.total_steps, 1)
        check_int("num_envs", self.num_envs, 1)
        check_int("rollout_len", self.rollout_len, 1)
        check_int("seed", self.seed, 0)
        check("device", self.device, isinstance(self.device, str) and (self.device in ("auto", "cpu") or self.device.startswith("cuda")), "'auto', 'cpu' or 'cuda[:N]'")
        check_int("num_threads", self.num_threads, 0)
        check_choice("model", self.model, ("lstm", "mlp"))
        check_int("hidden_size", self.hidden_size, 1)
        check_float("learning_rate", self.learning_rate, 0.0, low_open=True)
        check_choice("lr_schedule", self.lr_schedule, ("constant", "linear"))
        check_float("lr_floor", self.lr_floor, 0.0, 1.0)
        check_int("n_epochs", self.n_epochs, 1)
        check_int("envs_per_minibatch", self.envs_per_minibatch, 1, self.num_envs)
        if self.chunk_len is not None:
            check_int("chunk_len", self.chunk_len, 1, self.rollout_len)
            check("chunk_len", self.chunk_len, self.rollout_len % self.chunk_len == 0, f"a divisor of rollout_len={self.rollout_len} (or None)")
        check_float("gamma", self.gamma, 0.0, 1.0)
        check_float("gae_lambda", self.gae_lambda, 0.0, 1.0)
        check_float("clip_range", self.clip_range, 0.0, low_open=True)
        if self.clip_range_vf is not None and math.isfinite(self.clip_range_vf):
            check_float("clip_range_vf", self.clip_range_vf, 0.0, low_open=True)
        check_float("vf_coef", self.vf_coef, 0.0)
        check_float("ent_coef", self.ent_coef, 0.0)
        check_float("max_grad_norm", self.max_grad_norm, 0.0, low_open=True)
        if self.target_kl is not None:
            check_float("target_kl", self.target_kl, 0.0, low_open=True)
        check_choice("kl_stop", self.kl_stop, ("update", "epoch"))
        check_float("entropy_threshold", self.entropy_threshold, 0.0)
        check_int("entropy_patience", self.entropy_patience, 1)
        check_choice("flicker_mode", self.flicker_mode, ("iid", "markov"))
        check_float("flicker_burst", self.flicker_burst, 1.0)
        check_int("eval_every", self.eval_every, 0)
        check_int("eval_episodes", self.eval_episodes, 1)
        check_int("checkpoint_every", self.checkpoint_every, 1)
        check_int("keep_checkpoints", self.keep_checkpoints, 1)
        check_choice("logger", self.logger, ("csv", "tensorboard", "wandb"))
        return self

    def to_dict(self) -> dict:
        return asdict(self)
