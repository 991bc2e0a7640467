"""``env.max_episode_steps``: the episode limit the env declares, and the window line PPO prints from it."""
import gymnasium as gym
import pytest
import torch

from torchrl_memory import PPOConfig, make_env


def steps_until_done(env, max_steps: int = 1000) -> int:
    td = env.reset()
    n = env.action_spec.space.n
    for step in range(1, max_steps + 1):
        td["action"] = torch.randint(0, n, env.batch_size)
        out, td = env.step_and_maybe_reset(td)
        if bool(out["next", "done"].any()):
            return step
    raise AssertionError(f"no episode ended within {max_steps} steps")


@pytest.mark.parametrize("env_id, limit", [("TMaze-10", 11), ("popgym-RepeatPreviousEasy-v0", 51)])
def test_declared_limit_is_the_episode_length(env_id, limit):
    if env_id.startswith("popgym"):
        pytest.importorskip("popgym")
    env = make_env(env_id, 1, seed=0)
    assert env.max_episode_steps == limit
    assert steps_until_done(env) == limit  # these episodes always run to the limit


@pytest.mark.parametrize("env_id, limit", [("CartPoleNoVel", 500), ("gym:CartPoleNoVel", 500), ("MiniGrid-MemoryS7-v0", 245)])
def test_time_limits_read_from_native_gymnasium_and_minigrid(env_id, limit):
    if env_id.startswith("MiniGrid"):
        pytest.importorskip("minigrid")
    assert make_env(env_id, 1, seed=0).max_episode_steps == limit


class Endless(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (2,))
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, False, False, {}


def test_no_declared_limit_is_none_and_the_note_names_only_the_window():
    gym.register("EndlessForLimitTest-v0", entry_point=Endless)
    assert make_env("EndlessForLimitTest-v0", 1, seed=0).max_episode_steps is None
    assert PPOConfig().window_note(None) == "bptt: 16-step windows"


def test_window_note_names_the_setting_only_when_episodes_outlast_the_window():
    long = PPOConfig(rollout_len=16).window_note(51)
    assert "episodes up to 51 steps" in long and "--rollout-len 51" in long
    assert "--rollout-len" not in PPOConfig(rollout_len=64).window_note(51)
    chunked = PPOConfig(rollout_len=64, chunk_len=16).window_note(51)
    assert chunked.startswith("bptt: 16-step windows") and "--chunk-len none" in chunked
    assert PPOConfig(model="mlp").window_note(51) is None
