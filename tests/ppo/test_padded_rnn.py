"""PaddedLSTMModule / PaddedGRUModule: the same outputs and gradients as TorchRL's LSTMModule / GRUModule, without packing."""
import pytest
import torch
from tensordict import TensorDict
from torchrl.modules import GRUModule, LSTMModule, set_recurrent_mode

from torchrl_memory.ppo.padded_rnn import PaddedGRUModule, PaddedLSTMModule

CELLS = {
    "lstm": (LSTMModule, PaddedLSTMModule, ["h", "c"]),
    "gru": (GRUModule, PaddedGRUModule, ["h"]),
}


def _pair(cell):
    torch.manual_seed(0)
    ref_cls, ours_cls, states = CELLS[cell]
    kw = dict(input_size=3, hidden_size=8, in_keys=["obs", *states], out_keys=["y", *[("next", s) for s in states]])
    ref, ours = ref_cls(**kw), ours_cls(**kw)
    ours.load_state_dict(ref.state_dict())
    return ref, ours


def _rollout(n=4, t=12):
    g = torch.Generator().manual_seed(1)
    is_init = torch.zeros(n, t, 1, dtype=torch.bool)
    is_init[0, 3] = is_init[0, 4] = is_init[1, 11] = is_init[2, 6] = True  # incl. a 1-step episode and a last-step start
    return TensorDict(
        {"obs": torch.randn(n, t, 3, generator=g), "is_init": is_init,
         "h": torch.randn(n, t, 1, 8, generator=g), "c": torch.randn(n, t, 1, 8, generator=g)},
        batch_size=[n, t],
    )


@pytest.mark.parametrize("cell", CELLS)
def test_recurrent_outputs_and_gradients_equal_torchrl_with_resets_inside_rows(cell):
    ref, ours = _pair(cell)
    td = _rollout()
    with set_recurrent_mode(True):
        y_ref, y_ours = ref(td.clone())["y"], ours(td.clone())["y"]
    torch.testing.assert_close(y_ours, y_ref, rtol=0, atol=1e-5)
    w = torch.randn_like(y_ref)
    g_ref = torch.autograd.grad((y_ref * w).sum(), list(ref.parameters()))
    g_ours = torch.autograd.grad((y_ours * w).sum(), list(ours.parameters()))
    for a, b in zip(g_ours, g_ref):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-5)


@pytest.mark.parametrize("cell", CELLS)
def test_window_starts_use_their_stored_state(cell):
    _, ours = _pair(cell)
    td = _rollout()
    with set_recurrent_mode(True):
        y = ours(td.clone())["y"]
        td["h"][2, 6] += 1.0  # the stored state of the episode that starts at step 6 of row 2
        y2 = ours(td.clone())["y"]
    changed = (y2 - y).abs().amax(-1) > 0
    assert changed[2, 6:].all() and not changed[2, :6].any() and not changed[[0, 1, 3]].any()


@pytest.mark.parametrize("cell", CELLS)
def test_sequential_steps_equal_torchrl_and_zero_the_state_at_is_init(cell):
    ref, ours = _pair(cell)
    td = _rollout()[:, 0]  # one step of 4 envs
    td["is_init"][1] = True  # env 1 starts an episode: its stored state must be ignored
    a, b = ref(td.clone()), ours(td.clone())
    for key in ["y", *[("next", s) for s in CELLS[cell][2]]]:
        torch.testing.assert_close(b[key], a[key], rtol=0, atol=1e-6)
    td2 = td.clone()
    td2["h"][1] += 1.0
    assert torch.equal(ours(td2)["y"][1], b["y"][1])  # zeroed: the stored state did not matter
    assert not torch.equal(ours(td2.clone().set("is_init", torch.zeros_like(td["is_init"])))["y"][1], b["y"][1])


@pytest.mark.parametrize("cell", CELLS)
def test_three_dim_batches_fold_into_rows_and_match_torchrl(cell):
    ref, ours = _pair(cell)
    td = torch.stack([_rollout(), _rollout()], 0)  # [2, 4, 12]: leading dims folded into rows
    with set_recurrent_mode(True):
        torch.testing.assert_close(ours(td.clone())["y"], ref(td.clone())["y"], rtol=0, atol=1e-5)


@pytest.mark.parametrize("cls,base", [(PaddedLSTMModule, LSTMModule), (PaddedGRUModule, GRUModule)])
def test_keyword_calls_return_what_torchrls_module_returns(cls, base):
    torch.manual_seed(0)
    ours = cls(input_size=3, hidden_size=4, in_key="obs", out_key="feat")
    theirs = base(input_size=3, hidden_size=4, in_key="obs", out_key="feat")
    theirs.load_state_dict(ours.state_dict())
    kwargs = {"obs": torch.randn(2, 3), "is_init": torch.tensor([[True], [False]])}
    for key in ours.in_keys[1:-1]:
        kwargs[key] = torch.randn(2, 1, 4)
    got, want = ours(**kwargs), theirs(**kwargs)
    assert isinstance(got, tuple) and len(got) == len(want) == len(ours.out_keys)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)
