"""Batched, tensor-native CartPole-v1 as a TorchRL ``EnvBase``.

Custom because TorchRL's ``GymEnv`` costs ~0.5 ms of Python per env step and
gymnasium's physics steps one env at a time. Here all ``N`` envs advance in a
handful of tensor ops on the env's device. The env is *stateless* in the
TorchRL sense: the full physical state lives in the tensordict (``"physics"``,
``"elapsed"``), so the collector's carried tensordict is everything needed to
resume a run exactly.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torchrl.data import Unbounded

from .native import NativeEnvBase

# gymnasium CartPole-v1 constants
GRAVITY = 9.8
MASSCART = 1.0
MASSPOLE = 0.1
TOTAL_MASS = MASSCART + MASSPOLE
LENGTH = 0.5
POLEMASS_LENGTH = MASSPOLE * LENGTH
FORCE_MAG = 10.0
TAU = 0.02
THETA_THRESHOLD = 12 * 2 * math.pi / 360
X_THRESHOLD = 2.4
MAX_EPISODE_STEPS = 500


def _cos_sin(theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin as gymnasium computes them, bit for bit, on the CPU.

    torch's vectorised float64 kernels differ from numpy's by one ulp on ~0.3% of inputs
    (sin) and the upright pole amplifies any perturbation (~8% per step), so with torch's
    a trajectory parts from gymnasium's within a few hundred steps. numpy's array path
    equals its scalar path, which gymnasium uses. On CUDA torch's kernels are used: there
    parity holds to float64 rounding, not bit for bit.
    """
    if theta.device.type == "cpu":
        t = theta.numpy()
        return torch.from_numpy(np.cos(t)), torch.from_numpy(np.sin(t))
    return torch.cos(theta), torch.sin(theta)


class CartPoleEnv(NativeEnvBase):
    """gymnasium CartPole-v1 dynamics (Euler), ``batch_size=[num_envs]``.

    Physics runs in float64 like gymnasium's, with gymnasium's cos/sin on the CPU, so
    the state equals gymnasium's bit for bit from identical states and actions
    (tests/envs/test_native_envs.py); observations are float32.
    Termination at |x| > 2.4 or |theta| > 12 deg, truncation at 500 steps
    (``max_episode_steps``),
    reward 1 on every step including the last, reset state U(-0.05, 0.05).
    """

    obs_dim = 4

    def __init__(
        self,
        num_envs: int = 1,
        device: torch.device | str = "cpu",
        seed: int | None = None,
        max_episode_steps: int = MAX_EPISODE_STEPS,
    ):
        if max_episode_steps < 1:
            raise ValueError(f"max_episode_steps must be >= 1, got {max_episode_steps}")
        self.max_episode_steps = int(max_episode_steps)
        super().__init__(num_envs=num_envs, device=device, seed=seed)

    def _make_state_spec(self) -> dict:
        n = self.batch_size
        return {
            "physics": Unbounded(shape=(*n, 4), dtype=torch.float64, device=self.device),
            "elapsed": Unbounded(shape=(*n, 1), dtype=torch.int64, device=self.device),
        }

    def _action_n(self) -> int:
        return 2

    def _fresh_state(self, n: int) -> dict:
        physics = torch.rand((n, 4), generator=self.rng, device=self.device, dtype=torch.float64) * 0.1 - 0.05
        return {"physics": physics, "elapsed": torch.zeros((n, 1), dtype=torch.int64, device=self.device)}

    def _observe(self, state: dict) -> torch.Tensor:
        return state["physics"].to(torch.float32)

    def _transition(self, state: dict, action: torch.Tensor):
        x, x_dot, theta, theta_dot = state["physics"].unbind(-1)
        force = torch.where(action.reshape(x.shape) == 1, FORCE_MAG, -FORCE_MAG).to(x.dtype)
        costheta, sintheta = _cos_sin(theta)
        temp = (force + POLEMASS_LENGTH * theta_dot**2 * sintheta) / TOTAL_MASS
        thetaacc = (GRAVITY * sintheta - costheta * temp) / (
            LENGTH * (4.0 / 3.0 - MASSPOLE * costheta**2 / TOTAL_MASS)
        )
        xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
        x = x + TAU * x_dot
        x_dot = x_dot + TAU * xacc
        theta = theta + TAU * theta_dot
        theta_dot = theta_dot + TAU * thetaacc
        physics = torch.stack([x, x_dot, theta, theta_dot], -1)
        elapsed = state["elapsed"] + 1
        terminated = ((x.abs() > X_THRESHOLD) | (theta.abs() > THETA_THRESHOLD)).unsqueeze(-1)
        # gymnasium's TimeLimit flags truncation at the limit whether or not the step also terminated
        truncated = elapsed >= self.max_episode_steps
        reward = torch.ones_like(terminated, dtype=torch.float32)
        return {"physics": physics, "elapsed": elapsed}, reward, terminated, truncated
