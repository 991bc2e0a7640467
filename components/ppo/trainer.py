"""``RecurrentPPOTrainer``: one PPO update per rollout.

The loop over epochs and minibatches is ours; every loss term comes from
``RecurrentPPOLoss`` (TorchRL's ``ClipPPOLoss``). What the trainer owns:
KL early stopping in both meanings, the global grad-norm clip, the LR schedule,
the non-finite guard and the entropy-collapse guard.
"""
from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass
from typing import Callable

import torch
from tensordict import TensorDictBase

from ..config_validation import UserError
from .actor_critic import LSTMActorCritic
from ..flat_params import clip_flat_grad_norm_, flatten_parameters, fused_adam
from .config import PPOConfig
from .loss import RecurrentPPOLoss
from .sampler import RecurrentMinibatchSampler


class EntropyCollapseError(RuntimeError):
    """The policy entropy stayed below the threshold for ``patience`` consecutive updates."""


class NonFiniteLossError(UserError, RuntimeError):
    """Three gradient steps in a row had a non-finite loss or gradient norm.

    The env's data is checked where it appears (``envs/finite_check.py``), so what is left is
    a diverging update: a ``UserError`` (one line, exit 2) naming the settings that cause it."""


MAX_NONFINITE_IN_A_ROW = 3
#: the per-step statistics ``train_step`` averages, in the order it stacks them
STAT_NAMES = ("policy_loss", "value_loss", "entropy", "total_loss", "clip_fraction", "approx_kl", "grad_norm")


@dataclass
class TrainingStats:
    """Per-update statistics, means over the gradient steps actually taken."""

    policy_loss: float = 0.0
    value_loss: float = 0.0
    entropy: float = 0.0
    total_loss: float = 0.0
    clip_fraction: float = 0.0
    approx_kl: float = 0.0
    explained_variance: float = 0.0
    grad_norm: float = 0.0
    learning_rate: float = 0.0
    epochs_completed: int = 0
    kl_stopped: bool = False
    num_gradient_steps: int = 0
    skipped_steps: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


def explained_variance(values: torch.Tensor, returns: torch.Tensor) -> float:
    """1 - Var(R - v) / Var(R) (NaN when the returns have no variance)."""
    var_r = returns.var(unbiased=False)
    if var_r.item() == 0:
        return float("nan")
    return float(1 - (returns - values).var(unbiased=False) / var_r)


class RecurrentPPOTrainer:
    """One PPO update over a collected ``[num_envs, T]`` batch: epochs of recurrent minibatches
    through ``RecurrentPPOLoss``, one flat global gradient-norm clip and one fused Adam step per
    minibatch, the KL early stop, the learning-rate schedule, the non-finite-step skip and the
    entropy-collapse guard. It is the PPO "update" role; the loop lives in the pipeline.

    Args:
        actor_critic: the agent (``build_agent``), whose trunk runs in recurrent mode here.
        config: a ``PPOConfig``; validated again here.
        on_entropy_collapse: called with the trainer before ``EntropyCollapseError`` is raised
            (``entropy_guard="stop"``), e.g. to save a checkpoint first.

    Example:
        >>> trainer = RecurrentPPOTrainer(agent, cfg)
        >>> for batch in collector:
        ...     compute_gae(batch, agent, gamma=cfg.gamma, lmbda=cfg.gae_lambda)
        ...     stats = trainer.train_step(batch)  # a TrainingStats of means over gradient steps
    """

    def __init__(
        self,
        actor_critic: LSTMActorCritic,
        config: PPOConfig,
        on_entropy_collapse: Callable[["RecurrentPPOTrainer"], None] | None = None,
    ):
        self.config = config.validate()
        self.actor_critic = actor_critic
        self.loss = RecurrentPPOLoss(
            actor_critic,
            clip_range=config.clip_range,
            clip_range_vf=config.clip_range_vf,
            vf_coef=config.vf_coef,
            ent_coef=config.ent_coef,
        )
        self.params = [p for p in actor_critic.parameters() if p.requires_grad]
        # one flat buffer + fused Adam: the global clip and the step are one kernel each (flat_params.py)
        self.flat_params = flatten_parameters(self.params)
        self.optimizer = fused_adam(self.flat_params, config.learning_rate, eps=1e-5)
        self.keys = keys = self.loss.tensor_keys  # the loss's keys (TorchRL's _AcceptedKeys), read once
        self.sampler = RecurrentMinibatchSampler(
            config.num_envs, config.rollout_len, config.envs_per_minibatch, config.chunk_len, seed=config.seed,
            keys=(*actor_critic.in_keys, keys.action, keys.sample_log_prob, keys.value, keys.advantage, keys.value_target),
            mask_key=self.loss.loss_mask_key,
        )
        self.on_entropy_collapse = on_entropy_collapse
        self.updates_done = 0
        self.low_entropy_updates = 0
        self.entropy_warned = False
        self.nonfinite_in_a_row = 0
        self.lr_override: float | None = None

    # --- learning rate -------------------------------------------------------
    def scheduled_learning_rate(self) -> float:
        cfg = self.config
        if self.lr_override is not None:
            return self.lr_override
        if cfg.lr_schedule == "constant":
            return cfg.learning_rate
        return cfg.learning_rate * max(1.0 - self.updates_done / cfg.num_updates, cfg.lr_floor)

    def set_learning_rate(self, lr: float | None) -> None:
        """Pins the learning rate (overriding the schedule); ``None`` returns to the schedule."""
        if lr is not None and not (isinstance(lr, (int, float)) and lr > 0 and math.isfinite(lr)):
            raise ValueError(f"learning rate must be a finite number > 0, got {lr!r}")
        self.lr_override = lr

    # --- one update ----------------------------------------------------------
    def _kl_trips(self, kl: float) -> bool:
        return self.config.target_kl is not None and kl > self.config.target_kl

    def train_step(self, batch: TensorDictBase) -> TrainingStats:
        """One PPO update on a ``[num_envs, T]`` rollout that already holds advantages."""
        keys = self.keys
        if batch.get(keys.advantage, None) is None or batch.get(keys.value_target, None) is None:
            raise KeyError(f"train_step needs {keys.advantage!r} and {keys.value_target!r} in the batch: run compute_gae first")
        cfg = self.config
        lr = self.scheduled_learning_rate()
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        # per-step statistics summed on the loss's device, read back once per update
        # (a float() per entry and minibatch is a device sync each on a GPU)
        sums = torch.zeros(len(STAT_NAMES), dtype=torch.float64, device=self.flat_params.device)
        steps = skipped = epochs_completed = 0
        kl_stopped = False
        for _epoch in range(cfg.n_epochs):
            for minibatch in self.sampler.epoch(batch):
                out = self.loss(minibatch)
                total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                kl = float(out["kl_approx"]) if cfg.target_kl is not None else 0.0
                if cfg.kl_stop == "update" and self._kl_trips(kl):
                    # SB3/CleanRL meaning: this minibatch is not applied, all epochs stop
                    kl_stopped = True
                    break
                self.flat_params.grad.zero_()  # never set_to_none: the parameters' grads are views of it
                finite = bool(torch.isfinite(total))
                if finite:
                    total.backward()
                    grad_norm = clip_flat_grad_norm_(self.flat_params, cfg.max_grad_norm)
                    finite = bool(torch.isfinite(grad_norm))
                else:
                    grad_norm = total.new_tensor(float("nan"))  # no backward: no norm
                if not finite:
                    self.flat_params.grad.zero_()
                    skipped += 1
                    self.nonfinite_in_a_row += 1
                    if self.nonfinite_in_a_row >= MAX_NONFINITE_IN_A_ROW:
                        raise NonFiniteLossError(
                            f"{self.nonfinite_in_a_row} gradient steps in a row had a non-finite loss or gradient norm "
                            f"(last loss {float(total)}, grad norm {float(grad_norm)}) at update {self.updates_done + 1}; "
                            f"no update was applied from them (accepted: settings that keep the loss finite, e.g. a smaller "
                            f"--learning-rate than {cfg.learning_rate:g}, or --reward-scaling true)"
                        )
                    continue
                self.nonfinite_in_a_row = 0
                self.optimizer.step()
                steps += 1
                value_loss = out["loss_critic"] / cfg.vf_coef if cfg.vf_coef > 0 else out["loss_critic"]
                sums += torch.stack([
                    out["loss_objective"], value_loss, out["entropy"], total, out["clip_fraction"], out["kl_approx"], grad_norm,
                ]).detach().to(sums.dtype)
                if cfg.kl_stop == "epoch" and self._kl_trips(kl):
                    # kl_stop="epoch": the step is applied, the rest of this epoch is skipped, the next epoch runs
                    kl_stopped = True
                    break
            if kl_stopped and cfg.kl_stop == "update":
                break
            epochs_completed += 1
        self.updates_done += 1
        denom = max(steps, 1)
        stats = TrainingStats(
            **{k: v / denom for k, v in zip(STAT_NAMES, sums.tolist())},
            explained_variance=explained_variance(batch.get(keys.value), batch.get(keys.value_target)),
            learning_rate=lr,
            epochs_completed=epochs_completed,
            kl_stopped=kl_stopped,
            num_gradient_steps=steps,
            skipped_steps=skipped,
        )
        self._entropy_guard(stats)
        return stats

    def _entropy_guard(self, stats: TrainingStats) -> None:
        cfg = self.config
        if cfg.entropy_guard == "off" or stats.num_gradient_steps == 0:
            return
        if stats.entropy < cfg.entropy_threshold:
            self.low_entropy_updates += 1
        else:
            self.low_entropy_updates = 0
        if self.low_entropy_updates >= cfg.entropy_patience:
            message = (
                f"policy entropy {stats.entropy:.4f} nats < threshold {cfg.entropy_threshold} for "
                f"{self.low_entropy_updates} consecutive updates (patience {cfg.entropy_patience}) at update {self.updates_done}"
            )
            if cfg.entropy_guard == "warn":
                if not self.entropy_warned:
                    print(f"warning: {message}; training goes on (--entropy-guard stop ends such runs)", file=sys.stderr)
                    self.entropy_warned = True
                return
            if self.on_entropy_collapse is not None:
                self.on_entropy_collapse(self)
            raise EntropyCollapseError(message)

    # --- checkpointing -------------------------------------------------------
    def state_dict(self) -> dict:
        return {
            "model": self.actor_critic.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "sampler": self.sampler.state_dict(),
            "updates_done": self.updates_done,
            "low_entropy_updates": self.low_entropy_updates,
            "nonfinite_in_a_row": self.nonfinite_in_a_row,
            "lr_override": self.lr_override,
        }

    def load_state_dict(self, state: dict) -> None:
        self.actor_critic.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.sampler.load_state_dict(state["sampler"])
        self.updates_done = state["updates_done"]
        self.low_entropy_updates = state["low_entropy_updates"]
        self.nonfinite_in_a_row = state["nonfinite_in_a_row"]
        self.lr_override = state["lr_override"]
