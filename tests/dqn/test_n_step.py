"""n-step returns (dqn/n_step.py): the fold from the replay against a step-by-step reference,
TorchRL's DQNLoss on the folded batch, and the agent's sampling from its own replay."""
import pytest
import torch
from tensordict import TensorDict
from torchrl.data import LazyTensorStorage, ReplayBuffer
from torchrl.envs import MultiStepTransform

from torchrl_memory import make_env
from torchrl_memory.dqn.agent import DQNAgent
from torchrl_memory.dqn.config import DQNConfig
from torchrl_memory.dqn.n_step import fold_n_step
from torchrl_memory.keys import OBS

GAMMA = 0.9


def _episodes(n_envs: int, steps: int, seed: int) -> list[list[dict]]:
    """Per env, ``steps`` consecutive transitions with random rewards and episode ends (terminated or
    truncated); each next observation is unique, so a gathered one tells which step it came from."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for e in range(n_envs):
        rows = []
        for t in range(steps):
            end = torch.rand((), generator=g).item()
            terminated, truncated = end < 0.12, 0.12 <= end < 0.2
            rows.append({"obs": float(1000 * e + t), "next_obs": float(1000 * e + t) + 0.5, "reward": torch.randn((), generator=g).item(),
                         "terminated": terminated, "truncated": truncated})
        out.append(rows)
    return out


def _fill(rb, episodes, obs_dim: int = 1) -> tuple[TensorDict, int]:
    """Writes the episodes into replay ``rb`` one batched step at a time (env order within a step), as
    the in-process loop does; returns its storage's ``[capacity]`` TensorDict and the slot written last.
    The first observation entry is the step's id; ``obs_dim > 1`` adds random entries after it."""
    n_envs, steps = len(episodes), len(episodes[0])
    g = torch.Generator().manual_seed(0)
    for t in range(steps):
        rows = [episodes[e][t] for e in range(n_envs)]
        col = lambda k, dtype=torch.float32: torch.tensor([[r[k]] for r in rows], dtype=dtype)  # noqa: E731
        terminated, truncated = col("terminated", torch.bool), col("truncated", torch.bool)
        obs, next_obs = (torch.cat([col(k), torch.randn(n_envs, obs_dim - 1, generator=g)], -1) for k in ("obs", "next_obs"))
        rb.extend(TensorDict({OBS: obs, "action": torch.randint(0, 2, (n_envs,), generator=g), "next": {
            OBS: next_obs, "reward": col("reward"), "terminated": terminated, "truncated": truncated, "done": terminated | truncated}}, batch_size=[n_envs]))
    return rb.storage._storage, (rb._writer._cursor - 1) % rb.storage.max_size


def _stored(episodes, capacity: int) -> tuple[TensorDict, int]:
    return _fill(ReplayBuffer(storage=LazyTensorStorage(capacity)), episodes)


def _reference(episodes, env: int, t: int, n: int) -> tuple[float, float, bool, int]:
    """The n-step (next obs, return, terminated, k) of env's step t, walking its steps one by one."""
    rows, ret, k = episodes[env], 0.0, 0
    for j in range(n):
        if t + j >= len(rows):  # not stored yet: the window stops at the newest step
            break
        row = rows[t + j]
        ret += GAMMA ** j * row["reward"]
        k = j + 1
        if row["terminated"] or row["truncated"]:
            break
    last = rows[t + k - 1]
    return last["next_obs"], ret, last["terminated"], k


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("n_envs, capacity", [(1, 200), (3, 600), (3, 100)], ids=["1env", "3envs", "3envs-wrapped"])
def test_the_fold_equals_a_step_by_step_n_step_return_cut_at_episode_ends_and_at_the_newest_step(n, n_envs, capacity):
    steps = 150
    episodes = _episodes(n_envs, steps, seed=n + 7 * n_envs)
    data, newest = _stored(episodes, capacity)
    cut, ends = 0, 0
    for slot in range(min(capacity, n_envs * steps)):  # the wrapped storage holds the newest steps only
        env, t = divmod(int(data[OBS][slot].item()), 1000)
        next_obs, reward, terminated, discount = fold_n_step(data, torch.tensor([slot]), n_step=n, gamma=GAMMA, stride=n_envs, newest=newest)
        ref_obs, ref_ret, ref_term, k = _reference(episodes, env, t, n)
        assert next_obs.item() == ref_obs
        assert reward.item() == pytest.approx(ref_ret, abs=1e-5)
        assert terminated.item() == ref_term
        assert discount.item() == pytest.approx(GAMMA ** k)
        cut += k < n and t + n > steps
        ends += k < n and t + n <= steps
    if n > 1:  # the cases that matter occurred: windows cut by an episode end and by the newest step
        assert ends > 0 and cut > 0


def test_a_window_reaching_a_termination_does_not_bootstrap_where_torchrls_multistep_transform_does():
    """Why the fold is ours: TorchRL's MultiStepTransform stores the window's next observation and summed
    reward but the first step's done flags, so a window that reaches a termination reads as not terminated."""
    T, n = 6, 3
    terminated = torch.zeros(1, T, 1, dtype=torch.bool)
    terminated[0, 3] = True  # the episode terminates at step 3
    steps = TensorDict({OBS: torch.arange(T).float().view(1, T, 1), "next": {
        OBS: torch.arange(1, T + 1).float().view(1, T, 1), "reward": torch.ones(1, T, 1), "terminated": terminated,
        "truncated": torch.zeros_like(terminated), "done": terminated.clone()}}, batch_size=[1, T])
    rb = ReplayBuffer(storage=LazyTensorStorage(10, ndim=2), transform=MultiStepTransform(n, GAMMA))
    rb.extend(steps)
    theirs = rb[:][0]
    assert theirs[1]["next", OBS].item() == 4.0 and not theirs[1]["next", "terminated"].item()  # bootstraps from the terminal obs
    next_obs, reward, ours_terminated, discount = fold_n_step(steps[0], torch.tensor([1]), n_step=n, gamma=GAMMA, stride=1, newest=T - 1)
    assert next_obs.item() == 4.0 and ours_terminated.item()
    assert reward.item() == pytest.approx(1 + GAMMA + GAMMA ** 2) and discount.item() == pytest.approx(GAMMA ** 3)


@pytest.mark.parametrize("double_dqn", [False, True])
@pytest.mark.parametrize("layer_norm", [False, True])
def test_the_n_step_loss_equals_torchrl_dqnloss_on_the_folded_batch(double_dqn, layer_norm):
    """TorchRL's DQNLoss reads ``steps_to_next_obs`` (its TD(0) estimator discounts by gamma^k): fed the
    folded batch with the window's own terminated flag, it gives our loss and gradients."""
    torch.manual_seed(0)
    env = make_env("CartPole-v1", 1, seed=0, normalize_obs=False)
    agent = DQNAgent(4, env.action_spec, DQNConfig(n_step=3, gamma=GAMMA, double_dqn=double_dqn, layer_norm=layer_norm, hidden_sizes=[16],
                                                   batch_size=32, min_replay_size=32, buffer_capacity=300))
    with torch.no_grad():  # target != online, so the double-DQN argmax matters
        agent.loss.target_value_network_params.apply(lambda p: p.add_(0.1 * torch.randn_like(p)))
    _fill(agent.replay, _episodes(1, 200, seed=3), obs_dim=4)
    torch.manual_seed(1)
    obs, action, next_obs, reward, terminated, discount = agent.sample_batches(1)[0]
    assert (discount > GAMMA ** 3 + 1e-6).any() and terminated.any()  # some windows were cut by an episode end
    ours = agent.td_loss(obs, action, next_obs, reward, terminated, discount)
    batch = TensorDict({OBS: obs, "action": action, "steps_to_next_obs": (discount.log() / torch.log(torch.tensor(GAMMA))).round().long().unsqueeze(-1),
                        "next": {OBS: next_obs, "reward": reward.unsqueeze(-1), "terminated": terminated.unsqueeze(-1),
                                 "truncated": torch.zeros_like(terminated).unsqueeze(-1), "done": terminated.unsqueeze(-1)}}, batch_size=[32])
    ref = agent.loss(batch)["loss"]
    torch.testing.assert_close(ours, ref, rtol=0, atol=1e-6)
    for a, b in zip(torch.autograd.grad(ours, agent.params), torch.autograd.grad(agent.loss(batch)["loss"], agent.params)):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6)


@pytest.mark.parametrize("num_envs, workers", [(3, 1), (4, 2)], ids=["in-process", "collector"])
def test_the_agent_folds_at_the_stride_its_replay_was_written_with(num_envs, workers):
    """Envs per stored step: ``num_envs`` in process, ``num_envs / collector_workers`` from a worker's batch."""
    env = make_env("CartPole-v1", 1, seed=0, normalize_obs=False)
    stride = num_envs // workers
    agent = DQNAgent(4, env.action_spec, DQNConfig(n_step=3, gamma=GAMMA, num_envs=num_envs, collector_workers=workers, hidden_sizes=[16],
                                                   batch_size=64, min_replay_size=64, buffer_capacity=100))
    episodes = _episodes(stride, 60, seed=11)  # stored `stride` envs per step, the storage wrapped
    data, newest = _fill(ReplayBuffer(storage=LazyTensorStorage(100)), episodes, obs_dim=4)
    _fill(agent.replay, episodes, obs_dim=4)
    torch.manual_seed(4)
    _, _, next_obs, reward, terminated, discount = agent.sample_batches(1)[0]
    torch.manual_seed(4)
    idx = torch.randint(100, (64,))
    for i, slot in enumerate(idx.tolist()):
        env_id, t = divmod(int(data[OBS][slot, 0].item()), 1000)
        ref_obs, ref_ret, ref_term, k = _reference(episodes, env_id, t, 3)
        assert next_obs[i, 0].item() == ref_obs and terminated[i].item() == ref_term
        assert reward[i].item() == pytest.approx(ref_ret, abs=1e-5) and discount[i].item() == pytest.approx(GAMMA ** k)


def test_n_step_one_samples_exactly_the_one_step_batch():
    """``n_step`` 1 is the stored transition with discount gamma: the default's batches are unchanged."""
    env = make_env("CartPole-v1", 1, seed=0, normalize_obs=False)
    agent = DQNAgent(4, env.action_spec, DQNConfig(n_step=1, hidden_sizes=[16], batch_size=16, min_replay_size=16, buffer_capacity=100))
    data, _ = _fill(agent.replay, _episodes(1, 80, seed=5), obs_dim=4)
    torch.manual_seed(2)
    obs, action, next_obs, reward, terminated, discount = agent.sample_batches(1)[0]
    assert discount is None
    torch.manual_seed(2)
    idx = torch.randint(80, (16,))
    torch.testing.assert_close(next_obs, data[idx]["next", OBS])  # the same draws index the same slots
    f_next, f_reward, f_term, f_discount = fold_n_step(data, idx, n_step=1, gamma=0.99, stride=1, newest=79)
    torch.testing.assert_close((next_obs, reward, terminated), (f_next, f_reward, f_term))
    torch.testing.assert_close(f_discount, torch.full((16,), 0.99))


def test_n_step_zero_is_refused():
    from torchrl_memory import ConfigError

    with pytest.raises(ConfigError, match="n_step"):
        DQNConfig(n_step=0).validate()
