"""DQN: config, agent (Q-network, target network, replay buffer, TD update), epsilon schedule and
its run state, whose ``steps()`` is the per-env-step collection.

    >>> from torchrl_memory.dqn import DQNConfig, DQNAgent, DQNRunState
"""
from .agent import DQNAgent
from .config import DQNConfig
from .epsilon_schedule import LinearEpsilon
from .run_state import DQNRunState, StepMetrics

__all__ = ["DQNAgent", "DQNConfig", "DQNRunState", "LinearEpsilon", "StepMetrics"]
