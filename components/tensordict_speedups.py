"""Scoped workarounds for hot-path costs in tensordict 0.14.

``TensorDict.from_any`` (called by every ``TensorDictModule`` output write)
runs ``importlib.util.find_spec("pandas")`` each time; without pandas that is a
full ``sys.path`` scan, ~0.1 ms per call, several calls per env step. We give
``tensordict.base`` (and only it) a memoised ``find_spec``. The answer can only
go stale if pandas is installed into the running process.

``set_unchecked`` and ``tensordict_unchecked`` skip tensordict's per-write validation where
the caller built the values itself (the fused rollout policy, the tensor-native envs).
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import types

import tensordict.base as _td_base
import torch
from tensordict import TensorDict, TensorDictBase


@functools.lru_cache(maxsize=None)
def _cached_find_spec(name: str, package: str | None = None):
    return importlib.util.find_spec(name, package)


def install() -> None:
    if getattr(_td_base.importlib, "_memoised_find_spec", False):
        return
    _td_base.importlib = types.SimpleNamespace(
        util=types.SimpleNamespace(find_spec=_cached_find_spec),
        import_module=importlib.import_module,
        _memoised_find_spec=True,
    )


def set_unchecked(td: TensorDictBase, key: str | tuple, value: torch.Tensor) -> None:
    """``td.set(key, value)`` without tensordict's per-write validation, for hot loops whose
    values are already the right tensors: shaped ``[*td.batch_size, ...]`` and on ``td``'s
    device (``set`` would check the shape and cast the device, ~3 us a write on CPU, several
    writes a collection step). Anything but a plain ``TensorDict`` takes ``set``."""
    if type(td) is not TensorDict:
        td.set(key, value)
    elif isinstance(key, str):
        td._set_str(key, value, inplace=False, validated=True)
    else:
        td._set_tuple(key, value, inplace=False, validated=True)


def tensordict_unchecked(entries: dict, batch_size: torch.Size, device: torch.device | None) -> TensorDict:
    """``TensorDict(entries, batch_size, device)`` without the per-entry validation, for an env's
    ``_step``/``_reset`` whose entries it built itself with the batch shape on ``device``."""
    return TensorDict._new_unsafe(entries, batch_size=batch_size, device=device)
