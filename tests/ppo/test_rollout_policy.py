"""The fused collector step (ppo/rollout_policy.py) writes what the sequential TorchRL-module policy writes."""
import pytest
import torch
from torchrl.data import Bounded, OneHot
from torchrl.envs import ExplorationType, set_exploration_type

from torchrl_memory import make_env
from torchrl_memory.envs import obs_dim_of
from torchrl_memory.ppo import make_actor_critic
from torchrl_memory.ppo.rollout_policy import FusedRolloutPolicy

N = 8


def _agent_and_step(model):
    """An agent far from uniform and a carried step: half the rows mid-episode with a non-zero state."""
    env = make_env("CartPoleNoVel", N, seed=0)
    agent = make_actor_critic(model, obs_dim_of(env), env.action_spec, 16)
    for module in agent.actor.modules():
        if isinstance(module, torch.nn.Linear):
            torch.nn.init.normal_(module.weight, std=2.0 / module.in_features**0.5)
    env = agent.prime(env)
    td = env.reset()
    td["is_init"][: N // 2] = False
    for key in agent.state_keys:
        td[key] = torch.randn_like(td[key])
    return agent, td


def _both(agent, td, exploration):
    with torch.no_grad(), set_exploration_type(exploration):
        torch.manual_seed(0)
        sequential = agent.rollout_policy(td.clone())
        torch.manual_seed(0)
        fused = agent.collect_policy(td.clone())
    return sequential, fused


@pytest.mark.parametrize("model", ["lstm", "gru", "mingru", "ffm", "lru", "mlp"])
def test_fused_step_matches_the_sequential_policy(model):
    agent, td = _agent_and_step(model)
    assert isinstance(agent.collect_policy, FusedRolloutPolicy)
    sequential, fused = _both(agent, td, ExplorationType.RANDOM)
    keys = set(sequential.keys(True, True))
    assert set(fused.keys(True, True)) == keys
    for key in keys:
        a, b = sequential[key], fused[key]
        assert a.shape == b.shape and a.dtype == b.dtype, key
        if a.is_floating_point():
            assert torch.allclose(a, b, atol=1e-6), key
        else:
            assert torch.equal(a, b), key  # the actions: the same draw from the same RNG state
    # the actions are sampled (they differ across seeds), not the greedy ones
    with torch.no_grad(), set_exploration_type(ExplorationType.RANDOM):
        draws = torch.stack([agent.collect_policy(td.clone())["action"] for _ in range(20)])
    assert (draws != draws[0]).any()
    # the stored state is reset where is_init (rows N/2 on) and carried elsewhere: zeroing every
    # stored state changes only the mid-episode rows
    if agent.state_keys:
        zeroed = td.clone()
        for key in agent.state_keys:
            zeroed[key].zero_()
        with torch.no_grad(), set_exploration_type(ExplorationType.RANDOM):
            torch.manual_seed(0)
            again = agent.collect_policy(zeroed)
        assert torch.equal(again["embed"][N // 2 :], fused["embed"][N // 2 :])
        assert not torch.allclose(again["embed"][: N // 2], fused["embed"][: N // 2])


@pytest.mark.parametrize("model", ["lstm", "ffm", "mlp"])
def test_fused_step_follows_weight_changes_and_owns_no_weights(model):
    agent, td = _agent_and_step(model)
    assert list(agent.collect_policy.parameters()) == agent.parameters()
    state = {k: v + 0.5 for k, v in agent.state_dict().items()}
    agent.load_state_dict(state)
    sequential, fused = _both(agent, td, ExplorationType.RANDOM)
    assert torch.allclose(sequential["action_log_prob"], fused["action_log_prob"], atol=1e-6)
    assert torch.allclose(sequential["state_value"], fused["state_value"], atol=1e-6)


def test_greedy_evaluation_goes_to_the_sequential_policy():
    agent, td = _agent_and_step("lstm")
    sequential, fused = _both(agent, td, ExplorationType.DETERMINISTIC)
    for key in sequential.keys(True, True):
        assert torch.equal(sequential[key], fused[key]), key


@pytest.mark.parametrize("spec", [OneHot(3), Bounded(-1.0, 1.0, shape=(2,))])
def test_other_action_specs_keep_the_sequential_policy(spec):
    agent = make_actor_critic("lstm", 4, spec, 16)
    assert agent.collect_policy is agent.rollout_policy
