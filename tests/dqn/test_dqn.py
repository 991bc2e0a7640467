"""DQN: schedule, replay, target cadence, TD target, trainer bookkeeping, resume."""
import json

import pytest
import torch
from tensordict import TensorDict
from torchrl.envs import ExplorationType, set_exploration_type

from torchrl_memory import ConfigError, TrainingRun, make_env
from torchrl_memory.dqn import LinearEpsilon
from torchrl_memory.dqn.agent import DqnAgent
from torchrl_memory.dqn.config import DqnConfig
from torchrl_memory.dqn import DQNRunState
from torchrl_memory.keys import OBS

# the plain Linear/ReLU Q-network (the hand-written backward's), unless a test asks for the LayerNorm
SMALL = dict(batch_size=8, min_replay_size=16, buffer_capacity=64, hidden_sizes=[16], epsilon_decay_steps=100, target_update_tau=None, layer_norm=False)


def _agent(**kw):
    env = make_env(kw.get("env_id", "CartPole-v1"), kw.pop("num_envs", 1), seed=0, normalize_obs=False)
    return env, DqnAgent(4, env.action_spec, DqnConfig(**{**SMALL, **kw}))


def _params(td):
    return {k: v.clone() for k, v in td.flatten_keys().items()}


def _same(a, b):
    return all(torch.equal(a[k], b[k]) for k in a)


def test_epsilon_schedule_start_end_and_midpoint():
    eps = LinearEpsilon(1.0, 0.05, 1000)
    assert eps(0) == 1.0
    assert eps(500) == pytest.approx(0.525)
    assert eps(1000) == pytest.approx(0.05) and eps(10**6) == pytest.approx(0.05)


def test_replay_ring_overwrites_oldest_and_keeps_capacity():
    env, agent = _agent(buffer_capacity=20, min_replay_size=16)
    for i in range(30):
        td = TensorDict({OBS: torch.full((1, 4), float(i)), "action": torch.zeros(1, dtype=torch.long), "next": {OBS: torch.zeros(1, 4), "reward": torch.zeros(1, 1), "terminated": torch.zeros(1, 1, dtype=torch.bool), "truncated": torch.zeros(1, 1, dtype=torch.bool), "done": torch.zeros(1, 1, dtype=torch.bool)}}, batch_size=[1])
        agent.store(td)
    assert len(agent.replay) == 20
    stored = sorted(agent.replay.storage.get(torch.arange(20))[OBS][:, 0].tolist())
    assert stored == [float(i) for i in range(10, 30)]


def test_no_update_before_max_of_batch_and_min_replay():
    env, agent = _agent(batch_size=8, min_replay_size=16)
    trainer = DQNRunState(env, agent)
    it = trainer.steps()
    updates = [next(it).did_update for _ in range(20)]
    assert not any(updates[:15]) and all(updates[15:])  # first update on the step that fills the 16th slot


def test_target_starts_equal_to_online_and_syncs_exactly_at_multiples():
    env, agent = _agent(target_update_freq=5, min_replay_size=8, batch_size=8)
    online, target = agent.loss.value_network_params, agent.loss.target_value_network_params
    assert _same(_params(online), _params(target))
    trainer = DQNRunState(env, agent)
    it = trainer.steps()
    synced_at = []
    for _ in range(22):
        before = _params(target)
        m = next(it)
        if not _same(before, _params(target)):
            synced_at.append(m.total_steps)
    # updates start at step 8; warm-up steps count towards the cadence: copies at 10, 15, 20
    # (TorchRL's HardUpdate(interval=5) stepped every env step would copy at 6, 12, 18)
    assert synced_at == [10, 15, 20]


def test_soft_target_update_moves_target_by_tau_each_env_step():
    env, agent = _agent(target_update_tau=0.25, min_replay_size=8, batch_size=8)
    online, target = agent.loss.value_network_params, agent.loss.target_value_network_params
    with torch.no_grad():
        for p in online.values(True, True):
            p.add_(1.0)  # make online and target differ
    before_t, before_o = _params(target), _params(online)
    agent.sync_target()
    after = _params(target)
    for k in after:
        torch.testing.assert_close(after[k], 0.75 * before_t[k] + 0.25 * before_o[k])


def test_td_target_bootstraps_truncated_not_terminated_transitions():
    env, agent = _agent(gamma=0.5)
    obs = torch.randn(2, 4)
    nxt = torch.randn(2, 4)
    td = TensorDict(
        {OBS: obs, "action": torch.tensor([0, 1]), "next": {OBS: nxt, "reward": torch.ones(2, 1), "terminated": torch.tensor([[True], [False]]), "truncated": torch.tensor([[False], [True]]), "done": torch.tensor([[True], [True]])}},
        batch_size=[2],
    )
    target = agent.loss.value_estimator.value_estimate(td.clone(), target_params=agent.loss.target_value_network_params)
    q_next = agent.q_values(nxt).max(-1).values
    assert target[0].item() == pytest.approx(1.0)  # terminated: r only
    assert target[1].item() == pytest.approx(1.0 + 0.5 * q_next[1].item(), rel=1e-5)  # truncated: bootstraps
    ours = agent.td_target(nxt, td["next", "reward"].squeeze(-1), td["next", "terminated"].squeeze(-1))
    torch.testing.assert_close(ours, target.squeeze(-1))  # the tensor path used for training agrees


def _random_batch(n=32, obs_dim=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    terminated = torch.rand(n, 1, generator=g) < 0.3
    truncated = ~terminated & (torch.rand(n, 1, generator=g) < 0.3)
    return TensorDict(
        {OBS: torch.randn(n, obs_dim, generator=g), "action": torch.randint(0, 2, (n,), generator=g),
         "next": {OBS: torch.randn(n, obs_dim, generator=g), "reward": torch.randn(n, 1, generator=g), "terminated": terminated, "truncated": truncated, "done": terminated | truncated}},
        batch_size=[n],
    )


def _fields(batch):
    """A replay TensorDict as ``DqnAgent.td_loss``'s tensors."""
    return batch[OBS], batch["action"], batch["next", OBS], batch["next", "reward"].squeeze(-1), batch["next", "terminated"].squeeze(-1)


NETS = {"plain": {}, "layer_norm": dict(layer_norm=True), "dueling": dict(dueling=True), "both": dict(layer_norm=True, dueling=True)}


@pytest.mark.parametrize("net", NETS)
@pytest.mark.parametrize("double_dqn", [False, True])
@pytest.mark.parametrize("tau", [None, 0.3])
def test_tensor_loss_equals_torchrl_dqnloss_through_target_syncs_and_load(double_dqn, tau, net):
    torch.manual_seed(0)
    env, agent = _agent(double_dqn=double_dqn, target_update_tau=tau, gamma=0.9, **NETS[net])
    other_env, other = _agent(double_dqn=double_dqn, target_update_tau=tau, gamma=0.9, **NETS[net])
    if NETS[net]:  # LayerNorm weights and zero-initialised dueling biases: perturb them so they matter
        with torch.no_grad():
            other.flat_params.add_(0.1 * torch.randn_like(other.flat_params))

    def check(batch):
        ours = agent.td_loss(*_fields(batch))
        grads_ours = torch.autograd.grad(ours, agent.params)
        ref = agent.loss(batch.clone())["loss"]
        grads_ref = torch.autograd.grad(ref, agent.params)
        torch.testing.assert_close(ours, ref, rtol=0, atol=1e-6)
        for a, b in zip(grads_ours, grads_ref):
            torch.testing.assert_close(a, b, rtol=0, atol=1e-6)

    check(_random_batch(seed=1))  # target == online at construction
    for step in range(3):  # online moves, then the target follows by a hard copy or a soft step
        agent.update(_fields(_random_batch(seed=10 + step)))
        check(_random_batch(seed=2 + step))
        agent.sync_target()
        check(_random_batch(seed=5 + step))
    agent.load_state_dict(other.state_dict())  # weights replaced in place: the target MLP still follows
    check(_random_batch(seed=9))


@pytest.mark.parametrize("double_dqn", [False, True])
@pytest.mark.parametrize("hidden", [[16], [64, 64]])
def test_hand_written_gradient_step_equals_autograd_s(double_dqn, hidden):
    """``update()``'s hand-written backward (dqn/manual_backward.py) against autograd through
    ``td_loss`` (pinned to DQNLoss above): same loss, same gradients, same weights after each step."""
    torch.manual_seed(0)
    _, agent = _agent(double_dqn=double_dqn, hidden_sizes=hidden)
    torch.manual_seed(0)
    _, ref = _agent(double_dqn=double_dqn, hidden_sizes=hidden)
    ref.manual_backward = False
    assert agent._layers is not None and len(agent._layers) == len(hidden) + 1
    for step in range(4):
        batch = _random_batch(seed=20 + step)
        batch["next", "reward"] *= 3  # TD errors on both sides of the Huber's |x| = 1 kink
        fields = _fields(batch)
        torch.testing.assert_close(agent.update(fields), ref.update(fields), rtol=0, atol=1e-6)
        torch.testing.assert_close(agent.flat_params.grad, ref.flat_params.grad, rtol=0, atol=1e-6)
        torch.testing.assert_close(agent.flat_params, ref.flat_params, rtol=0, atol=1e-6)
    assert agent.flat_params.grad.abs().sum() > 0


def test_layer_norm_sits_after_every_hidden_linear_and_trains_through_autograd():
    """``--layer-norm``: Linear -> LayerNorm -> ReLU per hidden layer, on the online and the target
    network; the hand-written backward (Linear/ReLU only) steps aside and updates move the
    LayerNorm's own weights too."""
    torch.manual_seed(0)
    _, agent = _agent(hidden_sizes=[16, 8], layer_norm=True)
    for net in (agent.q_net, agent.target_net):
        kinds = [type(m).__name__ for m in net]
        assert kinds == ["Linear", "LayerNorm", "ReLU", "Linear", "LayerNorm", "ReLU", "Linear"]
        assert [m.normalized_shape for m in net if isinstance(m, torch.nn.LayerNorm)] == [(16,), (8,)]
    assert agent._layers is None
    norm_before = agent.q_net[1].weight.detach().clone()
    agent.update(_fields(_random_batch(seed=3)))
    assert not torch.equal(agent.q_net[1].weight, norm_before)
    _, plain = _agent(hidden_sizes=[16, 8])
    assert plain._layers is not None and not any(isinstance(m, torch.nn.LayerNorm) for m in plain.q_net)


@pytest.mark.parametrize("layer_norm", [False, True])
def test_the_dueling_network_is_value_plus_centred_advantage(layer_norm):
    """``--dueling``: Q(s, .) = V(s) + A(s, .) - mean A(s, .) from one shared body; the target network
    has the same two outputs, and the hand-written (plain MLP) backward steps aside."""
    torch.manual_seed(0)
    _, agent = _agent(hidden_sizes=[16, 8], dueling=True, layer_norm=layer_norm)
    assert agent._layers is None
    obs = torch.randn(5, 4)
    for net in (agent.q_net, agent.target_net):
        with torch.no_grad():
            net.value[0].bias.fill_(0.7)
            feats = net.features(obs)
            value, adv = net.value(feats), net.advantage(feats)
            torch.testing.assert_close(net(obs), value + adv - adv.mean(-1, keepdim=True))
        assert value.shape == (5, 1) and adv.shape == (5, 2)
        assert any(isinstance(m, torch.nn.LayerNorm) for m in net.features) == layer_norm


@pytest.mark.parametrize("net", NETS)
@pytest.mark.parametrize("num_envs", [1, 8])
def test_plain_exploration_equals_the_torchrl_policy(num_envs, net):
    """``explore``'s tensor path against ``explore_policy`` (QValueActor + EGreedyModule): from the same
    RNG state, the same actions, action values and chosen values, at the start, middle and end of the
    schedule, for the plain (hand-written forward), LayerNorm and dueling Q-networks."""
    env, agent = _agent(num_envs=num_envs, hidden_sizes=[64, 64], **NETS[net])
    assert (agent._layers is not None) == (net == "plain")
    td = env.reset()
    td.set(OBS, torch.randn(num_envs, 4) * 3)
    random_seen = greedy_seen = False
    for step in [0, 50, 10_000] * 4:
        torch.manual_seed(step + len(td))
        ours, eps_ours = agent.explore(td.clone(), step)
        torch.manual_seed(step + len(td))
        agent.set_epsilon(step)
        with set_exploration_type(ExplorationType.RANDOM):  # as explore() runs it
            ref = agent.explore_policy(td.clone())
        assert eps_ours == agent.epsilon(step) == pytest.approx(float(agent.egreedy.eps))
        for key in ("action", "action_value", "chosen_action_value"):
            assert ours.get(key).dtype == ref.get(key).dtype and torch.equal(ours.get(key), ref.get(key)), key
        greedy = ref["action_value"].argmax(-1)
        random_seen |= bool((ref["action"] != greedy).any())
        greedy_seen |= bool((ref["action"] == greedy).all())
        td.set(OBS, torch.randn(num_envs, 4) * 3)
    assert random_seen and greedy_seen  # both branches of the epsilon draw were compared


def test_stored_next_observation_is_the_real_final_one():
    env = make_env("CartPole-v1", 1, seed=0, normalize_obs=False)
    agent = DqnAgent(4, env.action_spec, DqnConfig(**{**SMALL, "buffer_capacity": 1000, "min_replay_size": 1000}))
    trainer = DQNRunState(env, agent)
    it = trainer.steps()
    m = next(it)
    while not m.episode_done:
        m = next(it)
    last = agent.replay.storage.get(torch.tensor([m.total_steps - 1]))
    final_obs = last["next", OBS][0]
    assert final_obs.abs()[[0, 2]].max() > 0.2 or m.episode_status == "Truncated"  # out of bounds, not a reset state
    assert not torch.equal(final_obs, trainer.td[OBS][0])  # the env moved on to a fresh reset observation
    assert trainer.td[OBS][0].abs().max() <= 0.05


def _trainer(tmp_path, name="run", **kw):
    torch.manual_seed(0)  # same network initialisation for every trainer a test compares
    env, agent = _agent(**{"checkpoint_every": 25, "keep_checkpoints": 2, **kw})
    run = TrainingRun.create(tmp_path, name, agent.config.to_dict())
    factory = lambda n, seed: make_env(agent.config.env_id, n, seed=seed, normalize_obs=False)
    return DQNRunState(env, agent, eval_env_factory=factory, run=run)


def test_train_equals_a_loop_over_steps_with_the_pipeline_cadences(tmp_path):
    a, b = _trainer(tmp_path / "a", eval_every=50), _trainer(tmp_path / "b", eval_every=50)
    torch.manual_seed(0)
    a.train(100)
    torch.manual_seed(0)
    for m in b.steps():  # pipelines/dqn.py's loop: evaluate, then checkpoint, at their cadences
        if b.eval_due(m.total_steps - 1, m.total_steps):
            b.eval()
        if b.checkpoint_due(m.total_steps - 1, m.total_steps):
            b.save_checkpoint()
        if m.total_steps >= 100:
            break
    assert a.run.read_jsonl("train_episodes.jsonl") == b.run.read_jsonl("train_episodes.jsonl")
    assert a.run.read_jsonl("eval_episodes.jsonl") == b.run.read_jsonl("eval_episodes.jsonl")
    assert {r["total_steps"] for r in a.run.read_jsonl("eval_episodes.jsonl")} == {50, 100}
    assert [s for s, _ in a.run.checkpoints()] == [s for s, _ in b.run.checkpoints()] == [75, 100]  # pruned to 2
    assert json.loads((b.run.path / "metadata.json").read_text())["total_steps"] == 100
    assert _same(_params(a.agent.loss.value_network_params), _params(b.agent.loss.value_network_params))


def test_steps_alone_write_no_checkpoint(tmp_path):
    t = _trainer(tmp_path)
    it = t.steps()
    for _ in range(60):  # checkpoint_every 25 is the caller's to act on
        next(it)
    assert t.run.checkpoints() == [] and not (t.run.path / "latest.pt").exists()


@pytest.mark.parametrize("env_id", ["CartPole-v1", "gym:CartPole-v1"])
def test_eval_leaves_training_untouched(tmp_path, env_id):
    """Same seed with and without an eval() in the middle: same actions, same weights, same logs (both backends)."""
    a, b = _trainer(tmp_path / "a", env_id=env_id), _trainer(tmp_path / "b", env_id=env_id)
    torch.manual_seed(0)
    a.train(60)
    torch.manual_seed(0)
    b.train(30)
    carried, rng = b.td.clone(), torch.get_rng_state()
    b.eval(3)
    assert _same(_params(b.td), _params(carried))
    assert torch.equal(torch.get_rng_state(), rng)  # the training RNG stream did not move
    b.train(30)
    assert _same(_params(a.td), _params(b.td))
    assert _same(_params(a.agent.loss.value_network_params), _params(b.agent.loss.value_network_params))
    assert a.run.read_jsonl("train_episodes.jsonl") == b.run.read_jsonl("train_episodes.jsonl")
    assert len(b.run.read_jsonl("eval_episodes.jsonl")) == 3


def test_best_is_saved_only_on_strict_improvement(tmp_path, monkeypatch):
    from torchrl_memory.dqn import run_state as mod
    from torchrl_memory.runs.stats import EpisodeRecord

    t = _trainer(tmp_path)
    returns = iter([10.0, 10.0, 12.0])
    monkeypatch.setattr(mod, "run_greedy_episodes", lambda env, policy: [EpisodeRecord(next(returns), 1, "Terminated")])
    saved = []
    monkeypatch.setattr(t.run, "save_best", lambda state: saved.append(state["counters"]["best_eval"]))
    for _ in range(3):
        t.eval(1)
    assert saved == [10.0, 12.0]


def test_run_ids_are_unique_within_one_second(tmp_path):
    ids = {TrainingRun.create(tmp_path, "same", {}).metadata["run_id"] for _ in range(20)}
    assert len(ids) == 20


def test_resume_equals_straight_training(tmp_path):
    torch.manual_seed(0)
    straight = _trainer(tmp_path / "a")
    straight.train(120)
    torch.manual_seed(0)
    first = _trainer(tmp_path / "b")
    first.train(60)
    first.save_checkpoint()
    state = TrainingRun.find(tmp_path / "b").load_latest()
    torch.manual_seed(123)  # resume must not depend on the process's RNG
    resumed = _trainer(tmp_path / "c")
    resumed.load_state_dict(state)
    resumed.train(60)
    pa, pb = _params(straight.agent.loss.value_network_params), _params(resumed.agent.loss.value_network_params)
    for k in pa:
        torch.testing.assert_close(pa[k], pb[k], rtol=0, atol=1e-6)
    assert _same(_params(straight.agent.loss.target_value_network_params), _params(resumed.agent.loss.target_value_network_params))
    assert straight.total_episodes == resumed.total_episodes


@pytest.mark.parametrize(
    "kw,msg",
    [
        (dict(min_replay_size=200, buffer_capacity=100), r"'min_replay_size' = 200 .*\[1, 100\]"),
        (dict(batch_size=64, min_replay_size=32), r"'batch_size' = 64 .*\[1, 32\]"),
        (dict(epsilon_end=1.5), r"'epsilon_end' = 1.5 .*\[0.0, 1.0\]"),
        (dict(target_update_freq=0), r"'target_update_freq' = 0 .*>= 1"),
        (dict(train_freq=0), r"'train_freq' = 0"),
    ],
)
def test_config_that_can_never_train_is_rejected(kw, msg):
    with pytest.raises(ConfigError, match=msg):
        DqnConfig(**kw).validate()


def test_continuous_action_space_is_rejected():
    env = make_env("Pendulum-v1", 1, seed=0, normalize_obs=False)
    with pytest.raises(ValueError, match="DQN needs a discrete action space"):
        DqnAgent(3, env.action_spec, DqnConfig())


@pytest.mark.parametrize("schedule,floor", [("constant", 0.0), ("linear", 0.0), ("linear", 0.25)])
def test_the_learning_rate_follows_its_schedule_over_the_budget(schedule, floor):
    env, agent = _agent(total_steps=100, lr_schedule=schedule, lr_floor=floor, learning_rate=1e-3)
    state = DQNRunState(env, agent)
    seen = {}
    for m in state.steps():
        if m.did_update:
            seen[m.total_steps] = agent.optimizer.param_groups[0]["lr"]
        if m.total_steps == 100:
            break
    expected = {n: 1e-3 if schedule == "constant" else 1e-3 * max(1 - n / 100, floor) for n in seen}
    assert seen and all(abs(seen[n] - expected[n]) < 1e-12 for n in seen)
    assert schedule == "constant" or seen[max(seen)] < 0.5e-3  # it did decay


def test_lr_floor_out_of_range_is_refused():
    with pytest.raises(ConfigError, match="'lr_floor' = 1.5"):
        DqnConfig(lr_floor=1.5).validate()
