"""flatten_parameters / clip_flat_grad_norm_: same maths as per-tensor parameters, one buffer."""
import copy

import pytest
import torch

from torchrl_memory.flat_params import clip_flat_grad_norm_, flatten_parameters


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


def test_flat_adam_equals_fused_adam_and_shares_its_state_dict():
    """FlatAdam's direct kernel call: bit-equal parameters and moments to Adam(fused=True), with the
    learning rate changed between steps (as the PPO schedule does), and checkpoints interchangeable."""
    from torchrl_memory.flat_params import FlatAdam

    torch.manual_seed(0)
    ref = torch.nn.Parameter(torch.randn(50))
    ours = torch.nn.Parameter(ref.detach().clone())
    ref_opt, opt = torch.optim.Adam([ref], lr=1e-2, eps=1e-5, fused=True), FlatAdam(ours, lr=1e-2, eps=1e-5)
    for i in range(5):
        g = torch.randn(50)
        ref.grad, ours.grad = g.clone(), g.clone()
        for o in (ref_opt, opt):
            o.param_groups[0]["lr"] = 1e-2 / (i + 1)
        ref_opt.step()
        opt.step()
        assert torch.equal(ref, ours)
    for k in ("step", "exp_avg", "exp_avg_sq"):
        assert torch.equal(ref_opt.state[ref][k], opt.state[ours][k])
    # a FlatAdam state loads into Adam and the other way round, and they keep stepping alike
    restored = torch.nn.Parameter(ours.detach().clone())
    back = torch.optim.Adam([restored], lr=1e-2, eps=1e-5, fused=True)
    back.load_state_dict(copy.deepcopy(opt.state_dict()))  # as through torch.save / torch.load
    restored.grad, ours.grad = torch.ones(50), torch.ones(50)
    back.step()
    opt.step()
    assert torch.equal(restored, ours)


def test_flat_adam_takes_adams_own_step_only_to_initialise(monkeypatch):
    from torchrl_memory import flat_params
    from torchrl_memory.flat_params import FlatAdam

    calls = []
    adam_step = flat_params._ADAM_STEP
    monkeypatch.setattr(flat_params, "_ADAM_STEP", lambda self, closure=None: calls.append(1) or adam_step(self, closure))
    flat = torch.nn.Parameter(torch.zeros(4))
    opt = FlatAdam(flat, lr=1e-3, eps=1e-8)
    for _ in range(3):
        flat.grad = torch.ones(4)
        opt.step()
    assert len(calls) == 1 and int(opt.state[flat]["step"]) == 3


def test_flat_adam_runs_registered_step_hooks():
    from torchrl_memory.flat_params import FlatAdam

    flat = torch.nn.Parameter(torch.zeros(4))
    opt = FlatAdam(flat, lr=1e-3, eps=1e-8)
    seen = []
    opt.register_step_pre_hook(lambda o, args, kwargs: seen.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append("post"))
    for _ in range(2):
        flat.grad = torch.ones(4)
        opt.step()
    assert seen == ["pre", "post"] * 2 and int(opt.state[flat]["step"]) == 2
