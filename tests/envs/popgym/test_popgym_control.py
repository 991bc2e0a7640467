"""The native PositionOnlyCartPole, NoisyPositionOnlyCartPole and MultiarmedBandit against popgym's."""
import numpy as np
import pytest
import torch

pytest.importorskip("popgym")

from popgym_lockstep import lockstep  # noqa: E402

from torchrl_memory.envs.popgym import make_native_popgym  # noqa: E402


def as_drawn(real, log):
    """popgym's uniform and normal numbers are the native env's draws, one for one."""
    return list(log)


def balance_or_random(row, real, rng):
    """Rows 1, 4, ...: balance the pole (reaches the time limit); the others act at random (fall)."""
    if row % 3 == 1:
        x, x_dot, theta, theta_dot = real.state
        return int(theta + 0.5 * theta_dot > 0)
    return int(rng.integers(2))


@pytest.mark.parametrize("name", ["PositionOnlyCartPoleEasy", "PositionOnlyCartPoleHard", "NoisyPositionOnlyCartPoleEasy", "NoisyPositionOnlyCartPoleHard"])
def test_cartpole_steps_as_popgym(name):
    limit = make_native_popgym(name).max_episode_steps
    ends = lockstep(name, as_drawn, balance_or_random, num_envs=6, steps=limit + 20)
    assert ends[(1, False, True)] >= 2 and ends[(0, True, False)] + ends[(2, True, False)] >= 4, ends
    assert ends[("return", 1, 1.0)] >= 2  # a balanced episode returns popgym's maximum


def bandit_policy(row, real, rng):
    """Row 0, 3: random arms; 1, 4: the best arm; 2, 5: the worst."""
    if row % 3 == 0:
        return int(rng.integers(real.num_bandits))
    return int(np.argmax(real.bandits) if row % 3 == 1 else np.argmin(real.bandits))


@pytest.mark.parametrize("name", ["MultiarmedBanditEasy", "MultiarmedBanditHard"])
def test_bandit_steps_as_popgym(name):
    limit = make_native_popgym(name).max_episode_steps
    ends = lockstep(name, as_drawn, bandit_policy, num_envs=6, steps=2 * limit)
    assert ends[(0, False, True)] == ends[(1, False, True)] == ends[(2, False, True)] == 4  # truncated at the limit, twice per row


def test_cartpole_start_states_are_popgyms():
    """Start states U(-0.05, 0.05) in each of the four entries, as gymnasium's reset draws them."""
    import gymnasium as gym

    real = gym.make("popgym-PositionOnlyCartPoleEasy-v0").unwrapped
    popgym_starts = np.array([(real.reset(seed=s), real.state)[1] for s in range(2000)])
    native = make_native_popgym("PositionOnlyCartPoleEasy", 4000, seed=0).reset()["physics"].numpy()
    for draws in (popgym_starts, native):
        assert draws.min() >= -0.05 and draws.max() < 0.05
        assert np.abs(draws.mean(0)).max() < 0.003 and np.abs(draws.std(0) - 0.1 / np.sqrt(12)).max() < 0.002


def test_noise_is_popgyms():
    """NoisyPositionOnlyCartPoleHard: observation minus the clean position ~ N(0, 0.3) for the cart
    position; the angle's is narrower, clipped at +-24 deg, alike for both."""
    import gymnasium as gym

    real = gym.make("popgym-NoisyPositionOnlyCartPoleHard-v0").unwrapped
    real_noise = np.array([(lambda o: o - np.float32(real.state)[0::2])(real.reset(seed=s)[0]) for s in range(2000)])
    env = make_native_popgym("NoisyPositionOnlyCartPoleHard", 4000, seed=0)
    td = env.reset()
    native_noise = (td["observation"] - td["physics"][:, 0::2].float()).numpy()
    for noise in (real_noise, native_noise):
        assert np.abs(noise.mean(0)).max() < 0.03 and abs(noise[:, 0].std() - 0.3) < 0.02
        assert np.abs(noise[:, 1]).max() <= 2 * 0.4189 and noise[:, 1].std() < 0.28
    assert abs(real_noise[:, 1].std() - native_noise[:, 1].std()) < 0.015


def test_bandit_means_are_popgyms():
    """Payout probabilities U[0, 1), float32, one per arm; the best arm's mean near 10/11 for 10 arms."""
    import gymnasium as gym

    real = gym.make("popgym-MultiarmedBanditEasy-v0").unwrapped
    popgym_means = np.array([(real.reset(seed=s), real.bandits)[1] for s in range(2000)])
    native = make_native_popgym("MultiarmedBanditEasy", 4000, seed=0).reset()["bandits"]
    assert native.dtype == torch.float32 and popgym_means.dtype == np.float32
    for means in (popgym_means, native.numpy()):
        assert means.min() >= 0 and means.max() < 1 and abs(means.mean() - 0.5) < 0.01
        assert abs(means.max(1).mean() - 10 / 11) < 0.01
