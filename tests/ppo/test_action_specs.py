"""Action specs executed as stored: a OneHot spec (TorchRL GymEnv's default encoding) gets one-hot actions."""
import pytest
import torch
from torchrl.collectors import Collector
from torchrl.data import OneHot
from torchrl.envs import GymEnv, InitTracker, TransformedEnv

from torchrl_memory import DQNAgent, DQNConfig, RecurrentPPOLoss
from torchrl_memory.ppo import make_actor_critic
from torchrl_memory.keys import MASK


def _one_hot_cartpole():
    env = TransformedEnv(GymEnv("CartPole-v1"), InitTracker())  # categorical_action_encoding=False: OneHot
    env.set_seed(0)
    assert isinstance(env.action_spec, OneHot)
    return env


def test_one_hot_action_spec_is_executed_as_the_stored_action():
    env = _one_hot_cartpole()
    agent = make_actor_critic("lstm", 4, env.action_spec, 16)
    env = agent.prime(env)
    collector = Collector(env, agent.rollout_policy, frames_per_batch=300, total_frames=-1)
    batch = next(iter(collector))
    collector.shutdown()
    action = batch["action"]
    assert action.shape[-1] == 2 and bool((action.sum(-1) == 1).all())  # one-hot, in the spec's encoding
    # CartPole dynamics: action 1 pushes right, so the cart velocity (obs[1]) rises; action 0 makes it fall
    cont = ~batch["next", "done"].squeeze(-1)
    dv = (batch["next", "observation"][..., 1] - batch["observation"][..., 1])[cont]
    pushed_right = action.argmax(-1)[cont] == 1
    assert ((dv > 0) == pushed_right).float().mean() > 0.99
    # and the log-probs of the stored one-hot actions re-evaluate to ratio 1
    td = batch.select(*agent.in_keys, "action", "action_log_prob", "state_value").unsqueeze(0)
    td.set("advantage", torch.zeros(*td.batch_size, 1))
    td.set("value_target", torch.zeros(*td.batch_size, 1))
    td.set(MASK, torch.ones(*td.batch_size, 1, dtype=torch.bool))
    loss = RecurrentPPOLoss(agent)
    loss(td)
    assert loss._log_weight_cache.abs().max() < 1e-5


def test_dqn_refuses_a_one_hot_action_spec_by_name():
    env = _one_hot_cartpole()
    with pytest.raises(ValueError, match="OneHot"):
        DQNAgent(4, env.action_spec, DQNConfig())
