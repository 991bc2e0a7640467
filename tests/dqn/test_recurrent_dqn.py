"""Recurrent DQN (R2D2-style): the stored state is the acting state, the replayed forward reproduces
the acting Q-values, resets inside a window, burn-in, TD targets with termination and truncation,
the pipeline's one-line errors, exact resume and load_policy/predict."""
import gymnasium as gym
import pytest
import torch
from tensordict import TensorDict
from torchrl.modules import set_recurrent_mode

from torchrl_memory import DQNConfig, TrainingRun, load_policy, make_env
from torchrl_memory.dqn import RecurrentDQNAgent, build_dqn_agent
from torchrl_memory.dqn.recurrent_q import burn_in_state, state_keys_of, trunk_of
from torchrl_memory.dqn.sequence_loss import sequence_td_loss, sequence_td_terms
from torchrl_memory.pipelines import dqn

MODELS = ["lstm", "gru", "mingru", "ffm", "lru"]
TINY = ["--hidden-size", "8", "--hidden-sizes", "16", "--batch-size", "4", "--min-replay-size", "32", "--buffer-capacity", "400",
        "--sequence-len", "8", "--burn-in", "2", "--eval-episodes", "2", "--plot", "false"]


def _agent(model: str, num_envs: int = 2, **overrides) -> tuple[RecurrentDQNAgent, object]:
    cfg = DQNConfig(env_id="CartPoleNoVel", model=model, num_envs=num_envs, hidden_size=8, hidden_sizes=[16], batch_size=4,
                    min_replay_size=16, buffer_capacity=400, sequence_len=8, burn_in=0, **overrides)
    env = make_env(cfg.env_id, num_envs, "cpu", 0, normalize_obs=False)
    agent = build_dqn_agent(cfg, env)
    return agent, agent.prime(env)


def _act(agent, env, steps: int) -> list[tuple]:
    """``steps`` epsilon-greedy batched steps (epsilon near 1: short episodes, resets in every window),
    stored as the pipeline stores them; per step, what the policy read and the Q-values it computed."""
    td, seen = env.reset(), []
    for i in range(steps):
        before = td.clone()
        td, _ = agent.explore(td, i)
        seen.append((before, td.get("action_value").clone()))
        td, nxt = env.step_and_maybe_reset(td)
        agent.store(td)
        td = nxt
    return seen


def _perturb(net, scale=0.3):
    with torch.no_grad():
        for p in net.parameters():
            p.add_(scale * torch.randn_like(p))


def test_a_recurrent_model_gets_the_recurrent_agent_and_the_mlp_stays_the_plain_one():
    agent, env = _agent("gru")
    assert isinstance(agent, RecurrentDQNAgent) and agent.state_keys == ["recurrent_state"]
    assert "recurrent_state" in env.reset().keys()
    mlp = build_dqn_agent(DQNConfig(), make_env("CartPole-v1", 1, normalize_obs=False))
    assert type(mlp).__name__ == "DQNAgent" and mlp.state_keys == [] and mlp.primer() is None


@pytest.mark.parametrize("model", MODELS)
def test_the_stored_state_is_the_state_the_acting_policy_read(model):
    agent, env = _agent(model)
    seen = _act(agent, env, 60)
    storage = agent.replay.storage
    init_key = trunk_of(agent.q_net).in_keys[-1]
    for t, (before, _) in enumerate(seen):
        for key in [*agent.state_keys, init_key]:
            torch.testing.assert_close(storage[:, t].get(key), before.get(key), rtol=0, atol=0)
    assert bool(storage.get(init_key)[:, 1:].any())  # episodes ended and restarted inside the stream
    # and that state is not a constant: the trunk carried it from step to step
    assert float(storage.get(agent.state_keys[0])[:, 5:].abs().sum()) > 0


@pytest.mark.parametrize("model,head", [(m, dict(layer_norm=False)) for m in MODELS] + [("gru", dict(layer_norm=True)), ("gru", dict(layer_norm=True, dueling=True))])
def test_the_replayed_forward_from_the_stored_state_reproduces_the_acting_q_values(model, head):
    agent, env = _agent(model, **head)
    head_net = agent.q_net.module[1].module
    assert any(isinstance(m, torch.nn.LayerNorm) for m in head_net.modules()) == head["layer_norm"]
    assert hasattr(head_net, "advantage") == head.get("dueling", False)
    seen = _act(agent, env, 60)
    L = agent.config.sequence_len
    acting_q = torch.stack([q for _, q in seen], 1)  # [envs, T, actions]
    actions = agent.replay.storage.get("action")
    for start in (0, 13, 52):  # windows with episode starts inside them, at several offsets
        window = agent.replay.storage[:, start : start + L]
        q, _ = sequence_td_terms(agent.q_net, agent.target_net, window, burn_in=0, gamma=0.99)
        expected = acting_q[:, start : start + L].gather(-1, actions[:, start : start + L, None]).squeeze(-1)
        torch.testing.assert_close(q, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("model", MODELS)
def test_a_reset_inside_a_window_equals_a_fresh_unroll_from_there(model):
    agent, env = _agent(model)
    _act(agent, env, 60)
    storage = agent.replay.storage
    init = storage.get("is_init").reshape(2, -1)
    env_i, k = next((e, int(t)) for e in range(2) for t in init[e].nonzero().flatten() if 2 <= t <= 40)
    window = storage[env_i : env_i + 1, k - 2 : k + 6].clone()
    for key in agent.state_keys:  # whatever the state before the reset was, it must not matter after it
        window.get(key)[:, 0] = torch.randn_like(window.get(key)[:, 0])
    q_full, y_full = sequence_td_terms(agent.q_net, agent.target_net, window, burn_in=0, gamma=0.99)
    q_fresh, y_fresh = sequence_td_terms(agent.q_net, agent.target_net, window[:, 2:], burn_in=0, gamma=0.99)
    torch.testing.assert_close(q_full[:, 2:], q_fresh, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(y_full[:, 2:], y_fresh, rtol=1e-5, atol=1e-6)


def _step(net, obs, states, fresh, keys):
    """One sequential-mode step of ``net`` on one observation: (Q-values, next states)."""
    td = TensorDict({"observation": obs[None], "is_init": torch.tensor([[fresh]]), **{k: s[None] for k, s in zip(keys, states)}}, [1])
    with set_recurrent_mode(False):
        td = net(td)
    return td.get("action_value")[0], tuple(td.get(("next", k))[0] for k in keys)


@pytest.mark.parametrize("model", ["lstm", "gru", "ffm"])
@pytest.mark.parametrize("double_dqn", [True, False])
@pytest.mark.parametrize("n_step", [1, 3])
def test_td_targets_on_a_hand_built_window_with_a_termination_and_a_truncation(model, double_dqn, n_step):
    agent, env = _agent(model)
    _perturb(agent.target_net)  # target and online nets differ: each target must use the right one
    keys = state_keys_of(trunk_of(agent.q_net))
    L, gamma = 7, 0.9
    first = env.reset()
    obs_dim = first.get("observation").shape[-1]
    obs, next_obs = torch.randn(L, obs_dim), torch.randn(L, obs_dim)
    terminated = torch.tensor([0, 0, 1, 0, 0, 0, 0], dtype=torch.bool)
    truncated = torch.tensor([0, 0, 0, 0, 1, 0, 0], dtype=torch.bool)
    is_init = torch.tensor([0, 0, 0, 1, 0, 1, 0], dtype=torch.bool)  # a new episode after each end
    for t in range(L - 1):  # a continuing step's next observation is the next step's observation
        if not (terminated[t] or truncated[t]):
            next_obs[t] = obs[t + 1]
    reward, action = torch.randn(L), torch.randint(0, 2, (L,))
    stored = tuple(torch.randn(first.get(k).shape[1:]) for k in keys)
    window = TensorDict({
        "observation": obs, "action": action, "is_init": is_init[:, None],
        "next": {"observation": next_obs, "reward": reward[:, None], "terminated": terminated[:, None], "truncated": truncated[:, None],
                 "done": (terminated | truncated)[:, None]},
        **{k: s.expand(L, *s.shape).clone() for k, s in zip(keys, stored)},
    }, [L]).unsqueeze(0)
    q, y = sequence_td_terms(agent.q_net, agent.target_net, window, burn_in=0, gamma=gamma, double_dqn=double_dqn, n_step=n_step)

    # step by step: each net carries its own state; Q(s'_k) from the state after step k
    h_on, h_tg = stored, stored
    expected_q, value = [], []
    with torch.no_grad():
        for t in range(L):
            q_t, h_on = _step(agent.q_net, obs[t], h_on, bool(is_init[t]), keys)
            _, h_tg = _step(agent.target_net, obs[t], h_tg, bool(is_init[t]), keys)
            next_online, _ = _step(agent.q_net, next_obs[t], h_on, False, keys)
            next_target, _ = _step(agent.target_net, next_obs[t], h_tg, False, keys)
            a_star = next_online.argmax() if double_dqn else next_target.argmax()
            value.append(0.0 if terminated[t] else next_target[a_star])
            expected_q.append(q_t[action[t]])
    expected_y = []  # up to n rewards, stopping after an episode's last step or the window's
    for t in range(L):
        ret, k = 0.0, 0
        while k < n_step and t + k < L:
            ret, k = ret + gamma ** k * reward[t + k], k + 1
            if terminated[t + k - 1] or truncated[t + k - 1]:
                break
        expected_y.append(ret + gamma ** k * value[t + k - 1])
    torch.testing.assert_close(q[0].detach(), torch.stack(expected_q), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(y[0], torch.stack(expected_y), rtol=1e-5, atol=1e-6)
    # the truncated step bootstraps from its own final observation, not from the next episode's first
    assert not torch.isclose(y[0, 4], reward[4]).item()


@pytest.mark.parametrize("model", MODELS)
def test_burn_in_steps_carry_no_gradient_and_no_loss(model):
    agent, env = _agent(model)
    _act(agent, env, 60)
    B = 3
    window = agent.replay.storage[:, 10:18].clone()
    obs = window.get("observation").clone().requires_grad_(True)
    window.set("observation", obs)
    loss = sequence_td_loss(agent.q_net, agent.target_net, window, burn_in=B, gamma=0.99)
    loss.backward()
    assert obs.grad is not None and float(obs.grad[:, B:].abs().sum()) > 0
    assert float(obs.grad[:, :B].abs().sum()) == 0.0
    q, _ = sequence_td_terms(agent.q_net, agent.target_net, window, burn_in=B, gamma=0.99)
    assert q.shape == (2, 8 - B)
    # the burn-in's actions and rewards are not in the loss; its observations set the state
    other = window.detach().clone()
    other.get("action")[:, :B] = 1 - other.get("action")[:, :B]
    other.get(("next", "reward"))[:, :B] += 5.0
    torch.testing.assert_close(sequence_td_loss(agent.q_net, agent.target_net, other, B, 0.99), loss.detach(), rtol=0, atol=0)
    moved = window.detach().clone()
    moved.get("observation")[:, :B] += 1.0
    moved.get("is_init")[:, :] = False  # no reset: the burn-in's last state reaches the loss
    base = window.detach().clone()
    base.get("is_init")[:, :] = False
    assert sequence_td_loss(agent.q_net, agent.target_net, moved, B, 0.99) != sequence_td_loss(agent.q_net, agent.target_net, base, B, 0.99)


@pytest.mark.parametrize("model", MODELS)
def test_burn_in_state_equals_stepping_the_trunk_one_step_at_a_time(model):
    agent, env = _agent(model)
    _act(agent, env, 60)
    trunk = trunk_of(agent.q_net)
    keys = state_keys_of(trunk)
    # a window with an episode start inside it (near-random actions: short episodes)
    k = next(int(t) for t in agent.replay.storage.get("is_init")[0, :, 0].nonzero().flatten() if 6 <= t <= 40)
    window = agent.replay.storage[:, k - 6 : k + 6]
    got = burn_in_state(trunk, window)
    states = tuple(window.get(k)[:, 0] for k in keys)
    with torch.no_grad():
        for t in range(window.shape[1]):
            step = TensorDict({"observation": window.get("observation")[:, t], "is_init": window.get("is_init")[:, t],
                               **dict(zip(keys, states))}, [2])
            with set_recurrent_mode(False):
                step = trunk(step)
            states = tuple(step.get(("next", k)) for k in keys)
    for a, b in zip(got, states):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_burn_in_state_equals_torchrls_burn_in_transform_on_a_window_without_reset():
    from torchrl.envs.transforms import BurnInTransform

    agent, env = _agent("gru")
    _act(agent, env, 60)
    trunk = trunk_of(agent.q_net)
    window = agent.replay.storage[:, 20:28].clone()
    window.get("is_init").zero_()
    ours = burn_in_state(trunk, window[:, :5])[0]
    theirs = BurnInTransform(modules=[trunk], burn_in=5)(window.clone())
    torch.testing.assert_close(ours, theirs.get("recurrent_state")[:, 0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("argv, says", [
    (["--model", "gru", "--sequence-len", "8", "--burn-in", "8"], r"'burn_in' = 8 .*sequence_len - 1 = 7"),
    (["--model", "lstm", "--sequence-len", "600", "--buffer-capacity", "1000", "--num-envs", "2", "--min-replay-size", "500"],
     r"'sequence_len' = 600 .*buffer_capacity / num_envs = 500"),
    (["--model", "gru", "--num-envs", "2", "--collector-workers", "2"], r"collector_workers = 2 with model = 'gru'"),
    (["--model", "lstm", "--env", "Pendulum-v1"], r"DQN needs a discrete action space"),
    (["--model", "transformer"], r"model.*transformer.*lstm"),
])
def test_bad_recurrent_settings_get_one_line_before_anything_is_written(tmp_path, user_error_line, argv, says):
    import re

    line = user_error_line(dqn.main, [*argv, "--run-root", str(tmp_path)])
    assert re.search(says, line), line
    assert not any(tmp_path.iterdir())


@pytest.fixture(scope="module")
def gru_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("rdqn")
    dqn.main([*TINY, "--env", "gym:CartPoleNoVel", "--model", "gru", "--total-steps", "300", "--eval-every", "150", "--run-root", str(root)])
    return TrainingRun.find(root)


def test_predict_threads_the_state_as_the_torchrl_rollout_does(gru_run):
    policy = load_policy(gru_run.path / "latest.pt")
    assert policy.state_keys == ["recurrent_state"]
    rollout = policy.make_env(1, seed=5).rollout(200, policy.as_module(), break_when_any_done=True)
    env = gym.make("CartPole-v1")
    env.reset(seed=5)
    obs, _ = env.reset()
    state = None
    for t in range(rollout.shape[-1]):
        action, state = policy.predict(obs, state, episode_start=t == 0)
        assert int(action) == int(rollout["action"][0, t])
        torch.testing.assert_close(state["recurrent_state"][0], rollout["next", "recurrent_state"][0, t], rtol=1e-5, atol=1e-6)
        obs, *_ = env.step(int(action))
