"""``make_collector``: a run's rollout collector, in process, over N processes, or on Ray.

All three are TorchRL's own collectors; what is ours is the wiring that keeps the
``[num_envs, T]`` trajectory layout and the checkpoint contents the same whichever runs:

* ``workers == 1``, backend ``local``: ``Collector`` over the run's env, in this process
  (``LeanCollector``: the same batches from a shorter loop).
  Its carried tensordict is what a checkpoint stores for bit-exact resume.
* ``workers > 1``, backend ``local``: ``MultiSyncCollector``, one process per worker,
  each stepping its own ``num_envs / workers`` envs built by ``WorkerEnv``; the workers'
  ``[k, T]`` batches are concatenated along the env dim (``cat_results=0``).
* backend ``ray``: ``RayCollector`` with one ``Collector`` per Ray worker (a local Ray
  instance when no address is given); its stacked ``[workers, k, T]`` batch is
  flattened to ``[num_envs, T]``.

The policy weights are pushed to every worker before each batch, so a batch is always
collected by the weights the next update starts from (the ratio-1 identity holds).
Each worker's env transforms (the running observation normalisation) live in its
process: ``mirror_worker_env`` copies worker 0's into the in-process env, which
evaluation and checkpoints read, and ``push_env_state`` loads a restored one into every
worker on resume. Episodes in flight in a worker cannot be saved, so a multi-worker run
resumes with fresh episodes (weights, optimizer, counters and statistics exact).

DQN's multi-process path is ``make_async_collector``: TorchRL's ``MultiAsyncCollector``,
whose workers keep stepping while the learner trains, each batch coming from whichever
worker finished first (off-policy data, so DQN does not need the lock step of PPO).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterator

import torch
from tensordict import TensorDictBase
from torchrl.collectors import Collector, MultiAsyncCollector, MultiSyncCollector
from torchrl.envs import EnvBase, ExplorationType, Transform, TransformedEnv

from ..config_validation import UserError
from ..envs.factory import make_env
from ..worker_signals import leave_interrupts_to_the_main_process
from .lean_collector import LeanCollector

BACKENDS = ("local", "ray")
WORKER_SEED_STRIDE = 100_003  # worker i seeds its envs with seed + i * stride: disjoint streams


@dataclass
class WorkerEnv:
    """Builds one worker's envs (picklable: it travels to the worker process or Ray actor)."""

    env_id: str
    num_envs: int
    seed: int
    device: str = "cpu"
    env_kwargs: dict = field(default_factory=dict)
    primer: Transform | None = None  # the agent's recurrent-state primer (``agent.primer()``)

    def __call__(self) -> TransformedEnv:
        leave_interrupts_to_the_main_process()
        env = make_env(self.env_id, self.num_envs, self.device, self.seed, **self.env_kwargs)
        if self.primer is not None:
            env.append_transform(self.primer.clone())
        return env

    def split(self, workers: int, device: torch.device) -> list["WorkerEnv"]:
        """One builder per worker, ``num_envs / workers`` envs each, seeds on disjoint streams."""
        k = self.num_envs // workers
        return [WorkerEnv(self.env_id, k, self.seed + i * WORKER_SEED_STRIDE, str(device), self.env_kwargs, self.primer) for i in range(workers)]


def check_workers(workers: int, num_envs: int, backend: str) -> None:
    if backend not in BACKENDS:
        raise UserError(f"collector backend {backend!r} (accepted: {', '.join(BACKENDS)})")
    if not isinstance(workers, int) or workers < 1 or num_envs % workers:
        raise UserError(f"collector_workers = {workers!r} with num_envs = {num_envs} (accepted: an integer >= 1 that divides num_envs)")


def _start_ray(address: str | None, workers: int) -> None:
    try:
        import ray  # optional (pip install -e '.[ray]'): imported only when --backend ray asks for it
    except ImportError:
        raise UserError("--backend ray needs the 'ray' package, which is not installed (pip install -e '.[ray]')") from None
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:  # a local instance sized to the machine (at least one CPU per worker)
            ray.init(num_cpus=max(workers, os.cpu_count() or 1), include_dashboard=False, log_to_driver=False)


class FlattenedRayCollector:
    """``RayCollector`` (sync) whose ``[workers, k, T]`` batches come out as ``[workers * k, T]``."""

    def __init__(self, collector):
        self.inner = collector

    def __iter__(self) -> Iterator[TensorDictBase]:
        for batch in self.inner:
            if batch.ndim == 3:
                batch = batch.rename(*[None] * 3).flatten(0, 1)
                batch.names = [None, "time"]  # as the in-process collector names them
            yield batch

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def make_collector(
    env: EnvBase,
    policy: torch.nn.Module,
    frames_per_batch: int,
    device: torch.device,
    workers: int = 1,
    backend: str = "local",
    worker_env: WorkerEnv | None = None,
    ray_address: str | None = None,
):
    """The collector for one run. ``env`` is the in-process env (used when ``workers == 1``
    on the local backend); ``worker_env`` builds the envs of every worker otherwise, with
    ``num_envs`` the total over all workers."""
    if backend == "local" and workers == 1:
        # no ("collector", "traj_ids"): PPO reads episodes from is_init and the done flags, and
        # keeping the ids costs ~15% of a collection step at 64 envs (benchmarks/profile_collect.py)
        return LeanCollector(env, policy, frames_per_batch=frames_per_batch, total_frames=-1, device=device, track_traj_ids=False)
    check_workers(workers, worker_env.num_envs, backend)
    per_worker = worker_env.split(workers, device)
    if backend == "local":
        return MultiSyncCollector(
            per_worker, policy, frames_per_batch=frames_per_batch, total_frames=-1, device=device,
            cat_results=0, update_at_each_batch=True,
        )
    _start_ray(ray_address, workers)
    from torchrl.collectors.distributed import RayCollector  # imports ray: only on this path

    inner = RayCollector(
        # RayCollector stops at total_frames and reads -1 literally (0.14): "no limit" is a huge budget
        per_worker, policy, frames_per_batch=frames_per_batch, total_frames=2**62, device=device,
        collector_class=Collector, num_collectors=workers, sync=True, update_after_each_batch=True,
        remote_configs={"num_cpus": 1, "num_gpus": 1 if device.type == "cuda" else 0},
    )
    return FlattenedRayCollector(inner)


def make_async_collector(policy: torch.nn.Module, worker_env: WorkerEnv, workers: int, steps_per_batch: int, device: torch.device) -> MultiAsyncCollector:
    """DQN's multi-process collector: ``workers`` processes, each stepping ``num_envs / workers``
    of ``worker_env``'s envs; a batch is one worker's ``[num_envs / workers, steps_per_batch]``.

    The policy's buffers travel with its weights, so the epsilon set on the learner's
    ``EGreedyModule`` before a batch is requested is the one that worker explores with next.
    The collector's ``("collector", "traj_ids")`` are unique across workers (one shared
    pool): they serve as episode ids."""
    check_workers(workers, worker_env.num_envs, "local")
    return MultiAsyncCollector(
        worker_env.split(workers, device), policy, frames_per_batch=worker_env.num_envs // workers * steps_per_batch, total_frames=-1, device=device,
        update_at_each_batch=True, exploration_type=ExplorationType.RANDOM,
    )


def is_in_process(collector) -> bool:
    return isinstance(collector, Collector)


def _num_workers(collector) -> int:
    if isinstance(collector, FlattenedRayCollector):
        return len(collector.inner.remote_collectors)
    return collector.num_workers


def worker_env_states(collector) -> list[dict]:
    """Each worker's env-transform ``state_dict`` (its observation normalisation)."""
    if isinstance(collector, FlattenedRayCollector):
        return [s["env_state_dict"] for s in collector.inner.state_dict()]
    state = collector.state_dict()
    return [state[f"worker{i}"]["env_state_dict"] for i in range(collector.num_workers)]


def mirror_worker_env(collector, env: TransformedEnv) -> None:
    """Copies worker 0's env-transform state into ``env``, the in-process copy that
    evaluation and checkpoints read (a no-op for the in-process collector)."""
    if not is_in_process(collector):
        env.transform.load_state_dict(worker_env_states(collector)[0])


def push_env_state(collector, env: TransformedEnv) -> None:
    """Loads ``env``'s transform state (restored from a checkpoint) into every worker's envs."""
    if is_in_process(collector):
        return
    state = env.transform.state_dict()
    if isinstance(collector, FlattenedRayCollector):
        current = collector.inner.state_dict()  # a list, one per worker
        for worker_state in current:
            worker_state["env_state_dict"] = state
        collector.inner.load_state_dict(current)
        return
    current = collector.state_dict()
    for i in range(collector.num_workers):
        current[f"worker{i}"]["env_state_dict"] = state
    collector.load_state_dict(current)
