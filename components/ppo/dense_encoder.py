"""``DenseEncoder``: POPGym's pre-encoder (Linear -> LayerNorm -> LeakyReLU) ahead of the trunk.

POPGym's own PPO baselines (proroklab/popgym ``popgym/baselines/ppo.py``) feed every memory
model through this projection, 128 wide, before a 256-wide memory cell; ``--encoder dense``
reproduces that recipe so their setting can be run as published. It is a plain
``nn.Module`` owned by the trunk (as the CNN is), so the collector, the loss and the GAE
bootstrap all see it, and checkpoints carry its weights. Custom because TorchRL's ``MLP``
has no per-layer LayerNorm-then-activation order matching POPGym's.
"""
from __future__ import annotations

import math

import torch
from torch import nn


class DenseEncoder(nn.Module):
    """POPGym's pre-encoder ahead of the memory: Linear(in_dim, out_dim), LayerNorm, LeakyReLU (``--encoder dense``)."""

    def __init__(self, in_dim: int, out_dim: int = 128, device: torch.device | str = "cpu"):
        super().__init__()
        self.in_dim, self.out_dim = in_dim, out_dim
        self.net = nn.Sequential(nn.Linear(in_dim, out_dim, device=device), nn.LayerNorm(out_dim, device=device), nn.LeakyReLU())
        nn.init.orthogonal_(self.net[0].weight, gain=math.sqrt(2))
        nn.init.zeros_(self.net[0].bias)

    def describe(self) -> str:
        return f"policy input: dense(linear {self.in_dim} -> {self.out_dim}, layer-norm, leaky-relu)"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)
