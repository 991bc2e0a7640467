"""POPGym's MultiarmedBandit, tensor-native.

Each episode draws every arm's payout probability U[0, 1) (float32); pulling an arm pays
+1 / L with that probability and -1 / L otherwise, and the observation says which (one-hot
of 0 / 1; 0 after the reset). Truncated after L steps (200 / 400 / 600); never terminated.
"""
from __future__ import annotations

import torch
from torchrl.data import Unbounded

from .base import PopGymEnvBase, one_hot


class MultiarmedBandit(PopGymEnvBase):
    """popgym ``MultiarmedBandit``. State: ``"bandits"`` (payout probabilities), ``"paid"`` (the
    last pull paid), ``"elapsed"``."""

    obs_dim = 2

    def __init__(self, num_bandits: int = 10, episode_length: int = 200, num_envs: int = 1,
                 device: torch.device | str = "cpu", seed: int | None = None):
        if num_bandits < 1 or episode_length < 1:
            raise ValueError(f"num_bandits and episode_length must be >= 1, got {num_bandits}, {episode_length}")
        self.num_bandits, self.max_episode_steps = int(num_bandits), int(episode_length)
        self.reward_scale = 1 / self.max_episode_steps
        super().__init__(num_envs=num_envs, device=device, seed=seed)

    def _make_state_spec(self) -> dict:
        n = self.batch_size
        return {
            "bandits": Unbounded(shape=(*n, self.num_bandits), dtype=torch.float32, device=self.device),
            "paid": Unbounded(shape=(*n, 1), dtype=torch.int64, device=self.device),
            "elapsed": Unbounded(shape=(*n, 1), dtype=torch.int64, device=self.device),
        }

    def _action_n(self) -> int:
        return self.num_bandits

    def _fresh_rows(self, rows):
        k = self._rows_count(rows)
        zeros = torch.zeros((k, 1), dtype=torch.int64, device=self.device)
        return {"bandits": self.draws.uniform((k, self.num_bandits), rows, torch.float32), "paid": zeros, "elapsed": zeros.clone()}

    def _observe(self, state: dict) -> torch.Tensor:
        return one_hot(state["paid"], 2)

    def _transition(self, state: dict, action: torch.Tensor):
        elapsed, bandits = state["elapsed"], state["bandits"]
        p = bandits.gather(1, action.reshape(elapsed.shape)).double()
        paid = self.draws.uniform(tuple(elapsed.shape), None, torch.float64) < p  # popgym: float64 draw < float32 mean
        reward = torch.where(paid, self.reward_scale, -self.reward_scale)
        truncated = elapsed >= self.max_episode_steps - 1
        state = {"bandits": bandits, "paid": paid.long(), "elapsed": elapsed + 1}
        return state, reward, torch.zeros_like(truncated), truncated
