"""A scoped workaround for a hot-path cost in tensordict 0.14.

``TensorDict.from_any`` (called by every ``TensorDictModule`` output write)
runs ``importlib.util.find_spec("pandas")`` each time; without pandas that is a
full ``sys.path`` scan, ~0.1 ms per call, several calls per env step. We give
``tensordict.base`` (and only it) a memoised ``find_spec``. The answer can only
go stale if pandas is installed into the running process.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import types

import tensordict.base as _td_base


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
