"""``PPOConfig``: every knob of the recurrent PPO pipeline, validated before any work.

Defaults are the common recurrent-PPO recipe (Adam, GAE 0.99/0.95, clip 0.2 with value
clipping, 4 epochs, entropy 0.01, grad norm 0.5) except the rollout shape: 64 envs x 16
steps with 16 whole trajectories per minibatch (rather than 16 x 128 with 4 per minibatch).
On CartPoleNoVel it reached a greedy 475 in a median 6.8 s of training against 13.0 s for
16 x 64 (benchmarks/results/sweep_*.json); the LSTM state is carried
across windows, so short windows lose nothing at collection. Tasks whose memory gap is
longer than the window need ``rollout_len`` above it for backprop-through-time to reach
the cue (T-maze 50: ``--rollout-len 64``).

The default budget is 200k steps, not the 100k at which the task is first solved: what a
run ends with is what a user keeps, and at 100k the greedy policy had not settled (it
flipped between 500 and ~150-300 across evaluations with updates of approx KL ~1e-3, so
entropy, step size and advantage normalisation were not the lever: with ``ent_coef 0`` 2 of
6 tuning seeds, with unnormalised advantages 2 of 10, and at 150k 4 of 10 still ended below 475;
benchmarks/results/tune_ppo_*_10-19.json, exp_ppo_noadvnorm_10-19.json).
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import ClassVar

from ..config_validation import UserError, check, check_float, check_int
from ..run_config import RunConfig, knob, override


@dataclass
class PPOConfig(RunConfig):
    checkpoint_family: ClassVar[str] = "recurrent_ppo"  # the format prefix of this pipeline's checkpoints
    #: fields added after runs were saved without them -> the value those runs used
    added_fields: ClassVar[dict] = {"encoder": "flat", "encoder_size": 128, "prev_action": False}
    # task and budget (shared fields, PPO defaults)
    env_id: str = override(RunConfig, "env_id", "CartPoleNoVel")
    total_steps: int = knob(
        200_000,
        "training budget in env steps (all envs together); 200k so that a CartPoleNoVel run ENDS solved: at 100k "
        "the greedy policy still flipped between 500 and ~150-300 late in training (2 of 10 seeds ended < 475), "
        "at 200k 10 of 10 tuning seeds and 9 of 10 reported ones end >= 475 (benchmarks/results/main_job_seeds_ppo_*.json)",
    )
    num_envs: int = override(RunConfig, "num_envs", 64)
    eval_every: int = override(RunConfig, "eval_every", 10_240)
    eval_episodes: int = override(RunConfig, "eval_episodes", 16)
    checkpoint_every: int = override(RunConfig, "checkpoint_every", 10_240)
    run_name: str = override(RunConfig, "run_name", "recurrent_ppo")
    rollout_len: int = knob(16, "steps per env per update: the T of the [num_envs, T] window; backprop-through-time reaches back at most this far (or chunk_len), so a cue that matters later must fall in the same window: set it >= the episode length for cues at episode start")
    # collection
    backend: str = knob("local", "'local' (this machine's processes) or 'ray' (TorchRL RayCollector, one Ray worker per collector worker; pip install -e '.[ray]')", ("local", "ray"))
    ray_address: str | None = knob(None, "with --backend ray: the head's HOST:PORT (none = start a local Ray instance)")
    # model
    model: str = knob("lstm", "trunk: 'lstm', 'gru', a parallel-scan memory ('mingru', 'ffm', 'lru': one associative scan over the window, reset at every episode start inside it), or 'mlp' for the memoryless baseline arm (same GAE, loss and trainer)", ("lstm", "gru", "mingru", "ffm", "lru", "mlp"))
    hidden_size: int = knob(64, "memory / MLP width (the LSTM, GRU or scan model's hidden size)")
    encoder: str = knob("auto", "observation encoder ahead of the trunk: 'cnn' (a small CNN over the image entry, e.g. MiniGrid's 7x7x3 view), 'flat' (the encoded vector as is), 'dense' (POPGym's pre-encoder: linear, layer-norm, leaky-relu, encoder_size wide), 'auto' (cnn when the observation holds an image)", ("auto", "flat", "cnn", "dense"))
    encoder_size: int = knob(128, "width of --encoder dense (POPGym's baselines: 128)")
    normalize_obs: bool = knob(True, "running observation normalisation (a frozen copy in evaluation)")
    prev_action: bool = knob(False, "append the previous action and reward to the observation (as POPGym's baselines do)")
    reward_scaling: bool = knob(True, "divide rewards by the running std of the discounted return")
    # PPO
    learning_rate: float = knob(1.5e-3, "Adam step size at the start of training")
    lr_schedule: str = knob("linear", "'linear': decays to lr_floor * learning_rate at total_steps; 'constant'", ("constant", "linear"))
    lr_floor: float = knob(0.05, "fraction of learning_rate where the linear schedule stops, in [0, 1]")
    n_epochs: int = knob(4, "passes over each rollout")
    envs_per_minibatch: int = knob(16, "env trajectories per minibatch, in [1, num_envs]")
    chunk_len: int | None = knob(None, "cut trajectories into chunks of this many steps, each starting from its stored LSTM state (a divisor of rollout_len; none = whole trajectories)")
    gamma: float = knob(0.99, "discount, in [0, 1]")
    gae_lambda: float = knob(0.95, "GAE lambda, in [0, 1]")
    clip_range: float = knob(0.2, "PPO ratio clip epsilon, > 0")
    clip_range_vf: float | None = knob(0.2, "value clipping range around the stored value, > 0 (none = off)")
    vf_coef: float = knob(0.5, "value-loss coefficient, >= 0")
    ent_coef: float = knob(0.01, "entropy-bonus coefficient, >= 0")
    max_grad_norm: float = knob(0.5, "global gradient-norm clip, > 0")
    target_kl: float | None = knob(None, "KL(old || new) early-stop threshold, > 0 (none = off)")
    kl_stop: str = knob("update", "what crossing target_kl stops: 'update' drops that minibatch and ends the update (SB3/CleanRL); 'epoch' applies it and skips the rest of the epoch", ("update", "epoch"))
    entropy_guard: str = knob(
        "warn",
        "when the policy entropy stays below entropy_threshold: 'warn' once (default: a solved task's deterministic "
        "policy has low entropy too), 'stop' (final evaluation, checkpoint and plot, exit 3) or 'off'",
        ("off", "warn", "stop"),
    )
    entropy_threshold: float = knob(0.05, "entropy guard threshold, nats")
    entropy_patience: int = knob(3, "entropy guard: consecutive low-entropy updates before stopping")
    # env extras
    flicker_mode: str = knob("iid", "FlickeringCartPole blanks: 'iid' per step or 'markov' bursts", ("iid", "markov"))
    flicker_burst: float = knob(4.0, "mean burst length of markov flicker, in steps, >= 1")

    def __post_init__(self):
        # earlier configs stored the guard as a boolean
        legacy = {True: "stop", False: "off", "true": "stop", "false": "off", "on": "stop"}
        if isinstance(self.entropy_guard, (bool, str)) and self.entropy_guard in legacy:
            self.entropy_guard = legacy[self.entropy_guard]

    @property
    def frames_per_batch(self) -> int:
        return self.num_envs * self.rollout_len

    @property
    def num_updates(self) -> int:
        return max(1, self.total_steps // self.frames_per_batch)

    def window_note(self, max_episode_steps: int | None) -> str | None:
        """One line for the start of a recurrent run: how far backprop-through-time reaches
        and, when an episode can outlast the window, the setting that puts it in one window
        (the state is carried across windows either way; only the gradient stops at an edge)."""
        if self.model == "mlp":
            return None
        bptt = self.chunk_len or self.rollout_len
        note = f"bptt: {bptt}-step windows" + ("" if max_episode_steps is None else f", episodes up to {max_episode_steps} steps")
        if max_episode_steps is not None and max_episode_steps > bptt:
            note += (f" (the state carries older cues, but no gradient reaches a cue more than {bptt} steps back;"
                     f" for cues at episode start: --rollout-len {max_episode_steps}{' --chunk-len none' if self.chunk_len else ''})")
        return note

    def validate(self) -> "PPOConfig":
        super().validate()
        check_int("rollout_len", self.rollout_len, 1)
        check_int("hidden_size", self.hidden_size, 1)
        check_int("encoder_size", self.encoder_size, 1)
        check_float("learning_rate", self.learning_rate, 0.0, low_open=True)
        check_float("lr_floor", self.lr_floor, 0.0, 1.0)
        check_int("n_epochs", self.n_epochs, 1)
        check_int("envs_per_minibatch", self.envs_per_minibatch, 1, self.num_envs, high_from="num_envs")
        if self.chunk_len is not None:
            check("chunk_len", self.chunk_len, isinstance(self.chunk_len, int) and not isinstance(self.chunk_len, bool) and self.chunk_len >= 1
                  and self.rollout_len % self.chunk_len == 0, f"a divisor of rollout_len={self.rollout_len} (or none)")
        # one update takes a whole [num_envs, rollout_len] rollout: a smaller budget would train on nothing
        check_int("total_steps", self.total_steps, self.frames_per_batch, low_from="num_envs * rollout_len")
        check_float("gamma", self.gamma, 0.0, 1.0)
        check_float("gae_lambda", self.gae_lambda, 0.0, 1.0)
        check_float("clip_range", self.clip_range, 0.0, low_open=True)
        if self.clip_range_vf is not None:
            check_float("clip_range_vf", self.clip_range_vf, 0.0, low_open=True)
        check_float("vf_coef", self.vf_coef, 0.0)
        check_float("ent_coef", self.ent_coef, 0.0)
        check_float("max_grad_norm", self.max_grad_norm, 0.0, low_open=True)
        if self.target_kl is not None:
            check_float("target_kl", self.target_kl, 0.0, low_open=True)
        check_float("entropy_threshold", self.entropy_threshold, 0.0)
        check_int("entropy_patience", self.entropy_patience, 1)
        check_float("flicker_burst", self.flicker_burst, 1.0)
        if self.backend == "ray" and importlib.util.find_spec("ray") is None:
            raise UserError("--backend ray needs the 'ray' package, which is not installed (pip install -e '.[ray]'; accepted without it: --backend local)")
        if self.ray_address is not None:
            check("ray_address", self.ray_address, self.backend == "ray" and isinstance(self.ray_address, str) and ":" in self.ray_address, "HOST:PORT, with --backend ray")
        return self
