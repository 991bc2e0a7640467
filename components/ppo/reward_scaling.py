"""Running reward scaling by the std of the discounted return (SB3 VecNormalize's rule).

Applied when advantages are computed, not inside the env, so logged episode
returns stay raw. Custom because TorchRL's ``RewardScaling`` uses fixed
constants and ``VecNorm`` would rewrite the reward the loggers read. Without
it a shared LSTM trunk sees value-loss gradients ~100x the policy's, and the
global grad-norm clip then starves the policy.
"""
from __future__ import annotations

import torch


class ReturnScaler:
    """Divides rewards by the running std of each env's discounted return (module docstring: why).

    Args:
        num_envs: envs in the batch (one discounted-return accumulator each).
        gamma: the discount of that return.
        eps: added to the std before dividing.
        clip: scaled rewards are clipped to [-clip, clip].
    """

    def __init__(self, num_envs: int, gamma: float, eps: float = 1e-8, clip: float = 10.0):
        self.gamma, self.eps, self.clip = gamma, eps, clip
        self.running_return = torch.zeros(num_envs, dtype=torch.float64)
        self.mean = torch.zeros((), dtype=torch.float64)
        self.var = torch.ones((), dtype=torch.float64)
        self.count = torch.zeros((), dtype=torch.float64)

    @torch.no_grad()
    def update(self, reward: torch.Tensor, done: torch.Tensor) -> None:
        """Feeds a ``[num_envs, T, 1]`` window of rewards and done flags."""
        r = reward.squeeze(-1).to(torch.float64).cpu()
        d = done.squeeze(-1).cpu()
        returns = torch.empty_like(r)
        g = self.running_return
        for t in range(r.shape[1]):
            g = g * self.gamma + r[:, t]
            returns[:, t] = g
            g = torch.where(d[:, t], torch.zeros_like(g), g)
        self.running_return = g
        b_mean, b_var, n = returns.mean(), returns.var(unbiased=False), returns.numel()
        delta = b_mean - self.mean
        total = self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + b_var * n + delta**2 * self.count * n / total) / total
        self.count = total

    def scale(self, reward: torch.Tensor) -> torch.Tensor:
        std = float((self.var + self.eps).sqrt())
        return (reward / std).clamp(-self.clip, self.clip)

    def state_dict(self) -> dict:
        return {"running_return": self.running_return, "mean": self.mean, "var": self.var, "count": self.count}

    def load_state_dict(self, state: dict) -> None:
        for k, v in state.items():
            setattr(self, k, v.clone())
