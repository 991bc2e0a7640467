"""``make_trunk``: the memory module of a model name, with its keys, shared by PPO's actor-critic
and DQN's recurrent Q-network, so that ``--model gru`` is the same module in both pipelines.

``lstm`` and ``gru`` are ``PaddedLSTMModule`` / ``PaddedGRUModule`` (TorchRL's ``LSTMModule`` /
``GRUModule`` with a faster forward) with orthogonal weights (gain sqrt 2), the scan models keep
the initialisation of their paper's reference code.
"""
from __future__ import annotations

import math

import torch
from tensordict.nn import TensorDictModuleBase
from torch import nn

from ..keys import EMBED, HIDDEN, HIDDEN_C, HIDDEN_H, OBS

#: the memory models by name; ``mlp`` (no memory) is not one
TRUNK_MODELS = ("lstm", "gru", "mingru", "ffm", "lru")


def orthogonal_(module: nn.Module, gain: float) -> None:
    """Orthogonal weights with ``gain``, zero biases (the PPO recipe's initialisation)."""
    for name, p in module.named_parameters():
        if "weight" in name:
            nn.init.orthogonal_(p, gain=gain)
        else:
            nn.init.zeros_(p)


def with_primer(env, primer):
    """``env`` with ``primer`` (a trunk's ``make_tensordict_primer()``) appended, or ``env`` itself
    when ``primer`` is None (a memoryless model); wraps a plain env in a ``TransformedEnv``."""
    from torchrl.envs import TransformedEnv

    if primer is None:
        return env
    if not isinstance(env, TransformedEnv):
        env = TransformedEnv(env)
    env.append_transform(primer)
    return env


def make_trunk(
    model: str,
    input_size: int,
    hidden_size: int,
    device: torch.device | str = "cpu",
    obs_key=OBS,
    state_keys: tuple | None = None,
    out_key=EMBED,
    input_encoder: nn.Module | None = None,
) -> TensorDictModuleBase:
    """The memory module ``model`` (one of ``TRUNK_MODELS``) reading ``[obs_key, *state_keys, is_init]``
    and writing ``[out_key, *("next", state_key)]``.

    Args:
        model: 'lstm', 'gru', or a parallel-scan model ('mingru', 'ffm', 'lru').
        input_size: features entering the cell (after ``input_encoder``, if any).
        hidden_size: the memory's width.
        state_keys: the state entries (default: ``("recurrent_state_h", "recurrent_state_c")``
            for the LSTM, ``("recurrent_state",)`` for the others).
        input_encoder: a network run on the observation ahead of the cell (e.g. a CNN), held
            as ``trunk.input_encoder`` so its weights train and checkpoint with the trunk.
    """
    from ..ppo.padded_rnn import PaddedGRUModule, PaddedLSTMModule  # ppo imports this module
    from . import MEMORY_MODELS

    if model not in TRUNK_MODELS:
        raise ValueError(f"model {model!r} has no memory trunk (accepted: one of {list(TRUNK_MODELS)})")
    if state_keys is None:
        state_keys = (HIDDEN_H, HIDDEN_C) if model == "lstm" else (HIDDEN,)
    in_keys, out_keys = [obs_key, *state_keys], [out_key, *(("next", k) for k in state_keys)]
    if model == "lstm":
        trunk = PaddedLSTMModule(input_size=input_size, hidden_size=hidden_size, in_keys=in_keys, out_keys=out_keys, device=device)
        orthogonal_(trunk.lstm, math.sqrt(2))
    elif model == "gru":
        trunk = PaddedGRUModule(input_size=input_size, hidden_size=hidden_size, in_keys=in_keys, out_keys=out_keys, device=device)
        orthogonal_(trunk.gru, math.sqrt(2))
    else:
        trunk = MEMORY_MODELS[model](input_size, hidden_size, in_keys=in_keys, out_keys=out_keys, device=device)
    if input_encoder is not None:
        trunk.input_encoder = input_encoder
    return trunk
