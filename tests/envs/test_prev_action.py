"""PreviousActionReward: the last action (in the spec's encoding) and reward ride on the observation; zeros at a reset."""
import torch

from torchrl_memory import make_env
from torchrl_memory.pipelines import recurrent_ppo


def test_previous_action_and_reward_are_appended_and_zero_at_episode_start():
    env = make_env("CartPole-v1", 4, seed=0, normalize_obs=False, prev_action=True)
    assert env.observation_spec["observation"].shape[-1] == 4 + 2 + 1
    td = env.reset()
    assert torch.equal(td["observation"][:, 4:], torch.zeros(4, 3))
    td["action"] = torch.tensor([0, 1, 1, 0])
    nxt = env.step(td)["next"]
    assert nxt["observation"][:, 4:6].tolist() == [[1, 0], [0, 1], [0, 1], [1, 0]]  # one-hot of the action taken
    assert torch.equal(nxt["observation"][:, 6], nxt["reward"].squeeze(-1))


def test_the_pipeline_trains_with_prev_action_on_multidiscrete_actions(tmp_path):
    import pytest

    pytest.importorskip("popgym")
    out = recurrent_ppo.main(["--env", "popgym-MineSweeperEasy-v0", "--prev-action", "true", "--num-envs", "4", "--rollout-len", "16",
                              "--envs-per-minibatch", "2", "--hidden-size", "16", "--total-steps", "128", "--eval-every", "0",
                              "--eval-episodes", "2", "--plot", "false", "--run-root", str(tmp_path)])
    assert out["eval"]["episodes"] == 2
