"""The Q-network's MLP: the whole network for ``--model mlp``, the head after the memory otherwise."""
from __future__ import annotations

import torch
from torch import nn
from torchrl.modules import MLP


def make_q_mlp(in_features: int, n_actions: int, hidden_sizes: list[int], layer_norm: bool = False, device: torch.device | str = "cpu") -> MLP:
    """``Linear (-> LayerNorm) -> ReLU`` per hidden width, then a ``Linear`` to the ``n_actions`` Q-values.

    Args:
        in_features: input size (the flat observation, or the memory's output).
        n_actions: number of discrete actions.
        hidden_sizes: widths of the hidden layers.
        layer_norm: a ``LayerNorm`` after each hidden ``Linear``, before its ReLU. Normalised
            features bound how far one update moves every Q-value (Bjorck et al., ICLR 2022;
            Gallici et al., 2024); without it the network is the plain ``Linear``/``ReLU``
            stack the hand-written backward (manual_backward.py) covers.
        device: where the parameters live.
    """
    norm = {"norm_class": nn.LayerNorm, "norm_kwargs": [{"normalized_shape": h} for h in hidden_sizes]} if layer_norm else {}
    return MLP(in_features=in_features, out_features=n_actions, num_cells=list(hidden_sizes), activation_class=nn.ReLU, device=device, **norm)
