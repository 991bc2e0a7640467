"""Recurrent PPO and DQN components for TorchRL: import any piece into your own TorchRL code."""
from components import tensordict_speedups

tensordict_speedups.install()

from components.ppo.actor_critic import LstmActorCritic, make_lstm_actor_critic, make_mlp_actor_critic
from components.ppo.advantage import compute_gae, gae_from_values, next_state_values
from components.envs.cartpole import CartPoleEnv
from components.cli import build_parser, config_from_args, resolve_run_config
from components.config_validation import ConfigError
from components.device import resolve_device, set_cpu_threads
from components.dqn.agent import DqnAgent
from components.dqn.config import DqnConfig
from components.dqn.trainer import DqnTrainer, StepMetrics
from components.dqn.epsilon_schedule import LinearEpsilon
from components.envs.factory import make_env, parse_env_id
from components.envs.lookup import find_transform, native_base, obs_dim_of
from components.runs.episode_log import finished_episodes
from components.runs.evaluation import evaluate, run_greedy_episodes, sync_obs_norm
from components.flat_params import clip_flat_grad_norm_, flatten_parameters, fused_adam
from components.runs.learning_curve import plot_learning_curve
from components.runs.metrics_logger import make_metrics_logger
from components.envs.obs_norm import RunningObsNorm
from components.ppo.padded_lstm import PaddedLSTMModule
from components.envs.pomdp_transforms import Flicker, MaskVelocity
from components.ppo.checkpoint import build_state, check_compatible, restore_state
from components.ppo.config import PPOConfig
from components.ppo.loss import RecurrentPPOLoss
from components.ppo.trainer import EntropyCollapseError, NonFiniteLossError, RecurrentPPOTrainer, TrainingStats
from components.ppo.reward_scaling import ReturnScaler
from components.ppo.sampler import RecurrentMinibatchSampler
from components.runs.stats import EpisodeRecord, EvalReport, StatsTracker
from components.envs.tmaze import TMazeEnv
from components.runs.run_dir import TrainingRun, check_resume_config

__all__ = [
    "CartPoleEnv",
    "ConfigError",
    "DqnAgent",
    "DqnConfig",
    "DqnTrainer",
    "EntropyCollapseError",
    "EpisodeRecord",
    "EvalReport",
    "Flicker",
    "LinearEpsilon",
    "LstmActorCritic",
    "MaskVelocity",
    "NonFiniteLossError",
    "PaddedLSTMModule",
    "PPOConfig",
    "RecurrentMinibatchSampler",
    "RecurrentPPOLoss",
    "RecurrentPPOTrainer",
    "ReturnScaler",
    "RunningObsNorm",
    "StatsTracker",
    "StepMetrics",
    "TMazeEnv",
    "TrainingRun",
    "TrainingStats",
    "build_parser",
    "build_state",
    "check_compatible",
    "check_resume_config",
    "clip_flat_grad_norm_",
    "compute_gae",
    "config_from_args",
    "evaluate",
    "finished_episodes",
    "flatten_parameters",
    "fused_adam",
    "gae_from_values",
    "make_env",
    "make_lstm_actor_critic",
    "make_metrics_logger",
    "make_mlp_actor_critic",
    "next_state_values",
    "obs_dim_of",
    "parse_env_id",
    "plot_learning_curve",
    "resolve_device",
    "resolve_run_config",
    "restore_state",
    "run_greedy_episodes",
    "set_cpu_threads",
    "sync_obs_norm",
]
