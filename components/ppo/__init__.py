"""Recurrent PPO: config, agent (memory trunk + heads), GAE, the recurrent minibatch sampler, the
ClipPPOLoss-based loss, one update (``RecurrentPPOTrainer``) and the run state of a PPO run.

    >>> from torchrl_memory.ppo import PPOConfig, build_agent, compute_gae, RecurrentPPOTrainer
"""
from .actor_critic import (
    ActorCritic,
    build_agent,
    make_actor_critic,
    make_gru_actor_critic,
    make_lstm_actor_critic,
    make_mlp_actor_critic,
)
from .advantage import compute_gae, gae_from_values, next_state_values
from .config import PPOConfig
from .dense_encoder import DenseEncoder
from .image_encoder import ImageEncoder, make_input_encoder
from .loss import RecurrentPPOLoss
from .padded_rnn import PaddedGRUModule, PaddedLSTMModule
from .reward_scaling import ReturnScaler
from .run_state import PPORunState
from .sampler import RecurrentMinibatchSampler
from .trainer import EntropyCollapseError, NonFiniteLossError, RecurrentPPOTrainer, TrainingStats

__all__ = [
    "ActorCritic", "DenseEncoder", "EntropyCollapseError", "ImageEncoder", "NonFiniteLossError", "PPOConfig",
    "PPORunState", "PaddedGRUModule", "PaddedLSTMModule", "RecurrentMinibatchSampler", "RecurrentPPOLoss",
    "RecurrentPPOTrainer", "ReturnScaler", "TrainingStats", "build_agent", "compute_gae", "gae_from_values",
    "make_actor_critic", "make_gru_actor_critic", "make_input_encoder", "make_lstm_actor_critic",
    "make_mlp_actor_critic", "next_state_values",
]
