"""The gymnasium backend: N copies of a gymnasium env in one process under TorchRL's ``GymWrapper``.

One process, N envs stepped in a loop by gymnasium's ``SyncVectorEnv`` (TorchRL's
``GymEnv(num_envs=N)`` would start N worker processes); ``SAME_STEP`` autoreset puts the
real final observation in ``"next"`` and the reset one at the next root.

Before the vector env is built, each copy gets the user's gymnasium wrappers (callables,
or ``"module:Class"`` strings such as ``"minigrid.wrappers:ImgObsWrapper"``), then two of
ours so that ``GymWrapper`` can read any observation space: a ``Tuple`` becomes a
``Dict`` with keys ``"0"``, ``"1"``, ... (``GymWrapper`` has no Tuple reader), and
non-numeric ``Dict`` entries (MiniGrid's text ``mission``) and ``info`` entries are dropped.
"""
from __future__ import annotations

import importlib
from typing import Callable

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from torchrl.envs import GymWrapper

from ..config_validation import UserError

NUMERIC = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)


class TupleAsDict(gym.ObservationWrapper):
    """A ``Tuple`` observation as a ``Dict`` keyed ``"0"``, ``"1"``, ... (same entries, same order)."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.observation_space = spaces.Dict({str(i): s for i, s in enumerate(env.observation_space.spaces)})

    def observation(self, observation):
        return {str(i): o for i, o in enumerate(observation)}


class NumericInfo(gym.Wrapper):
    """Drops ``info`` entries that are not numbers (POPGym's HigherLower reports its card as text)
    and gives every numeric one float64 (flags stay bool).

    TorchRL's info reader registers every entry it meets, fails on strings, and fixes an
    entry's dtype from the first step it sees: FrozenLake's and CliffWalking's ``prob`` is the
    integer 1 after a reset and a float after a step, which breaks the final-observation swap
    and the collector's stacking of steps (int64 vs float64)."""

    @staticmethod
    def _numeric(info: dict) -> dict:
        out = {}
        for k, v in info.items():
            arr = np.asarray(v)
            if arr.dtype.kind == "b":
                out[k] = v
            elif arr.dtype.kind in "iuf":
                out[k] = arr.astype(np.float64)
        return out

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return obs, self._numeric(info)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, self._numeric(info)


def resolve_wrapper(wrapper: str | Callable) -> Callable:
    """A gymnasium wrapper class or callable from ``"module:Class"`` (or the object itself)."""
    if callable(wrapper):
        return wrapper
    module, sep, name = str(wrapper).partition(":")
    if module == "components" or module.startswith("components."):
        module = "torchrl_memory" + module[len("components"):]  # configs saved before the package had its own name
    if not sep or not module or not name:
        raise UserError(f"env wrapper {wrapper!r} (accepted: 'module:Class', e.g. 'minigrid.wrappers:ImgObsWrapper')")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as err:
        raise UserError(f"env wrapper {wrapper!r} cannot be imported ({err})") from None


def describe_space(space: spaces.Space) -> str:
    if isinstance(space, spaces.Dict):
        return "Dict(" + ", ".join(f"{k}: {describe_space(s)}" for k, s in space.spaces.items()) + ")"
    if isinstance(space, spaces.Tuple):
        return "Tuple(" + ", ".join(describe_space(s) for s in space.spaces) + ")"
    if isinstance(space, spaces.Box):
        return f"Box{tuple(space.shape)} {space.dtype}"
    if isinstance(space, spaces.Discrete):
        return f"Discrete({space.n})"
    if isinstance(space, spaces.MultiDiscrete):
        return f"MultiDiscrete({space.nvec.tolist()})"
    return type(space).__name__


def _readable(env: gym.Env) -> gym.Env:
    env = NumericInfo(env)
    space = env.observation_space
    if isinstance(space, spaces.Tuple):
        env = TupleAsDict(env)
        space = env.observation_space
    if isinstance(space, spaces.Dict):
        bad = [k for k, s in space.spaces.items() if not isinstance(s, NUMERIC)]
        nested = [k for k, s in space.spaces.items() if isinstance(s, (spaces.Dict, spaces.Tuple))]
        if nested:
            raise UserError(f"observation entries {nested} are nested Dict/Tuple spaces (accepted: one level of Box, Discrete, MultiDiscrete entries)")
        if bad:
            env = gym.wrappers.FilterObservation(env, [k for k in space.spaces if k not in bad])
    elif not isinstance(space, NUMERIC):
        raise UserError(f"observation space {describe_space(space)} (accepted: Box, Discrete, MultiDiscrete, or a Dict/Tuple of them)")
    return env


def episode_limit(env: gym.Env) -> int | None:
    """The most steps an episode of ``env`` can last, where the env says: gymnasium's
    ``TimeLimit`` (``spec.max_episode_steps``), POPGym's ``max_episode_length``, MiniGrid's
    ``max_steps``; ``None`` when it does not."""
    limit = env.spec.max_episode_steps if env.spec is not None else None
    for attr in ("max_episode_length", "max_steps"):
        limit = limit or getattr(env.unwrapped, attr, None)
    return int(limit) if isinstance(limit, (int, np.integer)) and limit > 0 else None


def describe_gym_env(gym_id: str, wrappers: list | None = None) -> tuple[list, str, int | None]:
    """(observation keys, a description of the original observation space, the episode step
    limit or ``None``) of ``gym_id`` under the user's ``wrappers``, read from one probe copy."""
    user = [resolve_wrapper(w) for w in (wrappers or [])]
    try:
        probe = gym.make(gym_id)
    except (gym.error.DependencyNotInstalled, ImportError) as err:
        raise UserError(f"env {gym_id!r} needs a package that is not installed: {err}") from None
    for w in user:
        probe = w(probe)
    described = describe_space(probe.observation_space)
    probe = _readable(probe)
    space = probe.observation_space
    keys = list(space.spaces) if isinstance(space, spaces.Dict) else ["observation"]
    limit = episode_limit(probe)
    probe.close()
    return keys, described, limit


def make_gym_vector_env(gym_id: str, num_envs: int, device: torch.device, seed: int, wrappers: list | None = None):
    """(TorchRL env, its observation keys, a description of the original observation space,
    the episode step limit or ``None``): ``num_envs`` copies stepped in this process.

    Copies stepped in worker processes: ``env_workers.parallel_gym_env`` (``make_env`` chooses)."""
    keys, described, limit = describe_gym_env(gym_id, wrappers)
    user = [resolve_wrapper(w) for w in (wrappers or [])]

    def prepare(env: gym.Env) -> gym.Env:
        for w in user:
            env = w(env)
        return _readable(env)

    vec = gym.make_vec(
        gym_id, num_envs=num_envs, vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}, wrappers=[prepare],
    )
    env = GymWrapper(vec, categorical_action_encoding=True, device=device)
    env.set_seed(seed)
    return env, keys, described, limit
