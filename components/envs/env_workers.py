"""``--env-workers N``: a gymnasium env's copies stepped in N processes by TorchRL's ``ParallelEnv``.

Each worker holds ``num_envs / N`` copies under our one-process gymnasium backend
(``gym_backend.py``; ``make_env`` picks this module or that one); ``ParallelEnv`` steps the workers in parallel and returns a
``[N, num_envs / N]`` batch, which ``MergeEnvWorkers`` presents as ``[num_envs]``, so
every transform, policy and collector downstream sees the layout of the one-process env.

``MergeEnvWorkers`` is TorchRL's ``BatchSizeTransform`` with two fixes for this use (0.14):
its spec reshape fails on ``Bounded`` specs with per-dimension bounds, so the merged spec
is one worker-env's spec expanded to ``num_envs``; and a reset request (``"_reset"``
flags) arrives flat and must be put back into the workers' layout before it reaches
``ParallelEnv``. The pair is kept as one base env (``_MergedWorkersEnv``, never unwrapped
into the caller's transforms, which must see the merged batch), and a ``"next"`` entry the
caller preallocated (collectors do) is left to the outer env: merging it into the
workers' ``[N, k]`` output would fail on the batch size.

Measured on this 2-core machine (benchmarks/results/scaleout_throughput.json, mode "env") the
processes cost more than they save for cheap Python envs; they pay off where one env step
costs far more than the inter-process round trip and cores are free.
"""
from __future__ import annotations

import atexit
import functools
import weakref

import gymnasium as gym
import torch
from tensordict import TensorDictBase
from torchrl.envs import ParallelEnv, TransformedEnv
from torchrl.envs.transforms import BatchSizeTransform

from ..worker_signals import leave_interrupts_to_the_main_process
from .gym_backend import make_gym_vector_env


def _flatten(td: TensorDictBase) -> TensorDictBase:
    return td.reshape(-1)


class MergeEnvWorkers(BatchSizeTransform):
    """``[workers, k]`` env batch -> ``[workers * k]`` (and back for actions and resets)."""

    def __init__(self):
        super().__init__(reshape_fn=_flatten)

    @staticmethod
    def _merged(spec):
        return spec[(0,) * len(spec.shape)].expand(spec.shape.numel())

    def transform_output_spec(self, output_spec):
        return self._merged(output_spec)

    def transform_input_spec(self, input_spec):
        return self._merged(input_spec)

    def _reset_env_preprocess(self, tensordict: TensorDictBase | None) -> TensorDictBase | None:
        if tensordict is not None and self.parent is not None:
            tensordict = tensordict.reshape(self.parent.base_env.batch_size)
        return tensordict


class _MergedWorkersEnv(TransformedEnv):
    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        return super()._step(tensordict.exclude("next"))


def _worker_env(gym_id: str, registration, num_envs: int, seed: int, wrappers: list | None):
    leave_interrupts_to_the_main_process()
    # A fresh worker process has imported no suite (popgym, minigrid, a user's module:id):
    # it gets the id's registration from the parent instead.
    gym.registry.setdefault(gym_id, registration)
    return make_gym_vector_env(gym_id, num_envs, torch.device("cpu"), seed, wrappers)[0]


def parallel_gym_env(gym_id: str, num_envs: int, workers: int, device: torch.device, seed: int, wrappers: list | None) -> TransformedEnv:
    """``num_envs`` copies of ``gym_id`` over ``workers`` processes, presented as one ``[num_envs]`` env on ``device``."""
    per_worker = num_envs // workers
    # gymnasium seeds copy j of a vector env with seed + j, so worker i starting at
    # seed + i * per_worker gives every copy the seed it has in the one-process env.
    makers = [functools.partial(_worker_env, gym_id, gym.registry[gym_id], per_worker, seed + i * per_worker, wrappers) for i in range(workers)]
    env = _MergedWorkersEnv(ParallelEnv(workers, makers, device=device), MergeEnvWorkers())
    # Live worker processes keep the interpreter from exiting; close them on every way out
    # (end of run, error, Ctrl-C) unless the caller already has; held weakly, so an env
    # dropped earlier is closed by its own finaliser and not kept alive until exit.
    ref = weakref.ref(env)
    atexit.register(lambda: (e := ref()) is not None and not e.is_closed and e.close())
    return env
