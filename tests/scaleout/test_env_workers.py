"""``env_workers``: a gymnasium env's copies stepped in processes look and behave like the one-process env."""
import pytest
import torch

from torchrl_memory import DQNConfig, PPOConfig, UserError, make_env
from torchrl_memory.keys import OBS

N, STEPS = 4, 40


def _roll(env, actions):
    """Steps ``env`` with the given [STEPS, N] actions (auto-reset), returns the observation, step counts and dones."""
    td = env.reset()
    obs, counts, dones = [], [], []
    for a in actions:
        td["action"] = a
        td, nxt = env.step_and_maybe_reset(td)
        obs.append(td["next", OBS].clone())
        counts.append(td["next", "step_count"].clone())
        dones.append(td["next", "done"].clone())
        td = nxt
    return torch.stack(obs), torch.stack(counts), torch.stack(dones)


def test_two_workers_match_the_one_process_env_step_for_step():
    single = make_env("gym:CartPoleNoVel", N, "cpu", seed=3)
    merged = make_env("gym:CartPoleNoVel", N, "cpu", seed=3, env_workers=2)
    try:
        assert merged.batch_size == single.batch_size == (N,)
        assert merged.observation_spec[OBS].shape == single.observation_spec[OBS].shape
        actions = torch.randint(0, 2, (STEPS, N), generator=torch.Generator().manual_seed(0))
        obs_1, counts_1, dones_1 = _roll(single, actions)
        obs_2, counts_2, dones_2 = _roll(merged, actions)
        assert dones_1.any(), "no episode ended: the auto-reset path was not exercised"
        # same seeds per copy, same actions: same trajectories, resets included
        torch.testing.assert_close(obs_2, obs_1)
        assert torch.equal(counts_2, counts_1) and torch.equal(dones_2, dones_1)
    finally:
        merged.close()


def test_env_workers_must_divide_num_envs_need_a_gymnasium_env_and_exclude_collector_workers():
    with pytest.raises(UserError, match=r"env_workers = 3 .*divides num_envs"):
        make_env("gym:CartPoleNoVel", N, "cpu", seed=0, env_workers=3)
    with pytest.raises(UserError, match=r"env_workers = 2: the tensor-native envs"):
        make_env("CartPoleNoVel", N, "cpu", seed=0, env_workers=2)
    with pytest.raises(ValueError, match="env_workers"):
        DQNConfig(num_envs=4, env_workers=3).validate()
    with pytest.raises(ValueError, match="env_workers"):
        PPOConfig(env_id="gym:CartPoleNoVel", num_envs=4, envs_per_minibatch=2, env_workers=2, collector_workers=2).validate()


@pytest.mark.parametrize("pipeline", ["recurrent_ppo", "dqn"])
def test_both_pipelines_train_on_env_workers(tmp_path, pipeline):
    import importlib

    main = importlib.import_module(f"torchrl_memory.pipelines.{pipeline}").main
    extra = ["--envs-per-minibatch", "2", "--rollout-len", "32"] if pipeline == "recurrent_ppo" else ["--min-replay-size", "64", "--batch-size", "32"]
    out = main(["--env", "gym:CartPoleNoVel", "--num-envs", str(N), "--env-workers", "2", "--total-steps", "512", "--eval-every", "0",
                "--eval-episodes", "2", "--plot", "false", "--run-root", str(tmp_path), *extra])
    assert out["eval"]["episodes"] == 2
