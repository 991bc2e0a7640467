"""The DQN TD loss and its gradient for a Linear/ReLU MLP, by hand: one gradient step without autograd.

Why custom: at DQN's sizes (a 64-64 MLP, batch 64, one update per env step) autograd's graph
building and per-node dispatch cost more than the maths: forward and backward through
``torch.autograd`` take ~330 us here, the same matrix products written out ~210 us
(benchmarks/dqn_update_floor.py). The backward of ``Linear -> ReLU -> ... -> Linear`` under a
Huber loss on the taken action's Q-value is short and exact: the Huber gradient is the clamped
TD error over the batch, scattered onto the taken actions, then one ``mm`` per layer for the
weights, a column sum for the biases and a ReLU mask on the way down. Gradients are written
straight into the parameters' ``.grad`` (views of the flat buffer, flat_params.py).

tests/dqn/test_dqn.py pins the loss and every gradient equal to autograd's through
``DQNAgent.td_loss`` (itself pinned to TorchRL's ``DQNLoss``).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


_relu_backward = torch.ops.aten.threshold_backward.default


def plain_mlp_layers(net: nn.Module) -> list[nn.Linear] | None:
    """The Linear layers of ``net`` if it is ``Linear (ReLU Linear)*`` with biases, else ``None``."""
    modules = list(net.children()) if isinstance(net, nn.Sequential) else None
    if not modules or len(modules) % 2 == 0:
        return None
    layers = modules[0::2]
    if not all(type(m) is nn.Linear and m.bias is not None for m in layers) or not all(type(m) is nn.ReLU for m in modules[1::2]):
        return None
    return layers


def mlp_forward(layers: list[nn.Linear], x: torch.Tensor, acts: list[torch.Tensor] | None = None) -> torch.Tensor:
    """The MLP's output, one ``addmm`` per layer (the kernel ``nn.Linear`` calls, without the module
    call overhead); appends every layer's output to ``acts`` when given (the backward needs them)."""
    h = x
    for i, layer in enumerate(layers):
        h = torch.addmm(layer.bias, h, layer.weight.t())
        if i < len(layers) - 1:
            h = h.relu_()
        if acts is not None:
            acts.append(h)
    return h


@torch.no_grad()
def huber_td_step_grads(layers: list[nn.Linear], obs: torch.Tensor, action: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``smooth_l1_loss(Q(obs)[action], target)`` (batch mean, beta 1); writes d loss / d theta
    into each layer's ``weight.grad`` and ``bias.grad`` (overwritten, not accumulated). Returns the loss."""
    acts = [obs]
    h = mlp_forward(layers, obs, acts)
    a = action.unsqueeze(-1)
    q = h.gather(-1, a).squeeze(-1)
    loss = F.smooth_l1_loss(q, target)
    # d Huber / d q: the TD error, clamped to [-1, 1] (beta 1), over the batch (the mean)
    dq = (q - target).clamp_(-1.0, 1.0).div_(q.shape[0])
    dz = torch.zeros_like(h).scatter_(-1, a, dq.unsqueeze(-1))
    for i in range(len(layers) - 1, -1, -1):
        layer = layers[i]
        torch.mm(dz.t(), acts[i], out=layer.weight.grad)
        torch.sum(dz, 0, out=layer.bias.grad)
        if i > 0:  # through the ReLU below: its output was > 0 exactly where it passed the gradient
            # (ReLU's own backward kernel, as autograd runs it: one op, where a mask and a multiply were two)
            dz = _relu_backward(torch.mm(dz, layer.weight), acts[i], 0)
    return loss
