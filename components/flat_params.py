"""``flatten_parameters``: a module's parameters and gradients as views into one buffer each.

Why: the global-norm clip and Adam otherwise launch one small kernel (or one
Python-level loop step) per parameter tensor. For the small networks RL uses
on a CPU that bookkeeping costs as much as the maths (~0.2 ms per DQN update
here); over one contiguous buffer each is a single call.

The parameters stay the same ``nn.Parameter`` objects (modules, TorchRL losses
and target updaters that hold them keep working); only their storage moves.
Backpropagation accumulates in place into the preset ``.grad`` views, so the
flat gradient must be zeroed with ``flat.grad.zero_()``, never with
``zero_grad(set_to_none=True)``, which would detach the views.
"""
from __future__ import annotations

import torch


def flatten_parameters(params: list[torch.nn.Parameter]) -> torch.nn.Parameter:
    """Moves ``params`` into one flat leaf (returned, with ``.grad`` preset) to hand to the optimizer."""
    if not params:
        raise ValueError("flatten_parameters needs at least one parameter")
    device, dtype = params[0].device, params[0].dtype
    if any(p.device != device or p.dtype != dtype for p in params):
        raise ValueError("flatten_parameters needs parameters of one device and dtype")
    flat = torch.nn.Parameter(torch.cat([p.detach().reshape(-1) for p in params]))
    flat.grad = torch.zeros_like(flat)
    offset = 0
    for p in params:
        n = p.numel()
        p.data = flat.data[offset : offset + n].view_as(p)
        p.grad = flat.grad[offset : offset + n].view_as(p)
        offset += n
    return flat


def clip_flat_grad_norm_(flat: torch.nn.Parameter, max_norm: float) -> torch.Tensor:
    """``torch.nn.utils.clip_grad_norm_`` on the one flat gradient, without its per-call grouping
    (~0.1 ms on CPU): same formula, scale by min(1, max_norm / (norm + 1e-6)). Returns the norm."""
    norm = torch.linalg.vector_norm(flat.grad)
    flat.grad.mul_((max_norm / (norm + 1e-6)).clamp_(max=1.0))
    return norm


def fused_adam(flat: torch.nn.Parameter, lr: float, eps: float) -> torch.optim.Adam:
    """Adam over the flat parameter, fused into one kernel where torch has one (CPU, CUDA)."""
    return torch.optim.Adam([flat], lr=lr, eps=eps, fused=flat.device.type in ("cpu", "cuda"))
