"""DQN over TorchRL's MultiAsyncCollector: weights and epsilon reach the workers, real final
observations are stored, every transition is counted once, and the run resumes."""
import math

import torch

from torchrl_memory import DQNAgent, DQNConfig, DQNRunState, TrainingRun, make_env
from torchrl_memory.envs import obs_dim_of
from torchrl_memory.runs import WorkerEnv, make_async_collector
from torchrl_memory.dqn.n_step import fold_n_step
from torchrl_memory.keys import OBS
from torchrl_memory.pipelines import dqn

N, WORKERS, STEPS = 4, 2, 8
SMALL = dict(batch_size=8, min_replay_size=16, buffer_capacity=2_000, hidden_sizes=[16], epsilon_decay_steps=100)


def _setup(**kw):
    cfg = DQNConfig(num_envs=N, collector_workers=WORKERS, worker_steps=STEPS, **{**SMALL, **kw}).validate()
    env = make_env(cfg.env_id, N, "cpu", cfg.seed, normalize_obs=False)
    agent = DQNAgent(obs_dim_of(env), env.action_spec, cfg, "cpu")
    collector = make_async_collector(agent.explore_policy, WorkerEnv(cfg.env_id, N, cfg.seed, "cpu", {"normalize_obs": False}), WORKERS, STEPS, torch.device("cpu"))
    return cfg, env, agent, collector


def _greedy_fraction(agent, batch) -> float:
    with torch.no_grad():
        greedy = agent.q_net(batch[OBS]).argmax(-1)
    return (greedy == batch["action"]).float().mean().item()


def test_workers_act_with_the_learners_weights_and_epsilon():
    cfg, env, agent, collector = _setup()
    try:
        agent.egreedy.eps.fill_(0.0)
        batches = iter(collector)
        first = next(batches)
        assert first.batch_size == (N // WORKERS, STEPS)
        with torch.no_grad():  # new weights: only batches requested after this can match them
            for p in agent.q_net.parameters():
                p.add_(torch.randn_like(p))
        # a batch taken now may have been collected before; from the third on, each was requested after the change
        later = [next(batches) for _ in range(4)][2:]
        assert all(_greedy_fraction(agent, b) == 1.0 for b in later)
        agent.egreedy.eps.fill_(1.0)
        random = [next(batches) for _ in range(4)][2:]
        assert sum(_greedy_fraction(agent, b) for b in random) / 2 < 0.8  # uniform over 2 actions: ~0.5
    finally:
        collector.shutdown()


def test_trainer_stores_real_final_observations_and_counts_each_transition_once(tmp_path):
    cfg, env, agent, collector = _setup()
    run = TrainingRun.create(tmp_path, "dqn", cfg.to_dict())
    trainer = DQNRunState(env, agent, run=run, collector=collector)
    try:
        before = agent.flat_params.detach().clone()
        trainer.train(400)
        per_batch = N // WORKERS * STEPS
        assert trainer.total_steps == -(-400 // per_batch) * per_batch
        assert len(agent.replay) == trainer.total_steps
        assert not torch.equal(before, agent.flat_params), "no gradient step ran"
        episodes = run.read_jsonl("train_episodes.jsonl")
        assert len(episodes) > 5 and len({e["episode"] for e in episodes}) == len(episodes)  # trajectory ids: unique across workers
        stored = agent.replay.storage._storage[: len(agent.replay)]
        done = stored["next", "done"].squeeze(-1)
        assert done.any()
        # a CartPole episode ends out of bounds (or at 500 steps): a reset observation is never stored as a final one
        final = stored["next", OBS][done & stored["next", "terminated"].squeeze(-1)]
        assert ((final[:, 0].abs() > 2.4) | (final[:, 2].abs() > 0.2095)).all()

        state = trainer.state_dict()
        assert state["carried"] is None  # episodes in flight live in the workers
    finally:
        collector.shutdown()
    cfg2, env2, agent2, collector2 = _setup()
    resumed = DQNRunState(env2, agent2, collector=collector2)
    try:
        resumed.load_state_dict(state)
        assert resumed.total_steps == trainer.total_steps and len(agent2.replay) == len(agent.replay)
        assert torch.equal(agent2.flat_params, agent.flat_params)
        resumed.train(32)
        assert resumed.total_steps == trainer.total_steps + 32
    finally:
        collector2.shutdown()


def test_n_step_windows_read_only_their_own_envs_next_steps_within_one_worker_batch():
    """Worker batches arrive in any order, so a window stops at the end of its batch: each step it
    reads continues the one before (its observation is that step's next observation)."""
    n = 4
    cfg, env, agent, collector = _setup(n_step=n)
    trainer = DQNRunState(env, agent, collector=collector)
    try:
        trainer.train(320)
    finally:
        collector.shutdown()
    data, size, stride = agent.replay.storage._storage, len(agent.replay), N // WORKERS
    obs, next_obs = data[OBS], data["next", OBS]
    lengths = []
    for slot in range(size):
        window_next_obs, _, _, discount = fold_n_step(data, torch.tensor([slot]), n_step=n, gamma=cfg.gamma, stride=stride, newest=size - 1)
        k = round(math.log(discount.item()) / math.log(cfg.gamma))
        for j in range(1, k):
            assert torch.equal(obs[slot + j * stride], next_obs[slot + (j - 1) * stride]), f"slot {slot}: step {j} is not its env's next step"
        assert torch.equal(window_next_obs[0], next_obs[slot + (k - 1) * stride])
        lengths.append(k)
    # windows are whole unless an episode or the batch ends first (the last n - 1 steps of each env's STEPS)
    assert lengths.count(n) > size // 3 and lengths.count(1) > 0


def test_pipeline_with_two_collector_workers(tmp_path):
    out = dqn.main(["--num-envs", "4", "--collector-workers", "2", "--hidden-sizes", "16", "--batch-size", "8", "--min-replay-size", "32",
                    "--total-steps", "256", "--eval-every", "0", "--eval-episodes", "2", "--plot", "false", "--run-root", str(tmp_path)])
    assert TrainingRun.find(tmp_path).load_latest()["counters"]["total_steps"] == 256
    assert out["eval"]["episodes"] == 2
