"""Recurrent PPO and DQN components for TorchRL: import any piece into your own TorchRL code.

Layout: ``envs/`` (env factory, tensor-native envs, POMDP transforms, observation
normalisation), ``ppo/`` (config, actor-critic, padded LSTM, GAE, return scaling,
sampler, loss, trainer, checkpoint, run state), ``dqn/`` (config, epsilon schedule,
agent, trainer), ``runs/`` (run directory, run state, stats, evaluation, episode logs,
learning curve, metrics logger, phase timer, interrupts), and shared leaves here (keys,
run config, config validation, cli, device, flat parameters).

Importing ``components`` memoises one ``importlib.util.find_spec`` lookup inside
``tensordict.base`` (a ~0.1 ms cost per TensorDictModule call in tensordict 0.14; see
``tensordict_speedups.py``). Set ``TORCHRL_MEMORY_NO_TD_PATCH=1`` before importing to
leave tensordict untouched.
"""
import os

from . import tensordict_speedups

if os.environ.get("TORCHRL_MEMORY_NO_TD_PATCH", "") not in ("1", "true", "yes"):
    tensordict_speedups.install()

from .cli import build_parser, config_from_args, eval_request, resolve_run_config, run_main
from .config_validation import ConfigError, UserError
from .device import resolve_device, set_cpu_threads
from .dqn.agent import DQNAgent, DqnAgent
from .dqn.config import DQNConfig, DqnConfig
from .dqn.epsilon_schedule import LinearEpsilon
from .dqn.trainer import DQNTrainer, DqnTrainer, StepMetrics
from .envs.cartpole import CartPoleEnv
from .envs.factory import check_eval_env, make_env, parse_env_id
from .envs.lookup import find_transform, native_base, obs_dim_of
from .envs.minigrid_memory import MiniGridMemoryEnv
from .envs.obs_norm import RunningObsNorm
from .envs.pomdp_transforms import Flicker, MaskVelocity
from .envs.tmaze import TMazeEnv
from .flat_params import clip_flat_grad_norm_, flatten_parameters, fused_adam
from .ppo.actor_critic import (
    build_agent,
    LSTMActorCritic,
    LstmActorCritic,
    make_actor_critic,
    make_gru_actor_critic,
    make_lstm_actor_critic,
    make_mlp_actor_critic,
)
from .ppo.advantage import compute_gae, gae_from_values, next_state_values
from .ppo.image_encoder import ImageEncoder, make_input_encoder
from .ppo.checkpoint import build_state, check_compatible, restore_state
from .ppo.config import PPOConfig
from .ppo.loss import RecurrentPPOLoss
from .ppo.padded_rnn import PaddedGRUModule, PaddedLSTMModule
from .ppo.reward_scaling import ReturnScaler
from .ppo.run_state import PPORunState
from .ppo.sampler import RecurrentMinibatchSampler
from .ppo.trainer import EntropyCollapseError, NonFiniteLossError, RecurrentPPOTrainer, TrainingStats
from .run_config import RunConfig
from .serve.eval_only import evaluate_checkpoint
from .serve.policy import TrainedPolicy, load_policy
from .runs.collectors import WorkerEnv, make_async_collector, make_collector
from .runs.episode_log import finished_episodes
from .runs.evaluation import evaluate, preserved_rng, run_greedy_episodes, sync_obs_norm
from .runs.interrupts import StopRequested, deferred_stop
from .runs.learning_curve import plot_learning_curve
from .runs.metrics_logger import logger_for, make_metrics_logger
from .runs.phase_timer import PhaseTimer
from .runs.run_dir import CheckpointError, RunNotFoundError, TrainingRun, check_resume_config
from .runs.run_state import RunState
from .runs.stats import EpisodeRecord, EvalReport, StatsTracker

__all__ = sorted(
    [
        "CartPoleEnv", "CheckpointError", "ConfigError", "DQNAgent", "DQNConfig", "DQNTrainer", "DqnAgent", "DqnConfig", "DqnTrainer",
        "EntropyCollapseError", "EpisodeRecord", "EvalReport", "Flicker", "LSTMActorCritic", "LinearEpsilon",
        "LstmActorCritic", "ImageEncoder", "make_input_encoder", "MaskVelocity", "NonFiniteLossError", "PPOConfig", "PPORunState", "PaddedGRUModule", "PaddedLSTMModule",
        "PhaseTimer", "RecurrentMinibatchSampler", "RecurrentPPOLoss", "RecurrentPPOTrainer", "ReturnScaler",
        "RunConfig", "RunNotFoundError", "RunState", "UserError", "run_main", "RunningObsNorm", "StatsTracker", "StepMetrics", "StopRequested", "TMazeEnv",
        "TrainedPolicy", "TrainingRun", "WorkerEnv", "make_async_collector", "make_collector", "TrainingStats", "eval_request", "evaluate_checkpoint", "load_policy", "logger_for", "build_agent", "build_parser", "build_state", "check_compatible", "check_resume_config",
        "clip_flat_grad_norm_", "compute_gae", "config_from_args", "deferred_stop", "evaluate", "find_transform",
        "finished_episodes", "flatten_parameters", "fused_adam", "gae_from_values", "make_env",
        "MiniGridMemoryEnv", "check_eval_env", "make_actor_critic", "make_gru_actor_critic", "make_lstm_actor_critic", "make_metrics_logger", "make_mlp_actor_critic", "native_base",
        "next_state_values", "obs_dim_of", "parse_env_id", "plot_learning_curve", "preserved_rng",
        "resolve_device", "resolve_run_config", "restore_state", "run_greedy_episodes", "set_cpu_threads",
        "sync_obs_norm",
    ]
)
