"""Batched T-maze memory task as a tensor-native TorchRL env: the classic test of memory over a gap.

A cue (+1 or -1) is visible only at step 0, then ``corridor_length`` corridor
steps follow, then a junction whose observation is identical for both cues.
At the junction action 1 turns "up" (right for cue +1) and action 0 turns
"down"; the reward is +1 when the turn matches the cue, else -1, and the
episode terminates. Actions in the corridor only move forward. A memoryless
policy scores 50% success.

Observation: ``[cue, in_corridor, at_junction]``.
"""
from __future__ import annotations

import torch
from torchrl.data import Unbounded

from .native import NativeEnvBase


class TMazeEnv(NativeEnvBase):
    """The T-maze memory task, batched: a cue (+1 or -1) shown only at the first step, then
    ``corridor_length`` corridor steps, then a junction whose observation is the same for both
    cues, where the turn must match the cue (+1, else -1) and the episode ends. A memoryless
    policy scores 50%.

    Args:
        corridor_length: steps between the cue and the junction.
        num_envs, device, seed: as ``NativeEnvBase``.
    """

    obs_dim = 3

    def __init__(self, corridor_length: int = 10, num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        if corridor_length < 1:
            raise ValueError(f"corridor_length must be >= 1, got {corridor_length}")
        self.corridor_length = int(corridor_length)
        super().__init__(num_envs=num_envs, device=device, seed=seed)

    @property
    def max_episode_steps(self) -> int:
        """Every episode: the cue step, the corridor, the choice at the junction."""
        return self.corridor_length + 1

    def _make_state_spec(self) -> dict:
        n = self.batch_size
        return {
            "position": Unbounded(shape=(*n, 1), dtype=torch.int64, device=self.device),
            "cue": Unbounded(shape=(*n, 1), dtype=torch.float32, device=self.device),
        }

    def _action_n(self) -> int:
        return 2

    def _fresh_state(self, n: int) -> dict:
        cue = torch.randint(0, 2, (n, 1), generator=self.rng, device=self.device).float() * 2 - 1
        return {"position": torch.zeros((n, 1), dtype=torch.int64, device=self.device), "cue": cue}

    def _observe(self, state: dict) -> torch.Tensor:
        pos, cue = state["position"], state["cue"]
        at_start = (pos == 0).float()
        at_junction = (pos == self.corridor_length).float()
        in_corridor = 1.0 - at_start - at_junction
        return torch.cat([cue * at_start, in_corridor, at_junction], -1)

    def _transition(self, state: dict, action: torch.Tensor):
        pos, cue = state["position"], state["cue"]
        at_junction = pos == self.corridor_length
        turn_up = action.reshape(pos.shape) == 1
        correct = turn_up == (cue > 0)
        reward = torch.where(at_junction, torch.where(correct, 1.0, -1.0), 0.0)
        terminated = at_junction
        truncated = torch.zeros_like(terminated)
        next_pos = torch.where(at_junction, pos, pos + 1)
        return {"position": next_pos, "cue": cue}, reward, terminated, truncated
