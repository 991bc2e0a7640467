"""``RecurrentPPOLoss.forward`` (ClipPPOLoss's losses without its logging-only entries) gives the
same losses, statistics and gradients as ``ClipPPOLoss.forward`` itself (``reference_forward``),
with the ratio and value clipping both active and a partly-false validity mask."""
import pytest
import torch
from torchrl.collectors import Collector
from torchrl.envs import InitTracker, TransformedEnv

from torchrl_memory import CartPoleEnv, RecurrentPPOLoss
from torchrl_memory.ppo import make_actor_critic
from torchrl_memory.keys import ADVANTAGE, LOG_PROB, MASK, VALUE, VALUE_TARGET
from torchrl_memory.ppo.advantage import compute_gae

N, T = 8, 12


def _minibatch_and_loss(model: str):
    torch.manual_seed(0)
    env = TransformedEnv(CartPoleEnv(N, seed=5, max_episode_steps=9), InitTracker())  # episodes end inside windows
    agent = make_actor_critic(model, 4, env.action_spec, hidden_size=16)
    env = agent.prime(env)
    collector = Collector(env, agent.collect_policy, frames_per_batch=N * T, total_frames=-1)
    batch = next(iter(collector))
    collector.shutdown()
    compute_gae(batch, agent, 0.99, 0.95)
    mb = batch.select(*agent.in_keys, "action", LOG_PROB, VALUE, ADVANTAGE, VALUE_TARGET)
    mask = torch.ones(N, T, 1, dtype=torch.bool)
    mask[:3, -4:] = False  # as a short trajectory's padding would be
    mb.set(MASK, mask)
    # the stored log-probs and values moved away from the current ones, so some ratios leave
    # the clip range and some values the clip band (and others stay inside)
    mb.set(LOG_PROB, mb[LOG_PROB] + 0.2 * torch.randn_like(mb[LOG_PROB]))
    mb.set(VALUE, mb[VALUE] + 0.1 * torch.randn_like(mb[VALUE]))
    return agent, RecurrentPPOLoss(agent, clip_range=0.1, clip_range_vf=0.05, ent_coef=0.02), mb


def _losses_and_grads(agent, forward, mb):
    for p in agent.parameters():
        p.grad = None
    out = forward(mb)
    (out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]).backward()
    return out, [p.grad.clone() for p in agent.parameters()]


@pytest.mark.parametrize("model", ["lstm", "gru", "mlp"])
def test_lean_forward_equals_clip_ppo_loss_forward(model):
    agent, loss, mb = _minibatch_and_loss(model)
    lean, lean_grads = _losses_and_grads(agent, loss, mb)
    ref, ref_grads = _losses_and_grads(agent, loss.reference_forward, mb)
    for key in ("clip_fraction", "value_clip_fraction"):  # both clips active, neither everywhere
        assert 0.05 < float(lean[key]) < 0.95, (key, float(lean[key]))
    for key in ("loss_objective", "loss_critic", "loss_entropy", "kl_approx", "clip_fraction", "entropy", "value_clip_fraction"):
        torch.testing.assert_close(lean[key], ref[key], rtol=0, atol=0, msg=key)
    for g_lean, g_ref in zip(lean_grads, ref_grads):
        torch.testing.assert_close(g_lean, g_ref, rtol=0, atol=0)
    assert all(g.abs().sum() > 0 for g in lean_grads)


def test_masked_steps_do_not_reach_the_losses():
    agent, loss, mb = _minibatch_and_loss("lstm")
    before = loss(mb)
    poisoned = mb.clone()
    poisoned[ADVANTAGE][~mb[MASK]] = 1e6
    poisoned[VALUE_TARGET][~mb[MASK]] = -1e6
    after = loss(poisoned)
    for key in ("loss_objective", "loss_critic", "loss_entropy"):
        torch.testing.assert_close(after[key], before[key], msg=key)
