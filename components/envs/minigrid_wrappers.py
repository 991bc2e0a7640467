"""Gymnasium wrappers for MiniGrid, for ``--env-wrappers`` (or ``make_env(wrappers=[...])``).

* ``NavigationActions``: MiniGrid's 7 actions -> the 3 that move (left, right, forward). In
  the Memory envs pickup/drop/toggle/done do nothing, so with all 7 four-sevenths of random
  exploration are no-ops; the restricted set is what recurrent-PPO baselines train Memory with
  (e.g. MarcoMeter's recurrent-ppo-truncated-bptt). It changes the action space: report it.
* ``OneHotSymbolicImage``: the symbolic 7x7x3 view (object, colour, state indices, declared
  as a uint8 box up to 255) -> a 7x7x20 float one-hot per cell, so a key and a ball differ
  by a whole channel instead of by 1/255. The output stays a 3-D box, so ``--encoder auto``
  still puts the CNN on it.

Custom because minigrid's ``OneHotPartialObsWrapper`` keeps the uint8 0..255 box (which the
observation encoder would scale by 1/255) and minigrid has no action-subset wrapper.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

# minigrid.core.constants: 11 object types, 6 colours, 3 door states
_CHANNELS = (11, 6, 3)


class NavigationActions(gym.ActionWrapper):
    """Discrete(3): 0 turn left, 1 turn right, 2 forward (MiniGrid's own indices 0-2)."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        if not isinstance(env.action_space, spaces.Discrete) or env.action_space.n < 3:
            raise ValueError(f"NavigationActions needs MiniGrid's Discrete(7) actions, got {env.action_space}")
        self.action_space = spaces.Discrete(3)

    def action(self, action):
        return int(action)  # the first three MiniGrid actions are left, right, forward


class OneHotSymbolicImage(gym.ObservationWrapper):
    """``obs["image"]`` (H, W, 3) indices -> (H, W, 20) float32 one-hots; other entries unchanged."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        image = env.observation_space["image"]
        h, w, c = image.shape
        if c != len(_CHANNELS):
            raise ValueError(f"OneHotSymbolicImage needs MiniGrid's symbolic (H, W, 3) image, got shape {image.shape}")
        self._offsets = np.cumsum((0,) + _CHANNELS[:-1])
        self._eye = np.eye(sum(_CHANNELS), dtype=np.float32)
        self.observation_space = spaces.Dict({**env.observation_space.spaces,
                                              "image": spaces.Box(0.0, 1.0, (h, w, sum(_CHANNELS)), np.float32)})

    def observation(self, obs):
        idx = obs["image"].astype(np.int64) + self._offsets  # (H, W, 3) rows of the 20x20 identity
        return {**obs, "image": self._eye[idx].sum(axis=2)}
