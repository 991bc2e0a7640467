"""``make_env``: one place that turns an env id into a batched TorchRL env.

Ids:
  * built-in memory tasks on the tensor-native backend: ``CartPole-v1``,
    ``CartPoleNoVel`` (alias ``MaskedCartPole``), ``FlickeringCartPole`` or
    ``FlickeringCartPole-<p>``, ``TMaze`` or ``TMaze-<corridor>``;
  * ``gym:<id>`` forces the gymnasium backend (``gym:CartPoleNoVel`` applies the
    same POMDP transforms to gymnasium's CartPole-v1);
  * ``native:<id>`` asks for the tensor-native version of a gymnasium env where there is
    one: MiniGrid's Memory envs (``native:MiniGrid-MemoryS7-v0``, ``minigrid_memory.py``);
  * any other gymnasium id runs through TorchRL's ``GymWrapper`` (``gym_backend.py``):
    registered ids, ``module:id``, and POPGym / MiniGrid ids, whose suite is imported
    on demand.

Every env gets, in order: for a gymnasium env, the check that stops a run at a NaN or inf
observation or reward (``finite_check.py``); the observation encoder when the observation is not
already one flat float vector (``observation_encoding.py``), the POMDP transforms, optionally the
previous action and reward, optional running observation normalisation,
``InitTracker``, ``StepCounter`` and ``RewardSum``. A recurrent
agent adds its own state primer (``agent.prime(env)``, from its trunk's
``make_tensordict_primer``); callers append any further TorchRL transform with
``env.append_transform``.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
from dataclasses import dataclass

import gymnasium as gym
import torch
from torchrl.data import Bounded, Categorical, OneHot
from torchrl.envs import EnvBase, InitTracker, RewardSum, StepCounter, TransformedEnv

from ..config_validation import UserError
from .cartpole import CartPoleEnv
from .observation_encoding import EncodeObservation
from .env_workers import parallel_gym_env
from .finite_check import CheckFiniteEnvData
from .fused_step import NativeTransformedEnv
from .gym_backend import describe_gym_env, make_gym_vector_env, resolve_wrapper
from .minigrid_memory import MEMORY_ID, MiniGridMemoryEnv
from .popgym import NATIVE_POPGYM_IDS, make_native_popgym
from .minigrid_wrappers import NavigationActions
from .obs_norm import RunningObsNorm
from .pomdp_transforms import Flicker, MaskVelocity
from .prev_action import PreviousActionReward
from .tmaze import TMazeEnv
from ..keys import OBS

BUILTIN_IDS = ("CartPole-v1", "CartPoleNoVel", "MaskedCartPole", "FlickeringCartPole[-p]", "TMaze[-corridor]")
NATIVE_GYM_IDS = "native:MiniGrid-MemoryS<size>[Random]-v0, native:popgym-<Name><Easy|Medium|Hard>-v0"


@dataclass(frozen=True)
class EnvSpec:
    """A parsed env id."""

    backend: str  # "native" or "gym"
    base: str  # "CartPole", "TMaze", "MiniGridMemory" or a gymnasium id
    gym_id: str = ""  # the gymnasium id a native env mirrors
    mask_velocity: bool = False
    flicker_p: float = 0.0
    corridor_length: int = 0


#: id prefixes of suites that register their envs only when imported (gymnasium 1.x loads no plugins)
SUITES = {"popgym-": "popgym", "MiniGrid-": "minigrid", "BabyAI-": "minigrid", "ALE/": "ale_py"}


#: env ids a suite registers only when an optional package of its own imports -> that package
OPTIONAL_DEPENDENCIES = {"popgym-Labyrinth": "mazelib"}


def _optional_dependency(name: str) -> str | None:
    """The package that ``name``'s suite needs before it registers ``name`` and that is missing, if any."""
    for prefix, package in OPTIONAL_DEPENDENCIES.items():
        if name.startswith(prefix) and importlib.util.find_spec(package) is None:
            return package
    return None


def _import_suite(module: str, env_id: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError as err:
        extra = {"popgym": " (pip install -e '.[popgym]')", "minigrid": " (pip install -e '.[minigrid]')"}.get(module, "")
        raise UserError(f"env id {env_id!r} needs the Python package {module!r}, which is not installed{extra}: {err}") from None


#: names of POPGym envs in its paper and earlier releases -> their names in popgym 1.0
POPGYM_RENAMED = {
    "NoisyStatelessCartPole": "NoisyPositionOnlyCartPole",
    "StatelessCartPole": "PositionOnlyCartPole",
    "NoisyStatelessPendulum": "NoisyPositionOnlyPendulum",
    "StatelessPendulum": "PositionOnlyPendulum",
}


def _popgym_alias(name: str) -> str:
    m = re.fullmatch(r"popgym-(\w+?)(Easy|Medium|Hard)-v0", name)
    if m and m.group(1) in POPGYM_RENAMED:
        return f"popgym-{POPGYM_RENAMED[m.group(1)]}{m.group(2)}-v0"
    return name


def parse_env_id(env_id: str) -> EnvSpec:
    """Reads an env id into the backend and task it names (``EnvSpec``), or a one-line
    ``UserError`` listing what is accepted; imports a suite (popgym, minigrid) on demand."""
    if not isinstance(env_id, str) or not env_id:
        raise UserError(f"env id must be a non-empty string, got {env_id!r}")
    backend = "native"
    name = env_id
    native_asked = False
    if name.startswith("gym:"):
        backend, name = "gym", name[4:]
    elif name.startswith("native:"):
        name = name[7:]
        if MEMORY_ID.fullmatch(name):
            _import_suite("minigrid", env_id)  # the tables are built by minigrid's own code
            if name in gym.registry:
                return EnvSpec("native", "MiniGridMemory", gym_id=name)
        if name in NATIVE_POPGYM_IDS:
            return EnvSpec("native", "PopGym", gym_id=name)
        if name.startswith("popgym-"):
            raise UserError(f"env id {env_id!r}: no tensor-native version (accepted: native:popgym-<Name><Easy|Medium|Hard>-v0 for "
                            f"{', '.join(sorted({n[7:].rsplit('-', 1)[0].replace('Easy', '').replace('Medium', '').replace('Hard', '') for n in NATIVE_POPGYM_IDS}))}; "
                            f"or {name!r} itself, popgym's env through gymnasium)")
        native_asked = True  # a built-in task below, or an error
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
    if native_asked:
        raise UserError(f"env id {env_id!r}: no tensor-native version (accepted: {NATIVE_GYM_IDS}, or a built-in task {', '.join(BUILTIN_IDS)})")
    name = _popgym_alias(name)
    if ":" in name:  # gymnasium's "module:id": import the module, which registers the id
        module, name = name.split(":", 1)
        _import_suite(module, env_id)
    elif name not in gym.registry:
        for prefix, module in SUITES.items():
            if name.startswith(prefix):
                _import_suite(module, env_id)
    if name not in gym.registry and (needs := _optional_dependency(name)) is not None:
        raise UserError(f"env id {env_id!r} is registered only when the {needs!r} package is installed (pip install {needs})")
    if name not in gym.registry:
        raise UserError(
            f"unknown env id {env_id!r} (accepted: a built-in task {', '.join(BUILTIN_IDS)}; {NATIVE_GYM_IDS}; a registered gymnasium id; "
            f"module:id for a suite that registers on import; suites imported on demand: {', '.join(sorted(set(SUITES.values())))})"
        )
    return EnvSpec("gym", name)


def _base_env(spec: EnvSpec, num_envs: int, device: torch.device, seed: int, wrappers: list | None, env_workers: int = 1):
    """(env, observation keys, description of the observation space, episode step limit or None)."""
    if spec.backend == "native":
        memory = spec.base == "MiniGridMemory"
        if wrappers and not memory:
            raise UserError(f"env wrappers apply to gymnasium envs only (accepted here: {spec.gym_id or 'gym:' + spec.base}...)")
        if env_workers > 1:
            raise UserError(f"env_workers = {env_workers}: the tensor-native envs step all copies in one batched call (accepted: 1, or a gymnasium id such as {spec.gym_id or 'gym:' + spec.base})")
        if memory:
            return _native_memory_env(spec, num_envs, device, seed, wrappers)
        if spec.base == "PopGym":
            env = make_native_popgym(spec.gym_id, num_envs, device, seed)
            return env, [OBS], f"Box({env.obs_dim},) float32 (tensor-native {spec.gym_id}, one-hot codes as on the gymnasium path)", env.max_episode_steps
        if spec.base == "CartPole":
            env = CartPoleEnv(num_envs=num_envs, device=device, seed=seed)
        else:
            env = TMazeEnv(spec.corridor_length, num_envs=num_envs, device=device, seed=seed)
        return env, [OBS], f"Box({env.obs_dim},) float32", env.max_episode_steps
    gym_id = "CartPole-v1" if spec.base == "CartPole" else spec.base
    if env_workers > 1:
        keys, described, limit = describe_gym_env(gym_id, wrappers)
        return parallel_gym_env(gym_id, num_envs, env_workers, device, seed, wrappers), keys, described, limit
    return make_gym_vector_env(gym_id, num_envs, device, seed, wrappers)


def _native_memory_env(spec: EnvSpec, num_envs: int, device: torch.device, seed: int, wrappers: list | None):
    """The tensor-native MiniGrid Memory env. Of the gymnasium wrappers it takes only
    ``NavigationActions`` (as its three-action space): the others act on minigrid's Python env."""
    wrappers = [resolve_wrapper(w) for w in (wrappers or [])]
    other = [w for w in wrappers if w is not NavigationActions]
    if other:
        raise UserError(f"env wrappers {other} on {spec.gym_id!r} (accepted on the native backend: "
                        f"torchrl_memory.envs.minigrid_wrappers:NavigationActions only; others need the gymnasium id)")
    env = MiniGridMemoryEnv(spec.gym_id, 3 if wrappers else 7, num_envs=num_envs, device=device, seed=seed)
    v = env.observation_spec["image"].shape[-2]
    described = f"Dict(direction: Discrete(4), image: Box({v}, {v}, 3) uint8) (tensor-native {spec.gym_id})"
    return env, ["direction", "image"], described, env.max_episode_steps


def check_action_spec_supported(env: EnvBase, env_id: str) -> None:
    act = env.action_spec
    discrete = isinstance(act, (Categorical, OneHot)) or (not act.dtype.is_floating_point and getattr(act.space, "low", None) is not None)
    if not discrete and not (isinstance(act, Bounded) and act.dtype.is_floating_point):
        raise UserError(
            f"env {env_id!r}: unsupported action space {type(act).__name__} (accepted: Discrete, MultiDiscrete or a bounded Box)"
        )


def make_env(
    env_id: str,
    num_envs: int = 1,
    device: torch.device | str = "cpu",
    seed: int = 0,
    normalize_obs: bool = True,
    flicker_mode: str = "iid",
    flicker_burst: float = 4.0,
    wrappers: list | None = None,
    prev_action: bool = False,
    env_workers: int = 1,
) -> TransformedEnv:
    """Builds ``num_envs`` copies of ``env_id`` batched in one process on ``device``.

    ``wrappers``: gymnasium wrappers (callables or ``"module:Class"``) applied to each copy
    of a gymnasium env. Observations of any supported layout are encoded into one float
    vector (``EncodeObservation``; ``env.observation_description`` says how). Running
    normalisation applies when ``normalize_obs`` and the observation has a float part
    (one-hot codes are left as they are). ``prev_action`` appends the previous action and
    reward to the observation (``PreviousActionReward``), after the POMDP transforms.
    ``env_workers``: processes that step a gymnasium env's copies (``env_workers.py``).
    ``env.max_episode_steps``: the episode step limit where the env declares one, else ``None``.
    """
    if num_envs < 1:
        raise UserError(f"num_envs = {num_envs} (accepted: an integer >= 1)")
    if env_workers < 1 or num_envs % env_workers:
        raise UserError(f"env_workers = {env_workers} with num_envs = {num_envs} (accepted: an integer >= 1 that divides num_envs)")
    spec = parse_env_id(env_id)
    device = torch.device(device)
    base, obs_keys, described, limit = _base_env(spec, num_envs, device, seed, wrappers, env_workers)
    # a merged multi-process env stays one base env (env_workers.py); native envs step on the lean path (fused_step.py)
    env = (NativeTransformedEnv if spec.backend == "native" else TransformedEnv)(base, auto_unwrap=False)
    env.max_episode_steps = limit
    check_action_spec_supported(env, env_id)
    if spec.backend == "gym":  # a gymnasium env's NaN or inf stops the run where it appears (the native envs have none)
        env.append_transform(CheckFiniteEnvData(obs_keys, env_id))
    obs_spec = env.observation_spec
    flat = obs_keys == [OBS] and obs_spec[OBS].dtype.is_floating_point and len(obs_spec[OBS].shape) == len(env.batch_size) + 1
    encoder = None
    if not flat:
        encoder = EncodeObservation(obs_spec, obs_keys, OBS, batch_dims=len(env.batch_size))
        env.append_transform(encoder)
    obs_dim = env.observation_spec[OBS].shape[-1]
    # one-hot codes get no running normalisation: on the gymnasium path the encoder says so, a native env by its flag
    one_hot = (encoder is not None and not encoder.has_float) or (spec.backend == "native" and getattr(base, "one_hot_observation", False))
    normalize_obs = normalize_obs and not one_hot
    env.observation_description = f"obs: {described}" + ("" if encoder is None else f" -> {encoder.describe()}")
    if spec.mask_velocity:
        env.append_transform(MaskVelocity((1, 3)))
        obs_dim -= 2
        env.observation_description += f" -> velocities (entries 1, 3) hidden: Box({obs_dim},)"
    if spec.flicker_p > 0:
        env.append_transform(Flicker(spec.flicker_p, mode=flicker_mode, mean_burst=flicker_burst, seed=seed + 7919))
    if prev_action:
        transform = PreviousActionReward(env.action_spec)
        env.append_transform(transform)
        obs_dim += transform.extra
        env.observation_description += f" + previous action and reward ({transform.extra})"
    if normalize_obs:
        env.append_transform(RunningObsNorm(obs_dim))
    elif one_hot:
        env.observation_description += " (one-hot codes: no running normalisation)"
    env.append_transform(InitTracker())
    env.append_transform(StepCounter())
    env.append_transform(RewardSum())
    return env


def check_eval_env(train_env: EnvBase, eval_env: EnvBase, train_id: str, eval_id: str) -> None:
    """An evaluation env of another id must take the same actions and give observations of the
    same size as the training env, or the policy cannot run on it; checked before any work."""
    def interface(env):
        act = env.action_spec
        return env.observation_spec[OBS].shape[-1], type(act).__name__, getattr(act.space, "n", None), tuple(act.shape[len(env.batch_size):])

    (o1, a1, n1, s1), (o2, a2, n2, s2) = interface(train_env), interface(eval_env)
    if (o1, a1, n1, s1) != (o2, a2, n2, s2):
        raise UserError(
            f"eval_env_id {eval_id!r} does not match env_id {train_id!r}: observation size {o2} vs {o1}, "
            f"actions {a2}(n={n2}, shape={s2}) vs {a1}(n={n1}, shape={s1}) (accepted: an env with the same observation and action specs)"
        )
