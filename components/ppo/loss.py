"""``RecurrentPPOLoss``: TorchRL's ``ClipPPOLoss`` run over LSTM sequences.

What it adds on top of ``ClipPPOLoss``:
* the actor runs under ``set_recurrent_mode(True)``: one LSTM call over the
  whole ``[B, T]`` minibatch, with ``is_init`` splitting episodes and each
  sequence starting from its stored state;
* advantage normalisation per minibatch through the validity mask
  (mean / biased std + 1e-8; TorchRL's clamps the std at 1e-4 instead);
* the non-negative KL estimate mean((r - 1) - log r) (TorchRL logs
  mean(-log r), which can be negative), and clip fraction / entropy
  statistics taken through the mask;
* a ``forward`` without ``ClipPPOLoss.forward``'s logging-only entries (below).
Configured as SB3's and CleanRL's PPO loss: MSE critic (not smooth-L1), ``critic_coeff =
vf_coef``, value clipping max((v-R)^2, (v_clip-R)^2) when ``clip_range_vf`` is set.
"""
from __future__ import annotations

import math

import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.modules import set_recurrent_mode
from torchrl.objectives import ClipPPOLoss

from .actor_critic import ActorCritic
from ..keys import ADVANTAGE, MASK, VALUE_TARGET


def masked_mean(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    if mask is None:
        return x.mean()
    m = mask.reshape(x.shape) if mask.numel() == x.numel() else mask.expand_as(x)
    return torch.where(m, x, torch.zeros_like(x)).sum() / m.sum().clamp_min(1)


class RecurrentPPOLoss(ClipPPOLoss):
    """TorchRL's ``ClipPPOLoss`` over recurrent ``[B, T]`` minibatches (module docstring for what it adds).

    Args:
        actor_critic: the agent; its ``actor`` and ``value_head`` become the loss's networks.
        clip_range: the ratio clip epsilon.
        clip_range_vf: value clipping around the stored value (None or inf: plain MSE).
        vf_coef: the value-loss coefficient (``critic_coeff``).
        ent_coef: the entropy-bonus coefficient.
        normalize_advantage: per-minibatch advantage normalisation through the validity mask.
        mask_key: the minibatch entry that marks real (not padded) steps.
    """

    def __init__(
        self,
        actor_critic: ActorCritic,
        clip_range: float = 0.2,
        clip_range_vf: float | None = 0.2,
        vf_coef: float = 0.5,
        ent_coef: float = 0.01,
        normalize_advantage: bool = True,
        mask_key=MASK,
    ):
        vf_clip = clip_range_vf if clip_range_vf is not None and math.isfinite(clip_range_vf) else False
        super().__init__(
            actor_critic.actor,
            actor_critic.value_head,
            clip_epsilon=clip_range,
            entropy_coeff=ent_coef,
            critic_coeff=vf_coef,
            loss_critic_type="l2",
            normalize_advantage=False,  # done here, through the mask
            clip_value=vf_clip,
            functional=False,
            log_explained_variance=False,  # the trainer reports it once per update, over the whole rollout
        )
        # keys from the agent's modules; advantage / value target are TorchRL's defaults
        # renamed to ours, re-bindable with ``set_keys`` like any TorchRL loss
        self.set_keys(
            sample_log_prob=actor_critic.log_prob_key, value=actor_critic.value_key, action=actor_critic.action_key,
            advantage=ADVANTAGE, value_target=VALUE_TARGET,
        )
        self.loss_mask_key = mask_key
        self.normalize_adv = normalize_advantage
        self._log_weight_cache: torch.Tensor | None = None
        self._entropy_cache: torch.Tensor | None = None

    # capture per-step quantities so statistics can go through the mask (both forward paths read them)
    def _log_weight(self, tensordict, adv_shape):
        log_weight, dist, kl_approx, log_is_weight = super()._log_weight(tensordict, adv_shape)
        self._log_weight_cache = log_weight.detach()
        return log_weight, dist, kl_approx, log_is_weight

    def _get_entropy(self, dist, adv_shape):
        entropy = super()._get_entropy(dist, adv_shape)
        self._entropy_cache = entropy.detach() if isinstance(entropy, torch.Tensor) else None
        return entropy

    def forward(self, tensordict: TensorDictBase) -> TensorDictBase:
        """``ClipPPOLoss.forward``'s losses, built from its own pieces (``_log_weight``,
        ``_get_entropy``, ``loss_critic``, ``_reduce_loss``) without the entries it computes
        only for logging (ESS, max / mean ratio, explained variance, its unmasked clip
        fraction and KL, which this loss replaces): ~0.3 ms of a ~3.8 ms 512-step minibatch
        update here. Losses and gradients equal ``ClipPPOLoss.forward``'s
        (tests/ppo/test_loss.py, which keeps that path as ``reference_forward``). The behaviour
        ratio is the trust-region ratio (``_log_weight``'s ``log_is_weight`` is None): this
        loss never sets ``delay_actor`` or ``max_importance_ratio``.
        """
        tensordict = tensordict.clone(False)
        mask = tensordict.get(self.loss_mask_key, None)
        adv = self._normalized_advantage(tensordict, mask)
        with set_recurrent_mode(True):
            log_weight, dist, _, _ = self._log_weight(tensordict, adv_shape=adv.shape[:-1])
        # the surrogate exactly as ClipPPOLoss writes it: clip the log-ratio, then exponentiate
        gain = torch.minimum(log_weight.exp() * adv, log_weight.clamp(*self._clip_bounds).exp() * adv)
        out = {"loss_objective": self._reduce_loss(-gain, tensordict)}
        entropy = self._get_entropy(dist, adv_shape=adv.shape[:-1])
        out["loss_entropy"] = self._reduce_loss(self._weighted_loss_entropy(entropy), tensordict)
        loss_critic, value_clip_fraction, _ = self.loss_critic(tensordict)
        out["loss_critic"] = self._reduce_loss(loss_critic, tensordict)
        if value_clip_fraction is not None:
            out["value_clip_fraction"] = value_clip_fraction
        self._stats(out, mask)
        return TensorDict(out)

    def reference_forward(self, tensordict: TensorDictBase) -> TensorDictBase:
        """The same losses through ``ClipPPOLoss.forward`` itself (all its logging entries
        included): the path ``forward`` replaces, kept for the equality tests."""
        mask = tensordict.get(self.loss_mask_key, None)
        tensordict = tensordict.clone(False)
        tensordict.set(self.tensor_keys.advantage, self._normalized_advantage(tensordict, mask))
        with set_recurrent_mode(True):
            out = super().forward(tensordict)
        self._stats(out, mask)
        return out

    def _normalized_advantage(self, tensordict: TensorDictBase, mask: torch.Tensor | None) -> torch.Tensor:
        adv = tensordict.get(self.tensor_keys.advantage)
        if not self.normalize_adv:
            return adv
        mean = masked_mean(adv, mask)
        std = masked_mean((adv - mean) ** 2, mask).sqrt()  # biased
        return (adv - mean) / (std + 1e-8)

    def _stats(self, out, mask: torch.Tensor | None) -> None:
        """KL, clip fraction and entropy through the mask, from this call's captured log-ratio and entropy."""
        log_weight, entropy = self._log_weight_cache, self._entropy_cache
        # non-negative KL(old || new) estimator, r = exp(log_weight)
        out["kl_approx"] = masked_mean(torch.expm1(log_weight) - log_weight, mask)
        low, high = self._clip_bounds
        out["clip_fraction"] = masked_mean(((log_weight < low) | (log_weight > high)).to(log_weight.dtype), mask)
        if entropy is not None:
            out["entropy"] = masked_mean(entropy, mask)
