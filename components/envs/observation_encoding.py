"""``EncodeObservation``: any observation layout -> one flat float ``"observation"`` vector.

A TorchRL ``Transform``, appended by ``make_env`` and usable on any TorchRL env. It reads
the observation entries' specs once and encodes each entry by its kind, then
concatenates them in key order:

* ``Categorical(n)`` (a gymnasium ``Discrete``): one-hot of size n;
* ``MultiCategorical`` / small-range integer boxes (``MultiDiscrete``): one one-hot per
  component, concatenated;
* integer boxes with a large range (pixels, MiniGrid's 7x7x3 symbolic view): flattened
  and divided by the box's high bound;
* float boxes of any shape: flattened.

Custom because TorchRL's ``FlattenObservation``, ``CatTensors`` and ``OneHot`` handling
each cover one case and need the keys, shapes and sizes written out by hand; the point
here is that a Dict/Tuple of mixed spaces works with no configuration. Consumed entries
other than the output are removed from the spec and the data.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from tensordict import TensorDictBase
from torchrl.data import Categorical, Composite, OneHot, TensorSpec, Unbounded
from torchrl.envs.transforms import Transform

from ..config_validation import UserError

ONE_HOT_MAX_RANGE = 32  # integer components with more values than this are scaled, not one-hot


def _per_sample(t: torch.Tensor, event_shape) -> torch.Tensor:
    """A bound tensor without the env's batch dims (a batched spec repeats it per env)."""
    n = 1
    for d in event_shape:
        n *= d
    return torch.as_tensor(t).reshape(-1, n)[0].reshape(event_shape).long()  # long: uint8 255 + 1 would wrap


class _Part:
    """How one entry is encoded: ``kind`` in {"onehot", "multionehot", "scaled", "flat"}."""

    def __init__(self, key, spec: TensorSpec, batch_dims: int):
        self.key = key
        self.event_shape = tuple(spec.shape[batch_dims:])
        dtype = spec.dtype
        if isinstance(spec, OneHot):
            self.kind, self.size, self.desc = "flat", spec.space.n, f"{key}: OneHot({spec.space.n}) as is"
        elif isinstance(spec, Categorical) and not self.event_shape:
            self.kind, self.n = "onehot", spec.space.n
            self.size, self.desc = self.n, f"{key}: Discrete({self.n}) -> one-hot"
        elif not dtype.is_floating_point and dtype != torch.bool:
            space = spec.space
            if hasattr(space, "nvec"):
                nvec = _per_sample(space.nvec, self.event_shape)
                low, high = torch.zeros_like(nvec), nvec - 1
            elif getattr(space, "low", None) is not None and getattr(space, "high", None) is not None:
                low, high = _per_sample(space.low, self.event_shape), _per_sample(space.high, self.event_shape)
            else:
                raise UserError(f"observation {key!r}: integer spec {type(spec).__name__} without bounds (accepted: Discrete, MultiDiscrete, bounded integer boxes, float boxes)")
            counts = (high - low + 1).reshape(-1)
            if int(counts.max()) <= ONE_HOT_MAX_RANGE:
                self.kind, self.low, self.counts = "multionehot", low.reshape(-1).long(), counts.long()
                self.size = int(counts.sum())
                shown = counts.tolist() if counts.numel() <= 8 else f"{counts.numel()} components"
                self.desc = f"{key}: MultiDiscrete({shown}) -> one-hots"
            else:
                self.kind, self.scale = "scaled", float(high.max())
                self.size = int(counts.numel())
                self.desc = f"{key}: Box{self.event_shape} {str(dtype).replace('torch.', '')} -> flat / {self.scale:g}"
        else:
            self.kind = "flat"
            self.size = 1
            for d in self.event_shape:
                self.size *= d
            self.desc = f"{key}: Box{self.event_shape} {str(dtype).replace('torch.', '')} -> flat"

    def encode(self, x: torch.Tensor, batch_shape) -> torch.Tensor:
        if self.kind == "onehot":
            return F.one_hot(x.long().reshape(batch_shape), self.n).float()
        if self.kind == "multionehot":
            flat = x.long().reshape(*batch_shape, -1) - self.low.to(x.device)
            return torch.cat([F.one_hot(flat[..., i], int(c)).float() for i, c in enumerate(self.counts.tolist())], -1)
        if self.kind == "scaled":
            return x.reshape(*batch_shape, -1).float() / self.scale
        return x.reshape(*batch_shape, -1).float()


class EncodeObservation(Transform):
    """Encodes the observation entries ``in_keys`` (any gymnasium space: Discrete, MultiDiscrete,
    Box of any shape, Dict/Tuple of them) into one float vector at ``out_key``: small integer
    ranges one-hot, larger ones scaled, uint8 images divided by 255 (``describe()`` prints the chain).

    Args:
        observation_spec: the env's observation ``Composite``.
        in_keys: the entries to encode, in order.
        out_key: where the vector goes.
        batch_dims: leading batch dimensions of the entries.
    """

    def __init__(self, observation_spec: Composite, in_keys: list, out_key: str = "observation", batch_dims: int = 1):
        super().__init__(in_keys=list(in_keys), out_keys=[out_key])
        self.parts = [_Part(k, observation_spec[k], batch_dims) for k in in_keys]
        self.obs_dim = sum(p.size for p in self.parts)
        # running normalisation is worth it for float and scaled-integer parts, not for one-hot codes
        self.has_float = any(p.kind == "scaled" or (p.kind == "flat" and observation_spec[p.key].dtype.is_floating_point) for p in self.parts)

    def image_part(self) -> tuple[int, tuple[int, int, int]] | None:
        """``(offset, shape)`` of the first image-like entry (a 3-D box) in the output vector, for a
        CNN ahead of the trunk (``ppo/image_encoder.py``); None if there is none."""
        offset = 0
        for p in self.parts:
            if p.kind in ("scaled", "flat") and len(p.event_shape) == 3:
                return offset, p.event_shape
            offset += p.size
        return None

    def describe(self) -> str:
        return " + ".join(p.desc for p in self.parts) + f" => {self.out_keys[0]!r} float[{self.obs_dim}]"

    def _encode(self, td: TensorDictBase) -> TensorDictBase:
        batch = td.batch_size
        out = torch.cat([p.encode(td.get(p.key), batch) for p in self.parts], -1)
        for p in self.parts:
            if p.key != self.out_keys[0]:
                td.del_(p.key)
        td.set(self.out_keys[0], out)
        return td

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return self._encode(next_tensordict)

    def _reset(self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase) -> TensorDictBase:
        return self._encode(tensordict_reset)

    def transform_observation_spec(self, observation_spec: Composite) -> Composite:
        shape = observation_spec.shape
        device = observation_spec[self.in_keys[0]].device
        for key in self.in_keys:
            if key != self.out_keys[0]:
                del observation_spec[key]
        observation_spec[self.out_keys[0]] = Unbounded(shape=(*shape, self.obs_dim), dtype=torch.float32, device=device)
        return observation_spec
