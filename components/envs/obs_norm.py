"""Running observation normalisation that can skip blank frames and freeze.

Custom because TorchRL's ``VecNorm`` updates on every frame: a flickering env
would drag the statistics toward its blank (all-zero) frames. Statistics are
buffers, so they ride in ``state_dict()`` (and in our checkpoints); ``frozen``
stops updates for evaluation. Normalised values are clipped to +-``clip``
(SB3 VecNormalize's rule) and blank frames stay exactly zero.
"""
from __future__ import annotations

import torch
from tensordict import TensorDictBase
from torchrl.envs.transforms import Transform

from .pomdp_transforms import BLANK_KEY
from ..tensordict_speedups import set_unchecked


class RunningObsNorm(Transform):
    """Running mean/std observation normalisation (clipped to [-clip, clip]); a blank frame
    (all zeros, e.g. FlickeringCartPole's) does not update the statistics, and ``frozen`` copies
    used in evaluation never update them. The statistics are saved in checkpoints.

    Args:
        obs_dim: width of the observation vector.
        in_key: the observation entry.
        clip: bound of the normalised values.
        eps: added to the variance.
    """

    def __init__(self, obs_dim: int, in_key: str = "observation", clip: float = 10.0, eps: float = 1e-8):
        super().__init__(in_keys=[in_key], out_keys=[in_key])
        self.clip, self.eps = float(clip), float(eps)
        self.register_buffer("mean", torch.zeros(obs_dim, dtype=torch.float64))
        self.register_buffer("var", torch.ones(obs_dim, dtype=torch.float64))
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("frozen", torch.zeros((), dtype=torch.bool))

    def freeze(self) -> "RunningObsNorm":
        self.frozen.fill_(True)
        return self

    def unfreeze(self) -> "RunningObsNorm":
        self.frozen.fill_(False)
        return self

    @torch.no_grad()
    def _update(self, obs: torch.Tensor, rows: torch.Tensor | None) -> None:
        """Merges the observations of ``rows`` (a boolean mask; ``None`` = all) into the stats."""
        x = obs.reshape(-1, obs.shape[-1])
        if rows is not None:
            x = x[rows.reshape(-1)]
        b_n = x.shape[0]
        if b_n == 0:
            return
        # Chan et al. parallel mean/variance merge of the batch into the running stats. The
        # weights are Python floats and the buffers move in place: this runs every env step,
        # where each extra tensor op is a few microseconds of dispatch (profile_collect.py).
        b_var, b_mean = torch.var_mean(x.to(self.mean.dtype), 0, correction=0)
        n = float(self.count)
        total = n + b_n
        delta = b_mean - self.mean
        self.mean.add_(delta, alpha=b_n / total)
        self.var.mul_(n / total).add_(b_var, alpha=b_n / total).addcmul_(delta, delta, value=n * b_n / total**2)
        self.count.fill_(total)

    def _normalise(self, td: TensorDictBase, rows: torch.Tensor | None) -> TensorDictBase:
        key = self.in_keys[0]
        obs = td.get(key)
        blank = td.get(BLANK_KEY, None)
        valid = None if blank is None else ~blank  # None: every frame is a real one (no flicker)
        if not bool(self.frozen):
            self._update(obs, rows if valid is None else (valid if rows is None else valid & rows))
        inv_std = (self.var + self.eps).rsqrt_().to(device=obs.device, dtype=obs.dtype)
        normed = (obs - self.mean.to(device=obs.device, dtype=obs.dtype)).mul_(inv_std).clamp_(-self.clip, self.clip)
        # the observation's own shape and device: no validation needed (runs every env step)
        set_unchecked(td, key, normed if valid is None else torch.where(valid, normed, torch.zeros_like(normed)))
        return td

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return self._normalise(next_tensordict, None)

    def _reset(self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase) -> TensorDictBase:
        # only the rows actually being reset count towards the statistics
        reset = None if tensordict is None else tensordict.get("_reset", None)
        rows = None if reset is None else reset.reshape(*tensordict_reset.batch_size, 1)
        return self._normalise(tensordict_reset, rows)
