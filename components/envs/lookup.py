"""Look things up in a built env: a transform by type, the native base env, the observation size.

Kept apart from the env factory so that modules which only read a built env (evaluation,
checkpoints) do not import the factory and everything it builds.
"""
from __future__ import annotations

from torchrl.envs import Compose, EnvBase, TransformedEnv

from .native import NativeEnvBase
from ..keys import OBS


def find_transform(env: EnvBase, cls: type):
    """The first transform of type ``cls`` in ``env`` (or None; a plain env has none)."""
    if not isinstance(env, TransformedEnv):
        return None
    transform = env.transform
    items = transform if isinstance(transform, Compose) else [transform]
    for t in items:
        if isinstance(t, cls):
            return t
    return None


def native_base(env: EnvBase) -> NativeEnvBase | None:
    """The tensor-native env under ``env`` (its RNG is part of a checkpoint), or None."""
    base = env.base_env if isinstance(env, TransformedEnv) else env
    return base if isinstance(base, NativeEnvBase) else None


def obs_dim_of(env: EnvBase, key=OBS) -> int:
    """Size of the last dim of the observation entry ``key``."""
    return env.observation_spec[key].shape[-1]
