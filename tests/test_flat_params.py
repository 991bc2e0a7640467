"""flatten_parameters / clip_flat_grad_norm_: same maths as per-tensor parameters, one buffer."""
import copy

import pytest
import torch

from components.flat_params import clip_flat_grad_norm_, flatten_parameters


def _net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


@pytest.mark.parametrize("max_norm", [1e-3, 1e3])  # clipping active / inactive
def test_flat_training_step_equals_per_tensor_step(max_norm):
    ref, net = _net(), _net()
    ref_params = list(ref.parameters())
    ref_opt = torch.optim.Adam(ref_params, lr=1e-2)
    flat = flatten_parameters(list(net.parameters()))
    opt = torch.optim.Adam([flat], lr=1e-2)
    x = torch.randn(16, 3)
    for _ in range(3):
        ref_opt.zero_grad()
        ref(x).pow(2).mean().backward()
        ref_norm = torch.nn.utils.clip_grad_norm_(ref_params, max_norm)
        ref_opt.step()
        flat.grad.zero_()
        net(x).pow(2).mean().backward()
        norm = clip_flat_grad_norm_(flat, max_norm)
        opt.step()
        torch.testing.assert_close(norm, ref_norm)
        for a, b in zip(ref.parameters(), net.parameters()):
            torch.testing.assert_close(a, b)  # the module sees the optimizer's in-place update


def test_parameters_keep_identity_and_values():
    net = _net()
    before = [p for p in net.parameters()]
    values = copy.deepcopy([p.detach().clone() for p in before])
    flat = flatten_parameters(before)
    assert [p for p in net.parameters()] == before and flat.numel() == sum(p.numel() for p in before)
    for p, v in zip(net.parameters(), values):
        assert torch.equal(p, v) and p.untyped_storage().data_ptr() == flat.untyped_storage().data_ptr()
