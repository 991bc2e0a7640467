"""Using a trained agent: load_policy, predict on a plain gymnasium loop, the TorchRL path, --eval in a fresh process."""
import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from torchrl_memory import DQNAgent, DQNConfig, TrainingRun, load_policy, make_env
from torchrl_memory.runs import run_greedy_episodes
from torchrl_memory.pipelines import dqn, recurrent_ppo

ROOT = Path(__file__).resolve().parents[2]
PPO = ["--num-envs", "8", "--rollout-len", "16", "--envs-per-minibatch", "4", "--hidden-size", "16", "--total-steps", "16384",
       "--eval-every", "0", "--eval-episodes", "2", "--plot", "false"]


@pytest.fixture(scope="module", params=["lstm", "mingru", "ffm", "lru"])
def ppo_run(tmp_path_factory, request):
    """A trained PPO run per memory model: the LSTM and each parallel-scan memory."""
    root = tmp_path_factory.mktemp("ppo")
    recurrent_ppo.main([*PPO, "--env", "gym:CartPoleNoVel", "--model", request.param, "--run-root", str(root)])
    return TrainingRun.find(root)


def test_loaded_policy_in_a_fresh_process_gives_the_same_greedy_episodes(ppo_run):
    policy = load_policy(ppo_run.path / "latest.pt")
    here = [r.total_reward for r in run_greedy_episodes(policy.make_env(4, seed=1), policy.as_module())]
    out = subprocess.run([sys.executable, str(ROOT / "pipelines" / "recurrent_ppo.py"), "--eval", str(ppo_run.path / "latest.pt"), "--episodes", "4"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    assert "4 episodes" in out.stdout
    fresh = [json.loads(line)["total_reward"] for line in (ppo_run.path / "eval_only.jsonl").read_text().splitlines()]
    assert fresh == here


def test_predict_on_a_plain_gymnasium_loop_equals_the_torchrl_path(ppo_run):
    policy = load_policy(ppo_run.path / "latest.pt")
    # TorchRL path: one env, seed 5, greedy actions of a whole episode
    rollout = policy.make_env(1, seed=5).rollout(500, policy.as_module(), break_when_any_done=True)
    torchrl_actions = rollout["action"].reshape(-1).tolist()
    # plain gymnasium: raw 4-dim CartPole observations, the recurrent state threaded by hand
    env = gym.make("CartPole-v1")
    env.reset(seed=5)  # as GymWrapper.set_seed(5) does; the rollout's reset is then the next draw
    obs, _ = env.reset()
    actions, state, done = [], None, False
    while not done:
        action, state = policy.predict(obs, state, episode_start=not actions)
        actions.append(int(action))
        obs, _, term, trunc, _ = env.step(int(action))
        done = term or trunc
    assert actions == torchrl_actions and len(set(actions)) == 2  # both actions: a non-trivial comparison
    # batched observations give the batched answer
    batch, _ = policy.predict(np.stack([env.reset(seed=s)[0] for s in range(3)]))
    assert batch.shape == (3,)


def test_dqn_checkpoints_load_into_the_agent_and_the_policy(tmp_path):
    dqn.main(["--hidden-sizes", "16", "--batch-size", "8", "--min-replay-size", "32", "--total-steps", "200", "--eval-every", "100",
              "--eval-episodes", "2", "--plot", "false", "--run-root", str(tmp_path)])
    run = TrainingRun.find(tmp_path)
    env = make_env("CartPole-v1", 1, normalize_obs=False)
    agent = DQNAgent(4, env.action_spec, DQNConfig(hidden_sizes=[16], batch_size=8, min_replay_size=32))
    agent.load(run.path / "best.pt")  # the pipeline's files nest the agent under "agent"
    policy = load_policy(run.path / "best.pt")
    obs = torch.randn(5, 4)
    action, state = policy.predict(obs.numpy())
    assert state is None and action.tolist() == agent.act(obs).tolist()
