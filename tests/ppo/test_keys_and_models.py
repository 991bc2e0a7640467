"""Keys belong to the modules: the PPO pieces on an env whose observation is not "observation", every model (LSTM, GRU, the scan memories, MLP)."""
import pytest
import torch
from torchrl.collectors import Collector
from torchrl.envs import RenameTransform

from torchrl_memory import PPOConfig, RecurrentPPOLoss, RecurrentPPOTrainer, compute_gae, make_env
from torchrl_memory.ppo import make_actor_critic
from torchrl_memory.ppo.actor_critic import MODELS
from torchrl_memory.ppo.advantage import next_state_values

N, T = 4, 16


def _collect(env, agent, frames=N * T):
    collector = Collector(env, agent.rollout_policy, frames_per_batch=frames, total_frames=-1)
    batch = next(iter(collector))
    collector.shutdown()
    return batch


@pytest.mark.parametrize("model", list(MODELS))
def test_ppo_pieces_run_on_a_renamed_observation_key(model):
    env = make_env("CartPoleNoVel", N, seed=0, normalize_obs=False)
    env.append_transform(RenameTransform(in_keys=["observation"], out_keys=["pixels"]))
    assert "observation" not in env.observation_spec.keys()
    agent = make_actor_critic(model, 2, env.action_spec, 16, obs_key="pixels")
    env = agent.prime(env)
    batch = _collect(env, agent)
    state_keys = {"recurrent_state_h", "recurrent_state_c", "recurrent_state"}
    if model == "mlp":
        assert not state_keys & set(batch.keys())  # the memoryless arm carries no recurrent keys at all
    else:
        assert set(agent.state_keys) <= set(batch.keys()) and agent.obs_key == "pixels"
    compute_gae(batch, agent, 0.99, 0.95)
    cfg = PPOConfig(num_envs=N, rollout_len=T, envs_per_minibatch=2, hidden_size=16, n_epochs=1, model=model).validate()
    trainer = RecurrentPPOTrainer(agent, cfg)
    # a fresh rollout re-evaluates to ratio 1 through the renamed keys
    first = next(trainer.sampler.epoch(batch))
    out = trainer.loss(first)
    assert float(out["clip_fraction"]) == 0.0 and float(out["kl_approx"]) < 1e-10
    before = [p.detach().clone() for p in trainer.params]
    stats = trainer.train_step(batch)
    assert stats.num_gradient_steps == 2
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.params))


@pytest.mark.parametrize("model", [m for m in MODELS if m != "mlp"])
def test_next_state_values_equal_the_stored_next_value_for_every_cell(model):
    """V(next) on continuing steps is the value the collector stored at t+1: the state is read by the trunk's keys."""
    env = make_env("CartPole-v1", N, seed=1, normalize_obs=False)
    agent = make_actor_critic(model, 4, env.action_spec, 8)
    env = agent.prime(env)
    batch = _collect(env, agent)
    nv = next_state_values(batch, agent)
    cont = ~batch["next", "done"].squeeze(-1)[:, :-1]
    torch.testing.assert_close(nv[:, :-1][cont], batch[agent.value_key][:, 1:][cont], rtol=0, atol=1e-6)


def test_a_missing_recurrent_state_is_an_error_not_a_zero_state():
    env = make_env("CartPole-v1", N, seed=1, normalize_obs=False)
    agent = make_actor_critic("gru", 4, env.action_spec, 8)
    batch = _collect(agent.prime(env), agent)
    del batch["next", "recurrent_state"]
    with pytest.raises(KeyError, match="recurrent_state"):
        compute_gae(batch, agent, 0.99, 0.95)


def test_loss_keys_follow_the_agent():
    env = make_env("CartPole-v1", N, seed=1, normalize_obs=False)
    agent = make_actor_critic("lstm", 4, env.action_spec, 8, action_key="act")
    keys = RecurrentPPOLoss(agent).tensor_keys
    assert keys.action == "act" and keys.value == agent.value_key and keys.sample_log_prob == agent.log_prob_key
