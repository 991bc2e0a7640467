"""Tiny gymnasium envs for the input-data tests, registered on import (``module:id`` works too)."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class NonFiniteAt(gym.Env):
    """Box(4,) float observations, two actions, reward 1; episodes of 20 steps. After ``at``
    steps in total (over resets) the ``entry`` ("observation" or "reward") becomes ``value``."""

    def __init__(self, at: int = 50, entry: str = "reward", value: float = float("nan")):
        self.observation_space = spaces.Box(-1.0, 1.0, (4,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.at, self.entry, self.value = at, entry, value
        self.steps = self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(4, np.float32), {}

    def step(self, action):
        self.steps += 1
        self.t += 1
        bad = self.steps >= self.at
        obs = np.full(4, self.value if bad and self.entry == "observation" else 0.1 * self.t, np.float32)
        reward = self.value if bad and self.entry == "reward" else 1.0
        return obs, reward, False, self.t >= 20, {}


class Image(gym.Env):
    """``side`` x ``side`` x 3 uint8 images, two actions, episodes of 8 steps."""

    def __init__(self, side: int = 32):
        self.observation_space = spaces.Box(0, 255, (side, side, 3), np.uint8)
        self.action_space = spaces.Discrete(2)
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action):
        self.t += 1
        return self.observation_space.sample(), float(action), False, self.t >= 8, {}


for entry in ("reward", "observation"):
    for name, value in (("NaN", float("nan")), ("Inf", float("inf"))):
        gym.register(f"{name}{entry.capitalize()}-v0", entry_point=NonFiniteAt, kwargs={"entry": entry, "value": value})
for side in (17, 32, 35):
    gym.register(f"Image{side}-v0", entry_point=Image, kwargs={"side": side})
