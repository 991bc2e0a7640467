"""Environments: the env factory, tensor-native batched envs, POMDP transforms, observation
encoding and normalisation. Everything here is a TorchRL ``EnvBase`` or ``Transform``.

    >>> from torchrl_memory.envs import make_env
    >>> env = make_env("CartPoleNoVel", num_envs=64)  # tensor-native, one batch
"""
from .cartpole import CartPoleEnv
from .observation_encoding import EncodeObservation
from .factory import check_eval_env, make_env, parse_env_id
from .finite_check import CheckFiniteEnvData, NonFiniteEnvDataError
from .lookup import find_transform, native_base, obs_dim_of
from .minigrid_memory import MiniGridMemoryEnv
from .minigrid_wrappers import NavigationActions, OneHotSymbolicImage
from .native import NativeEnvBase
from .obs_norm import RunningObsNorm
from .pomdp_transforms import Flicker, MaskVelocity
from .prev_action import PreviousActionReward
from .tmaze import TMazeEnv

__all__ = [
    "CartPoleEnv", "CheckFiniteEnvData", "EncodeObservation", "Flicker", "MaskVelocity", "MiniGridMemoryEnv", "NativeEnvBase",
    "NavigationActions", "NonFiniteEnvDataError", "OneHotSymbolicImage", "PreviousActionReward", "RunningObsNorm", "TMazeEnv",
    "check_eval_env", "find_transform", "make_env", "native_base", "obs_dim_of", "parse_env_id",
]
