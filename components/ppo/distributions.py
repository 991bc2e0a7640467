"""``MultiCategorical``: a factorised categorical over a MultiDiscrete action (one head per component).

Custom because TorchRL ships no distribution for ``MultiDiscrete``-style actions (its
``MultiOneHotCategorical`` writes one-hot codes, while gymnasium's MultiDiscrete envs
take one index per component). Log-probabilities and entropies are summed over the
components (they are independent given the logits); the mode is the per-component argmax.
"""
from __future__ import annotations

import torch
from torch.distributions import Categorical, Distribution, constraints


class MultiCategorical(Distribution):
    arg_constraints = {"logits": constraints.real}
    has_rsample = False

    def __init__(self, logits: torch.Tensor, nvec: tuple[int, ...] = (), validate_args=None):
        self.nvec = tuple(int(n) for n in nvec)
        if sum(self.nvec) != logits.shape[-1]:
            raise ValueError(f"MultiCategorical: logits last dim {logits.shape[-1]} != sum(nvec) = {sum(self.nvec)}")
        self.logits = logits
        self.parts = [Categorical(logits=chunk) for chunk in logits.split(self.nvec, -1)]
        super().__init__(batch_shape=logits.shape[:-1], event_shape=torch.Size([len(self.nvec)]), validate_args=False)

    def sample(self, sample_shape=torch.Size()) -> torch.Tensor:
        return torch.stack([p.sample(sample_shape) for p in self.parts], -1)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        return sum(p.log_prob(value[..., i]) for i, p in enumerate(self.parts))

    def entropy(self) -> torch.Tensor:
        return sum(p.entropy() for p in self.parts)

    @property
    def mode(self) -> torch.Tensor:
        return torch.stack([p.logits.argmax(-1) for p in self.parts], -1)

    @property
    def deterministic_sample(self) -> torch.Tensor:
        return self.mode
