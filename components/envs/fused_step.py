"""``NativeTransformedEnv``: a tensor-native env with its transforms, and a leaner
``step_and_maybe_reset``.

Why custom: on the tensor-native envs the env's own maths is a few tensor ops, and a
large part of a TorchRL ``step_and_maybe_reset`` is generic plumbing around them (shape and
spec checks, ``_step_proc_data``, the inverse-transform clone, the reset's key selections and
``_reset_check_done``); skipping them (and the reset kernels below) makes the env step 1.16-1.24x faster at 64 envs
(``benchmarks/profile_collect.py``). This subclass runs the same calls in the same order
(the native ``_step``, the transforms' ``_step``, ``step_mdp``, and on a done the native
``_reset``, the transforms' ``_reset`` and the merge of TorchRL's ``_update_during_reset``,
written for flat entries in ``_merge_reset``) without that plumbing; TorchRL's
``_complete_done`` runs only for envs that do not write their done entries whole themselves
(``NativeEnvBase`` does). On a partial reset, the bookkeeping transforms (``InitTracker``,
``StepCounter``, ``RewardSum``, ``TensorDictPrimer``) see a request that holds ``"_reset"``
alone, so each of their generic ``_reset`` methods reduces to one fresh tensor (the reset
mask, zeros or the primer's constant); ``LEAN_RESETS`` writes that tensor directly. It
returns the same tensordicts, value for value
(``tests/envs/test_fused_step.py``), to TorchRL's ``Collector``, the DQN loop and
evaluation alike.

It applies only where those checks are known to be no-ops: a ``NativeEnvBase`` under
transforms of the types in ``FUSED_TRANSFORMS`` (this project's and TorchRL's
``InitTracker``, ``StepCounter`` without a step limit, ``RewardSum`` and
``TensorDictPrimer``), none with inverse keys. Append any other transform and the env
takes TorchRL's path, unchanged; ``env.lean_step = False`` takes it always (a benchmark's or a
test's reference, or a check when in doubt).
"""
from __future__ import annotations

from typing import NamedTuple

import torch
from tensordict import TensorDictBase
from torchrl.envs import Compose, InitTracker, RewardSum, StepCounter, TensorDictPrimer, TransformedEnv
from torchrl.envs.utils import _update_during_reset

from components.envs.native import NativeEnvBase
from components.envs.obs_norm import RunningObsNorm
from components.envs.pomdp_transforms import Flicker, MaskVelocity
from components.envs.prev_action import PreviousActionReward

FUSED_TRANSFORMS = (MaskVelocity, Flicker, PreviousActionReward, RunningObsNorm, InitTracker, StepCounter, RewardSum, TensorDictPrimer)


# What each bookkeeping transform's ``_reset`` writes when the request holds ``"_reset"`` alone
# (the only request the lean path makes): its own code reads the previous value from the request,
# finds none, and falls back to a zero (or the reset mask, or the primer's constant).
def _init_tracker_reset(t: InitTracker, reset_mask: torch.Tensor, out: TensorDictBase) -> None:
    for init_key in t.init_keys:
        value = reset_mask.clone()
        out.set(init_key, value.unsqueeze(-1) if value.ndim == out.ndim else value)


def _step_counter_reset(t: StepCounter, reset_mask: torch.Tensor, out: TensorDictBase) -> None:
    for key in t.step_count_keys:
        out.set(key, torch.zeros_like(reset_mask, dtype=torch.int64))


def _reward_sum_reset(t: RewardSum, reset_mask: torch.Tensor, out: TensorDictBase) -> None:
    spec = t.parent.full_reward_spec  # cached by TorchRL after the first call
    for in_key, out_key in zip(t.in_keys, t.out_keys):
        out.set(out_key, spec[in_key].zero())


def _primer_reset(t: TensorDictPrimer, reset_mask: torch.Tensor, out: TensorDictBase) -> None:
    for key, spec in t.primers.items(True, True):
        shape = spec.shape if spec.shape[: out.ndim] == out.batch_size else (*out.batch_size, *spec.shape)
        out.set(key, torch.full(shape, t.default_value[key], device=spec.device, dtype=spec.dtype))


LEAN_RESETS = {InitTracker: _init_tracker_reset, StepCounter: _step_counter_reset, RewardSum: _reward_sum_reset, TensorDictPrimer: _primer_reset}


def _lean_resettable(t) -> bool:
    if type(t) not in LEAN_RESETS or len(t.reset_keys if not isinstance(t, TensorDictPrimer) else [t.reset_key]) != 1:
        return False
    if isinstance(t, TensorDictPrimer):  # a constant per key, on an expanded (batch-locked) spec
        return not t.single_default_value and all(isinstance(v, (int, float)) for v in t.default_value.values()) and t._validated
    return True


def _fusable(transform) -> bool:
    if type(transform) not in FUSED_TRANSFORMS or transform.in_keys_inv:
        return False
    if isinstance(transform, StepCounter) and transform.max_steps is not None:
        return False  # its truncation rewrites the done keys
    if isinstance(transform, TensorDictPrimer) and (transform.call_before_env_reset or transform.random):
        return False
    return True


def _merge_reset(reset: TensorDictBase, root: TensorDictBase, reset_keys: list) -> TensorDictBase:
    """TorchRL's ``_update_during_reset`` for the native envs' case: one root-level ``"_reset"``
    and flat entries. The same ``torch.where`` per entry (the reset rows from ``reset``, the
    others kept, an entry missing on one side read as 0), with the mask reshaped once per rank
    instead of ``TensorDict.where``'s per-entry expansion and pad tensor (~0.1 ms a step here).
    Anything else (nested entries, other reset keys, a full reset) goes to TorchRL's."""
    mask = root.get("_reset", None)
    if reset_keys != ["_reset"] or mask is None or bool(mask.all()):
        return _update_during_reset(reset, root, reset_keys)
    entries = {k: root._get_str(k, None) for k in root.keys()}
    entries.pop("_reset")
    fresh = {k: reset._get_str(k, None) for k in reset.keys() if k != "_reset"}
    if any(not isinstance(v, torch.Tensor) for v in (*entries.values(), *fresh.values())):
        return _update_during_reset(reset, root, reset_keys)
    del root["_reset"]
    mask = mask.reshape(*root.batch_size, -1).any(-1) if mask.ndim > root.ndim else mask.reshape(root.batch_size)
    views: dict = {}
    for key in entries.keys() | fresh.keys():
        old, new = entries.get(key), fresh.get(key)
        like = old if old is not None else new
        cond = views.get(like.ndim)
        if cond is None:
            cond = views[like.ndim] = mask.reshape(*mask.shape, *(1,) * (like.ndim - mask.ndim))
        zero = None if old is not None and new is not None else like.new_zeros(())
        value = torch.where(cond, new if new is not None else zero, old if old is not None else zero)
        root._set_str(key, value, inplace=False, validated=True, non_blocking=False)
    return root


class _FusedCheck(NamedTuple):
    """What ``NativeTransformedEnv.fused`` found for one transform chain (``chain``: the transforms' ids)."""

    chain: tuple
    ok: bool  # the lean step applies
    # the base env writes every done entry at its spec's shape itself: then TorchRL's
    # _complete_done is a no-op (it fills missing done keys, reshapes odd ones) and the lean
    # step skips it. True for NativeEnvBase's own _step/_reset.
    done_complete: bool


class NativeTransformedEnv(TransformedEnv):
    """``TransformedEnv`` over a ``NativeEnvBase``; ``fused`` says whether the lean path is on."""

    lean_step: bool = True  # False: always TorchRL's own step_and_maybe_reset

    @property
    def fused(self) -> bool:
        if not self.lean_step:
            return False
        transforms = tuple(self.transform) if isinstance(self.transform, Compose) else (self.transform,)
        key = tuple(id(t) for t in transforms)
        cached = self.__dict__.get("_fused_cache")
        if cached is None or cached.chain != key:  # the chain changed (a transform appended): check again
            ok = isinstance(self.base_env, NativeEnvBase) and not self.run_type_checks and all(_fusable(t) for t in transforms)
            cls = type(self.base_env)
            done_complete = cls._step is NativeEnvBase._step and cls._reset is NativeEnvBase._reset
            self.__dict__["_fused_cache"] = cached = _FusedCheck(key, ok, done_complete)
        return cached.ok

    def step_and_maybe_reset(self, tensordict: TensorDictBase) -> tuple[TensorDictBase, TensorDictBase]:
        if not self.fused or tensordict.device != self.device or "_step" in tensordict.keys():
            return super().step_and_maybe_reset(tensordict)
        base, transform = self.base_env, self.transform
        # TransformedEnv._step: the env's output, then whatever the policy wrote to "next"
        # (the recurrent state) where the env wrote nothing, then the transforms
        preset = tensordict.get("next", None)
        next_td = base._step(tensordict)
        if preset is not None:
            next_td.update(preset.exclude(*next_td.keys(True, True)))
        done_complete = self.__dict__["_fused_cache"].done_complete  # filled by the ``fused`` check above
        if not done_complete:
            base._complete_done(base.full_done_spec, next_td)
        next_td = transform._step(tensordict, next_td)
        tensordict.set("next", next_td)
        root = self._step_mdp(tensordict)
        # maybe_reset: a partial reset of the done rows only, merged as TorchRL merges it
        done = root.get("done")
        if done.any():
            root.set("_reset", done.clone())
            request = transform._reset_env_preprocess(root.select(*self.reset_keys))
            reset = base._reset(request)
            if not done_complete:
                base._complete_done(base.full_done_spec, reset)
            reset = self._transforms_reset(request, reset)
            root = _merge_reset(reset, root, self.reset_keys)
        return tensordict, root

    def _transforms_reset(self, request: TensorDictBase, reset: TensorDictBase) -> TensorDictBase:
        """``Compose._reset``, with ``LEAN_RESETS`` in place of the bookkeeping transforms' own."""
        mask = request.get("_reset")
        for t in (self.transform if isinstance(self.transform, Compose) else (self.transform,)):
            if _lean_resettable(t) and request.keys() == {"_reset"}:
                LEAN_RESETS[type(t)](t, mask, reset)
            else:
                reset = t._reset(request, reset)
        return reset
