"""Transforms that turn a fully observed env into a POMDP: the memory benchmarks of this project.

Both are plain TorchRL transforms, usable on any env with a vector
``"observation"`` (the gymnasium backend and the tensor-native envs alike).
"""
from __future__ import annotations

from typing import Sequence

import torch
from tensordict import TensorDictBase
from torchrl.data import Categorical, Composite, Unbounded
from torchrl.envs.transforms import Transform

BLANK_KEY = "flicker_blank"


class MaskVelocity(Transform):
    """Hides chosen observation entries (for CartPole: 1 and 3, the velocities).

    Custom because TorchRL has no index-dropping observation transform; the
    kept entries keep their order.
    """

    def __init__(self, hidden_indices: Sequence[int] = (1, 3), obs_dim: int | None = None, in_key: str = "observation"):
        super().__init__(in_keys=[in_key], out_keys=[in_key])
        self.hidden_indices = sorted(int(i) for i in hidden_indices)
        self._obs_dim = obs_dim
        self.register_buffer("_keep", torch.empty(0, dtype=torch.long), persistent=False)

    def _keep_index(self, obs_dim: int, device) -> torch.Tensor:
        if self._keep.numel() == 0 or self._keep.device != torch.device(device):
            bad = [i for i in self.hidden_indices if not 0 <= i < obs_dim]
            if bad:
                raise ValueError(f"MaskVelocity: hidden index {bad} out of range [0, {obs_dim - 1}]")
            keep = [i for i in range(obs_dim) if i not in self.hidden_indices]
            if not keep:
                raise ValueError("MaskVelocity would hide every observation entry")
            self._keep = torch.tensor(keep, dtype=torch.long, device=device)
        return self._keep

    def _apply_transform(self, obs: torch.Tensor) -> torch.Tensor:
        return obs.index_select(-1, self._keep_index(obs.shape[-1], obs.device))

    def _reset(self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase) -> TensorDictBase:
        return self._call(tensordict_reset)

    def transform_observation_spec(self, observation_spec: Composite) -> Composite:
        key = self.in_keys[0]
        spec = observation_spec[key]
        keep = self._keep_index(spec.shape[-1], spec.device)
        observation_spec[key] = Unbounded(shape=(*spec.shape[:-1], keep.numel()), dtype=spec.dtype, device=spec.device)
        return observation_spec


class Flicker(Transform):
    """Blanks the whole observation with probability ``p`` (Flickering CartPole, Hausknecht & Stone 2015).

    ``mode="iid"``: each step independently. ``mode="markov"``: blank frames
    come in bursts of mean length ``mean_burst`` with the same long-run rate
    ``p`` (a two-state chain per env: leave blank with prob. 1/L, enter blank
    with prob. p / (L (1 - p))). The flag is written to ``"flicker_blank"`` so
    that :class:`RunningObsNorm` can skip blank frames. The chain state lives in
    the tensordict, so a carried tensordict resumes the chain exactly.
    """

    def __init__(self, p: float = 0.5, mode: str = "iid", mean_burst: float = 4.0, seed: int = 0, in_key: str = "observation"):
        if not 0.0 <= p < 1.0:
            raise ValueError(f"Flicker: p must be in [0, 1), got {p}")
        if mode not in ("iid", "markov"):
            raise ValueError(f"Flicker: mode must be 'iid' or 'markov', got {mode!r}")
        if mode == "markov" and mean_burst < 1.0:
            raise ValueError(f"Flicker: mean_burst must be >= 1, got {mean_burst}")
        if mode == "markov" and p / (mean_burst * (1 - p)) > 1:
            raise ValueError(f"Flicker: p={p} is unreachable with mean_burst={mean_burst} (needs p / (L (1 - p)) <= 1)")
        super().__init__(in_keys=[in_key], out_keys=[in_key, BLANK_KEY])
        self.p, self.mode, self.mean_burst = float(p), mode, float(mean_burst)
        self.seed = int(seed)
        self.rng: torch.Generator | None = None

    def _uniform(self, shape, device) -> torch.Tensor:
        if self.rng is None or self.rng.device != torch.device(device):
            self.rng = torch.Generator(device=device)
            self.rng.manual_seed(self.seed)
        return torch.rand(shape, generator=self.rng, device=device)

    def _blank(self, obs: torch.Tensor, previous: torch.Tensor | None) -> torch.Tensor:
        u = self._uniform((*obs.shape[:-1], 1), obs.device)
        if self.mode == "iid" or previous is None:
            return u < self.p
        stay = 1.0 - 1.0 / self.mean_burst
        enter = self.p / (self.mean_burst * (1.0 - self.p))
        return torch.where(previous, u < stay, u < enter)

    def _write(self, td: TensorDictBase, blank: torch.Tensor) -> TensorDictBase:
        key = self.in_keys[0]
        obs = td.get(key)
        td.set(key, torch.where(blank, torch.zeros_like(obs), obs))
        td.set(BLANK_KEY, blank)
        return td

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        return self._write(next_tensordict, self._blank(next_tensordict.get(self.in_keys[0]), tensordict.get(BLANK_KEY, None)))

    def _reset(self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase) -> TensorDictBase:
        # first frame of an episode: blank with the stationary rate p in both modes
        return self._write(tensordict_reset, self._blank(tensordict_reset.get(self.in_keys[0]), None))

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return self._write(next_tensordict, self._blank(next_tensordict.get(self.in_keys[0]), None))

    def transform_observation_spec(self, observation_spec: Composite) -> Composite:
        obs = observation_spec[self.in_keys[0]]
        observation_spec[BLANK_KEY] = Categorical(2, shape=(*obs.shape[:-1], 1), dtype=torch.bool, device=obs.device)
        return observation_spec

    def rng_state(self) -> torch.Tensor | None:
        return None if self.rng is None else self.rng.get_state()

    def set_rng_state(self, state: torch.Tensor | None) -> None:
        if state is not None:
            if self.rng is None:
                self.rng = torch.Generator(device="cpu")
            self.rng.set_state(state)
