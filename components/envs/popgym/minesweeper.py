"""POPGym's MineSweeper, tensor-native: the board is never shown.

An action names a cell (row, column); the observation is the number of mines in the 3 x 3
block around it, the cell included (one-hot). A fresh clear cell pays 1 / L (L = cells - mines),
a cell already viewed -0.5 / (L - 2), a mine -0.5 - 1 / L and ends the episode; viewing every
clear cell ends it too, and it is truncated after L steps. Boards: 4 x 4 with 2 mines, 6 x 6
with 6, 8 x 8 with 10.
"""
from __future__ import annotations

import torch
from torchrl.data import Bounded, Unbounded

from .base import PopGymEnvBase, one_hot


class MineSweeper(PopGymEnvBase):
    """popgym ``MineSweeper``. Actions: ``[row, column]`` (int64, as the gymnasium path's
    MultiDiscrete). State: ``"mines"``, ``"viewed"`` (bool per cell), ``"seen"`` (the last count
    shown), ``"elapsed"``."""

    def __init__(self, size: int = 4, num_mines: int = 2, num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        if size < 2 or not 1 <= num_mines < size * size - 2:
            raise ValueError(f"a board of size >= 2 with 1 <= num_mines < size**2 - 2, got {size}, {num_mines}")
        self.size, self.num_mines = int(size), int(num_mines)
        self.cells = self.size * self.size
        self.obs_dim = min(self.num_mines + 1, 10)
        self.max_episode_steps = self.cells - self.num_mines
        self.success_reward = 1 / self.max_episode_steps
        self.fail_reward = -0.5 - self.success_reward
        self.bad_action_reward = -0.5 / (self.max_episode_steps - 2)
        super().__init__(num_envs=num_envs, device=device, seed=seed)
        n = self.batch_size
        self.action_spec = Bounded(0, self.size - 1, shape=(*n, 2), dtype=torch.int64, device=self.device)
        # the 3 x 3 block around each cell, as cell indices; outside the board: index ``cells`` (never a mine)
        r, c = torch.meshgrid(torch.arange(self.size), torch.arange(self.size), indexing="ij")
        blocks = []
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                rr, cc = r + dr, c + dc
                inside = (rr >= 0) & (rr < self.size) & (cc >= 0) & (cc < self.size)
                blocks.append(torch.where(inside, rr * self.size + cc, self.cells).reshape(-1))
        self._block = torch.stack(blocks, -1).to(self.device)  # [cells, 9]

    def _make_state_spec(self) -> dict:
        n = self.batch_size
        return {
            "mines": Unbounded(shape=(*n, self.size * self.size), dtype=torch.bool, device=self.device),
            "viewed": Unbounded(shape=(*n, self.size * self.size), dtype=torch.bool, device=self.device),
            "seen": Unbounded(shape=(*n, 1), dtype=torch.int64, device=self.device),
            "elapsed": Unbounded(shape=(*n, 1), dtype=torch.int64, device=self.device),
        }

    def _action_n(self) -> int:
        return self.cells  # replaced by the [row, column] spec in __init__

    def _fresh_rows(self, rows):
        k = self._rows_count(rows)
        mines = torch.zeros((k, self.cells), dtype=torch.bool, device=self.device)
        for _ in range(self.num_mines):  # distinct cells, uniformly: popgym's choice(replace=False)
            cell = self.draws.choice(~mines, rows)
            mines = mines.scatter(1, cell, True)
        zeros = torch.zeros((k, 1), dtype=torch.int64, device=self.device)
        return {"mines": mines, "viewed": torch.zeros_like(mines), "seen": zeros, "elapsed": zeros.clone()}

    def _observe(self, state: dict) -> torch.Tensor:
        return one_hot(state["seen"], self.obs_dim)

    def _transition(self, state: dict, action: torch.Tensor):
        mines, viewed = state["mines"], state["viewed"]
        a = action.reshape(-1, 2)
        cell = (a[:, :1] * self.size + a[:, 1:]).long()
        mine, was_viewed = mines.gather(1, cell), viewed.gather(1, cell)
        reward = torch.where(mine, self.fail_reward, torch.where(was_viewed, self.bad_action_reward, self.success_reward))
        viewed = viewed.scatter(1, cell, ~mine | was_viewed)
        elapsed = state["elapsed"] + 1
        terminated = mine | (mines | viewed).all(-1, keepdim=True)
        truncated = (elapsed == self.max_episode_steps) & ~terminated
        padded = torch.cat([mines, torch.zeros_like(mine)], -1)
        seen = padded.gather(1, self._block[cell.reshape(-1)]).sum(-1, keepdim=True)
        return {"mines": mines, "viewed": viewed, "seen": seen, "elapsed": elapsed}, reward, terminated, truncated
