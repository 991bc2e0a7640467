"""The unchecked tensordict writes are drop-ins for ``set`` and ``TensorDict(...)`` on the
values their callers build (batch-shaped, on the tensordict's device)."""
import torch
from tensordict import LazyStackedTensorDict, TensorDict

from torchrl_memory.tensordict_speedups import set_unchecked, tensordict_unchecked


def _entries(n: int) -> dict:
    return {"observation": torch.randn(n, 3), "done": torch.zeros(n, 1, dtype=torch.bool), "reward": torch.randn(n, 1)}


def test_set_unchecked_writes_what_set_writes_for_flat_and_nested_keys():
    n = 4
    checked, unchecked = TensorDict(_entries(n), [n]), TensorDict(_entries(n), [n])
    unchecked.update(checked)  # the same starting values
    values = {"action": torch.randint(0, 2, (n,)), ("next", "state_h"): torch.randn(n, 8), "observation": torch.randn(n, 3)}
    for key, value in values.items():
        checked.set(key, value)
        set_unchecked(unchecked, key, value)
    assert set(checked.keys(True, True)) == set(unchecked.keys(True, True))
    assert (checked == unchecked).all()
    assert unchecked["next"].batch_size == checked["next"].batch_size == torch.Size([n])
    assert unchecked.get("action") is values["action"]  # stored as is, no copy


def test_set_unchecked_takes_set_on_other_tensordict_types():
    n = 3
    lazy = LazyStackedTensorDict.lazy_stack([TensorDict(_entries(n), [n]) for _ in range(2)], 0)
    value = torch.randn(2, n, 5)
    set_unchecked(lazy, "extra", value)
    assert torch.equal(lazy.get("extra"), value)


def test_tensordict_unchecked_equals_the_checked_constructor():
    n = 5
    entries = _entries(n)
    checked = TensorDict(entries, batch_size=[n], device="cpu")
    unchecked = tensordict_unchecked(entries, torch.Size([n]), torch.device("cpu"))
    assert type(unchecked) is TensorDict
    assert unchecked.batch_size == checked.batch_size and unchecked.device == checked.device
    assert (unchecked == checked).all()
