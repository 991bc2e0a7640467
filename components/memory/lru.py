"""The Linear Recurrent Unit (Orvieto et al. 2023) as a reset-aware scan trunk.

Follows the LRU of proroklab/memoroids ``memory/lru.py`` (itself NicolasZucchet/minimal-LRU),
its ``StackedLRU``: an input ``Linear`` to the model width, then per layer::

    u = LayerNorm(x)
    h_t = lambda * h_{t-1} + gamma_norm * (B u_t)          lambda = exp(-exp(nu_log) + i exp(theta_log)), [N] complex
    y_t = Re(C h_t) + D * u_t
    x <- x + out1(gelu(y)) * sigmoid(out2(gelu(y)))        (GLU, skip connection)

with the reference initialisation: ``|lambda|`` uniform on the ring ``[r_min, r_max]``
(0 and 1), phases in ``[0, max_phase]`` (6.28), ``gamma_norm = sqrt(1 - |lambda|^2)``,
``B`` ~ N(0, 1 / 2H), ``C`` ~ N(0, 1 / N), ``D`` ~ N(0, 1). The complex products are written
as real matmuls on the real and imaginary parts (same values). The stored state is
``[num_layers * N, 2]`` (real, imaginary). memoroids' RL configs stack 2 layers of N = 128 at
width 256; the default here is one layer of N = ``hidden_size``: the same number of complex
units per width, one scan per step.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .base import ScanMemoryModule, at_least_float32, complex_state, real_state


class _LRULayer(nn.Module):
    """One LRU block: pre-norm, the recurrence, GELU, GLU, skip."""

    def __init__(self, width: int, state_size: int, r_min: float, r_max: float, max_phase: float, device=None):
        super().__init__()
        u1, u2 = torch.rand(state_size, device=device), torch.rand(state_size, device=device)
        self.nu_log = nn.Parameter(torch.log(-0.5 * torch.log(u1 * (r_max**2 - r_min**2) + r_min**2)))
        self.theta_log = nn.Parameter(torch.log(max_phase * u2))
        modulus = torch.exp(-torch.exp(self.nu_log.detach()))
        self.gamma_log = nn.Parameter(torch.log(torch.sqrt(1 - modulus**2)))
        self.B_re = nn.Parameter(torch.randn(state_size, width, device=device) / math.sqrt(2 * width))
        self.B_im = nn.Parameter(torch.randn(state_size, width, device=device) / math.sqrt(2 * width))
        self.C_re = nn.Parameter(torch.randn(width, state_size, device=device) / math.sqrt(state_size))
        self.C_im = nn.Parameter(torch.randn(width, state_size, device=device) / math.sqrt(state_size))
        self.D = nn.Parameter(torch.randn(width, device=device))
        self.norm = nn.LayerNorm(width, device=device)
        self.out1 = nn.Linear(width, width, device=device)
        self.out2 = nn.Linear(width, width, device=device)

    def forward(self, x, h0, reset, scan):
        u = self.norm(x)
        lam = torch.exp(torch.complex(-torch.exp(self.nu_log), torch.exp(self.theta_log)))
        scale = torch.exp(self.gamma_log)
        bu = torch.complex(at_least_float32(u @ (self.B_re * scale[:, None]).T), at_least_float32(u @ (self.B_im * scale[:, None]).T))
        h = scan(lam, bu, h0, reset)
        y = h.real @ self.C_re.T - h.imag @ self.C_im.T + self.D * u  # Re(C h) + D u
        y = F.gelu(y)
        return x + self.out1(y) * torch.sigmoid(self.out2(y)), h


class LRUModule(ScanMemoryModule):
    """A (stacked) LRU with ``LSTMModule``'s keys and modes (``ScanMemoryModule``).

    Args:
        input_size: width of the input entry.
        hidden_size: the model width (the reference's ``d_model``) and of the output entry.
        state_size: complex units per layer (``d_hidden``; default ``hidden_size``).
        num_layers: stacked LRU blocks (default 1).
        r_min, r_max, max_phase: the initial ring of ``|lambda|`` and range of phases.
        device: where the parameters live.
        in_key / in_keys, out_key / out_keys, default_recurrent_mode, scan: as ``ScanMemoryModule``.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        state_size: int | None = None,
        num_layers: int = 1,
        r_min: float = 0.0,
        r_max: float = 1.0,
        max_phase: float = 6.28,
        device=None,
        **keys,
    ):
        super().__init__(**keys)
        self.input_size, self.hidden_size = input_size, hidden_size
        self.state_size, self.num_layers = state_size or hidden_size, num_layers
        self.state_shape = (num_layers * self.state_size, 2)
        self.encoder = nn.Linear(input_size, hidden_size, device=device)
        self.layers = nn.ModuleList(_LRULayer(hidden_size, self.state_size, r_min, r_max, max_phase, device) for _ in range(num_layers))

    def _run(self, x, h0, reset):
        h0 = complex_state(h0, (self.num_layers, self.state_size))
        x = self.encoder(x)
        states = []
        for i, layer in enumerate(self.layers):
            x, h = layer(x, None if h0 is None else h0[:, i], reset, self.scan)
            states.append(h)
        return x, real_state(torch.stack(states, 2), self.state_shape)
