"""``DqnConfig``: the DQN pipeline's knobs, validated before any work (SPEC 2.1).

Defaults: SPEC 2.1's CartPole column (1k warm-up, buffer 100k, one update per env
step, Huber, Adam, epsilon over 10k steps) with the changes a 5-seed sweep on
CartPole-v1 at 50k steps justified (benchmarks/results/dqn_sweep_Q.json, median
final greedy return 500): double DQN, soft target updates (tau 0.005 every env
step), lr 5e-4, batch 128, [128, 128] hidden units, final epsilon 0.02. The
SPEC's hard copy every ``target_update_freq`` steps is one flag away
(``--target-update-tau none``). The generic reference values (lr 1e-4, 10k
warm-up, ...) are in the SPEC table.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from components.config_validation import check, check_choice, check_float, check_int


@dataclass
class DqnConfig:
    env_id: str = "CartPole-v1"
    total_steps: int = 50_000
    num_envs: int = 1
    seed: int = 0
    device: str = "auto"
    num_threads: int = 1  # CPU intra-op threads (device.set_cpu_threads); 0 = torch's default
    gamma: float = 0.99
    learning_rate: float = 5e-4
    batch_size: int = 128
    buffer_capacity: int = 100_000
    min_replay_size: int = 1_000
    target_update_freq: int = 250
    target_update_tau: float | None = 0.005  # soft update every env step; None: hard copy every target_update_freq
    hidden_sizes: list[int] = field(default_factory=lambda: [128, 128])
    epsilon_start: float = 1.0
    epsilon_end: float = 0.02
    epsilon_decay_steps: int = 10_000
    train_freq: int = 1
    gradient_steps: int = 1
    double_dqn: bool = True
    max_grad_norm: float | None = 10.0
    save_replay_buffer: bool = True
    # run management
    eval_every: int = 5_000  # env steps; 0 = only the final evaluation
    eval_episodes: int = 10
    checkpoint_freq: int = 10_000
    keep_checkpoints: int = 3
    logger: str = "csv"
    run_root: str = "runs"
    run_name: str = "dqn"
    plot: bool = True

    def validate(self) -> "DqnConfig":
        check("env_id", self.env_id, isinstance(self.env_id, str) and bool(self.env_id), "a gymnasium id or a built-in task")
        check_int("total_steps", self.total_steps, 1)
        check_int("num_envs", self.num_envs, 1)
        check_int("seed", self.seed, 0)
        check("device", self.device, isinstance(self.device, str) and (self.device in ("auto", "cpu") or self.device.startswith("cuda")), "'auto', 'cpu' or 'cuda[:N]'")
        check_int("num_threads", self.num_threads, 0)
        check_float("gamma", self.gamma, 0.0, 1.0)
        check_float("learning_rate", self.learning_rate, 0.0, low_open=True)
        check_int("buffer_capacity", self.buffer_capacity, 1)
        check_int("min_replay_size", self.min_replay_size, 1, self.buffer_capacity)
        check_int("batch_size", self.batch_size, 1, self.min_replay_size)
        check_int("target_update_freq", self.target_update_freq, 1)
        if self.target_update_tau is not None:
            check_float("target_update_tau", self.target_update_tau, 0.0, 1.0, low_open=True)
        check("hidden_sizes", self.hidden_sizes, isinstance(self.hidden_sizes, list) and len(self.hidden_sizes) > 0 and all(isinstance(h, int) and h >= 1 for h in self.hidden_sizes), "a non-empty list of integers >= 1")
        check_float("epsilon_start", self.epsilon_start, 0.0, 1.0)
        check_float("epsilon_end", self.epsilon_end, 0.0, 1.0)
        check_int("epsilon_decay_steps", self.epsilon_decay_steps, 1)
        check_int("train_freq", self.train_freq, 1)
        check_int("gradient_steps", self.gradient_steps, 1)
        if self.max_grad_norm is not None:
            check_float("max_grad_norm", self.max_grad_norm, 0.0, low_open=True)
        check_int("eval_every", self.eval_every, 0)
        check_int("eval_episodes", self.eval_episodes, 1)
        check_int("checkpoint_freq", self.checkpoint_freq, 1)
        check_int("keep_checkpoints", self.keep_checkpoints, 1)
        check_choice("logger", self.logger, ("csv", "tensorboard", "wandb"))
        return self

    def to_dict(self) -> dict:
        return asdict(self)
