"""minGRU (Feng et al. 2024, "Were RNNs All We Needed?") as a reset-aware scan trunk.

The cell, as in the paper and lucidrains/minGRU-pytorch (``minGRU``)::

    z_t  = sigmoid(W_z x_t)          (update gate, from the input only)
    h~_t = g(W_h x_t)                g(v) = v + 0.5 if v >= 0 else sigmoid(v)  (positive)
    h_t  = (1 - z_t) * h_{t-1} + z_t * h~_t

so ``a_t = 1 - z_t = sigmoid(-W_z x_t)`` and ``b_t = z_t * h~_t`` in ``scan.py``'s
recurrence. The reference runs its parallel form in log space (Heinsen's cumsum /
logcumsumexp, which needs a positive state); this runs the same recurrence through the
linear-space ``linear_scan``, which needs no positivity and takes resets as zero decays. The
output is ``h_t`` itself (the reference's ``to_out`` is the identity when the inner width is
the model width); one ``Linear`` makes both ``W_z`` and ``W_h`` from an input of any width.
"""
from __future__ import annotations

import torch
from torch import nn

from .base import ScanMemoryModule, at_least_float32


def _g(v: torch.Tensor) -> torch.Tensor:
    """The reference's positive activation: ``v + 0.5`` for ``v >= 0``, ``sigmoid(v)`` below."""
    return torch.where(v >= 0, v + 0.5, v.sigmoid())


class MinGRUModule(ScanMemoryModule):
    """A minGRU layer with ``LSTMModule``'s keys and modes (``ScanMemoryModule``).

    Args:
        input_size: width of the input entry.
        hidden_size: width of the state and of the output entry.
        bias: whether the gate / candidate projection has a bias (the paper's ``Linear``;
            lucidrains' code drops it).
        device: where the parameters live.
        in_key / in_keys, out_key / out_keys, default_recurrent_mode, scan: as ``ScanMemoryModule``.

    The stored state is ``[1, hidden_size]`` (TorchRL's ``[num_layers, hidden]`` layout).

    Example:
        >>> mem = MinGRUModule(input_size=3, hidden_size=8, in_key="observation", out_key="embed")
        >>> env = env.append_transform(mem.make_tensordict_primer())
        >>> with set_recurrent_mode(True):  # a [B, T] window in one scan
        ...     td = mem(td)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, **keys):
        super().__init__(**keys)
        self.input_size, self.hidden_size = input_size, hidden_size
        self.to_hidden_and_gate = nn.Linear(input_size, 2 * hidden_size, bias=bias, device=device)
        self.state_shape = (1, hidden_size)

    def _run(self, x, h0, reset):
        hidden, gate = at_least_float32(self.to_hidden_and_gate(x)).chunk(2, dim=-1)
        a = torch.sigmoid(-gate)  # 1 - z
        b = torch.sigmoid(gate) * _g(hidden)
        h = self.scan(a, b, None if h0 is None else h0.reshape(h0.shape[0], self.hidden_size), reset)
        # the stored state is its own tensor: an in-place op on the output must not edit it
        return h, h.unsqueeze(2).clone()
