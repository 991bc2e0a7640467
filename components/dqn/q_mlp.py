"""The Q-network's MLP: the whole network for ``--model mlp``, the head after the memory otherwise."""
from __future__ import annotations

import torch
from torch import nn
from torchrl.modules import MLP
from torchrl.modules.models.models import DuelingMlpDQNet


def make_q_mlp(
    in_features: int, n_actions: int, hidden_sizes: list[int], device: torch.device | str = "cpu", *, layer_norm: bool = False, dueling: bool = False
) -> nn.Module:
    """``Linear (-> LayerNorm) -> ReLU`` per hidden width, then a ``Linear`` to the ``n_actions`` Q-values
    (or, ``dueling``, two: a value and the advantages).

    Args:
        in_features: input size (the flat observation, or the memory's output).
        n_actions: number of discrete actions.
        hidden_sizes: widths of the hidden layers.
        device: where the parameters live.
        layer_norm: a ``LayerNorm`` after each hidden ``Linear``, before its ReLU. Normalised
            features bound how far one update moves every Q-value (Bjorck et al., ICLR 2022;
            Gallici et al., 2024); without it the network is the plain ``Linear``/``ReLU``
            stack the hand-written backward (manual_backward.py) covers.
        dueling: TorchRL's ``DuelingMlpDQNet`` on the same hidden layers: ``Q = V + A - mean(A)``
            (Wang et al., ICML 2016). Where the Q-values of the actions differ by little next to
            their size, the action gap has its own output instead of being the small difference of
            two large ones, so small updates reorder the actions less often.
    """
    norm = {"norm_class": nn.LayerNorm, "norm_kwargs": [{"normalized_shape": h} for h in hidden_sizes]} if layer_norm else {}
    if dueling:
        features = dict(in_features=in_features, num_cells=list(hidden_sizes[:-1]), out_features=hidden_sizes[-1], activation_class=nn.ReLU, activate_last_layer=True, **norm)
        heads = dict(in_features=hidden_sizes[-1], depth=0, num_cells=[])
        return DuelingMlpDQNet(n_actions, mlp_kwargs_feature=features, mlp_kwargs_output=heads, device=device)
    return MLP(in_features=in_features, out_features=n_actions, num_cells=list(hidden_sizes), activation_class=nn.ReLU, device=device, **norm)
