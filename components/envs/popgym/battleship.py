"""POPGym's Battleship, tensor-native: the board is never shown.

Ships of sizes 2, 3, 3, 4 lie on a square board (8 / 10 / 12 cells a side), each placed in turn
uniformly among the placements that fit and overlap no earlier ship (popgym's rejection
sampling gives that distribution). An action names a cell (row, column); the observation is
1 for a hit on a ship cell not guessed before, else 0 (one-hot). A hit pays 1 / 12, anything
else -1 / (cells - 12); sinking every ship terminates, ``cells`` steps truncate.
"""
from __future__ import annotations

import torch
from torchrl.data import Bounded, Unbounded

from .base import PopGymEnvBase, one_hot

SHIP_SIZES = (2, 3, 3, 4)


def ship_placements(size: int, length: int) -> torch.Tensor:
    """Every placement of a ship of ``length`` on a ``size`` x ``size`` board, as cell masks
    [placements, size * size] (rows, then columns; top-left cell first)."""
    masks = []
    for axis in (0, 1):
        for r in range(size - (length - 1) * (axis == 0)):
            for c in range(size - (length - 1) * (axis == 1)):
                m = torch.zeros(size, size, dtype=torch.bool)
                if axis == 0:
                    m[r:r + length, c] = True
                else:
                    m[r, c:c + length] = True
                masks.append(m.reshape(-1))
    return torch.stack(masks)


class Battleship(PopGymEnvBase):
    """popgym ``Battleship``. Actions: ``[row, column]`` (int64). State: ``"ships"``, ``"guesses"``
    (bool per cell), ``"hits"``, ``"hit"`` (the last guess hit), ``"elapsed"``."""

    obs_dim = 2

    def __init__(self, board_size: int = 10, num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        if board_size < max(SHIP_SIZES):
            raise ValueError(f"board_size must be >= {max(SHIP_SIZES)}, got {board_size}")
        self.size = int(board_size)
        self.cells = self.size * self.size
        self.max_episode_steps = self.cells
        self.needed_hits = sum(SHIP_SIZES)
        self.hit_reward, self.miss_reward = 1.0 / self.needed_hits, -1.0 / (self.cells - self.needed_hits)
        super().__init__(num_envs=num_envs, device=device, seed=seed)
        self.action_spec = Bounded(0, self.size - 1, shape=(*self.batch_size, 2), dtype=torch.int64, device=self.device)
        self.placements = {s: ship_placements(self.size, s).to(self.device) for s in set(SHIP_SIZES)}

    def _make_state_spec(self) -> dict:
        n = self.batch_size
        cells = self.size * self.size
        return {
            "ships": Unbounded(shape=(*n, cells), dtype=torch.bool, device=self.device),
            "guesses": Unbounded(shape=(*n, cells), dtype=torch.bool, device=self.device),
            **{k: Unbounded(shape=(*n, 1), dtype=torch.int64, device=self.device) for k in ("hits", "hit", "elapsed")},
        }

    def _action_n(self) -> int:
        return self.size * self.size  # replaced by the [row, column] spec in __init__

    def _fresh_rows(self, rows):
        k = self._rows_count(rows)
        ships = torch.zeros((k, self.cells), dtype=torch.bool, device=self.device)
        for length in SHIP_SIZES:
            options = self.placements[length]
            free = (ships.float() @ options.float().T) == 0  # [k, placements]: overlaps nothing placed
            ships = ships | options[self.draws.choice(free, rows).reshape(-1)]
        zeros = torch.zeros((k, 1), dtype=torch.int64, device=self.device)
        return {"ships": ships, "guesses": torch.zeros_like(ships), "hits": zeros, "hit": zeros.clone(), "elapsed": zeros.clone()}

    def _observe(self, state: dict) -> torch.Tensor:
        return one_hot(state["hit"], 2)

    def _transition(self, state: dict, action: torch.Tensor):
        ships, guesses = state["ships"], state["guesses"]
        a = action.reshape(-1, 2)
        cell = (a[:, :1] * self.size + a[:, 1:]).long()
        hit = ships.gather(1, cell) & ~guesses.gather(1, cell)
        guesses = guesses.scatter(1, cell, True)
        hits, elapsed = state["hits"] + hit, state["elapsed"] + 1
        reward = torch.where(hit, self.hit_reward, self.miss_reward)
        terminated, truncated = hits == self.needed_hits, elapsed >= self.max_episode_steps
        state = {"ships": ships, "guesses": guesses, "hits": hits, "hit": hit.long(), "elapsed": elapsed}
        return state, reward, terminated, truncated
