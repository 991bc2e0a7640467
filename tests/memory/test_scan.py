"""The shared reset-aware scan: the parallel form equals the step loop that defines it."""
import pytest
import torch

from torchrl_memory.memory import linear_scan, scan_loop

RTOL = 1e-5  # max |parallel - loop| over max |loop|, per tensor


def _rel(x: torch.Tensor, ref: torch.Tensor) -> float:
    return float((x - ref).abs().max() / ref.abs().max().clamp_min(1e-30))


def _resets(kind: str, n: int, T: int) -> torch.Tensor:
    if kind == "none":
        return torch.zeros(n, T, dtype=torch.bool)
    if kind == "first":
        r = torch.zeros(n, T, dtype=torch.bool)
        r[:, 0] = True
        return r
    return torch.rand(n, T) < 0.1  # "random"


def _inputs(T: int, dtype: torch.dtype, n: int = 3, f: int = 5, near_one: bool = False):
    mod = 1 - (1e-7 if near_one else 0.5) * torch.rand(n, T, f)
    a = torch.polar(mod, 6.28 * torch.rand(n, T, f)) if dtype.is_complex else mod
    b, h0 = torch.randn(n, T, f, dtype=dtype), torch.randn(n, f, dtype=dtype)
    return a.requires_grad_(), b.requires_grad_(), h0.requires_grad_()


def test_loop_is_the_recurrence_with_resets():
    a = torch.tensor([[0.5, 0.5, 0.5]]).unsqueeze(-1)
    b = torch.tensor([[1.0, 2.0, 3.0]]).unsqueeze(-1)
    h0 = torch.tensor([[4.0]])
    reset = torch.tensor([[False, True, False]])
    # h0' = 0.5*4 + 1 = 3; reset: h1 = 2; h2 = 0.5*2 + 3 = 4
    assert scan_loop(a, b, h0, reset).flatten().tolist() == [3.0, 2.0, 4.0]
    assert scan_loop(a, b, h0).flatten().tolist() == [3.0, 3.5, 4.75]


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64])
@pytest.mark.parametrize("resets", ["random", "first", "none"])
@pytest.mark.parametrize("T", [1, 16, 17, 1024])
def test_parallel_scan_equals_loop_outputs_and_gradients(T, resets, dtype):
    a, b, h0 = _inputs(T, dtype)
    reset = _resets(resets, 3, T)
    w = torch.randn(3, T, 5, dtype=dtype)  # a generic real loss of every state
    fast = linear_scan(a, b, h0, reset)
    ref = scan_loop(a, b, h0, reset)
    assert _rel(fast, ref) <= RTOL
    g_fast = torch.autograd.grad((fast * w).real.sum(), (a, b, h0))
    g_ref = torch.autograd.grad((ref * w).real.sum(), (a, b, h0))
    for gf, gr in zip(g_fast, g_ref):
        assert _rel(gf, gr) <= RTOL


def test_reset_cuts_the_state_and_its_gradient():
    a, b, h0 = _inputs(16, torch.float32)
    reset = torch.zeros(3, 16, dtype=torch.bool)
    reset[:, 5] = True
    h = linear_scan(a, b, h0, reset)
    assert torch.equal(h[:, 5], b[:, 5])  # from zeros: h_5 = b_5
    g_h0, g_b = torch.autograd.grad(h[:, 5:].sum(), (h0, b))
    assert torch.all(g_h0 == 0) and torch.all(g_b[:, :5] == 0)


def test_no_start_state_is_zeros():
    a, b, h0 = _inputs(16, torch.float32)
    assert torch.equal(linear_scan(a, b), linear_scan(a, b, torch.zeros_like(h0)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64])
def test_decays_near_one_stay_finite_at_4096(dtype):
    a, b, h0 = _inputs(4096, dtype, near_one=True)
    with torch.no_grad():
        a[:, :, 0] = 1.0  # exactly 1 too: the state sums its inputs
    reset = torch.rand(3, 4096) < 0.001
    h = linear_scan(a, b, h0, reset)
    grads = torch.autograd.grad(h.real.sum(), (a, b, h0))
    assert torch.isfinite(torch.view_as_real(h) if h.is_complex() else h).all()
    assert all(torch.isfinite(torch.view_as_real(g) if g.is_complex() else g).all() for g in grads)
    # against the recurrence in double precision: over 4096 near-undamped steps the float32
    # loop itself drifts ~2e-5 (a long running sum); the tree-shaped scan stays within 1e-6
    wide = torch.complex128 if dtype.is_complex else torch.float64
    exact = scan_loop(a.detach().to(wide), b.detach().to(wide), h0.detach().to(wide), reset)
    assert _rel(h.detach().to(wide), exact) <= RTOL


def test_broadcast_decay_shared_by_every_step():
    _, b, h0 = _inputs(16, torch.float32)
    a = torch.rand(5)
    reset = _resets("random", 3, 16)
    assert _rel(linear_scan(a, b, h0, reset), scan_loop(a.expand(3, 16, 5), b, h0, reset)) <= RTOL
