"""``NativeTransformedEnv``: a tensor-native env with its transforms, and a leaner
``step_and_maybe_reset``.

Why custom: on the tensor-native envs the env's own maths is a few tensor ops, and a
large part of a TorchRL ``step_and_maybe_reset`` is generic plumbing around them (shape and
spec checks, ``_step_proc_data``, the inverse-transform clone, the reset's key selections and
``_reset_check_done``); skipping them, with the transform kernels below, makes the env step ~1.8x faster at 64 envs
(``benchmarks/profile_collect.py``). This subclass runs the same calls in the same order
(the native ``_step``, the transforms' ``_step``, ``step_mdp``, and on a done the native
``_reset``, the transforms' ``_reset`` and the merge of TorchRL's ``_update_during_reset``,
written for flat entries in ``_merge_reset``) without that plumbing; TorchRL's
``_complete_done`` runs only for envs that do not write their done entries whole themselves
(``NativeEnvBase`` does). The bookkeeping transforms (``InitTracker``,
``StepCounter``, ``RewardSum``, ``TensorDictPrimer``) each write one fresh tensor a step (a
zero, a count + 1, a sum, the carried state), and on a partial reset they see a request that
holds ``"_reset"`` alone, so each of their generic ``_reset`` methods reduces to one fresh
tensor too (the reset mask, zeros or the primer's constant); ``LEAN_KERNELS`` writes those
tensors directly, with the keys and specs their own methods look up on every call read once. It
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
from tensordict import TensorDict, TensorDictBase
from torchrl.envs import Compose, InitTracker, RewardSum, StepCounter, TensorDictPrimer, Transform, TransformedEnv
from torchrl.envs.utils import _replace_last, _update_during_reset

from .native import NativeEnvBase
from .obs_norm import RunningObsNorm
from .pomdp_transforms import Flicker, MaskVelocity
from .prev_action import PreviousActionReward
from ..tensordict_speedups import set_unchecked, tensordict_unchecked

FUSED_TRANSFORMS = (MaskVelocity, Flicker, PreviousActionReward, RunningObsNorm, InitTracker, StepCounter, RewardSum, TensorDictPrimer)


# The bookkeeping transforms' ``_step`` and ``_reset`` as plain writes. Each builder reads what
# its transform's own code looks up on every call (keys, specs, the primer's constants) once,
# when the env's chain is checked, and returns (step, reset) kernels:
# - step: what the transform's ``_step`` writes (a key already in the step's output is left alone);
# - reset: what its ``_reset`` writes when the request holds ``"_reset"`` alone (the only request
#   the lean path makes): its own code reads the previous value from the request, finds none, and
#   falls back to a zero (or the reset mask, or the primer's constant).
# Every value is a fresh tensor shaped from an entry of the same step or from the env's batch
# size, on the env's device, so the writes skip tensordict's validation. A kernel is ``None``
# where the lean form does not apply; the transform's own method runs there.
def _init_tracker_kernels(t: InitTracker, env, done_complete: bool):
    keys = [(k, _replace_last(k, "done")) for k in t.init_keys]

    def step(tensordict: TensorDictBase, next_td: TensorDictBase) -> None:
        for init_key, done_key in keys:
            if next_td.get(init_key, None) is None:  # False after a step, at the done entry's (spec's) shape
                set_unchecked(next_td, init_key, torch.zeros_like(next_td.get(done_key)))

    def reset(mask: torch.Tensor, out: TensorDictBase) -> None:
        for init_key, _ in keys:
            value = mask.clone()
            set_unchecked(out, init_key, value.unsqueeze(-1) if value.ndim == out.ndim else value)

    return (step if done_complete else None), reset


def _step_counter_kernels(t: StepCounter, env, done_complete: bool):
    keys = list(t.step_count_keys)

    def step(tensordict: TensorDictBase, next_td: TensorDictBase) -> None:
        for key in keys:  # no max_steps (``_fusable``): no truncation to write
            set_unchecked(next_td, key, tensordict.get(key) + 1)

    def reset(mask: torch.Tensor, out: TensorDictBase) -> None:
        for key in keys:
            set_unchecked(out, key, torch.zeros_like(mask, dtype=torch.int64))

    return step, reset


def _reward_sum_kernels(t: RewardSum, env, done_complete: bool):
    pairs = list(zip(t.in_keys, t.out_keys))
    spec = t.parent.full_reward_spec  # the reward as this transform sees it
    zeros = [(out_key, spec[in_key].shape, spec[in_key].dtype) for in_key, out_key in pairs]

    def step(tensordict: TensorDictBase, next_td: TensorDictBase) -> None:
        for in_key, out_key in pairs:
            reward = next_td.get(in_key, None)
            if reward is None:
                if not t.missing_tolerance:
                    raise KeyError(f"'{in_key}' not found in tensordict {tensordict}")
                continue
            set_unchecked(next_td, out_key, tensordict.get(out_key, 0.0) + reward)

    def reset(mask: torch.Tensor, out: TensorDictBase) -> None:
        for out_key, shape, dtype in zeros:  # the reward spec's zero
            set_unchecked(out, out_key, torch.zeros(shape, dtype=dtype, device=mask.device))

    return step, reset


def _primer_kernels(t: TensorDictPrimer, env, done_complete: bool):
    keys = list(t.primers.keys(True, True))

    def step(tensordict: TensorDictBase, next_td: TensorDictBase) -> None:
        for key in keys:
            if next_td.get(key, None) is None:  # the policy wrote no next value: carry the current one
                next_td.set(key, tensordict.get(key))

    # the lean reset needs a constant per key on an expanded (batch-locked) spec, which TorchRL
    # sets on the primer's first reset (``_validated``); until then the chain is checked again
    # on every step (``_FusedCheck.provisional``)
    constant = not t.single_default_value and all(isinstance(v, (int, float)) for v in t.default_value.values())
    if not constant or not t._validated:
        return step, None
    batch = env.batch_size
    fills = []
    for key, spec in t.primers.items(True, True):
        shape = spec.shape if spec.shape[: len(batch)] == batch else (*batch, *spec.shape)
        fills.append((key, shape, t.default_value[key], spec.dtype, spec.device))

    def reset(mask: torch.Tensor, out: TensorDictBase) -> None:
        for key, shape, value, dtype, device in fills:
            # a checked write: the spec's device may differ from the env's, and ``set`` casts it
            out.set(key, torch.full(shape, value, device=device, dtype=dtype))

    return step, reset


LEAN_KERNELS = {InitTracker: _init_tracker_kernels, StepCounter: _step_counter_kernels, RewardSum: _reward_sum_kernels, TensorDictPrimer: _primer_kernels}


def _lean_kernels(t, env, done_complete: bool):
    """(step, reset) kernels for ``t`` (``None`` each where its own method must run)."""
    build = LEAN_KERNELS.get(type(t))
    if build is None:
        return None, None
    step, reset = build(t, env, done_complete)
    if not isinstance(t, TensorDictPrimer) and len(t.reset_keys) != 1:
        reset = None
    return step, reset


def _keeps_reset_request(t) -> bool:
    """Whether ``t._reset_env_preprocess`` returns the reset request as it is."""
    if isinstance(t, TensorDictPrimer):
        return not t.call_before_env_reset
    return type(t)._reset_env_preprocess is Transform._reset_env_preprocess and not t.enable_inv_on_reset


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


def _fill_missing(next_td: TensorDictBase, preset: TensorDictBase) -> None:
    """``next_td.update(preset.exclude(*next_td.keys(True, True)))`` (what ``TransformedEnv._step``
    does with the entries the policy wrote to ``"next"``, the recurrent state), one unchecked
    write per flat entry: both tensordicts have the env's batch size and device."""
    plain = type(preset) is TensorDict and type(next_td) is TensorDict and preset.batch_size == next_td.batch_size
    entries = [(key, preset._get_str(key, None)) for key in preset.keys()] if plain else []
    if not plain or not all(isinstance(value, torch.Tensor) for _, value in entries):  # nested entries: tensordict's update
        next_td.update(preset.exclude(*next_td.keys(True, True)))
        return
    for key, value in entries:
        if next_td._get_str(key, None) is None:
            next_td._set_str(key, value, inplace=False, validated=True)


class _FusedCheck(NamedTuple):
    """What ``NativeTransformedEnv.fused`` found for one transform chain (``chain``: the transforms' ids)."""

    chain: tuple
    ok: bool  # the lean step applies
    # the base env writes every done entry at its spec's shape itself: then TorchRL's
    # _complete_done is a no-op (it fills missing done keys, reshapes odd ones) and the lean
    # step skips it. True for NativeEnvBase's own _step/_reset.
    done_complete: bool
    # per transform: (transform, lean step kernel or None, lean reset kernel or None)
    kernels: tuple
    # one root "_reset" and no transform rewrites the reset request: the request is the mask alone
    plain_request: bool
    # a kernel waits for state TorchRL sets on a first call (a primer's validation): check again
    provisional: bool


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
        # the chain changed (a transform appended) or a kernel was waiting: check again
        if cached is None or cached.chain != key or cached.provisional:
            ok = isinstance(self.base_env, NativeEnvBase) and not self.run_type_checks and all(_fusable(t) for t in transforms)
            cls = type(self.base_env)
            done_complete = cls._step is NativeEnvBase._step and cls._reset is NativeEnvBase._reset
            kernels = tuple((t, *_lean_kernels(t, self, done_complete)) for t in transforms) if ok else ()
            provisional = any(isinstance(t, TensorDictPrimer) and not t._validated for t, _, _ in kernels)
            plain_request = ok and list(self.reset_keys) == ["_reset"] and all(_keeps_reset_request(t) for t in transforms)
            self.__dict__["_fused_cache"] = cached = _FusedCheck(key, ok, done_complete, kernels, plain_request, provisional)
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
            _fill_missing(next_td, preset)
        cache = self.__dict__["_fused_cache"]  # filled by the ``fused`` check above
        done_complete = cache.done_complete
        if not done_complete:
            base._complete_done(base.full_done_spec, next_td)
        next_td = self._transforms_step(tensordict, next_td)
        tensordict.set("next", next_td)
        root = self._step_mdp(tensordict)
        # maybe_reset: a partial reset of the done rows only, merged as TorchRL merges it
        done = root.get("done")
        if done.any():
            if cache.plain_request:  # what the select and the identity preprocessing below give
                mask = done.clone()
                set_unchecked(root, "_reset", mask)
                request = tensordict_unchecked({"_reset": mask}, root.batch_size, root.device)
            else:
                root.set("_reset", done.clone())
                request = transform._reset_env_preprocess(root.select(*self.reset_keys))
            reset = base._reset(request)
            if not done_complete:
                base._complete_done(base.full_done_spec, reset)
            reset = self._transforms_reset(request, reset)
            root = _merge_reset(reset, root, self.reset_keys)
        return tensordict, root

    def _transforms_step(self, tensordict: TensorDictBase, next_td: TensorDictBase) -> TensorDictBase:
        """``Compose._step``, with the lean kernels in place of the bookkeeping transforms' own."""
        for t, step, _ in self.__dict__["_fused_cache"].kernels:
            if step is None:
                next_td = t._step(tensordict, next_td)
            else:
                step(tensordict, next_td)
        return next_td

    def _transforms_reset(self, request: TensorDictBase, reset: TensorDictBase) -> TensorDictBase:
        """``Compose._reset``, with the lean kernels in place of the bookkeeping transforms' own."""
        mask = request.get("_reset")
        alone = request.keys() == {"_reset"}
        for t, _, lean in self.__dict__["_fused_cache"].kernels:
            if lean is not None and alone:
                lean(mask, reset)
            else:
                reset = t._reset(request, reset)
        return reset
