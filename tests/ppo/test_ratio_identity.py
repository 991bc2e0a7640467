"""Re-evaluating a fresh rollout with unchanged weights gives ratio 1 exactly (SPEC 1.2)."""
import torch
from torchrl.collectors import Collector
from torchrl.envs import InitTracker, RewardSum, StepCounter, TransformedEnv
from torchrl.modules import set_recurrent_mode

from components import CartPoleEnv, RecurrentPPOLoss, make_lstm_actor_critic
from components.ppo.advantage import compute_gae
from components.envs.factory import lstm_primer
from components.keys import HIDDEN_C, HIDDEN_H, LOG_PROB, MASK, VALUE
from components.ppo.sampler import TRAIN_KEYS

T, N, MAX_STEPS = 10, 8, 15


def _rollout_with_all_boundaries():
    """A window (not the first) with a mid-window termination, a truncation and a termination at T-1."""
    env = TransformedEnv(CartPoleEnv(N, seed=3, max_episode_steps=MAX_STEPS), InitTracker())
    env.append_transform(StepCounter())
    env.append_transform(RewardSum())
    env.append_transform(lstm_primer(16))
    agent = make_lstm_actor_critic(4, env.action_spec, hidden_size=16)
    # a policy far from uniform, so that any state error shows in the log-probs
    for module in agent.actor.modules():
        if isinstance(module, torch.nn.Linear):
            torch.nn.init.normal_(module.weight, std=2.0)
    collector = Collector(env, agent.rollout_policy, frames_per_batch=N * T, total_frames=-1)
    for i, batch in enumerate(collector):
        term = batch["next", "terminated"].squeeze(-1)
        trunc = batch["next", "truncated"].squeeze(-1) & ~term
        if i > 0 and term[:, :-1].any() and trunc.any() and term[:, -1].any():
            collector.shutdown()
            return agent, batch
        assert i < 200, "no window with every boundary kind found"


def test_fresh_rollout_reevaluates_to_ratio_one():
    agent, batch = _rollout_with_all_boundaries()
    # the window start carries a non-zero state from the previous window
    starts_mid_episode = ~batch["is_init"][:, 0].squeeze(-1)
    assert starts_mid_episode.any()
    assert batch[HIDDEN_H][starts_mid_episode, 0].abs().sum() > 0

    compute_gae(batch, agent, 0.99, 0.95)
    loss = RecurrentPPOLoss(agent)
    minibatch = batch.select(*TRAIN_KEYS)
    minibatch.set(MASK, torch.ones(N, T, 1, dtype=torch.bool))
    out = loss(minibatch)
    assert loss._log_weight_cache.abs().max() < 1e-5
    assert float(out["kl_approx"]) < 1e-10
    assert float(out["clip_fraction"]) == 0.0

    with torch.no_grad(), set_recurrent_mode(True):
        td = batch.select(*TRAIN_KEYS).exclude(VALUE)
        log_prob = agent.actor.get_dist(td).log_prob(td["action"])
        agent.value_head(td)
    assert (td[VALUE] - batch[VALUE]).abs().max() < 1e-5
    assert (log_prob - batch[LOG_PROB]).abs().max() < 1e-5


def test_zeroed_window_start_state_breaks_the_identity():
    """Control: the reference trainer's zeroed window-start state does not reproduce the log-probs."""
    agent, batch = _rollout_with_all_boundaries()
    td = batch.select(*TRAIN_KEYS[:5]).clone()
    td[HIDDEN_H][:, 0] = 0
    td[HIDDEN_C][:, 0] = 0
    with torch.no_grad(), set_recurrent_mode(True):
        lp = agent.actor.get_dist(td).log_prob(td["action"])
    assert (lp - batch[LOG_PROB]).abs().max() > 1e-4
