"""The envs users try first: Discrete observations (FrozenLake, CliffWalking), small images, and an
evaluation episode that never ends."""
import pytest
import torch
from tensordict.nn import TensorDictModule

import input_envs  # noqa: F401  (registers the test envs)
from torchrl_memory import make_env
from torchrl_memory.pipelines import dqn, recurrent_ppo
from torchrl_memory.runs.evaluation import DEFAULT_EVAL_STEP_LIMIT, eval_step_limit, run_greedy_episodes

PPO = ["--num-envs", "8", "--envs-per-minibatch", "4", "--hidden-size", "16", "--total-steps", "256", "--eval-every", "0", "--eval-episodes", "2", "--plot", "false"]
DQN = ["--num-envs", "8", "--hidden-sizes", "16", "--batch-size", "8", "--min-replay-size", "64", "--total-steps", "256", "--eval-every", "0", "--eval-episodes", "2", "--plot", "false"]


@pytest.mark.parametrize("env_id", ["FrozenLake-v1", "CliffWalking-v1"])
@pytest.mark.parametrize("main,args", [(recurrent_ppo.main, PPO), (dqn.main, DQN)], ids=["ppo", "dqn"])
def test_discrete_observation_envs_train_through_both_pipelines(tmp_path, env_id, main, args):
    # their info "prob" is an integer after a reset and a float after a step: it broke TorchRL's final-observation swap
    out = main([*args, "--env", env_id, "--run-root", str(tmp_path)])
    assert out["eval"]["episodes"] == 2


def test_an_image_of_32_pixels_trains_through_the_cnn(tmp_path):
    out = recurrent_ppo.main([*PPO, "--num-envs", "4", "--envs-per-minibatch", "2", "--total-steps", "64", "--env", "Image32-v0", "--run-root", str(tmp_path)])
    assert out["eval"]["episodes"] == 2


def _always(action: int) -> TensorDictModule:
    return TensorDictModule(lambda obs: torch.full(obs.shape[:-1], action, dtype=torch.long), in_keys=["observation"], out_keys=["action"])


def test_an_evaluation_episode_that_never_ends_is_capped_and_reported_truncated(capsys):
    env = make_env("CliffWalking-v1", 2, normalize_obs=False)  # declares no step limit
    assert env.max_episode_steps is None and eval_step_limit(env) == DEFAULT_EVAL_STEP_LIMIT
    records = run_greedy_episodes(env, _always(0))  # always "up": into the top wall forever
    assert [(r.status, r.length) for r in records] == [("Truncated", DEFAULT_EVAL_STEP_LIMIT)] * 2
    assert records[0].total_reward == -DEFAULT_EVAL_STEP_LIMIT
    assert "2 of 2 evaluation episodes did not end within the default limit of 1000 steps" in capsys.readouterr().err


def test_the_cap_is_the_envs_own_limit_where_it_declares_one():
    env = make_env("FrozenLake-v1", 2, normalize_obs=False)
    assert eval_step_limit(env) == env.max_episode_steps == 100
    assert eval_step_limit(env, 7) == 7
