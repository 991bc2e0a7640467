"""Recurrent PPO and DQN for TorchRL, with memory: import any piece into your own TorchRL code.

The top level holds what a user reaches for first; each subpackage has its own face:
``envs`` (env factory, tensor-native envs, POMDP transforms, observation encoding and
normalisation), ``ppo`` (config, agent, GAE, sampler, loss, update), ``dqn`` (config, agent,
loop), ``runs`` (run directory and checkpoints, statistics, evaluation, collectors, loggers),
``serve`` (``load_policy`` / ``predict``), ``presets`` (named recipes).

    >>> from torchrl_memory import make_env, PPOConfig, build_agent
    >>> from torchrl_memory.ppo import RecurrentPPOLoss

Importing the package memoises one ``importlib.util.find_spec`` lookup inside
``tensordict.base`` (a ~0.1 ms cost per TensorDictModule call in tensordict 0.14; see
``tensordict_speedups.py``). Set ``TORCHRL_MEMORY_NO_TD_PATCH=1`` before importing to
leave tensordict untouched.
"""
import importlib
import os
import warnings

from . import tensordict_speedups

if os.environ.get("TORCHRL_MEMORY_NO_TD_PATCH", "") not in ("1", "true", "yes"):
    tensordict_speedups.install()

# the user-facing names (after the patch above, which must come first)
from .config_validation import ConfigError, UserError  # noqa: E402
from .device import resolve_device  # noqa: E402
from .dqn import DQNAgent, DQNConfig, DQNRunState  # noqa: E402
from .envs import CartPoleEnv, make_env, MiniGridMemoryEnv, TMazeEnv  # noqa: E402
from .ppo import ActorCritic, build_agent, compute_gae, EntropyCollapseError, NonFiniteLossError, PaddedGRUModule, PaddedLSTMModule, PPOConfig, RecurrentMinibatchSampler, RecurrentPPOLoss, RecurrentPPOTrainer  # noqa: E402
from .runs import evaluate, make_collector, TrainingRun  # noqa: E402
from .serve import load_policy, TrainedPolicy  # noqa: E402

__all__ = sorted([
    "ActorCritic",
    "build_agent",
    "CartPoleEnv",
    "compute_gae",
    "ConfigError",
    "DQNAgent",
    "DQNConfig",
    "DQNRunState",
    "EntropyCollapseError",
    "evaluate",
    "load_policy",
    "make_collector",
    "make_env",
    "MiniGridMemoryEnv",
    "NonFiniteLossError",
    "PaddedGRUModule",
    "PaddedLSTMModule",
    "PPOConfig",
    "RecurrentMinibatchSampler",
    "RecurrentPPOLoss",
    "RecurrentPPOTrainer",
    "resolve_device",
    "TMazeEnv",
    "TrainedPolicy",
    "TrainingRun",
    "UserError",
])

#: names the top level exported before it kept to the user-facing ones -> where they live now
MOVED = {
    "build_parser": "torchrl_memory.cli",
    "config_from_args": "torchrl_memory.cli",
    "eval_request": "torchrl_memory.cli",
    "resolve_run_config": "torchrl_memory.cli",
    "run_main": "torchrl_memory.cli",
    "set_cpu_threads": "torchrl_memory.device",
    "DqnAgent": "torchrl_memory.dqn.agent",
    "DqnConfig": "torchrl_memory.dqn.config",
    "LinearEpsilon": "torchrl_memory.dqn",
    "DqnTrainer": "torchrl_memory.dqn.run_state",
    "DQNTrainer": "torchrl_memory.dqn.run_state",
    "StepMetrics": "torchrl_memory.dqn",
    "check_eval_env": "torchrl_memory.envs",
    "parse_env_id": "torchrl_memory.envs",
    "find_transform": "torchrl_memory.envs",
    "native_base": "torchrl_memory.envs",
    "obs_dim_of": "torchrl_memory.envs",
    "RunningObsNorm": "torchrl_memory.envs",
    "Flicker": "torchrl_memory.envs",
    "MaskVelocity": "torchrl_memory.envs",
    "clip_flat_grad_norm_": "torchrl_memory.flat_params",
    "flatten_parameters": "torchrl_memory.flat_params",
    "fused_adam": "torchrl_memory.flat_params",
    "LSTMActorCritic": "torchrl_memory.ppo.actor_critic",
    "LstmActorCritic": "torchrl_memory.ppo.actor_critic",
    "make_actor_critic": "torchrl_memory.ppo",
    "make_gru_actor_critic": "torchrl_memory.ppo",
    "make_lstm_actor_critic": "torchrl_memory.ppo",
    "make_mlp_actor_critic": "torchrl_memory.ppo",
    "gae_from_values": "torchrl_memory.ppo",
    "next_state_values": "torchrl_memory.ppo",
    "build_state": "torchrl_memory.ppo.checkpoint",
    "check_compatible": "torchrl_memory.ppo.checkpoint",
    "restore_state": "torchrl_memory.ppo.checkpoint",
    "ImageEncoder": "torchrl_memory.ppo",
    "make_input_encoder": "torchrl_memory.ppo",
    "ReturnScaler": "torchrl_memory.ppo",
    "PPORunState": "torchrl_memory.ppo",
    "TrainingStats": "torchrl_memory.ppo",
    "RunConfig": "torchrl_memory.run_config",
    "WorkerEnv": "torchrl_memory.runs",
    "make_async_collector": "torchrl_memory.runs",
    "finished_episodes": "torchrl_memory.runs",
    "preserved_rng": "torchrl_memory.runs",
    "run_greedy_episodes": "torchrl_memory.runs",
    "sync_obs_norm": "torchrl_memory.runs",
    "StopRequested": "torchrl_memory.runs",
    "deferred_stop": "torchrl_memory.runs",
    "plot_learning_curve": "torchrl_memory.runs",
    "logger_for": "torchrl_memory.runs",
    "make_metrics_logger": "torchrl_memory.runs",
    "PhaseTimer": "torchrl_memory.runs",
    "CheckpointError": "torchrl_memory.runs",
    "RunNotFoundError": "torchrl_memory.runs",
    "check_resume_config": "torchrl_memory.runs.run_dir",
    "RunState": "torchrl_memory.runs",
    "EpisodeRecord": "torchrl_memory.runs",
    "EvalReport": "torchrl_memory.runs",
    "StatsTracker": "torchrl_memory.runs",
    "evaluate_checkpoint": "torchrl_memory.serve",
}


def __getattr__(name: str):
    """``from torchrl_memory import <a former top-level name>`` still works, with a DeprecationWarning naming its home."""
    if name in MOVED:
        warnings.warn(f"torchrl_memory.{name} moved: import it from {MOVED[name]}", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(MOVED[name]), name)
    raise AttributeError(f"module 'torchrl_memory' has no attribute {name!r}")
