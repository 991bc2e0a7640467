"""Fast and Forgetful Memory (Morad et al. 2023) as a reset-aware scan trunk.

Follows smorad/ffm ``standalone/ffm`` (``FFM`` and its aggregator ``FFA``)::

    y, thru, gate = pre(x)                        split [m, out, m + out]
    in_gate, out_gate = sigmoid(gate)             split [m, out]
    S_t = gamma * S_{t-1} + (y * in_gate)_t       S [m, c] complex, input broadcast over c
    gamma = exp(alpha + i * omega)                alpha [m] (decays, clamped < 0), omega [c] (frequencies)
    z = mix(real and imaginary parts of S_t)
    out = LayerNorm(z) * out_gate + thru * (1 - out_gate)

with the reference's parameter initialisation (decays spread over ``[-limit + 0.01, log(0.01) /
max_period]``, periods over ``[min_period, max_period]``) and clamp of ``alpha`` to
``[-limit, -1e-8]``. What differs:

* the aggregation runs through ``scan.py``'s ``linear_scan`` (products of ``gamma``, never
  its inverse), so it needs no chunking at ``max_len`` and no double precision to stay
  finite, and it restarts at every ``is_init`` inside a window (the reference resets only
  between padded episode segments);
* ``alpha`` is clamped in the forward pass only (the reference also clamps the parameter's
  data in place, which functional parameter swaps cannot see); the clamp and the
  initialisation keep the reference's ``limit`` for ``max_len = 1024`` in double precision;
* the stored state is ``[m * c, 2]`` (real, imaginary), the reference's ``[m, c]`` complex
  memory flattened so it keeps two dims like TorchRL's LSTM/GRU states.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from .base import ScanMemoryModule, at_least_float32, complex_state, real_state


class FFMModule(ScanMemoryModule):
    """An FFM layer with ``LSTMModule``'s keys and modes (``ScanMemoryModule``).

    Args:
        input_size: width of the input entry.
        hidden_size: width of the output entry (the reference's ``output_size``).
        memory_size: ``m``, the number of decay rates (the reference's RL config: 32).
        context_size: ``c``, the number of frequencies per decay (the reference's RL config: 8).
        min_period, max_period: the initial range of periods and decay horizons (steps).
        device: where the parameters live.
        in_key / in_keys, out_key / out_keys, default_recurrent_mode, scan: as ``ScanMemoryModule``.

    Example:
        >>> mem = FFMModule(input_size=3, hidden_size=64, in_key="observation", out_key="embed")
        >>> env = env.append_transform(mem.make_tensordict_primer())  # state [32 * 8, 2]
    """

    #: the reference FFA's defaults: sequence length its limit is sized for, overflow margin, forgetting level
    MAX_LEN, FUDGE, FORGOTTEN_AT = 1024, 0.01, 0.01

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        memory_size: int = 32,
        context_size: int = 8,
        min_period: int = 1,
        max_period: int = 1024,
        device=None,
        **keys,
    ):
        super().__init__(**keys)
        self.input_size, self.hidden_size = input_size, hidden_size
        self.memory_size, self.context_size = memory_size, context_size
        self.state_shape = (memory_size * context_size, 2)
        self.pre = nn.Linear(input_size, 2 * memory_size + 2 * hidden_size, device=device)
        self.mix = nn.Linear(2 * memory_size * context_size, hidden_size, device=device)
        self.ln_out = nn.LayerNorm(hidden_size, elementwise_affine=False, device=device)
        # FFA's initialisation: exp(limit * max_len) stays below the largest double
        self.limit = math.log(torch.finfo(torch.double).max) / self.MAX_LEN - self.FUDGE
        a_low = -self.limit + self.FUDGE
        a_high = max(min(-1e-6, math.log(self.FORGOTTEN_AT) / max_period), a_low)
        self.a = nn.Parameter(torch.linspace(a_low, a_high, memory_size, device=device))
        self.b = nn.Parameter(2 * math.pi / torch.linspace(min_period, max_period, context_size, device=device))

    def gamma(self) -> torch.Tensor:
        """The per-step decay-and-rotation ``exp(alpha + i omega)``, ``[m, c]`` complex."""
        a = self.a.clamp(min=-self.limit, max=-1e-8)
        return torch.exp(torch.complex(a[:, None].expand(-1, self.context_size), self.b[None, :].expand(self.memory_size, -1)))

    def _run(self, x, h0, reset):
        m, c, out = self.memory_size, self.context_size, self.hidden_size
        y, thru, gate = self.pre(x).split([m, out, m + out], dim=-1)
        in_gate, out_gate = gate.sigmoid().split([m, out], dim=-1)
        u = at_least_float32(y * in_gate).unsqueeze(-1).expand(*y.shape, c)
        s = self.scan(self.gamma(), torch.complex(u, torch.zeros_like(u)), complex_state(h0, (m, c)), reset)
        state = real_state(s, self.state_shape)
        z = self.mix(state.reshape(*s.shape[:2], -1))
        return self.ln_out(z) * out_gate + thru * (1 - out_gate), state
