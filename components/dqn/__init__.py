"""DQN: config, agent (Q-network, target network, replay buffer, TD update), epsilon schedule and
the per-env-step loop with its run state.

    >>> from torchrl_memory.dqn import DQNConfig, DQNAgent, DQNTrainer
"""
from .agent import DQNAgent
from .config import DQNConfig
from .epsilon_schedule import LinearEpsilon
from .trainer import DQNTrainer, StepMetrics

__all__ = ["DQNAgent", "DQNConfig", "DQNTrainer", "LinearEpsilon", "StepMetrics"]
