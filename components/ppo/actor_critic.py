"""Recurrent actor-critic: obs -> LSTM / GRU trunk (or an MLP) -> policy head and value head.

Built from TorchRL modules: a ``PaddedLSTMModule`` / ``PaddedGRUModule`` trunk
(drop-in subclasses of ``LSTMModule`` / ``GRUModule`` with a faster forward), a
``ProbabilisticActor`` (Categorical for index actions, OneHotCategorical for one-hot
ones, MultiCategorical for MultiDiscrete ones, TanhNormal for bounded continuous ones) and a ``ValueOperator`` head. The
critic handed to the loss is the value head alone: it reads the trunk output the
actor just wrote, so each minibatch runs the trunk once.

Keys belong to the modules, as in TorchRL: the observation, action and state keys
are arguments of the factories, and every consumer (GAE, sampler, loss, trainer)
reads them back from the agent (``obs_key``, ``state_keys``, ``in_keys``,
``action_key``, ``value_key``) instead of from module constants. The env's
recurrent-state primer comes from the trunk itself (``agent.primer()``, TorchRL's
``make_tensordict_primer``), so the hidden size has one source; the MLP arm has no
state keys at all.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch
from tensordict.nn import NormalParamExtractor, TensorDictModule, TensorDictModuleBase, TensorDictSequential
from torch import nn
from torch.distributions import Categorical as CategoricalDist
from torchrl.data import Bounded, Categorical, OneHot, TensorSpec
from torchrl.envs import EnvBase
from torchrl.modules import GRUModule, LSTMModule, OneHotCategorical, ProbabilisticActor, TanhNormal, ValueOperator

from ..config_validation import UserError
from ..keys import ACTION, EMBED, HIDDEN, HIDDEN_C, HIDDEN_H, LOG_PROB, LOGITS, OBS, VALUE
from ..memory import MEMORY_MODELS, ScanMemoryModule
from ..memory.trunk import make_trunk, orthogonal_ as _orthogonal_, with_primer
from .distributions import MultiCategorical
from .rollout_policy import make_rollout_policy


@dataclass
class ActorCritic:
    """The pieces of the PPO agent, whatever its memory; every one is a plain TorchRL/TensorDict module.

    ``trunk`` is the ``PaddedLSTMModule`` or ``PaddedGRUModule`` (or, for the memoryless
    baseline arm, an MLP writing the same ``embed`` key); built by ``make_actor_critic`` /
    ``build_agent``, never by hand.

    Example:
        >>> agent = build_agent(PPOConfig(model="gru"), env)
        >>> env = agent.prime(env)  # the trunk's recurrent state, stored per step
        >>> collector = make_collector(env, agent.collect_policy, ...)
        >>> loss = RecurrentPPOLoss(agent)
    """

    trunk: TensorDictModule
    actor: ProbabilisticActor  # trunk + policy head + distribution
    value_head: ValueOperator  # reads EMBED
    rollout_policy: TensorDictSequential  # actor then value head: stores log-prob and value per step
    input_encoder: nn.Module | None = None  # the CNN inside the trunk, if any (ppo/image_encoder.py)
    # what the collectors run: ``rollout_policy``'s step fused into tensor maths where it applies
    # (ppo/rollout_policy.py), else ``rollout_policy`` itself; same weights, keys and outputs
    collect_policy: TensorDictModuleBase | None = None

    def __post_init__(self) -> None:
        if self.collect_policy is None:
            self.collect_policy = make_rollout_policy(self, self.rollout_policy)

    # --- keys, read from the modules ------------------------------------------------------
    @property
    def is_recurrent(self) -> bool:
        return isinstance(self.trunk, (LSTMModule, GRUModule, ScanMemoryModule))

    @property
    def obs_key(self):
        return self.trunk.in_keys[0]

    @property
    def state_keys(self) -> list:
        """The recurrent-state keys the trunk reads (stored per step by the collector); [] for the MLP."""
        return list(self.trunk.in_keys[1:-1]) if self.is_recurrent else []

    @property
    def in_keys(self) -> list:
        """What the agent reads from a step: observation, recurrent state and ``is_init`` (recurrent only)."""
        return list(self.trunk.in_keys) if self.is_recurrent else [self.obs_key]

    @property
    def action_key(self):
        return self.actor.dist_sample_keys[0]

    @property
    def log_prob_key(self):
        return self.actor.log_prob_keys[0]

    @property
    def value_key(self):
        return self.value_head.out_keys[0]

    # --- env side ------------------------------------------------------------------------
    def primer(self):
        """The env transform that declares and zero-fills the trunk's recurrent state, or None (MLP)."""
        return self.trunk.make_tensordict_primer() if self.is_recurrent else None

    def prime(self, env: EnvBase) -> EnvBase:
        """Appends ``primer()`` to ``env`` (a no-op for the MLP arm); returns the env."""
        return with_primer(env, self.primer())

    # --- parameters ----------------------------------------------------------------------
    def parameters(self):
        return list(self.rollout_policy.parameters())

    def state_dict(self) -> dict:
        return self.rollout_policy.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.rollout_policy.load_state_dict(state)


def make_lstm_actor_critic(
    obs_dim: int,
    action_spec: TensorSpec,
    hidden_size: int = 64,
    device: torch.device | str = "cpu",
    obs_key=OBS,
    action_key=ACTION,
    state_keys: tuple = (HIDDEN_H, HIDDEN_C),
    input_encoder: nn.Module | None = None,
) -> ActorCritic:
    """The LSTM arm, for a discrete or bounded continuous action spec.

    ``obs_key`` / ``action_key`` / ``state_keys`` bind it to an env whose entries have other names.
    ``input_encoder`` (e.g. an ``ImageEncoder``, with an ``out_dim``) runs on the observation
    ahead of the cell, inside the trunk.
    """
    _check_sizes(obs_dim, hidden_size)
    lstm = make_trunk("lstm", _input_size(obs_dim, input_encoder), hidden_size, device, obs_key, tuple(state_keys), input_encoder=input_encoder)
    return _with_heads(lstm, action_spec, hidden_size, device, action_key, input_encoder)


def make_gru_actor_critic(
    obs_dim: int,
    action_spec: TensorSpec,
    hidden_size: int = 64,
    device: torch.device | str = "cpu",
    obs_key=OBS,
    action_key=ACTION,
    state_key=HIDDEN,
    input_encoder: nn.Module | None = None,
) -> ActorCritic:
    """The GRU arm: a ``PaddedGRUModule`` trunk (TorchRL's ``GRUModule`` keys and primer), same heads."""
    _check_sizes(obs_dim, hidden_size)
    gru = make_trunk("gru", _input_size(obs_dim, input_encoder), hidden_size, device, obs_key, (state_key,), input_encoder=input_encoder)
    return _with_heads(gru, action_spec, hidden_size, device, action_key, input_encoder)


def make_mlp_actor_critic(
    obs_dim: int,
    action_spec: TensorSpec,
    hidden_size: int = 64,
    device: torch.device | str = "cpu",
    obs_key=OBS,
    action_key=ACTION,
    input_encoder: nn.Module | None = None,
) -> ActorCritic:
    """The memoryless baseline: a 2-layer tanh MLP trunk in place of the LSTM, same heads and loss."""
    _check_sizes(obs_dim, hidden_size)
    net = nn.Sequential(
        nn.Linear(_input_size(obs_dim, input_encoder), hidden_size, device=device), nn.Tanh(),
        nn.Linear(hidden_size, hidden_size, device=device), nn.Tanh(),
    )
    for layer in net:
        if isinstance(layer, nn.Linear):
            _orthogonal_(layer, math.sqrt(2))
    if input_encoder is not None:
        net = nn.Sequential(input_encoder, *net)
    return _with_heads(TensorDictModule(net, in_keys=[obs_key], out_keys=[EMBED]), action_spec, hidden_size, device, action_key, input_encoder)


def make_scan_actor_critic(
    model: str,
    obs_dim: int,
    action_spec: TensorSpec,
    hidden_size: int = 64,
    device: torch.device | str = "cpu",
    obs_key=OBS,
    action_key=ACTION,
    state_key=HIDDEN,
    input_encoder: nn.Module | None = None,
) -> ActorCritic:
    """A parallel-scan memory arm (``model`` in ``memory.MEMORY_MODELS``: 'mingru', 'ffm', 'lru'):
    the trunk resets at ``is_init`` inside the scan and keeps its own initialisation (that of
    its paper's reference code), same heads."""
    _check_sizes(obs_dim, hidden_size)
    trunk = make_trunk(model, _input_size(obs_dim, input_encoder), hidden_size, device, obs_key, (state_key,), input_encoder=input_encoder)
    return _with_heads(trunk, action_spec, hidden_size, device, action_key, input_encoder)


MODELS = {"lstm": make_lstm_actor_critic, "gru": make_gru_actor_critic, "mlp": make_mlp_actor_critic,
          **{name: functools.partial(make_scan_actor_critic, name) for name in MEMORY_MODELS}}


def make_actor_critic(
    model: str, obs_dim: int, action_spec: TensorSpec, hidden_size: int = 64, device: torch.device | str = "cpu", **keys
) -> ActorCritic:
    """``model`` is one of ``MODELS``: 'lstm', 'gru', a parallel-scan memory ('mingru', 'ffm', 'lru') or the memoryless 'mlp' baseline; ``keys`` go to its factory."""
    if model not in MODELS:
        raise UserError(f"model {model!r} (accepted: one of {list(MODELS)})")
    return MODELS[model](obs_dim, action_spec, hidden_size, device, **keys)


def build_agent(config, env: EnvBase, device: torch.device | str = "cpu") -> ActorCritic:
    """The agent a ``PPOConfig`` describes, sized for ``env`` (trunk, width, image encoder)."""
    from ..envs.lookup import obs_dim_of
    from .image_encoder import make_input_encoder

    encoder = make_input_encoder(config.encoder, env, device, config.encoder_size)
    return make_actor_critic(config.model, obs_dim_of(env), env.action_spec, config.hidden_size, device, input_encoder=encoder)


def _input_size(obs_dim: int, input_encoder: nn.Module | None) -> int:
    return obs_dim if input_encoder is None else input_encoder.out_dim


def _check_sizes(obs_dim: int, hidden_size: int) -> None:
    if obs_dim < 1:
        raise ValueError(f"obs_dim must be >= 1, got {obs_dim}")
    if hidden_size < 1:
        raise ValueError(f"hidden_size must be >= 1, got {hidden_size}")


def _with_heads(trunk: TensorDictModule, action_spec: TensorSpec, hidden_size: int, device, action_key=ACTION, input_encoder=None) -> ActorCritic:
    if isinstance(action_spec, (Categorical, OneHot)):
        n_actions = action_spec.space.n
        head = nn.Linear(hidden_size, n_actions, device=device)
        _orthogonal_(head, 0.01)
        policy_head = TensorDictModule(head, in_keys=[EMBED], out_keys=[LOGITS])
        # the action is stored in the spec's own encoding: an index for Categorical, a one-hot
        # vector for OneHot (an index fed to a one-hot env would be executed as another action)
        dist_cls = OneHotCategorical if isinstance(action_spec, OneHot) else CategoricalDist
        dist_keys, dist_kwargs = [LOGITS], {}
    elif not action_spec.dtype.is_floating_point and getattr(action_spec.space, "high", None) is not None:
        # MultiDiscrete (TorchRL's BoundedDiscrete over components): one categorical head per component
        n_comp = action_spec.shape[-1]
        low = action_spec.space.low.reshape(-1, n_comp)[0].long()
        nvec = (action_spec.space.high.reshape(-1, n_comp)[0].long() - low + 1).tolist()
        if bool((low != 0).any()):
            raise UserError(f"MultiDiscrete actions with a non-zero start {low.tolist()} (accepted: components starting at 0)")
        head = nn.Linear(hidden_size, sum(nvec), device=device)
        _orthogonal_(head, 0.01)
        policy_head = TensorDictModule(head, in_keys=[EMBED], out_keys=[LOGITS])
        dist_keys, dist_cls, dist_kwargs = [LOGITS], MultiCategorical, {"nvec": tuple(nvec)}
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
        raise UserError(
            f"unsupported action spec {type(action_spec).__name__} (accepted: a discrete "
            "(Categorical / OneHot), MultiDiscrete or bounded continuous (Bounded float) action space)"
        )

    actor = ProbabilisticActor(
        TensorDictSequential(trunk, policy_head),
        in_keys=dist_keys,
        out_keys=[action_key],
        distribution_class=dist_cls,
        distribution_kwargs=dist_kwargs,
        return_log_prob=True,
        log_prob_key=LOG_PROB,
        spec=action_spec,
    )
    vhead = nn.Linear(hidden_size, 1, device=device)
    _orthogonal_(vhead, 0.01)
    value_head = ValueOperator(vhead, in_keys=[EMBED], out_keys=[VALUE])
    return ActorCritic(
        trunk=trunk, actor=actor, value_head=value_head, rollout_policy=TensorDictSequential(actor, value_head), input_encoder=input_encoder
    )


#: the earlier spelling, kept as an alias
LSTMActorCritic = LstmActorCritic = ActorCritic  # earlier names (it serves every trunk)
