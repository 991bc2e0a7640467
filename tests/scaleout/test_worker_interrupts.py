"""Ctrl-C and SIGTERM belong to the main process: a SIGINT or SIGTERM that reaches the workers (a
terminal sends Ctrl-C to the whole process group, a scheduler cancelling a job may SIGTERM all of
it) must not kill them, or the main process waits forever for a batch and can neither finish its
step nor save. An orphaned worker still dies of SIGTERM."""
import os
import signal
import threading
import time

import pytest
import torch

from torchrl_memory import DQNAgent, DQNConfig, make_collector, make_env
from torchrl_memory.envs import obs_dim_of
from torchrl_memory.runs import WorkerEnv, make_async_collector

N = 4


SIGNALS = [signal.SIGINT, signal.SIGTERM]


def _interrupt_and_check(processes, what: str, signum: int) -> None:
    """``signum`` to every worker; fails at once (killing the rest, so no shutdown waits on the dead) if one died."""
    for p in processes:
        os.kill(p.pid, signum)
    time.sleep(1.0)
    if not all(p.is_alive() for p in processes):
        for p in processes:
            p.kill()
        pytest.fail(f"{what}: a worker died of {signal.Signals(signum).name}")


def _within(fn, seconds: float, processes, what: str):
    """``fn()``, or a failure (workers killed) if it has not returned in ``seconds``: a worker
    that swallowed the signal may stay alive yet stop answering, and the call would wait forever."""
    out = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    if not out:
        for p in processes:
            p.kill()
        pytest.fail(f"{what}: no answer from the workers {seconds:.0f} s after the signal")
    return out[0]


def _dqn_policy():
    cfg = DQNConfig(num_envs=N, hidden_sizes=[16]).validate()
    env = make_env(cfg.env_id, N, "cpu", cfg.seed, normalize_obs=False)
    return DQNAgent(obs_dim_of(env), env.action_spec, cfg, "cpu").explore_policy, cfg


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_collector_workers_survive_the_signal_and_keep_delivering(signum):
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
            _interrupt_and_check(collector.procs, name, signum)
            batch = _within(lambda: next(batches), 60, collector.procs, name)
            assert batch.numel() == N * 8 // (2 if "Async" in name else 1)
        finally:
            if all(p.is_alive() for p in collector.procs):  # a shutdown would wait on dead workers
                collector.shutdown()


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_env_workers_survive_the_signal_and_keep_stepping(signum):
    env = make_env("gym:CartPoleNoVel", N, seed=0, env_workers=2)
    try:
        td = env.reset()
        _interrupt_and_check(env.base_env._workers, "ParallelEnv", signum)
        td["action"] = torch.zeros(N, dtype=torch.int64)
        out = _within(lambda: env.step(td), 60, env.base_env._workers, "ParallelEnv")
        assert out["next", "observation"].shape == (N, 2)
    finally:
        if all(p.is_alive() for p in env.base_env._workers):
            env.close()


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_to_the_process_group_saves_a_dqn_run_with_collector_workers(tmp_path, signum):
    """What a terminal's Ctrl-C or a scheduler's group SIGTERM does: the signal to the pipeline and
    its workers at once, mid-run. The user's outcome (exit 128 + signum, checkpoint written); whether a wedged worker would hang the run depends on
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
        os.killpg(proc.pid, signum)
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"the run did not exit within 60 s of {signal.Signals(signum).name}")
    assert proc.returncode == 128 + signum, out[-2000:]
    assert "interrupted: checkpoint of the last complete step" in out
    assert list(tmp_path.glob("dqn/*/*/latest.pt"))


ORPHAN_PARENT = """
import multiprocessing, sys, time
sys.path.insert(0, sys.argv[1])

def worker(ready):
    from torchrl_memory.runs.interrupts import leave_interrupts_to_the_main_process
    leave_interrupts_to_the_main_process()
    ready.set()
    time.sleep(120)

if __name__ == "__main__":
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    p = ctx.Process(target=worker, args=(ready,))
    p.start()
    ready.wait(60)  # the worker has installed its handlers
    print(p.pid, flush=True)
    time.sleep(120)
"""


def _alive(pid: int) -> bool:
    """Running (a zombie counts as dead: an orphan's new parent may not reap it at once)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_an_orphaned_worker_still_dies_of_sigterm(tmp_path):
    """Ignoring SIGTERM is for a worker whose main process will shut it down; once that process is
    gone (SIGKILLed), a SIGTERM must end the worker, or it would linger until SIGKILL."""
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "parent.py"
    script.write_text(ORPHAN_PARENT)
    parent = subprocess.Popen([sys.executable, str(script), str(Path(__file__).resolve().parents[2])], stdout=subprocess.PIPE, text=True)
    worker = int(parent.stdout.readline())
    try:
        os.kill(worker, signal.SIGTERM)
        time.sleep(1.0)
        assert _alive(worker), "a worker whose main process lives must ignore SIGTERM"
        parent.kill()
        parent.wait()
        time.sleep(0.5)
        os.kill(worker, signal.SIGTERM)
        deadline = time.time() + 10
        while _alive(worker) and time.time() < deadline:
            time.sleep(0.1)
        assert not _alive(worker), "an orphaned worker survived SIGTERM"
    finally:
        for pid in (worker, parent.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
