"""DQN: config, agent (Q-network, target network, replay buffer, TD update), the recurrent agent
(R2D2-style: stored state, burn-in, sequence replay), epsilon schedule and its run state, whose
``steps()`` is the per-env-step collection.

    >>> from torchrl_memory.dqn import DQNConfig, DQNAgent, DQNRunState
"""
from .agent import DQNAgent
from .config import DQNConfig
from .epsilon_schedule import LinearEpsilon
from .recurrent_agent import RecurrentDQNAgent, build_dqn_agent
from .run_state import DQNRunState, StepMetrics

from .sequence_replay import SequenceReplay

__all__ = ["DQNAgent", "DQNConfig", "DQNRunState", "LinearEpsilon", "RecurrentDQNAgent", "SequenceReplay", "StepMetrics", "build_dqn_agent"]
