"""Re-evaluating a fresh rollout with unchanged weights gives ratio 1 exactly, for every memory model
(LSTM, GRU and the parallel-scan ones), collected by the pipeline's fused policy step and by the sequential TorchRL-module policy."""
import pytest
import torch
from torchrl.collectors import Collector
from torchrl.envs import InitTracker, RewardSum, StepCounter, TransformedEnv
from torchrl.modules import set_recurrent_mode

from torchrl_memory import CartPoleEnv, RecurrentPPOLoss
from torchrl_memory.ppo import make_actor_critic
from torchrl_memory.keys import ADVANTAGE, LOG_PROB, MASK, VALUE, VALUE_TARGET
from torchrl_memory.ppo.actor_critic import MODELS
from torchrl_memory.ppo.advantage import compute_gae

RECURRENT = [m for m in MODELS if m != "mlp"]

T, N, MAX_STEPS = 10, 8, 15


def _train_keys(agent):
    return [*agent.in_keys, "action", LOG_PROB, VALUE, ADVANTAGE, VALUE_TARGET]


def _rollout_with_all_boundaries(model, policy="collect_policy"):
    """A window (not the first) with a mid-window termination, a truncation and a termination at T-1.

    The policy heads are drawn far from uniform, so that any state error shows in the log-probs;
    where the largest spread makes the policy so sure of itself that episodes never reach the
    truncation (a scan trunk's features are larger than an LSTM's), a smaller one is tried.
    """
    for std in (2.0, 0.5, 0.1):
        env = TransformedEnv(CartPoleEnv(N, seed=3, max_episode_steps=MAX_STEPS), InitTracker())
        env.append_transform(StepCounter())
        env.append_transform(RewardSum())
        agent = make_actor_critic(model, 4, env.action_spec, hidden_size=16)
        env = agent.prime(env)
        trunk = set(agent.trunk.modules())
        for module in agent.actor.modules():
            if isinstance(module, torch.nn.Linear) and module not in trunk:  # the heads only: a scan trunk keeps its init
                torch.nn.init.normal_(module.weight, std=std)
        collector = Collector(env, getattr(agent, policy), frames_per_batch=N * T, total_frames=-1)
        for i, batch in enumerate(collector):
            term = batch["next", "terminated"].squeeze(-1)
            trunc = batch["next", "truncated"].squeeze(-1) & ~term
            if i > 0 and term[:, :-1].any() and trunc.any() and term[:, -1].any():
                collector.shutdown()
                return agent, batch
            if i == 100:
                break
        collector.shutdown()
    raise AssertionError("no window with every boundary kind found")


@pytest.mark.parametrize("policy", ["collect_policy", "rollout_policy"])
@pytest.mark.parametrize("model", RECURRENT)
def test_fresh_rollout_reevaluates_to_ratio_one(model, policy):
    agent, batch = _rollout_with_all_boundaries(model, policy)
    # the window start carries a non-zero state from the previous window
    starts_mid_episode = ~batch["is_init"][:, 0].squeeze(-1)
    assert starts_mid_episode.any()
    assert batch[agent.state_keys[0]][starts_mid_episode, 0].abs().sum() > 0

    compute_gae(batch, agent, 0.99, 0.95)
    loss = RecurrentPPOLoss(agent)
    minibatch = batch.select(*_train_keys(agent))
    minibatch.set(MASK, torch.ones(N, T, 1, dtype=torch.bool))
    out = loss(minibatch)
    assert loss._log_weight_cache.abs().max() < 1e-5
    assert float(out["kl_approx"]) < 1e-10
    assert float(out["clip_fraction"]) == 0.0

    with torch.no_grad(), set_recurrent_mode(True):
        td = batch.select(*_train_keys(agent)).exclude(VALUE)
        log_prob = agent.actor.get_dist(td).log_prob(td["action"])
        agent.value_head(td)
    assert (td[VALUE] - batch[VALUE]).abs().max() < 1e-5
    assert (log_prob - batch[LOG_PROB]).abs().max() < 1e-5


@pytest.mark.parametrize("model", RECURRENT)
def test_zeroed_window_start_state_breaks_the_identity(model):
    """Control: a window-start state zeroed instead of the stored one does not reproduce the log-probs."""
    agent, batch = _rollout_with_all_boundaries(model)
    td = batch.select(*agent.in_keys, "action").clone()
    for key in agent.state_keys:
        td[key][:, 0] = 0
    with torch.no_grad(), set_recurrent_mode(True):
        lp = agent.actor.get_dist(td).log_prob(td["action"])
    assert (lp - batch[LOG_PROB]).abs().max() > 1e-4
