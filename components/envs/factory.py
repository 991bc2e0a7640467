"""``make_env``: one place that turns an env id into a batched TorchRL env.

Ids:
  * built-in memory tasks on the tensor-native backend: ``CartPole-v1``,
    ``CartPoleNoVel`` (alias ``MaskedCartPole``), ``FlickeringCartPole`` or
    ``FlickeringCartPole-<p>``, ``TMaze`` or ``TMaze-<corridor>``;
  * ``gym:<id>`` forces the gymnasium backend (``gym:CartPoleNoVel`` applies the
    same POMDP transforms to gymnasium's CartPole-v1);
  * any other registered gymnasium id runs through TorchRL's ``GymEnv``.

Every env gets, in order: the POMDP transforms, optional running observation
normalisation, ``InitTracker``, ``StepCounter`` and ``RewardSum``. A recurrent
agent adds its own state primer (``agent.prime(env)``, from its trunk's
``make_tensordict_primer``); callers append any further TorchRL transform with
``env.append_transform``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import torch
from torchrl.data import Bounded, Categorical, OneHot
from torchrl.envs import EnvBase, InitTracker, RewardSum, StepCounter, TransformedEnv

from components.envs.cartpole import CartPoleEnv
from components.config_validation import UserError
from components.keys import OBS
from components.envs.obs_norm import RunningObsNorm
from components.envs.pomdp_transforms import Flicker, MaskVelocity
from components.envs.tmaze import TMazeEnv

BUILTIN_IDS = ("CartPole-v1", "CartPoleNoVel", "MaskedCartPole", "FlickeringCartPole[-p]", "TMaze[-corridor]")


@dataclass(frozen=True)
class EnvSpec:
    """A parsed env id."""

    backend: str  # "native" or "gym"
    base: str  # "CartPole", "TMaze" or a gymnasium id
    mask_velocity: bool = False
    flicker_p: float = 0.0
    corridor_length: int = 0


#: id prefixes of suites that register their envs only when imported (gymnasium 1.x loads no plugins)
SUITES = {"popgym-": "popgym", "MiniGrid-": "minigrid", "BabyAI-": "minigrid", "ALE/": "ale_py"}


def _import_suite(module: str, env_id: str) -> None:
    import importlib

    try:
        importlib.import_module(module)
    except ImportError as err:
        extra = {"popgym": " (pip install -e '.[popgym]')", "minigrid": " (pip install -e '.[minigrid]')"}.get(module, "")
        raise UserError(f"env id {env_id!r} needs the Python package {module!r}, which is not installed{extra}: {err}") from None


def parse_env_id(env_id: str) -> EnvSpec:
    if not isinstance(env_id, str) or not env_id:
        raise UserError(f"env id must be a non-empty string, got {env_id!r}")
    backend = "native"
    name = env_id
    if name.startswith("gym:"):
        backend, name = "gym", name[4:]
    if name in ("CartPole-v1", "CartPole"):
        return EnvSpec(backend, "CartPole")
    if name in ("CartPoleNoVel", "MaskedCartPole"):
        return EnvSpec(backend, "CartPole", mask_velocity=True)
    m = re.fullmatch(r"FlickeringCartPole(?:-([0-9.]+))?", name)
    if m:
        p = float(m.group(1)) if m.group(1) else 0.5
        if not 0.0 <= p < 1.0:
            raise UserError(f"env id {env_id!r}: FlickeringCartPole p = {p} (accepted: p in [0, 1))")
        return EnvSpec(backend, "CartPole", flicker_p=p)
    m = re.fullmatch(r"TMaze(?:-([0-9]+))?", name)
    if m:
        if backend == "gym":
            raise UserError(f"env id {env_id!r}: the T-maze exists only on the native backend (accepted: TMaze[-N])")
        n = int(m.group(1)) if m.group(1) else 10
        if n < 1:
            raise UserError(f"env id {env_id!r}: TMaze corridor length {n} (accepted: an integer >= 1)")
        return EnvSpec("native", "TMaze", corridor_length=n)
    import gymnasium as gym

    if ":" in name:  # gymnasium's "module:id": import the module, which registers the id
        module, name = name.split(":", 1)
        _import_suite(module, env_id)
    elif name not in gym.registry:
        for prefix, module in SUITES.items():
            if name.startswith(prefix):
                _import_suite(module, env_id)
    if name not in gym.registry:
        raise UserError(
            f"unknown env id {env_id!r} (accepted: a built-in task {', '.join(BUILTIN_IDS)}; a registered gymnasium id; "
            f"module:id for a suite that registers on import; suites imported on demand: {', '.join(sorted(set(SUITES.values())))})"
        )
    return EnvSpec("gym", name)


def _base_env(spec: EnvSpec, num_envs: int, device: torch.device, seed: int) -> EnvBase:
    if spec.backend == "native":
        if spec.base == "CartPole":
            return CartPoleEnv(num_envs=num_envs, device=device, seed=seed)
        return TMazeEnv(spec.corridor_length, num_envs=num_envs, device=device, seed=seed)
    import gymnasium as gym
    from torchrl.envs import GymWrapper

    gym_id = "CartPole-v1" if spec.base == "CartPole" else spec.base
    # One process, N envs stepped in a loop by gymnasium's SyncVectorEnv (TorchRL's
    # GymEnv(num_envs=N) would start N worker processes). SAME_STEP autoreset puts
    # the real final observation in "next" and the reset one at the next root.
    try:
        vec = gym.make_vec(
            gym_id, num_envs=num_envs, vectorization_mode="sync",
            vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
        )
    except (gym.error.DependencyNotInstalled, ImportError) as err:
        raise UserError(f"env {gym_id!r} needs a package that is not installed: {err}") from None
    env = GymWrapper(vec, categorical_action_encoding=True, device=device)
    env.set_seed(seed)
    return env


def check_env_specs_supported(env: EnvBase, env_id: str) -> int:
    """Returns the flat observation size, or raises naming what is unsupported."""
    obs_spec = env.observation_spec.get(OBS, None)
    if obs_spec is None:
        raise UserError(f"env {env_id!r}: no {OBS!r} entry in the observation spec (found: {list(env.observation_spec.keys())})")
    batch = len(env.batch_size)
    if len(obs_spec.shape) != batch + 1 or not obs_spec.dtype.is_floating_point:
        raise UserError(
            f"env {env_id!r}: observation of shape {tuple(obs_spec.shape[batch:])} dtype {obs_spec.dtype} (accepted: a flat float vector)"
        )
    act = env.action_spec
    if not isinstance(act, (Categorical, OneHot)) and not (isinstance(act, Bounded) and act.dtype.is_floating_point):
        raise UserError(
            f"env {env_id!r}: unsupported action space {type(act).__name__} (accepted: discrete (Categorical / OneHot) or bounded continuous (Box))"
        )
    return obs_spec.shape[-1]


def make_env(
    env_id: str,
    num_envs: int = 1,
    device: torch.device | str = "cpu",
    seed: int = 0,
    normalize_obs: bool = True,
    flicker_mode: str = "iid",
    flicker_burst: float = 4.0,
) -> TransformedEnv:
    """Builds ``num_envs`` copies of ``env_id`` batched in one process on ``device``."""
    if num_envs < 1:
        raise UserError(f"num_envs = {num_envs} (accepted: an integer >= 1)")
    spec = parse_env_id(env_id)
    device = torch.device(device)
    base = _base_env(spec, num_envs, device, seed)
    env = base if isinstance(base, TransformedEnv) else TransformedEnv(base)
    obs_dim = check_env_specs_supported(env, env_id)
    if spec.mask_velocity:
        env.append_transform(MaskVelocity((1, 3)))
        obs_dim -= 2
    if spec.flicker_p > 0:
        env.append_transform(Flicker(spec.flicker_p, mode=flicker_mode, mean_burst=flicker_burst, seed=seed + 7919))
    if normalize_obs:
        env.append_transform(RunningObsNorm(obs_dim))
    env.append_transform(InitTracker())
    env.append_transform(StepCounter())
    env.append_transform(RewardSum())
    return env
