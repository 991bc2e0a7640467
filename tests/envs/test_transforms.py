import pytest
import torch
from torchrl.envs import TransformedEnv

from torchrl_memory import CartPoleEnv, make_env
from torchrl_memory.envs import Flicker, MaskVelocity, RunningObsNorm
from torchrl_memory.envs.lookup import find_transform
from torchrl_memory.envs.pomdp_transforms import BLANK_KEY


def test_mask_velocity_keeps_positions_and_angle():
    env = TransformedEnv(CartPoleEnv(3, seed=0), MaskVelocity((1, 3)))
    td = env.reset()
    assert env.observation_spec["observation"].shape == (3, 2)
    assert torch.equal(td["observation"], td["physics"][:, [0, 2]].float())
    with pytest.raises(ValueError, match=r"hidden index \[7\] out of range \[0, 3\]"):
        TransformedEnv(CartPoleEnv(1), MaskVelocity((7,))).observation_spec


@pytest.mark.parametrize("mode", ["iid", "markov"])
def test_flicker_blank_rate_and_zeroed_frames(mode):
    env = TransformedEnv(CartPoleEnv(64, seed=0), Flicker(0.3, mode=mode, mean_burst=4.0, seed=1))
    ro = env.rollout(300, break_when_any_done=False)
    blank = ro["next", BLANK_KEY].squeeze(-1)
    assert abs(blank.float().mean().item() - 0.3) < 0.03
    assert (ro["next", "observation"][blank] == 0).all()
    assert (ro["next", "observation"][~blank].abs().sum(-1) > 0).all()
    if mode == "markov":  # mean burst length close to 4
        b = blank.int()
        starts = ((b[:, 1:] == 1) & (b[:, :-1] == 0)).sum()
        assert abs(b[:, 1:].sum().item() / starts.item() - 4.0) < 0.6


def test_blank_frames_never_update_normalisation_statistics():
    env = make_env("FlickeringCartPole-0.5", num_envs=16, seed=0)
    norm = find_transform(env, RunningObsNorm)
    ro = env.rollout(100, break_when_any_done=False)
    # frames seen: every step's next observation plus each episode's first (reset) observation
    seen_next = (~ro["next", BLANK_KEY]).sum()
    seen_reset = (~ro[BLANK_KEY] & ro["is_init"]).sum()
    assert norm.count.item() == (seen_next + seen_reset).item()
    assert seen_next + seen_reset < 0.6 * ro.numel() * 2
    assert (ro["next", "observation"][ro["next", BLANK_KEY].squeeze(-1)] == 0).all()


def test_frozen_normalisation_does_not_move_and_round_trips_through_state_dict():
    env = make_env("CartPoleNoVel", num_envs=4, seed=0)
    norm = find_transform(env, RunningObsNorm)
    env.rollout(50, break_when_any_done=False)
    state = {k: v.clone() for k, v in norm.state_dict().items()}
    norm.freeze()
    env.rollout(50, break_when_any_done=False)
    assert all(torch.equal(state[k], v) for k, v in norm.state_dict().items() if k != "frozen")
    other = find_transform(make_env("CartPoleNoVel", num_envs=4, seed=1), RunningObsNorm)
    other.load_state_dict(norm.state_dict())
    assert torch.equal(other.mean, norm.mean) and bool(other.frozen)


@pytest.mark.parametrize("all_rows", ["mask", "none"])
def test_running_stats_match_batch_moments(all_rows):
    norm = RunningObsNorm(3)
    x = torch.randn(1000, 3) * torch.tensor([1.0, 5.0, 0.1]) + 2
    for chunk in x.split(37):
        norm._update(chunk, torch.ones(chunk.shape[0], 1, dtype=torch.bool) if all_rows == "mask" else None)
    assert torch.allclose(norm.mean.float(), x.mean(0), atol=1e-5)
    assert torch.allclose(norm.var.float(), x.var(0, unbiased=False), rtol=1e-4)


def test_running_stats_skip_rows_outside_the_mask():
    norm = RunningObsNorm(2)
    x = torch.randn(64, 2)
    keep = torch.rand(64, 1) < 0.5
    norm._update(x, keep)
    assert norm.count.item() == keep.sum().item()
    assert torch.allclose(norm.mean.float(), x[keep.squeeze(-1)].mean(0), atol=1e-6)


def test_unknown_env_and_unsupported_spaces_fail_clearly():
    with pytest.raises(ValueError, match="unknown env id 'NoSuchEnv-v9'"):
        make_env("NoSuchEnv-v9")
    with pytest.raises(ValueError, match=r"FlickeringCartPole p = 1.5 \(accepted: p in \[0, 1\)\)"):
        make_env("FlickeringCartPole-1.5")
    with pytest.raises(ValueError, match=r"unsupported action space .*\(accepted: Discrete, MultiDiscrete or a bounded Box\)"):
        make_env("gym:CartPole-v1", wrappers=[_unbounded_actions])


def _unbounded_actions(env):
    import gymnasium as gym
    import numpy as np

    class Unbounded(gym.ActionWrapper):
        def __init__(self, env):
            super().__init__(env)
            self.action_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)

        def action(self, a):
            return int(a[0] > 0)

    return Unbounded(env)
