"""``FusedRolloutPolicy``: the collector's policy step as plain tensor maths, same keys and outputs.

Why custom: the rollout policy TorchRL's modules give us (``TensorDictSequential(actor,
value_head)``, ``actor`` a ``ProbabilisticActor``) spends ~0.55 ms of a 64-env collector
step on CPU, of which ~0.25 ms is tensordict plumbing (a module call, key checks and an
output write per sub-module) and ~0.13 ms building a ``torch.distributions.Categorical`` to
sample once (benchmarks/profile_collect.py). This module reads the same entries, runs one
``lstm_cell`` / ``gru_cell`` (or the MLP) on the same weights, samples with the same
``torch.multinomial`` call ``Categorical.sample`` makes, and writes every entry the
sequential policy writes (embed, next state, logits, action, log-prob, value); a parallel-scan
memory (``memory/``) takes its own one-step ``_run``, the maths its sequential mode runs. It owns no
weights: it holds the agent's modules, so the optimizer, checkpoints and the collectors'
weight sync see the same parameters.

It covers what the collector runs: exploration (``ExplorationType.RANDOM``), a single-layer
LSTM / GRU, a scan memory or the MLP trunk, index (Categorical) actions. Anything else (greedy evaluation,
one-hot, MultiDiscrete or continuous actions, stacked cells) goes to the sequential policy it
wraps, unchanged. tests/ppo/test_rollout_policy.py pins equal actions (same RNG), log-probs,
values and states against the sequential policy, and ratio 1 through a collector.
"""
from __future__ import annotations

import torch
from tensordict import TensorDictBase
from tensordict.nn import TensorDictModuleBase, TensorDictSequential
from tensordict.nn.probabilistic import InteractionType, interaction_type
from torch import nn
from torch.distributions import Categorical as CategoricalDist

from ..tensordict_speedups import set_unchecked


class FusedRolloutPolicy(TensorDictModuleBase):
    def __init__(self, agent, sequential: TensorDictSequential):
        super().__init__()
        self.sequential = sequential  # the policy this one stands in for (and falls back to)
        self.in_keys = list(sequential.in_keys)
        self.out_keys = list(sequential.out_keys)
        # plain attributes, not submodules: the weights are registered once, in ``sequential``
        self.__dict__["_trunk"] = agent.trunk
        self.__dict__["_head"] = agent.actor.module[0].module[1].module
        self.__dict__["_value"] = agent.value_head.module
        self._cell = _cell_kind(agent)
        self._obs_key, self._action_key = agent.obs_key, agent.action_key
        self._log_prob_key, self._value_key = agent.log_prob_key, agent.value_key
        self._embed_key, self._logits_key = agent.trunk.out_keys[0], agent.actor.module[0].module[1].out_keys[0]
        self._state_keys, self._next_state_keys = agent.state_keys, list(agent.trunk.out_keys[1:])

    def forward(self, td: TensorDictBase) -> TensorDictBase:
        if interaction_type() is not InteractionType.RANDOM or td.ndim == 0:
            return self.sequential(td)
        n = td.batch_size.numel()
        x = td.get(self._obs_key)
        if self._cell == "mlp":
            embed = self._trunk.module(x.reshape(n, *x.shape[td.ndim :]))
        else:
            embed = self._recurrent_step(td, x, n)
        logits = self._head(embed)
        # Categorical.sample's own draw (multinomial over the softmax, with replacement), so the
        # same RNG state picks the same actions; the log-prob is the log-softmax at the action
        log_p = logits.log_softmax(-1)
        action = torch.multinomial(log_p.exp(), 1, True)
        batch = td.batch_size
        # every value below is computed from td's own entries: batch-shaped, on td's device
        set_unchecked(td, self._embed_key, embed.reshape(*batch, -1))
        set_unchecked(td, self._logits_key, logits.reshape(*batch, -1))
        set_unchecked(td, self._action_key, action.reshape(batch))
        set_unchecked(td, self._log_prob_key, log_p.gather(-1, action).reshape(batch))
        set_unchecked(td, self._value_key, self._value(embed).reshape(*batch, 1))
        return td

    def _recurrent_step(self, td: TensorDictBase, x: torch.Tensor, n: int) -> torch.Tensor:
        """One cell step from the stored state, zeroed where ``is_init`` (as the trunk's sequential mode)."""
        trunk = self._trunk
        x = trunk._encode(x).reshape(n, -1)
        fresh = td.get(trunk.in_keys[-1]).reshape(n, 1)
        states = [td.get(k) for k in self._state_keys]
        if self._cell == "scan":  # a window of one step from the stored state, reset where is_init
            y, new = trunk._run(x.reshape(n, 1, -1), states[0].reshape(n, *trunk.state_shape), fresh)
            set_unchecked(td, self._next_state_keys[0], new.reshape(states[0].shape))
            return y.reshape(n, -1)
        hidden = [torch.where(fresh, 0.0, s.reshape(n, -1)) for s in states]
        rnn = trunk._rnn()
        weights = (rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, rnn.bias_hh_l0)
        if self._cell == "lstm":
            h, c = torch.lstm_cell(x, (hidden[0], hidden[1]), *weights)
            new = (h, c)
        else:
            h = torch.gru_cell(x, hidden[0], *weights)
            new = (h,)
        for key, value, like in zip(self._next_state_keys, new, states):
            set_unchecked(td, key, value.reshape(like.shape))
        return h


def _cell_kind(agent) -> str | None:
    """'lstm', 'gru', 'scan' or 'mlp' where the fused step applies to ``agent``, else ``None``."""
    from ..memory.base import ScanMemoryModule
    from .padded_rnn import PaddedGRUModule, PaddedLSTMModule

    actor_net = agent.actor.module[0]
    head = actor_net.module[1].module if isinstance(actor_net, TensorDictSequential) and len(actor_net.module) == 2 else None
    if agent.actor.module[1].distribution_class is not CategoricalDist or not isinstance(head, nn.Linear):
        return None
    if not isinstance(agent.value_head.module, nn.Linear):
        return None
    trunk = agent.trunk
    if isinstance(trunk, (PaddedLSTMModule, PaddedGRUModule)):
        rnn = trunk._rnn()
        plain = rnn.num_layers == 1 and not rnn.bidirectional and rnn.bias and getattr(rnn, "proj_size", 0) == 0
        return ("lstm" if isinstance(trunk, PaddedLSTMModule) else "gru") if plain else None
    if isinstance(trunk, ScanMemoryModule):
        return "scan"
    return None if agent.is_recurrent else "mlp"


def make_rollout_policy(agent, sequential: TensorDictSequential) -> TensorDictModuleBase:
    """The collector's policy for ``agent``: the fused step where it applies, else ``sequential``."""
    return FusedRolloutPolicy(agent, sequential) if _cell_kind(agent) is not None else sequential
