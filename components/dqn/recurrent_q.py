"""The recurrent Q-network (memory trunk, then an MLP head to one Q-value per action) and
``burn_in_state``, the state a window's first steps lead to.

The trunk is the one PPO uses for the same ``--model`` (``memory.trunk.make_trunk``): the same
keys, primer and ``set_recurrent_mode`` switch, so acting (sequential mode, one step from the
stored state) and learning (recurrent mode, a whole window) run the same module.

Why ``burn_in_state`` rather than TorchRL's ``BurnInTransform``: the transform reads the state
a module writes at the burn-in's last step in recurrent mode, which TorchRL's ``LSTMModule`` /
``GRUModule`` (and the padded subclasses used here) only guarantee for windows without an
episode start inside; an R2D2 window of one env's stream has them. ``burn_in_state`` is exact
for any window, and runs once per network (online and target each from their own unroll).
tests/dqn/test_recurrent_dqn.py pins it equal to stepping the trunk one step at a time, and
to ``BurnInTransform`` on windows without a reset.
"""
from __future__ import annotations

import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule, TensorDictModuleBase, TensorDictSequential
from torch.nn.utils.rnn import pack_padded_sequence
from torchrl.data import Categorical
from torchrl.modules import QValueModule, set_recurrent_mode

from ..keys import EMBED, OBS
from ..memory import ScanMemoryModule
from ..memory.trunk import make_trunk
from ..ppo.padded_rnn import PaddedGRUModule, PaddedLSTMModule
from .q_mlp import make_q_mlp

ACTION_VALUE = "action_value"


def make_recurrent_q_network(
    model: str, obs_dim: int, action_spec: Categorical, hidden_size: int, head_sizes: list[int], device: torch.device | str = "cpu", obs_key=OBS,
    *, layer_norm: bool = False, dueling: bool = False,
) -> TensorDictSequential:
    """``trunk -> MLP head`` writing ``"action_value"`` ``[..., n_actions]`` (no action choice:
    wrap it with ``QValueModule`` to act).

    Args:
        model: a memory model of ``memory.trunk.TRUNK_MODELS`` ('lstm', 'gru', 'mingru', 'ffm', 'lru').
        obs_dim: size of the flat observation.
        action_spec: the env's per-sample ``Categorical`` action spec.
        hidden_size: the memory's width.
        head_sizes: hidden widths of the ReLU MLP between the memory and the Q-values.
        device: where the parameters live.
        obs_key: the observation entry the memory reads.
        layer_norm: a ``LayerNorm`` after each hidden ``Linear`` of the head (``make_q_mlp``).
        dueling: a dueling head (``make_q_mlp``).
    """
    trunk = make_trunk(model, obs_dim, hidden_size, device, obs_key)
    head = make_q_mlp(hidden_size, action_spec.space.n, head_sizes, device, layer_norm=layer_norm, dueling=dueling)
    return TensorDictSequential(trunk, TensorDictModule(head, in_keys=[EMBED], out_keys=[ACTION_VALUE]))


def make_q_policy(q_network: TensorDictSequential, action_spec: Categorical) -> TensorDictSequential:
    """``q_network`` then ``QValueModule``: the greedy action (and its value) from the Q-values."""
    return TensorDictSequential(q_network, QValueModule(spec=action_spec, action_value_key=ACTION_VALUE))


def trunk_of(q_network: TensorDictSequential) -> TensorDictModuleBase:
    """The memory module of a ``make_recurrent_q_network`` network (its first module)."""
    return q_network.module[0]


def state_keys_of(trunk: TensorDictModuleBase) -> list:
    """The state entries a trunk reads: ``in_keys = [obs, *states, is_init]``."""
    return list(trunk.in_keys[1:-1])


@torch.no_grad()
def burn_in_state(trunk: TensorDictModuleBase, window: TensorDict) -> tuple[torch.Tensor, ...]:
    """The state entering step ``T`` of ``window`` ``[N, T]``: the trunk unrolled from the state
    stored at step 0 over the window's ``T`` steps, zeroed at each ``is_init``. Returns one
    ``[N, *state_shape]`` tensor per state key; no gradient."""
    keys = trunk.in_keys
    n, T = window.batch_size
    if isinstance(trunk, ScanMemoryModule):  # recurrent mode writes the exact state after every step
        with set_recurrent_mode(True):
            out = trunk(window.select(*keys))
        return (out.get(trunk.out_keys[1])[:, -1],)
    if isinstance(trunk, (PaddedLSTMModule, PaddedGRUModule)) and trunk._stored_states(window[:, 0]) is not None:
        return _packed_final_state(trunk, window)
    # any other trunk: its own sequential mode, one step at a time
    states = tuple(window.get(k)[:, 0] for k in keys[1:-1])
    for t in range(T):
        step = window[:, t].select(keys[0], keys[-1]).update(dict(zip(keys[1:-1], states)))
        with set_recurrent_mode(False):
            step = trunk(step)
        states = tuple(step.get(k) for k in trunk.out_keys[1:])
    return states


def _packed_final_state(trunk, window: TensorDict) -> tuple[torch.Tensor, ...]:
    """LSTM/GRU: the final state is that of the window's last episode piece (from its last
    ``is_init``, or from step 0 and the stored state): one ``PackedSequence`` call of those
    pieces, whose final states ``nn.LSTM`` / ``nn.GRU`` take at each piece's own length."""
    keys = trunk.in_keys
    n, T = window.batch_size
    x = trunk._encode(window.get(keys[0]))
    x = x.reshape(n, T, x.shape[-1])
    init = window.get(keys[-1]).reshape(n, T)
    steps = torch.arange(T, device=x.device)
    last_start = torch.where(init, steps, -1).max(-1).values  # -1: no episode start in the window
    start = last_start.clamp(min=0)
    grid = torch.minimum(start[:, None] + steps, torch.tensor(T - 1, device=x.device))
    pieces = x.gather(1, grid[..., None].expand(n, T, x.shape[-1]))
    fresh = (last_start >= 0).reshape(n, 1, 1)
    h0 = tuple(torch.where(fresh, 0.0, window.get(k)[:, 0]).transpose(0, 1).contiguous() for k in keys[1:-1])
    packed = pack_padded_sequence(pieces, (T - start).cpu(), batch_first=True, enforce_sorted=False)
    _, out = trunk._call_rnn(packed, h0)
    return tuple(s.transpose(0, 1) for s in out)
