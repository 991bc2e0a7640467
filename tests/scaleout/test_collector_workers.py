"""Multi-process and Ray collection keep the [num_envs, T] layout, the stored state and the ratio-1 identity."""
import pytest
import torch

from torchrl_memory import PPOConfig, RecurrentPPOLoss, RecurrentPPOTrainer, compute_gae, make_collector, make_env
from torchrl_memory.envs import obs_dim_of
from torchrl_memory.ppo import make_actor_critic
from torchrl_memory.runs import WorkerEnv
from torchrl_memory.keys import MASK
from torchrl_memory.runs.collectors import mirror_worker_env, push_env_state
from torchrl_memory.envs.obs_norm import RunningObsNorm
from torchrl_memory.envs.lookup import find_transform

N, T, WORKERS = 4, 8, 2


def _setup(backend):
    cfg = PPOConfig(env_id="CartPoleNoVel", num_envs=N, rollout_len=T, envs_per_minibatch=2, collector_workers=WORKERS, backend=backend).validate()
    env = make_env(cfg.env_id, N, "cpu", cfg.seed)
    agent = make_actor_critic("lstm", obs_dim_of(env), env.action_spec, 16, "cpu")
    env = agent.prime(env)
    trainer = RecurrentPPOTrainer(agent, cfg)
    collector = make_collector(
        env, agent.collect_policy, cfg.frames_per_batch, torch.device("cpu"), WORKERS, backend,
        WorkerEnv(cfg.env_id, N, cfg.seed, "cpu", {}, agent.primer()),
    )
    return cfg, env, agent, trainer, collector


def _check_layout_and_identity(backend):
    cfg, env, agent, trainer, collector = _setup(backend)
    try:
        batches = iter(collector)
        first = next(batches)
        assert first.batch_size == (N, T)
        assert first.names == [None, "time"]
        # the workers step different envs (own seeds), concatenated along the env dim
        assert not torch.equal(first["observation"][: N // WORKERS], first["observation"][N // WORKERS :])
        compute_gae(first, agent, cfg.gamma, cfg.gae_lambda)
        before = [p.detach().clone() for p in agent.parameters()]
        trainer.train_step(first)
        assert any(not torch.equal(a, p) for a, p in zip(before, agent.parameters())), "the update changed no weight"

        second = next(batches)  # collected in the workers by the updated weights
        # the window-start state is the state the previous window ended with (where no episode began)
        carried = ~second["is_init"][:, 0].squeeze(-1)
        for key in agent.state_keys:
            assert torch.equal(second[key][carried, 0], first["next", key][carried, -1])
        compute_gae(second, agent, cfg.gamma, cfg.gae_lambda)
        loss = RecurrentPPOLoss(agent)
        minibatch = second.select(*agent.in_keys, "action", "action_log_prob", "state_value", "advantage", "value_target")
        minibatch.set(MASK, torch.ones(N, T, 1, dtype=torch.bool))
        out = loss(minibatch)
        assert loss._log_weight_cache.abs().max() < 1e-5
        assert float(out["clip_fraction"]) == 0.0

        # the workers' observation normalisation comes back for evaluation and checkpoints, and goes out on resume
        norm = find_transform(env, RunningObsNorm)
        assert float(norm.count) == 0  # the in-process env never stepped
        mirror_worker_env(collector, env)
        assert float(norm.count) >= 2 * (N // WORKERS) * T  # worker 0's statistics: at least its two windows
        norm.count.fill_(12345.0)
        push_env_state(collector, env)
        norm.count.zero_()
        mirror_worker_env(collector, env)
        assert float(norm.count) == 12345.0
    finally:
        collector.shutdown()


def test_multisync_collector_two_workers():
    _check_layout_and_identity("local")


def test_ray_collector_two_local_workers():
    ray = pytest.importorskip("ray")
    try:
        _check_layout_and_identity("ray")
    finally:
        ray.shutdown()


def test_workers_must_divide_num_envs():
    with pytest.raises(ValueError, match="collector_workers.*divisor of num_envs=6"):
        PPOConfig(num_envs=6, envs_per_minibatch=2, collector_workers=4).validate()


def test_pipeline_with_two_collector_workers_trains_saves_and_resumes(tmp_path):
    from torchrl_memory import TrainingRun
    from torchrl_memory.pipelines import recurrent_ppo

    tiny = ["--num-envs", "4", "--rollout-len", "16", "--hidden-size", "16", "--envs-per-minibatch", "2", "--eval-episodes", "2", "--plot", "false"]
    frames = 4 * 16
    out = recurrent_ppo.main([*tiny, "--collector-workers", "2", "--run-root", str(tmp_path), "--total-steps", str(3 * frames), "--eval-every", str(frames)])
    assert out["eval"]["episodes"] == 2
    run = TrainingRun.find(tmp_path)
    state = run.load_latest()
    assert state["counters"]["total_steps"] == 3 * frames
    assert state["carrier"] is None  # the carried state stays in the workers
    assert float(state["obs_norm"]["count"]) >= 3 * 2 * 16  # worker 0's normalisation, read back
    resumed = recurrent_ppo.main(["--resume", str(run.path), "--total-steps", str(5 * frames)])
    assert TrainingRun.find(tmp_path).load_latest()["counters"]["total_steps"] == 5 * frames
    assert resumed["eval"]["episodes"] == 2
