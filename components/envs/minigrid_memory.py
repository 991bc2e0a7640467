"""MiniGrid's Memory envs (``MiniGrid-MemoryS7-v0`` ... ``MiniGrid-MemoryS17Random-v0``) as a
tensor-native batched env: the same observations, rewards and episode ends as minigrid's
``MemoryEnv``, for all copies in a few tensor gathers.

Custom because minigrid steps one env at a time in Python and TorchRL's wrapper adds its own
per-step cost, which held MemoryS7 runs to ~1.5k env steps/s here. In a Memory env nothing on
the grid ever changes (pickup is remapped to toggle, and toggling a key or a ball does
nothing), so everything the env can show or do is a function of (layout, agent cell,
direction, action). ``memory_tables`` builds those tables once by running minigrid's own code
(``reset``, ``gen_obs``, ``step``) over every layout, free cell, direction and action; this env
only looks them up. ``tests/envs/test_minigrid_memory.py`` steps it in lockstep with minigrid.

Observation entries as the gymnasium backend gives them (``"direction"``, ``"image"``; the text
mission is dropped there too), so ``make_env`` encodes both the same way and a policy trained
here can be evaluated on minigrid's env (``--eval-env-id MiniGrid-MemoryS7-v0``).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
from torchrl.data import Bounded, Categorical, Unbounded

from .native import NativeEnvBase

MEMORY_ID = re.compile(r"MiniGrid-MemoryS(\d+)(Random)?-v0")
NUM_ACTIONS = 7  # minigrid's; actions 3-6 change nothing in a Memory env but still take a step
NONE, SUCCESS, FAILURE = 0, 1, 2  # outcome of a move
LAYOUTS_PER_HALLWAY = 4  # the cue (key or ball) x which end object is on top


@dataclass(frozen=True)
class MemoryTables:
    """Everything a Memory env can show or do, from minigrid's own code.

    Cells are indexed ``x + width * y``; rows for wall and object cells are never read.
    """

    width: int
    height: int
    max_steps: int
    hallway_ends: tuple[int, ...]  # the hallway lengths the env draws from (one unless "Random")
    layout_keys: tuple[tuple, ...]  # [L] ``_layout_key`` of each layout
    layout_hallway: torch.Tensor  # [L] index into hallway_ends of each layout (LAYOUTS_PER_HALLWAY each)
    image: torch.Tensor  # [L, cells, 4, view, view, 3] uint8: gen_obs()["image"]
    move: torch.Tensor  # [L, cells, 4, 7] int64: (next_cell * 4 + next_dir) * 3 + outcome
    reward: torch.Tensor  # [max_steps + 1] float32: minigrid's success reward after t steps


def _layout_key(env) -> tuple:
    """What tells two Memory layouts apart: the cue's type and where success and failure lie
    (which fixes the hallway's end and the order of the two objects at its end)."""
    cue = env.grid.get(1, env.height // 2 - 1)
    return tuple(env.success_pos) + tuple(env.failure_pos) + (cue.type,)


@functools.lru_cache(maxsize=None)
def memory_tables(gym_id: str) -> MemoryTables:
    """Runs minigrid's env ``gym_id`` through every (layout, cell, direction, action) once."""
    import minigrid  # noqa: F401  (optional package, imported when its tables are first needed: registers the MiniGrid ids)

    m = MEMORY_ID.fullmatch(gym_id)
    if m is None:
        raise ValueError(f"not a MiniGrid Memory id: {gym_id!r} (accepted: MiniGrid-MemoryS<size>[Random]-v0)")
    env = gym.make(gym_id).unwrapped
    width, height = env.width, env.height
    hallway_ends = tuple(range(4, width - 2)) if m.group(2) else (width - 3,)
    # minigrid draws the layout at reset: collect one seed per layout (4 per hallway length)
    seeds: dict[tuple, int] = {}
    for seed in range(100_000):
        env.reset(seed=seed)
        seeds.setdefault(_layout_key(env), seed)
        if len(seeds) == LAYOUTS_PER_HALLWAY * len(hallway_ends):
            break
    else:
        raise RuntimeError(f"{gym_id}: found {len(seeds)} of {LAYOUTS_PER_HALLWAY * len(hallway_ends)} layouts")
    # layout order: by hallway end (the key starts with success_pos[0] = end + 1), then the rest of the key
    order = sorted(seeds)
    cells, view = width * height, env.agent_view_size
    image = torch.zeros(len(order), cells, 4, view, view, 3, dtype=torch.uint8)
    move = torch.zeros(len(order), cells, 4, NUM_ACTIONS, dtype=torch.int64)
    for li, key in enumerate(order):
        env.reset(seed=seeds[key])
        free = [(x, y) for y in range(height) for x in range(width) if env.grid.get(x, y) is None]
        for x, y in free:
            for d in range(4):
                env.agent_pos, env.agent_dir = np.array((x, y)), d
                image[li, x + width * y, d] = torch.from_numpy(env.gen_obs()["image"])
                for a in range(NUM_ACTIONS):
                    env.agent_pos, env.agent_dir, env.step_count = np.array((x, y)), d, 0
                    _, reward, terminated, _, _ = env.step(a)
                    outcome = (SUCCESS if reward > 0 else FAILURE) if terminated else NONE
                    nx, ny = (int(v) for v in env.agent_pos)
                    move[li, x + width * y, d, a] = ((nx + width * ny) * 4 + int(env.agent_dir)) * 3 + outcome
    layout_hallway = torch.tensor([hallway_ends.index(k[0] - 1) for k in order])
    # minigrid's _reward(): 1 - 0.9 * (step_count / max_steps), in Python floats, then float32 as the wrapper gives it
    reward = torch.tensor([1 - 0.9 * (t / env.max_steps) for t in range(env.max_steps + 1)], dtype=torch.float32)
    tables = MemoryTables(width, height, env.max_steps, hallway_ends, tuple(order), layout_hallway, image, move, reward)
    env.close()
    return tables


class MiniGridMemoryEnv(NativeEnvBase):
    """``num_envs`` copies of minigrid's ``gym_id`` Memory env, stepped together.

    ``num_actions``: 7 (minigrid's action space) or 3 (left, right, forward: what
    ``minigrid_wrappers.NavigationActions`` leaves). Hidden state entries: ``"layout"``,
    ``"agent_cell"``, ``"agent_dir"``, ``"elapsed"``.
    """

    def __init__(self, gym_id: str = "MiniGrid-MemoryS7-v0", num_actions: int = NUM_ACTIONS, num_envs: int = 1,
                 device: torch.device | str = "cpu", seed: int | None = None):
        if num_actions not in (3, NUM_ACTIONS):
            raise ValueError(f"num_actions must be 3 or {NUM_ACTIONS}, got {num_actions}")
        self.gym_id, self.num_actions = gym_id, int(num_actions)
        tables = memory_tables(gym_id)
        device = torch.device(device)
        self.width, self.height, self.max_episode_steps = tables.width, tables.height, tables.max_steps
        self._view = tables.image.shape[-2]
        # flat tables on the env's device: one gather per step for the move, one for the view
        self._image = tables.image.reshape(-1, self._view, self._view, 3).to(device)
        self._move = tables.move[..., : self.num_actions].reshape(-1).to(device)
        self._reward = tables.reward.to(device)
        self._cells = tables.width * tables.height
        self._hallway_ends = torch.tensor(tables.hallway_ends, device=device)
        super().__init__(num_envs=num_envs, device=device, seed=seed)

    def _make_observation_spec(self) -> dict:
        n, v = self.batch_size, self._view
        return {
            "direction": Categorical(4, shape=n, device=self.device),
            "image": Bounded(0, 255, shape=(*n, v, v, 3), dtype=torch.uint8, device=self.device),
        }

    def _make_state_spec(self) -> dict:
        n = self.batch_size
        return {k: Unbounded(shape=(*n, 1), dtype=torch.int64, device=self.device) for k in ("layout", "agent_cell", "agent_dir", "elapsed")}

    def _action_n(self) -> int:
        return self.num_actions

    def _fresh_state(self, n: int) -> dict:
        """minigrid's start distribution: a hallway length (Random ids), then the agent's x in
        [1, hallway end] on the middle row, facing east, then the cue and the end objects' order."""
        dev, g = self.device, self.rng
        hallway = torch.randint(0, len(self._hallway_ends), (n, 1), generator=g, device=dev)
        end = self._hallway_ends[hallway]
        # a uniform integer in [0, end) per row (float rounding of u * end could reach end: clamped)
        x = 1 + torch.minimum((torch.rand((n, 1), generator=g, device=dev) * end).long(), end - 1)
        layout = hallway * LAYOUTS_PER_HALLWAY + torch.randint(0, LAYOUTS_PER_HALLWAY, (n, 1), generator=g, device=dev)
        zeros = torch.zeros((n, 1), dtype=torch.int64, device=dev)
        return {"layout": layout, "agent_cell": x + self.width * (self.height // 2), "agent_dir": zeros, "elapsed": zeros.clone()}

    def _observe(self, state: dict) -> dict:
        row = (state["layout"] * self._cells + state["agent_cell"]) * 4 + state["agent_dir"]
        return {"direction": state["agent_dir"].reshape(-1).clone(), "image": self._image[row.reshape(-1)]}

    def _transition(self, state: dict, action: torch.Tensor):
        layout, cell, direction = state["layout"], state["agent_cell"], state["agent_dir"]
        a = action.reshape(cell.shape)
        code = self._move[((layout * self._cells + cell) * 4 + direction) * self.num_actions + a]
        outcome, code = code % 3, code // 3
        elapsed = state["elapsed"] + 1
        success = outcome == SUCCESS
        reward = torch.where(success, self._reward[elapsed.clamp(max=self.max_episode_steps)], 0.0)
        terminated = outcome != NONE
        truncated = elapsed >= self.max_episode_steps
        next_state = {"layout": layout, "agent_cell": code // 4, "agent_dir": code % 4, "elapsed": elapsed}
        return next_state, reward, terminated, truncated


def state_of(env) -> dict[str, int]:
    """The hidden state entries that stand for minigrid Memory env ``env`` as it is now (for tests
    and checks that step both envs in lockstep)."""
    tables = memory_tables(env.spec.id)
    u = env.unwrapped
    return {
        "layout": tables.layout_keys.index(_layout_key(u)),
        "agent_cell": int(u.agent_pos[0]) + tables.width * int(u.agent_pos[1]),
        "agent_dir": int(u.agent_dir),
        "elapsed": int(u.step_count),
    }
