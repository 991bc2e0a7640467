"""Every parallel-scan memory model: the scan equals its step loop, sequential steps equal the
recurrent window, the primer matches the state written, and TorchRL's mode switch applies."""
import pytest
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule, TensorDictSequential
from torchrl.envs import InitTracker, TransformedEnv
from torchrl.modules import set_recurrent_mode

from torchrl_memory import CartPoleEnv
from torchrl_memory.memory import MEMORY_MODELS

NAMES = sorted(MEMORY_MODELS)
F_IN, H = 6, 16
RTOL = 1e-5  # max |x - ref| over max |ref|, per tensor


def _rel(x: torch.Tensor, ref: torch.Tensor) -> float:
    return float((x - ref).abs().max() / ref.abs().max().clamp_min(1e-30))


def _model(name, **kw):
    return MEMORY_MODELS[name](F_IN, H, in_key="obs", out_key="embed", **kw)


def _window(model, n: int, T: int, resets: str, dtype=torch.float32) -> TensorDict:
    is_init = torch.zeros(n, T, 1, dtype=torch.bool)
    if resets == "random":
        is_init = torch.rand(n, T, 1) < 0.1
    elif resets == "first":
        is_init[:, 0] = True
    return TensorDict(
        {
            "obs": torch.randn(n, T, F_IN, dtype=dtype),
            "is_init": is_init,
            "recurrent_state": torch.randn(n, T, *model.state_shape, dtype=dtype),
        },
        [n, T],
    )


def _recurrent(model, td, scan):
    model.scan_impl = scan
    with set_recurrent_mode(True):
        return model(td.clone())


@pytest.mark.parametrize("resets", ["random", "first", "none"])
@pytest.mark.parametrize("T", [1, 16, 1024])
@pytest.mark.parametrize("name", NAMES)
def test_parallel_scan_equals_step_loop_outputs_and_gradients(name, T, resets):
    model = _model(name)
    td = _window(model, 3, T, resets)
    td["obs"].requires_grad_(True)
    leaves = [td["obs"], *model.parameters()]
    grads = {}
    for scan in ("parallel", "loop"):
        out = _recurrent(model, td, scan)
        w = torch.ones_like(out["embed"]).uniform_(-1, 1, generator=torch.Generator().manual_seed(1))
        loss = (out["embed"] * w).sum() + out["next", "recurrent_state"].sum()
        grads[scan] = (out, torch.autograd.grad(loss, leaves, allow_unused=True))
    (fast, g_fast), (ref, g_ref) = grads["parallel"], grads["loop"]
    assert _rel(fast["embed"], ref["embed"]) <= RTOL
    assert _rel(fast["next", "recurrent_state"], ref["next", "recurrent_state"]) <= RTOL
    for gf, gr in zip(g_fast, g_ref):
        if gr is not None and gr.abs().max() > 0:
            assert _rel(gf, gr) <= RTOL


def _slowest_decays(model, name):
    """Decays as close to 1 as each model's parametrisation reaches."""
    with torch.no_grad():
        if name == "mingru":  # a = sigmoid(-gate): gate bias far negative
            model.to_hidden_and_gate.bias[H:] = -30.0
        elif name == "ffm":  # alpha at its clamp, -1e-8: |gamma| == 1 in float32
            model.a.fill_(0.0)
        elif name == "lru":  # |lambda| = exp(-exp(nu_log))
            for layer in model.layers:
                layer.nu_log.fill_(-30.0)


@pytest.mark.parametrize("name", NAMES)
def test_decays_near_one_stay_finite_at_4096(name):
    model = _model(name)
    _slowest_decays(model, name)
    td = _window(model, 2, 4096, "none")
    out = _recurrent(model, td, "parallel")
    grads = torch.autograd.grad(out["embed"].sum(), list(model.parameters()), allow_unused=True)
    assert torch.isfinite(out["embed"]).all() and torch.isfinite(out["next", "recurrent_state"]).all()
    assert all(torch.isfinite(g).all() for g in grads if g is not None)


@pytest.mark.parametrize("name", NAMES)
def test_sequential_steps_from_stored_state_equal_recurrent_window(name):
    """What the collector computes one step at a time is what the loss recomputes over the window."""
    model = _model(name)
    n, T = 4, 24
    td = _window(model, n, T, "random")
    td["is_init"][:, 0] = torch.tensor([True, False, True, False]).unsqueeze(-1)  # some rows open mid-episode
    state = td["recurrent_state"][:, 0]
    embeds, stored = [], []
    with torch.no_grad():
        for t in range(T):  # sequential mode: each step from the state the previous one wrote
            step = td[:, t].clone()
            step["recurrent_state"] = state
            stored.append(state)
            model(step)
            embeds.append(step["embed"])
            state = step["next", "recurrent_state"]
        window = td.clone()
        window["recurrent_state"] = torch.stack(stored, 1)  # the state stored with each step
        out = _recurrent(model, window, "parallel")
    assert _rel(out["embed"], torch.stack(embeds, 1)) <= RTOL
    assert _rel(out["next", "recurrent_state"][:, -1], state) <= RTOL
    # only the first step's stored state is read: the others may be anything
    window["recurrent_state"][:, 1:] = 7.0
    with torch.no_grad():
        assert torch.equal(_recurrent(model, window, "parallel")["embed"], out["embed"])


@pytest.mark.parametrize("name", NAMES)
def test_is_init_restarts_from_zeros_in_both_modes(name):
    model = _model(name)
    td = _window(model, 3, 5, "none")
    td["is_init"][:, 2] = True
    fresh = td.clone()
    fresh["is_init"][:, 2] = False
    fresh["recurrent_state"][:, 2] = 0.0
    with torch.no_grad():
        assert torch.equal(model(td[:, 2].clone())["embed"], model(fresh[:, 2].clone())["embed"])
        window = _recurrent(model, td, "parallel")
        # from step 2 on, the window is the episode started there from a zero state
        restart = _recurrent(model, fresh[:, 2:], "parallel")
    assert _rel(window["embed"][:, 2:], restart["embed"]) <= RTOL


@pytest.mark.parametrize("name", NAMES)
def test_collected_states_match_primer_and_replay_in_recurrent_mode(name):
    model = MEMORY_MODELS[name](4, H, in_key="observation", out_key="embed")
    env = TransformedEnv(CartPoleEnv(3, seed=2, max_episode_steps=7), InitTracker())
    env.append_transform(model.make_tensordict_primer())
    spec = env.observation_spec["recurrent_state"]
    act = TensorDictModule(lambda e: (e[..., 0] > 0).long(), in_keys=["embed"], out_keys=["action"])
    policy = TensorDictSequential(model, act)
    with torch.no_grad():
        data = env.rollout(20, policy, break_when_any_done=False)  # [3, 20], episodes of 7 steps
    written = data["next", "recurrent_state"]
    assert spec.shape == written.shape[:1] + torch.Size(model.state_shape) and spec.dtype == written.dtype
    assert spec.is_in(written[:, 0]) and len(model.state_shape) <= 2
    assert data["is_init"][:, 1:].any()  # resets inside the window
    # the stored state entering a step is the one the previous step wrote, zeros after a reset
    carried = ~data["is_init"][:, 1:].squeeze(-1)
    assert torch.equal(data["recurrent_state"][:, 1:][carried], written[:, :-1][carried])
    with torch.no_grad():
        replay = _recurrent(model, data.select("observation", "is_init", "recurrent_state"), "parallel")
    assert _rel(replay["embed"], data["embed"]) <= RTOL


@pytest.mark.parametrize("name", NAMES)
def test_set_recurrent_mode_switches_mode(name):
    model = _model(name)
    assert not model.recurrent_mode
    with set_recurrent_mode(True):
        assert model.recurrent_mode
    assert _model(name, default_recurrent_mode=True).recurrent_mode
    with pytest.raises(RuntimeError, match="set_recurrent_mode"):
        model.recurrent_mode = True
    td = _window(model, 1, 8, "none")
    td["recurrent_state"].zero_()
    with torch.no_grad():
        steps = model(td.clone())["embed"]  # sequential: 8 independent first steps
        window = _recurrent(model, td, "parallel")["embed"]  # one 8-step window
    assert torch.equal(steps[:, 0], window[:, 0])
    assert not torch.allclose(steps[:, 1:], window[:, 1:])


@pytest.mark.parametrize("name", NAMES)
def test_keys_follow_lstm_module(name):
    model = _model(name)
    assert model.in_keys == ["obs", "recurrent_state", "is_init"]
    assert model.out_keys == ["embed", ("next", "recurrent_state")]
    custom = MEMORY_MODELS[name](F_IN, H, in_keys=["x", "mem"], out_keys=["y", ("next", "mem")])
    assert custom.in_keys == ["x", "mem", "is_init"]
    assert set(custom.make_tensordict_primer().primers.keys()) == {"mem"}
    with pytest.raises(ValueError, match="in_key"):
        MEMORY_MODELS[name](F_IN, H, in_key="x", in_keys=["x", "mem"], out_key="y")
    with pytest.raises(RuntimeError, match="next"):
        MEMORY_MODELS[name](F_IN, H, in_keys=["x", "mem"], out_keys=["y", ("next", "other")]).make_tensordict_primer()
    # keyword calls, as LSTMModule accepts them: outputs in out_keys order
    y, nxt = model(obs=torch.randn(2, F_IN), recurrent_state=torch.zeros(2, *model.state_shape), is_init=torch.ones(2, 1, dtype=torch.bool))
    assert y.shape == (2, H) and nxt.shape == (2, *model.state_shape)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("name", NAMES)
def test_parallel_scan_equals_step_loop_on_cuda(name):
    model = _model(name, device="cuda")
    td = _window(model, 3, 256, "random").to("cuda")
    with torch.no_grad():
        fast, ref = _recurrent(model, td, "parallel"), _recurrent(model, td, "loop")
    assert _rel(fast["embed"], ref["embed"]) <= RTOL


@pytest.mark.parametrize("name", NAMES)
def test_an_integer_is_init_resets_as_the_bool_one(name):
    # ``~`` of an integer flag is a bitwise not (~1 == -2): it must be read as a bool, not scale the state
    model = _model(name)
    td = _window(model, 3, 12, "random")
    as_int = td.clone()
    as_int["is_init"] = td["is_init"].to(torch.uint8)
    with torch.no_grad():
        assert torch.equal(_recurrent(model, as_int, "parallel")["embed"], _recurrent(model, td, "parallel")["embed"])
        assert torch.equal(model(as_int[:, 3].clone())["embed"], model(td[:, 3].clone())["embed"])


@pytest.mark.parametrize("name", NAMES)
def test_runs_under_bfloat16_autocast(name):
    # torch.complex takes no bfloat16: complex states must stay complex64 under autocast
    model = _model(name)
    td = _window(model, 2, 16, "random")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = _recurrent(model, td, "parallel")
    grads = torch.autograd.grad(out["embed"].float().sum(), list(model.parameters()), allow_unused=True)
    assert torch.isfinite(out["embed"]).all() and out["next", "recurrent_state"].dtype == torch.float32
    assert all(torch.isfinite(g).all() for g in grads if g is not None)
    with torch.no_grad():  # within bfloat16's precision of the float32 window
        assert _rel(out["embed"].float(), _recurrent(model, td, "parallel")["embed"]) < 0.1


@pytest.mark.parametrize("name", NAMES)
def test_output_and_stored_state_are_separate_tensors_and_canonicalize_like_lstm_module(name):
    from torchrl.modules import canonicalize_rnn_subset

    model = _model(name)
    td = _window(model, 2, 8, "random")
    out = _recurrent(model, td, "parallel")
    state = out["next", "recurrent_state"].clone()
    out["embed"].data.zero_()  # an in-place op downstream of the output
    assert torch.equal(out["next", "recurrent_state"], state)
    assert model.canonical_keys == [*model.in_keys, *model.out_keys]
    strided = td.clone()
    strided["obs"] = torch.randn(2, 8, 2 * F_IN)[..., ::2]
    assert not strided["obs"].is_contiguous()
    assert canonicalize_rnn_subset(strided, [model])["obs"].is_contiguous()
