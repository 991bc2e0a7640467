"""LSTM actor-critic (SPEC 1.5): obs -> LSTM trunk -> policy head and value head.

Built from TorchRL modules: an ``LSTMModule`` trunk (``PaddedLSTMModule``, a drop-in subclass with a faster forward), a ``ProbabilisticActor``
(Categorical for discrete actions, TanhNormal for bounded continuous ones) and
a ``ValueOperator`` head. The critic handed to the loss is the value head
alone: it reads the trunk output the actor just wrote, so each minibatch runs
the LSTM once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from tensordict.nn import NormalParamExtractor, TensorDictModule, TensorDictSequential
from torch import nn
from torchrl.data import Bounded, Categorical, OneHot, TensorSpec
from torchrl.modules import LSTMModule, ProbabilisticActor, TanhNormal, ValueOperator
from torch.distributions import Categorical as CategoricalDist

from components.keys import ACTION, EMBED, HIDDEN_C, HIDDEN_H, LOG_PROB, LOGITS, OBS, VALUE
from components.ppo.padded_lstm import PaddedLSTMModule


@dataclass
class LSTMActorCritic:
    """The pieces of the agent; every one is a plain TorchRL/TensorDict module.

    ``trunk`` is the ``LSTMModule`` (or, for the memoryless baseline arm, an MLP
    writing the same ``embed`` key).
    """

    trunk: TensorDictModule
    actor: ProbabilisticActor  # trunk + policy head + distribution
    value_head: ValueOperator  # reads EMBED
    rollout_policy: TensorDictSequential  # actor then value head: stores log-prob and value per step

    def parameters(self):
        return list(self.rollout_policy.parameters())

    def state_dict(self) -> dict:
        return self.rollout_policy.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.rollout_policy.load_state_dict(state)

    @property
    def is_recurrent(self) -> bool:
        return isinstance(self.trunk, LSTMModule)


def _orthogonal_(linear: nn.Module, gain: float) -> None:
    for name, p in linear.named_parameters():
        if "weight" in name:
            nn.init.orthogonal_(p, gain=gain)
        else:
            nn.init.zeros_(p)


def make_lstm_actor_critic(
    obs_dim: int,
    action_spec: TensorSpec,
    hidden_size: int = 64,
    device: torch.device | str = "cpu",
) -> LSTMActorCritic:
    """Builds the LSTM policy/value pair for a discrete or bounded continuous action spec."""
    _check_sizes(obs_dim, hidden_size)
    lstm = PaddedLSTMModule(
        input_size=obs_dim,
        hidden_size=hidden_size,
        in_keys=[OBS, HIDDEN_H, HIDDEN_C],
        out_keys=[EMBED, ("next", HIDDEN_H), ("next", HIDDEN_C)],
        device=device,
    )
    _orthogonal_(lstm.lstm, math.sqrt(2))
    return _with_heads(lstm, action_spec, hidden_size, device)


def make_mlp_actor_critic(
    obs_dim: int,
    action_spec: TensorSpec,
    hidden_size: int = 64,
    device: torch.device | str = "cpu",
) -> LSTMActorCritic:
    """The memoryless baseline: a 2-layer tanh MLP trunk in place of the LSTM, same heads and loss."""
    _check_sizes(obs_dim, hidden_size)
    net = nn.Sequential(
        nn.Linear(obs_dim, hidden_size, device=device), nn.Tanh(), nn.Linear(hidden_size, hidden_size, device=device), nn.Tanh()
    )
    for layer in net:
        if isinstance(layer, nn.Linear):
            _orthogonal_(layer, math.sqrt(2))
    return _with_heads(TensorDictModule(net, in_keys=[OBS], out_keys=[EMBED]), action_spec, hidden_size, device)


def _check_sizes(obs_dim: int, hidden_size: int) -> None:
    if obs_dim < 1:
        raise ValueError(f"obs_dim must be >= 1, got {obs_dim}")
    if hidden_size < 1:
        raise ValueError(f"hidden_size must be >= 1, got {hidden_size}")


def _with_heads(trunk: TensorDictModule, action_spec: TensorSpec, hidden_size: int, device) -> LSTMActorCritic:
    if isinstance(action_spec, (Categorical, OneHot)):
        n_actions = action_spec.space.n
        head = nn.Linear(hidden_size, n_actions, device=device)
        _orthogonal_(head, 0.01)
        policy_head = TensorDictModule(head, in_keys=[EMBED], out_keys=[LOGITS])
        dist_keys, dist_cls, dist_kwargs = [LOGITS], CategoricalDist, {}
    elif isinstance(action_spec, Bounded) and action_spec.dtype.is_floating_point:
        act_dim = action_spec.shape[-1]
        head = nn.Linear(hidden_size, 2 * act_dim, device=device)
        _orthogonal_(head, 0.01)
        policy_head = TensorDictModule(
            nn.Sequential(head, NormalParamExtractor()), in_keys=[EMBED], out_keys=["loc", "scale"]
        )
        dist_keys, dist_cls = ["loc", "scale"], TanhNormal
        # per-sample bounds: a batched env's spec carries its batch dims
        low, high = (b.reshape(-1, act_dim)[0].to(device) for b in (action_spec.space.low, action_spec.space.high))
        dist_kwargs = {"low": low, "high": high}
    else:
        raise ValueError(
            f"unsupported action spec {type(action_spec).__name__}: expected a discrete "
            "(Categorical/OneHot) or a bounded continuous (Bounded float) action space"
        )

    actor = ProbabilisticActor(
        TensorDictSequential(trunk, policy_head),
        in_keys=dist_keys,
        out_keys=[ACTION],
        distribution_class=dist_cls,
        distribution_kwargs=dist_kwargs,
        return_log_prob=True,
        log_prob_key=LOG_PROB,
        spec=action_spec,
    )
    vhead = nn.Linear(hidden_size, 1, device=device)
    _orthogonal_(vhead, 0.01)
    value_head = ValueOperator(vhead, in_keys=[EMBED], out_keys=[VALUE])
    return LstmActorCritic(
        trunk=trunk, actor=actor, value_head=value_head, rollout_policy=TensorDictSequential(actor, value_head)
    )


#: the earlier spelling, kept as an alias
LstmActorCritic = LSTMActorCritic
