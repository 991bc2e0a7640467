"""Using a trained agent: ``load_policy(checkpoint).predict(obs, state, episode_start)`` and greedy
evaluation of a checkpoint without training.

    >>> from torchrl_memory.serve import load_policy
    >>> policy = load_policy("runs/recurrent_ppo/v1/<run_id>/best.pt")
"""
from .eval_only import evaluate_checkpoint
from .policy import TrainedPolicy, load_policy

__all__ = ["TrainedPolicy", "evaluate_checkpoint", "load_policy"]
