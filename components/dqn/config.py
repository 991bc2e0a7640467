"""``DQNConfig``: the DQN pipeline's knobs, validated before any work.

Defaults: a CartPole-v1 recipe whose solves hold. Double DQN with 3-step returns, soft target
updates (tau 0.005 every env step), Huber loss, Adam at lr 5e-4 decayed linearly to 0 over the
budget, batch 128, one update per env step, 1k warm-up, buffer 100k, a [128, 128] Q-network with
a LayerNorm after each hidden Linear, epsilon 1 -> 0.1 over 10k steps, 50k steps.

Why the last four: with one-step targets, a constant step size, no LayerNorm and epsilon 0.02 the
greedy policy reaches 500 and then does not hold (4 of seeds 0-9 ended >= 475,
benchmarks/results/main_job_seeds_dqn_before.json). Its failing policies keep the pole up and
drift off the track (|x| > 2.4 after ~235 steps): keeping the cart centred is a small gap between
the two actions' Q-values, and updates flip it. The linear decay, the LayerNorm and epsilon 0.1
made every seed that reaches 500 hold it, but two of ten were still learning at 50k (8 of 10,
main_job_seeds_dqn_ln_lin_eps10.json); 3-step returns carry the reward of staying up back three
steps per update, and all ten end solved, most from 10k steps on
(benchmarks/results/main_job_seeds_dqn_nstep3.json; chosen on seeds 10-19, where it ended 10 of 10,
tune_dqn_nstep3_10-19.json).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..config_validation import ConfigError, check, check_float, check_int
from ..run_config import RunConfig, knob, override


@dataclass
class DQNConfig(RunConfig):
    checkpoint_family: ClassVar[str] = "dqn"  # the format prefix of this pipeline's checkpoints
    #: fields added after runs were saved without them -> the value those runs used
    added_fields: ClassVar[dict] = {"lr_schedule": "constant", "lr_floor": 0.0, "model": "mlp", "hidden_size": 64, "sequence_len": 20, "burn_in": 5, "layer_norm": False, "dueling": False, "n_step": 1}
    total_steps: int = override(RunConfig, "total_steps", 50_000)
    eval_every: int = override(RunConfig, "eval_every", 5_000)
    run_name: str = override(RunConfig, "run_name", "dqn")
    gamma: float = knob(0.99, "discount, in [0, 1]")
    n_step: int = knob(3, "steps of reward summed before the bootstrap (n-step returns; cut short where the episode ends, or for a recurrent model where the replayed window ends), an integer >= 1; with collector workers a window also stops at the end of its worker's batch")
    learning_rate: float = knob(5e-4, "Adam step size, > 0")
    lr_schedule: str = knob(
        "linear",
        "'linear': decays to lr_floor * learning_rate at total_steps (Adam's steps stay ~learning_rate whatever the "
        "gradient's size: only the schedule makes the late updates small), or 'constant'",
        ("constant", "linear"),
    )
    lr_floor: float = knob(0.0, "fraction of learning_rate where the linear schedule stops, in [0, 1]")
    batch_size: int = knob(128, "samples per gradient step (transitions; windows for a recurrent model), in [1, min_replay_size]")
    buffer_capacity: int = knob(100_000, "replay buffer size, in transitions")
    min_replay_size: int = knob(1_000, "transitions stored before the first gradient step")
    target_update_freq: int = knob(250, "env steps between hard target copies (used when target_update_tau is none)")
    target_update_tau: float | None = knob(0.005, "soft target update rate every env step, in (0, 1] (none = hard copy every target_update_freq)")
    model: str = knob(
        "mlp",
        "Q-network: 'mlp' (memoryless), or a recurrent trunk ('lstm', 'gru', or a parallel-scan memory 'mingru', 'ffm', "
        "'lru') trained R2D2-style on replayed windows of sequence_len steps from the stored state",
        ("mlp", "lstm", "gru", "mingru", "ffm", "lru"),
    )
    hidden_size: int = knob(64, "memory width of a recurrent model (unused by mlp)")
    hidden_sizes: list[int] = knob([128, 128], "hidden layer widths of the MLP (for a recurrent model: of the head after the memory), comma-separated")
    layer_norm: bool = knob(True, "LayerNorm after each hidden Linear of the Q-network's MLP (for a recurrent model: of its head), before the ReLU; false keeps the plain Linear/ReLU MLP and its hand-written backward (faster updates: benchmarks/dqn_update_floor.py)")
    dueling: bool = knob(False, "dueling Q-network: the last hidden layer feeds a value and an advantage output, Q = V + A - mean(A)")
    sequence_len: int = knob(20, "recurrent models: steps per replayed window (burn-in included), in [burn_in + 1, buffer_capacity / num_envs]")
    burn_in: int = knob(5, "recurrent models: first steps of each window unrolled from the stored state without gradient or loss, in [0, sequence_len - 1]")
    epsilon_start: float = knob(1.0, "exploration epsilon at step 0, in [0, 1]")
    epsilon_end: float = knob(0.1, "exploration epsilon after the decay, in [0, 1]")
    epsilon_decay_steps: int = knob(10_000, "env steps of the linear epsilon decay")
    train_freq: int = knob(1, "env steps between training rounds")
    gradient_steps: int = knob(1, "gradient steps per training round")
    double_dqn: bool = knob(True, "double DQN target (online argmax, target value)")
    max_grad_norm: float | None = knob(10.0, "global gradient-norm clip, > 0 (none = off)")
    worker_steps: int = knob(8, "with collector_workers > 1: batched env steps per collector batch (each batch is [num_envs / collector_workers, worker_steps] transitions from one worker)")
    save_replay_buffer: bool = knob(True, "store the replay buffer in checkpoints (needed for an exact resume)")

    def validate(self) -> "DQNConfig":
        super().validate()
        check_float("gamma", self.gamma, 0.0, 1.0)
        check_float("learning_rate", self.learning_rate, 0.0, low_open=True)
        check_float("lr_floor", self.lr_floor, 0.0, 1.0)
        check_int("buffer_capacity", self.buffer_capacity, 1)
        check_int("min_replay_size", self.min_replay_size, 1, self.buffer_capacity, high_from="buffer_capacity")
        check_int("batch_size", self.batch_size, 1, self.min_replay_size, high_from="min_replay_size")
        # no gradient step before min_replay_size transitions are stored: a smaller budget trains nothing
        check_int("total_steps", self.total_steps, self.min_replay_size, low_from="min_replay_size")
        check_int("target_update_freq", self.target_update_freq, 1)
        if self.target_update_tau is not None:
            check_float("target_update_tau", self.target_update_tau, 0.0, 1.0, low_open=True)
        check("hidden_sizes", self.hidden_sizes, isinstance(self.hidden_sizes, list) and len(self.hidden_sizes) > 0 and all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in self.hidden_sizes), "a non-empty list of integers >= 1")
        check_float("epsilon_start", self.epsilon_start, 0.0, 1.0)
        check_float("epsilon_end", self.epsilon_end, 0.0, 1.0)
        check_int("epsilon_decay_steps", self.epsilon_decay_steps, 1)
        check_int("train_freq", self.train_freq, 1)
        check_int("gradient_steps", self.gradient_steps, 1)
        check_int("worker_steps", self.worker_steps, 1)
        check_int("n_step", self.n_step, 1)
        if self.model != "mlp":
            per_env = self.buffer_capacity // self.num_envs
            check_int("sequence_len", self.sequence_len, 1, per_env, high_from="buffer_capacity / num_envs")
            check_int("burn_in", self.burn_in, 0, self.sequence_len - 1, high_from="sequence_len - 1")
            check_int("hidden_size", self.hidden_size, 1)
            if self.collector_workers > 1:
                raise ConfigError(f"collector_workers = {self.collector_workers} with model = {self.model!r} (accepted: 1 for a recurrent model: its replay keeps each env's steps in order)")
        if self.max_grad_norm is not None:
            check_float("max_grad_norm", self.max_grad_norm, 0.0, low_open=True)
        return self


#: the earlier spelling, kept as an alias
DqnConfig = DQNConfig
