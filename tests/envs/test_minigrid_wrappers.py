"""MiniGrid wrappers: the 3 navigation actions and the one-hot symbolic view."""
import gymnasium as gym
import numpy as np
import pytest

from torchrl_memory import make_env
from torchrl_memory.envs.observation_encoding import EncodeObservation
from torchrl_memory.envs.lookup import find_transform
from torchrl_memory.envs.minigrid_wrappers import NavigationActions, OneHotSymbolicImage

minigrid = pytest.importorskip("minigrid")
W = "torchrl_memory.envs.minigrid_wrappers"


def test_one_hot_image_marks_exactly_the_object_colour_and_state_of_each_cell():
    raw = gym.make("MiniGrid-MemoryS7-v0")
    obs, _ = raw.reset(seed=3)
    wrapped = OneHotSymbolicImage(gym.make("MiniGrid-MemoryS7-v0"))
    hot, _ = wrapped.reset(seed=3)
    image = hot["image"]
    assert image.shape == (7, 7, 20) and image.dtype == np.float32
    assert (image.sum(-1) == 3).all()  # one object, one colour, one state per cell
    np.testing.assert_array_equal(image[..., :11].argmax(-1), obs["image"][..., 0])
    np.testing.assert_array_equal(image[..., 11:17].argmax(-1), obs["image"][..., 1])
    np.testing.assert_array_equal(image[..., 17:].argmax(-1), obs["image"][..., 2])
    assert wrapped.observation_space["image"].contains(image)


def test_navigation_actions_are_left_right_forward():
    env = NavigationActions(gym.make("MiniGrid-MemoryS7-v0"))
    assert env.action_space == gym.spaces.Discrete(3)
    env.reset(seed=0)
    start = env.unwrapped.agent_dir
    env.step(0)
    assert env.unwrapped.agent_dir == (start - 1) % 4
    env.step(1)
    assert env.unwrapped.agent_dir == start
    with pytest.raises(ValueError, match="Discrete\\(7\\)"):
        NavigationActions(gym.make("CartPole-v1"))


def test_wrapped_memory_env_feeds_the_cnn_and_has_three_actions():
    env = make_env("MiniGrid-MemoryS7-v0", 2, seed=0, wrappers=[f"{W}:NavigationActions", f"{W}:OneHotSymbolicImage"])
    assert "image: Box(7, 7, 20) float32 -> flat" in env.observation_description
    assert find_transform(env, EncodeObservation).image_part() == (4, (7, 7, 20))  # direction one-hot (4) comes first in key order
    assert env.action_spec.space.n == 3
    td = env.rollout(10, break_when_any_done=False)
    assert td["observation"].shape == (2, 10, 4 + 7 * 7 * 20)


def test_memory_s7_cue_is_behind_the_start_view_except_at_x1_and_in_view_after_one_left_turn():
    """The README's account of MemoryS7's exploration problem, checked on minigrid's own visibility."""
    env = gym.make("MiniGrid-MemoryS7-v0")
    starts = set()
    for seed in range(16):
        env.reset(seed=seed)
        u = env.unwrapped
        cue = (1, u.height // 2 - 1)  # where MemoryEnv puts the start-room object
        x = int(u.agent_pos[0])
        starts.add(x)
        assert u.agent_sees(*cue) == (x == 1)
        env.step(u.actions.left)  # now facing north
        assert u.agent_sees(*cue)
    assert starts == {1, 2, 3, 4}
