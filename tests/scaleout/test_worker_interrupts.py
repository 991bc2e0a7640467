"""Ctrl-C belongs to the main process: a SIGINT that reaches the workers (a terminal sends it to
the whole process group) must not kill them, or the main process waits forever for a batch and
can neither finish its step nor save."""
import os
import signal
import threading
import time

import pytest
import torch

from components import DQNAgent, DQNConfig, WorkerEnv, make_async_collector, make_collector, make_env, obs_dim_of

N = 4


def _interrupt_and_check(processes, what: str) -> None:
    """SIGINT to every worker; fails at once (killing the rest, so no shutdown waits on the dead) if one died."""
    for p in processes:
        os.kill(p.pid, signal.SIGINT)
    time.sleep(1.0)
    if not all(p.is_alive() for p in processes):
        for p in processes:
            p.kill()
        pytest.fail(f"{what}: a worker died of SIGINT")


def _within(fn, seconds: float, processes, what: str):
    """``fn()``, or a failure (workers killed) if it has not returned in ``seconds``: a worker
    that swallowed the SIGINT may stay alive yet stop answering, and the call would wait forever."""
    out = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    if not out:
        for p in processes:
            p.kill()
        pytest.fail(f"{what}: no answer from the workers {seconds:.0f} s after the SIGINT")
    return out[0]


def _dqn_policy():
    cfg = DQNConfig(num_envs=N, hidden_sizes=[16]).validate()
    env = make_env(cfg.env_id, N, "cpu", cfg.seed, normalize_obs=False)
    return DQNAgent(obs_dim_of(env), env.action_spec, cfg, "cpu").explore_policy, cfg


def test_collector_workers_survive_sigint_and_keep_delivering():
    policy, cfg = _dqn_policy()
    worker_env = WorkerEnv(cfg.env_id, N, cfg.seed, "cpu", {"normalize_obs": False})
    for collector in (
        make_collector(None, policy, N * 8, torch.device("cpu"), 2, "local", worker_env),  # PPO's MultiSyncCollector
        make_async_collector(policy, worker_env, 2, 8, torch.device("cpu")),  # DQN's MultiAsyncCollector
    ):
        try:
            batches = iter(collector)
            next(batches)
            name = type(collector).__name__
            _interrupt_and_check(collector.procs, name)
            batch = _within(lambda: next(batches), 60, collector.procs, name)
            assert batch.numel() == N * 8 // (2 if "Async" in name else 1)
        finally:
            if all(p.is_alive() for p in collector.procs):  # a shutdown would wait on dead workers
                collector.shutdown()


def test_env_workers_survive_sigint_and_keep_stepping():
    env = make_env("gym:CartPoleNoVel", N, seed=0, env_workers=2)
    try:
        td = env.reset()
        _interrupt_and_check(env.base_env._workers, "ParallelEnv")
        td["action"] = torch.zeros(N, dtype=torch.int64)
        out = _within(lambda: env.step(td), 60, env.base_env._workers, "ParallelEnv")
        assert out["next", "observation"].shape == (N, 2)
    finally:
        if all(p.is_alive() for p in env.base_env._workers):
            env.close()


def test_ctrl_c_to_the_process_group_saves_a_dqn_run_with_collector_workers(tmp_path):
    """What a terminal does: SIGINT to the pipeline and its workers at once, mid-run. The user's
    outcome (exit 130, checkpoint written); whether a wedged worker would hang the run depends on
    where the signal lands, so the two tests above pin that mechanism deterministically."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, str(root / "pipelines" / "dqn.py"), "--num-envs", "4", "--collector-workers", "2",
         "--total-steps", "1000000", "--plot", "false", "--run-root", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    try:
        time.sleep(15)  # workers started and training under way
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the run did not exit within 60 s of Ctrl-C")
    assert proc.returncode == 130, out[-2000:]
    assert "interrupted: checkpoint of the last complete step" in out
    assert list(tmp_path.glob("dqn/*/*/latest.pt"))
