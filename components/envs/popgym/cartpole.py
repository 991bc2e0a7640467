"""POPGym's PositionOnlyCartPole and NoisyPositionOnlyCartPole, tensor-native.

gymnasium's CartPole-v1 physics (``envs/cartpole.py``'s step, equal to gymnasium's bit for bit
on the CPU) with popgym's changes: the observation is the cart position and the pole angle
(float32), every step pays 1 / ``max_episode_length`` (the terminating one too, as gymnasium's
CartPole pays 1 there), and the episode is truncated after ``max_episode_length`` steps
(200 / 400 / 600) whether or not it also terminated. The noisy version adds N(0, sigma) noise
(drawn in float64, added in float32) to both entries and clips them to popgym's observation
box, at the reset and after every step.
"""
from __future__ import annotations

import torch
from torchrl.data import Unbounded

from ..cartpole import THETA_THRESHOLD, X_THRESHOLD, CartPoleEnv
from .base import PopGymEnvBase


class PositionOnlyCartPole(PopGymEnvBase):
    """popgym ``PositionOnlyCartPole``: observation ``[x, theta]``, reward 1 / ``max_episode_length``.
    State: ``"physics"`` (float64 x, x_dot, theta, theta_dot), ``"elapsed"``."""

    obs_dim = 2
    one_hot_observation = False

    def __init__(self, max_episode_length: int = 200, num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        if max_episode_length < 1:
            raise ValueError(f"max_episode_length must be >= 1, got {max_episode_length}")
        self.max_episode_steps = int(max_episode_length)  # read by CartPoleEnv's step
        self.reward_scale = 1.0 / self.max_episode_steps
        super().__init__(num_envs=num_envs, device=device, seed=seed)

    _make_state_spec = CartPoleEnv._make_state_spec
    _physics_step = CartPoleEnv._transition

    def _action_n(self) -> int:
        return 2

    def _fresh_rows(self, rows):
        k = self._rows_count(rows)
        physics = self.draws.uniform((k, 4), rows, torch.float64) * 0.1 - 0.05  # gymnasium: U(-0.05, 0.05)
        return {"physics": physics, "elapsed": torch.zeros((k, 1), dtype=torch.int64, device=self.device)}

    def _observe(self, state: dict) -> torch.Tensor:
        return state["physics"][:, 0::2].to(torch.float32)

    def _transition(self, state: dict, action: torch.Tensor):
        state, reward, terminated, truncated = self._physics_step(state, action)
        return state, torch.full_like(reward, self.reward_scale), terminated, truncated


class NoisyPositionOnlyCartPole(PositionOnlyCartPole):
    """popgym ``NoisyPositionOnlyCartPole``: ``[x, theta]`` plus N(0, ``noise_sigma``) noise, clipped
    to +-``[2 * 2.4, 2 * 12 deg]`` (popgym's observation box, float32). The noise of the
    observation shown is state (``"noise"``), drawn with the step, so observing draws nothing."""

    def __init__(self, noise_sigma: float = 0.1, max_episode_length: int = 200, num_envs: int = 1,
                 device: torch.device | str = "cpu", seed: int | None = None):
        if noise_sigma < 0:
            raise ValueError(f"noise_sigma must be >= 0, got {noise_sigma}")
        self.noise_sigma = float(noise_sigma)
        super().__init__(max_episode_length, num_envs, device, seed)
        self._high = torch.tensor([X_THRESHOLD * 2, THETA_THRESHOLD * 2], dtype=torch.float32, device=self.device)

    def _make_state_spec(self) -> dict:
        return {**super()._make_state_spec(), "noise": Unbounded(shape=(*self.batch_size, 2), dtype=torch.float32, device=self.device)}

    def _noise(self, k: int, rows) -> torch.Tensor:
        return (self.draws.normal((k, 2), rows) * self.noise_sigma).to(torch.float32)

    def _fresh_rows(self, rows):
        state = super()._fresh_rows(rows)
        return {**state, "noise": self._noise(self._rows_count(rows), rows)}

    def _observe(self, state: dict) -> torch.Tensor:
        return torch.minimum(torch.maximum(super()._observe(state) + state["noise"], -self._high), self._high)

    def _transition(self, state: dict, action: torch.Tensor):
        noise = state.pop("noise")
        state, reward, terminated, truncated = super()._transition(state, action)
        return {**state, "noise": self._noise(noise.shape[0], None)}, reward, terminated, truncated
