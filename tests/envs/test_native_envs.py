"""Tensor-native envs: gymnasium parity, TorchRL auto-reset semantics, seeding."""
import gymnasium as gym
import numpy as np
import torch
from torchrl.envs.utils import check_env_specs

from torchrl_memory import CartPoleEnv, TMazeEnv

N_ENVS, STEPS = 64, 500


def test_cartpole_matches_gymnasium_for_500_steps_across_64_envs():
    native = CartPoleEnv(N_ENVS, seed=0)
    gyms = [gym.make("CartPole-v1") for _ in range(N_ENVS)]
    td = native.reset()

    def sync(i):  # put gymnasium env i into the native env's current state, episode clock at 0
        gyms[i].reset(seed=i)
        gyms[i].unwrapped.state = td["physics"][i].numpy().astype(np.float64).copy()

    for i in range(N_ENVS):
        sync(i)
    # odd envs act at random (terminations), even envs balance the pole (truncation at 500)
    random_actions = torch.randint(0, 2, (STEPS, N_ENVS), generator=torch.Generator().manual_seed(1))
    balancing = torch.arange(N_ENVS) % 2 == 0
    checked_term = checked_trunc = 0
    for t in range(STEPS):
        x, xd, th, thd = td["physics"].unbind(-1)
        action = torch.where(balancing, (th + 0.5 * thd > 0).long(), random_actions[t])
        td["action"] = action
        td, td_next_root = native.step_and_maybe_reset(td)
        nxt = td["next"]
        for i in range(N_ENVS):
            obs, rew, term, trunc, _ = gyms[i].step(int(action[i]))
            assert np.abs(nxt["observation"][i].numpy() - obs).max() < 1e-5, (t, i)
            assert float(nxt["reward"][i]) == rew
            assert bool(nxt["terminated"][i]) == term and bool(nxt["truncated"][i]) == trunc, (t, i)
            checked_term += term
            checked_trunc += trunc
        td = td_next_root
        for i in np.nonzero(nxt["done"].squeeze(-1).numpy())[0]:
            sync(int(i))
    assert checked_term > 0 and checked_trunc > 0


def test_cartpole_truncates_at_500_with_reward_on_last_step():
    env = CartPoleEnv(2, seed=0)
    td = env.reset()
    for t in range(500):
        x, xd, th, thd = td["physics"].unbind(-1)
        td["action"] = (th + 0.5 * thd > 0).long()
        td = env.step(td)
        if t < 499:
            assert not td["next", "done"].any()
            td = td["next"].exclude("reward", "done", "terminated", "truncated")
    assert td["next", "truncated"].all() and not td["next", "terminated"].any()
    assert (td["next", "reward"] == 1).all()


def test_auto_reset_puts_final_obs_in_next_and_fresh_obs_at_root():
    from torchrl.envs import InitTracker, TransformedEnv

    env = TransformedEnv(CartPoleEnv(8, seed=0, max_episode_steps=20), InitTracker())
    ro = env.rollout(60, break_when_any_done=False)
    done = ro["next", "done"].squeeze(-1)
    env_i, t = done[:, :-1].nonzero()[0].tolist()
    final, fresh = ro["next", "observation"][env_i, t], ro["observation"][env_i, t + 1]
    assert not torch.equal(final, fresh)
    assert fresh.abs().max() <= 0.05  # a reset state
    assert ro["next", "physics"][env_i, t].float().equal(final)
    # is_init exactly at the first step and right after each done
    expected = torch.zeros_like(done)
    expected[:, 0] = True
    expected[:, 1:] = done[:, :-1]
    assert torch.equal(ro["is_init"].squeeze(-1), expected)


def test_same_seed_same_trajectories_and_env_indices_differ():
    def rollout(seed):
        env = CartPoleEnv(4, seed=seed)
        torch.manual_seed(0)
        return env.rollout(50, break_when_any_done=False)["observation"]

    a, b, c = rollout(3), rollout(3), rollout(4)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    assert not torch.equal(a[0, 0], a[1, 0])


def test_specs_are_consistent():
    check_env_specs(CartPoleEnv(3, seed=0))
    check_env_specs(TMazeEnv(4, num_envs=3, seed=0))


def test_tmaze_cue_only_at_start_and_reward_matches_turn():
    env = TMazeEnv(corridor_length=3, num_envs=64, seed=0)
    td = env.reset()
    cue = td["observation"][:, 0].clone()
    assert set(cue.tolist()) == {-1.0, 1.0}
    for _ in range(3):
        td["action"] = torch.zeros(64, dtype=torch.long)
        td = env.step(td)["next"]
        assert (td["observation"][:, 0] == 0).all()
    assert (td["observation"] == torch.tensor([0.0, 0.0, 1.0])).all()  # junction identical for both cues
    td["action"] = (cue > 0).long()
    out = env.step(td)["next"]
    assert (out["reward"] == 1).all() and out["terminated"].all()


def test_cartpole_state_equals_gymnasium_bit_for_bit_over_long_episodes():
    """128 envs x 1,500 steps, no time limit, pole balanced: the float64 state equals gymnasium's exactly."""
    n, steps = 128, 1_500
    native = CartPoleEnv(n, seed=3, max_episode_steps=10**6)
    gyms = [gym.make("CartPole-v1", max_episode_steps=10**6).unwrapped for _ in range(n)]
    td = native.reset()
    for i, g in enumerate(gyms):
        g.reset(seed=i)
        g.state = td["physics"][i].numpy().copy()
    noise = torch.rand(steps, n, generator=torch.Generator().manual_seed(2)) < 0.05  # 5% random flips
    for t in range(steps):
        x, xd, th, thd = td["physics"].unbind(-1)
        action = (th + 0.5 * thd + 0.05 * x + 0.1 * xd > 0).long() ^ noise[t].long()
        td["action"] = action
        td = native.step(td)["next"]
        alive = ~td["done"].squeeze(-1)
        for i in range(n):
            if alive[i] and gyms[i] is not None:
                gyms[i].step(int(action[i]))
                assert np.array_equal(gyms[i].state, td["physics"][i].numpy()), (t, i)
            else:
                gyms[i] = None  # terminated: nothing more to compare for this env
        td = td.exclude("done", "terminated", "truncated", "reward")
    assert sum(g is not None for g in gyms) > n // 2  # most envs were compared over the whole horizon
