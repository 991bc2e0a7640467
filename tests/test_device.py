"""Everything stays on the device the run asks for: env state, policy, collector storage, replay, update.

The device comes from TORCHRL_MEMORY_TEST_DEVICE (default cpu); benchmarks/gpu_check.sh sets it to cuda.
"""
import os

import pytest
import torch
from torchrl.collectors import Collector

from torchrl_memory import DQNAgent, DQNConfig, PPOConfig, RecurrentPPOTrainer, build_agent, compute_gae, make_env
from torchrl_memory.envs import obs_dim_of

DEVICE = torch.device(os.environ.get("TORCHRL_MEMORY_TEST_DEVICE", "cpu"))
if DEVICE.type == "cuda" and not torch.cuda.is_available():
    pytest.skip("TORCHRL_MEMORY_TEST_DEVICE=cuda but no CUDA device", allow_module_level=True)


def _same_type(t: torch.Tensor) -> bool:
    return t.device.type == DEVICE.type


def test_ppo_collection_and_update_stay_on_the_device():
    cfg = PPOConfig(num_envs=8, rollout_len=8, envs_per_minibatch=4, hidden_size=16, device=str(DEVICE)).validate()
    env = make_env(cfg.env_id, cfg.num_envs, DEVICE, cfg.seed)
    agent = build_agent(cfg, env, DEVICE)
    env = agent.prime(env)
    trainer = RecurrentPPOTrainer(agent, cfg)
    collector = Collector(env, agent.rollout_policy, frames_per_batch=cfg.frames_per_batch, total_frames=-1, device=DEVICE)
    batch = next(iter(collector))
    collector.shutdown()
    assert all(_same_type(t) for t in batch.values(include_nested=True, leaves_only=True))
    compute_gae(batch, agent, cfg.gamma, cfg.gae_lambda)
    stats = trainer.train_step(batch)
    assert stats.num_gradient_steps > 0
    assert all(_same_type(p) for p in agent.parameters()) and _same_type(trainer.flat_params)


def test_dqn_replay_and_update_stay_on_the_device():
    cfg = DQNConfig(num_envs=4, min_replay_size=8, batch_size=8, buffer_capacity=64, device=str(DEVICE)).validate()
    env = make_env(cfg.env_id, cfg.num_envs, DEVICE, cfg.seed, normalize_obs=False)
    agent = DQNAgent(obs_dim_of(env), env.action_spec, cfg, DEVICE)
    td = env.reset()
    for step in range(4):
        td, _ = agent.explore(td, step)
        td, td_next = env.step_and_maybe_reset(td)
        agent.store(td)
        td = td_next
    assert agent.is_warm()
    assert all(_same_type(t) for t in agent.replay[:].values(include_nested=True, leaves_only=True))
    batch = agent.sample_batches(1)[0]
    assert all(_same_type(t) for t in batch)
    loss = agent.update(batch)
    assert torch.isfinite(torch.tensor(loss))
    assert all(_same_type(p) for p in agent.loss.parameters())
