"""GAE against hand-computed tables (gamma 0.9, lambda 0.5, one env, T = 4)."""
import pytest
import torch
from tensordict import TensorDict
from torchrl.envs import InitTracker, TransformedEnv
from torchrl.collectors import Collector

from torchrl_memory import CartPoleEnv
from torchrl_memory.ppo import make_lstm_actor_critic
from torchrl_memory.ppo.advantage import gae_from_values, next_state_values
from torchrl_memory.keys import ADVANTAGE, HIDDEN_H, OBS, VALUE, VALUE_TARGET

G, L = 0.9, 0.5
V = [1.0, 2.0, 3.0, 4.0]  # V(s_t)
NV = [5.0, 6.0, 7.0, 8.0]  # V(real next observation at t)
R = [1.0, 1.0, 1.0, 1.0]


def _batch(terminated, truncated):
    f = lambda xs: torch.tensor(xs, dtype=torch.float32).reshape(1, 4, 1)
    b = lambda xs: torch.tensor(xs, dtype=torch.bool).reshape(1, 4, 1)
    return TensorDict(
        {VALUE: f(V), "next": {"reward": f(R), "terminated": b(terminated), "truncated": b(truncated)}}, batch_size=[1, 4]
    )


def _run(terminated, truncated):
    batch = gae_from_values(_batch(terminated, truncated), torch.tensor(NV).reshape(1, 4, 1), G, L)
    return batch[ADVANTAGE].flatten().tolist(), batch[VALUE_TARGET].flatten().tolist()


def test_termination_mid_window():
    adv, target = _run([0, 1, 0, 0], [0, 0, 0, 0])
    d3 = 1 + G * 8 - 4  # window end: bootstrap from V(next obs)
    d2 = 1 + G * 7 - 3
    d1 = 1 + 0 - 2  # terminated: no bootstrap
    d0 = 1 + G * 5 - 1
    a3 = d3
    a2 = d2 + G * L * a3
    a1 = d1  # trace cut
    a0 = d0 + G * L * a1
    assert adv == pytest.approx([a0, a1, a2, a3])
    assert target == pytest.approx([a0 + 1, a1 + 2, a2 + 3, a3 + 4])


def test_termination_at_last_step_ignores_next_value():
    adv, _ = _run([0, 0, 0, 1], [0, 0, 0, 0])
    a3 = 1 - 4  # the non-zero NV[3] = 8 must not be used
    a2 = (1 + G * 7 - 3) + G * L * a3
    a1 = (1 + G * 6 - 2) + G * L * a2
    a0 = (1 + G * 5 - 1) + G * L * a1
    assert adv == pytest.approx([a0, a1, a2, a3])


def test_truncation_mid_window_bootstraps_and_cuts_trace():
    adv, _ = _run([0, 0, 0, 0], [0, 1, 0, 0])
    a3 = 1 + G * 8 - 4
    a2 = (1 + G * 7 - 3) + G * L * a3
    a1 = 1 + G * 6 - 2  # bootstraps from the real final observation, no trace from step 2
    a0 = (1 + G * 5 - 1) + G * L * a1
    assert adv == pytest.approx([a0, a1, a2, a3])


def test_truncation_at_last_step():
    adv, _ = _run([0, 0, 0, 0], [0, 0, 0, 1])
    a3 = 1 + G * 8 - 4
    a2 = (1 + G * 7 - 3) + G * L * a3
    a1 = (1 + G * 6 - 2) + G * L * a2
    a0 = (1 + G * 5 - 1) + G * L * a1
    assert adv == pytest.approx([a0, a1, a2, a3])


def test_next_values_use_real_final_observation_and_carried_state():
    env = TransformedEnv(CartPoleEnv(4, seed=1, max_episode_steps=5), InitTracker())
    agent = make_lstm_actor_critic(4, env.action_spec, hidden_size=8)
    env = agent.prime(env)
    collector = Collector(env, agent.rollout_policy, frames_per_batch=4 * 12, total_frames=-1)
    batch = next(iter(collector))
    collector.shutdown()
    nv = next_state_values(batch, agent)
    done = batch["next", "done"].squeeze(-1)
    # where the episode continues, V(next) is the value the collector computed at t+1
    cont = ~done[:, :-1]
    assert torch.allclose(nv[:, :-1][cont], batch[VALUE][:, 1:][cont], atol=1e-6)
    # at a truncation the next observation is the final one, not the reset observation at t+1
    trunc = batch["next", "truncated"].squeeze(-1)
    assert trunc[:, :-1].any()
    env_i, t = trunc[:, :-1].nonzero()[0].tolist()
    assert not torch.equal(batch["next", OBS][env_i, t], batch[OBS][env_i, t + 1])
    assert batch["next", HIDDEN_H][env_i, t].abs().sum() > 0  # the carried state, not zeros
    assert abs(float(nv[env_i, t]) - float(batch[VALUE][env_i, t + 1])) > 1e-6


def test_the_env_entries_are_read_under_the_keys_given():
    renamed = _batch([0, 1, 0, 0], [0, 0, 1, 0])
    nxt = renamed.get("next")
    for old, new in (("reward", "r"), ("terminated", "term"), ("truncated", "trunc")):
        nxt.rename_key_(old, new)
    nv = torch.tensor(NV).reshape(1, 4, 1)
    out = gae_from_values(renamed, nv, G, L, reward_key="r", terminated_key="term", truncated_key="trunc")
    expected = gae_from_values(_batch([0, 1, 0, 0], [0, 0, 1, 0]), nv, G, L)
    assert out[ADVANTAGE].tolist() == expected[ADVANTAGE].tolist()
    with pytest.raises(KeyError):  # no silent fallback to TorchRL's names
        gae_from_values(_batch([0, 0, 0, 0], [0, 0, 0, 0]), nv, G, L, reward_key="r")
