"""``PreviousActionReward``: the previous action and reward appended to the observation.

POPGym's own baselines feed the last action (and memory models often the last reward) to
the policy: with it, a memory model can tell what it did, not only what it saw. The
action is encoded as the spec says (one-hot for Discrete, one one-hot per component for
MultiDiscrete, as is for Box); at an episode start both parts are zeros. Custom because
TorchRL has no such transform; append it after any observation encoding and before
normalisation (``make_env(prev_action=True)`` does).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from tensordict import TensorDictBase
from torchrl.data import Categorical, Composite, OneHot, TensorSpec, Unbounded
from torchrl.envs.transforms import Transform


class PreviousActionReward(Transform):
    """Appends the previous action (one-hot for discrete actions) and reward to the observation
    at ``in_key``, zeros at an episode's first step, as POPGym's baselines do (``--prev-action true``).

    Args:
        action_spec: the env's action spec (sets the width of the appended action).
        in_key: the observation entry to extend.
        action_key: where the env reads the action.
    """

    def __init__(self, action_spec: TensorSpec, in_key: str = "observation", action_key: str = "action"):
        super().__init__(in_keys=[in_key], out_keys=[in_key])
        self.action_key = action_key
        if isinstance(action_spec, OneHot):
            self.kind, self.sizes = "as_is", [action_spec.space.n]
        elif isinstance(action_spec, Categorical) and not hasattr(action_spec.space, "nvec"):
            self.kind, self.sizes = "onehot", [action_spec.space.n]
        elif not action_spec.dtype.is_floating_point:
            n = action_spec.shape[-1]
            low = action_spec.space.low.reshape(-1, n)[0].long()
            self.kind, self.sizes = "multi", (action_spec.space.high.reshape(-1, n)[0].long() - low + 1).tolist()
        else:
            self.kind, self.sizes = "as_is", [action_spec.shape[-1]]
        self.extra = sum(self.sizes) + 1

    def _encode_action(self, action: torch.Tensor, batch) -> torch.Tensor:
        if self.kind == "onehot":
            return F.one_hot(action.long().reshape(batch), self.sizes[0]).float()
        if self.kind == "multi":
            a = action.long().reshape(*batch, -1)
            return torch.cat([F.one_hot(a[..., i], n).float() for i, n in enumerate(self.sizes)], -1)
        return action.reshape(*batch, -1).float()

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        key = self.in_keys[0]
        obs = next_tensordict.get(key)
        batch = next_tensordict.batch_size
        extra = [self._encode_action(tensordict.get(self.action_key), batch), next_tensordict.get("reward").reshape(*batch, 1).float()]
        next_tensordict.set(key, torch.cat([obs, *extra], -1))
        return next_tensordict

    def _reset(self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase) -> TensorDictBase:
        key = self.in_keys[0]
        obs = tensordict_reset.get(key)
        tensordict_reset.set(key, torch.cat([obs, obs.new_zeros(*obs.shape[:-1], self.extra)], -1))
        return tensordict_reset

    def transform_observation_spec(self, observation_spec: Composite) -> Composite:
        key = self.in_keys[0]
        spec = observation_spec[key]
        observation_spec[key] = Unbounded(shape=(*spec.shape[:-1], spec.shape[-1] + self.extra), dtype=spec.dtype, device=spec.device)
        return observation_spec
