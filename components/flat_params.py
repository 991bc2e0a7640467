"""``flatten_parameters``: a module's parameters and gradients as views into one buffer each.

Why: the global-norm clip and Adam otherwise launch one small kernel (or one
Python-level loop step) per parameter tensor. For the small networks RL uses
on a CPU that bookkeeping costs as much as the maths (~0.2 ms per DQN update
here); over one contiguous buffer each is a single call.

The parameters stay the same ``nn.Parameter`` objects (modules, TorchRL losses
and target updaters that hold them keep working); only their storage moves.
Backpropagation accumulates in place into the preset ``.grad`` views, so the
flat gradient must be zeroed with ``flat.grad.zero_()``, never with
``zero_grad(set_to_none=True)``, which would detach the views.
"""
from __future__ import annotations

import torch
import torch.optim.optimizer as _optim


def flatten_parameters(params: list[torch.nn.Parameter]) -> torch.nn.Parameter:
    """Moves ``params`` into one flat leaf (returned, with ``.grad`` preset) to hand to the optimizer."""
    if not params:
        raise ValueError("flatten_parameters needs at least one parameter")
    device, dtype = params[0].device, params[0].dtype
    if any(p.device != device or p.dtype != dtype for p in params):
        raise ValueError("flatten_parameters needs parameters of one device and dtype")
    flat = torch.nn.Parameter(torch.cat([p.detach().reshape(-1) for p in params]))
    flat.grad = torch.zeros_like(flat)
    offset = 0
    for p in params:
        n = p.numel()
        p.data = flat.data[offset : offset + n].view_as(p)
        p.grad = flat.grad[offset : offset + n].view_as(p)
        offset += n
    return flat


def clip_flat_grad_norm_(flat: torch.nn.Parameter, max_norm: float) -> torch.Tensor:
    """``torch.nn.utils.clip_grad_norm_`` on the one flat gradient, without its per-call grouping
    (~0.1 ms on CPU): same formula, scale by min(1, max_norm / (norm + 1e-6)). Returns the norm."""
    norm = torch.linalg.vector_norm(flat.grad)
    # on the CPU reading the norm costs nothing: a norm clearly below max_norm scales by exactly 1,
    # so the three scale kernels are skipped (NaN / inf compare False and take the tensor path);
    # on a GPU the read would synchronise, so the scale stays on the device
    if flat.device.type == "cpu" and float(norm) * (1 + 1e-5) + 1e-6 < max_norm:
        return norm
    flat.grad.mul_((max_norm / (norm + 1e-6)).clamp_(max=1.0))
    return norm


#: Adam's step inside torch's profiler/hook wrapper (the wrapper Optimizer.__init__ puts on a class)
_ADAM_STEP = torch.optim.Optimizer.profile_hook_step(getattr(torch.optim.Adam.step, "__wrapped__", torch.optim.Adam.step))


class FlatAdam(torch.optim.Adam):
    """``torch.optim.Adam(fused=True)`` over one flat parameter, whose ``step`` calls the fused kernel itself.

    Why: ``Adam.step`` wraps a ~8 us kernel (CPU) in ~50 us of Python (the profiler record and
    hook dispatch torch adds to every optimizer's ``step``, grouping tensors by device and dtype,
    per-group option checks) that one flat parameter with plain Adam options does not need; DQN
    takes one step per env step. Same state and ``state_dict`` as ``Adam`` (checkpoints are
    interchangeable), same kernel and arguments: the learning rate is read from the param group
    every step, so schedules that set it keep working. The first step (state initialisation), a
    closure, registered step hooks and any option the shortcut does not cover go through
    ``Adam.step`` with torch's wrapper. tests/test_flat_params.py pins parameters and state equal
    to ``Adam(fused=True)``.
    """

    def __init__(self, flat: torch.nn.Parameter, lr: float, eps: float):
        super().__init__([flat], lr=lr, eps=eps, fused=flat.device.type in ("cpu", "cuda"))
        self._flat = flat

    def step(self, closure=None):
        group, state = self.param_groups[0], self.state.get(self._flat)
        plain = group["fused"] and not (group["amsgrad"] or group["maximize"] or group["weight_decay"] or group["capturable"]
                                         or group["differentiable"] or group["decoupled_weight_decay"])
        hooks = (self._optimizer_step_pre_hooks or self._optimizer_step_post_hooks
                 or _optim._global_optimizer_pre_hooks or _optim._global_optimizer_post_hooks)
        if closure is not None or not state or not plain or hooks or self._flat.grad is None:
            return _ADAM_STEP(self, closure)
        beta1, beta2 = group["betas"]
        state["step"].add_(1)
        torch._fused_adam_([self._flat], [self._flat.grad], [state["exp_avg"]], [state["exp_avg_sq"]], [], [state["step"]],
                           amsgrad=False, lr=group["lr"], beta1=beta1, beta2=beta2, weight_decay=0.0, eps=group["eps"],
                           maximize=False, grad_scale=None, found_inf=None)
        return None

    # torch wraps an optimizer class's ``step`` in its profiler/hook wrapper unless it is marked
    # hooked; the slow path above calls Adam's step through that wrapper itself
    step.hooked = True


def fused_adam(flat: torch.nn.Parameter, lr: float, eps: float) -> torch.optim.Adam:
    """Adam over the flat parameter: ``FlatAdam``, the fused kernel where torch has one (CPU, CUDA)."""
    return FlatAdam(flat, lr, eps)
