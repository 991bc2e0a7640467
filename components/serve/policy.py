"""``load_policy(path)``: a trained agent from any checkpoint the pipelines write, ready to use.

The policy bundles everything acting needs: the weights, the observation transforms
of its env (encoders, the velocity mask of CartPoleNoVel, the running normalisation
*frozen* at its saved statistics) and the action spec. Two ways to act:

* ``predict(obs, state, episode_start, deterministic)`` on raw gymnasium observations
  (numpy or tensors, one or a batch; Dict/Tuple observations as gymnasium returns
  them), in the spirit of sb3-contrib's ``RecurrentPPO.predict``: returns
  ``(action, state)``; pass the state back with ``episode_start`` True at the first
  step of an episode (the recurrent state is then zeroed, as ``is_init`` does);
* ``as_module()`` with ``make_env(num_envs, seed)``: the TorchRL path, for
  ``env.rollout(...)`` or a collector.

Flicker (FlickeringCartPole's blanking) is part of the task, not of the policy:
``predict`` does not apply it; ``make_env`` does. Gymnasium wrappers named in the
run's ``env_wrappers`` must be applied by the caller to a plain gymnasium env.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict
from torchrl.envs import ExplorationType, TransformedEnv, set_exploration_type

from ..run_config import saved_values
from ..config_validation import UserError
from ..dqn.recurrent_agent import build_dqn_agent
from ..dqn.config import DQNConfig
from ..envs.observation_encoding import EncodeObservation
from ..envs.factory import make_env
from ..envs.lookup import find_transform
from ..envs.obs_norm import RunningObsNorm
from ..envs.pomdp_transforms import MaskVelocity
from ..keys import OBS
from ..ppo.actor_critic import build_agent
from ..ppo.config import PPOConfig
from ..runs.run_dir import load_checkpoint

CONFIGS = {"recurrent_ppo": PPOConfig, "dqn": DQNConfig}


def _config(cls, saved: dict):
    """The checkpoint's config; fields this version no longer has are ignored (acting does not need them)."""
    known = set(cls.__dataclass_fields__)
    return cls(**{k: v for k, v in saved_values(saved, cls).items() if k in known})


class TrainedPolicy:
    """A trained agent rebuilt from a checkpoint's state (see ``load_policy``): ``predict`` on raw
    observations, or ``make_env`` plus ``as_module`` for TorchRL rollouts."""

    def __init__(self, state: dict, device: torch.device | str = "cpu"):
        family = str(state.get("format")).split("/")[0]
        if family not in CONFIGS:
            raise UserError(f"checkpoint format {state.get('format')!r} (accepted: {sorted(CONFIGS)} checkpoints)")
        self.algorithm = family
        self.config = _config(CONFIGS[family], state["config"])
        self.device = torch.device(device)
        self._norm_state = state.get("obs_norm")
        env = self.make_env(1, seed=0, _prime=False)
        self.action_spec = env.action_spec
        if family == "recurrent_ppo":
            self.agent = build_agent(self.config, env, self.device)
            self.agent.load_state_dict(state["trainer"]["model"])
            self.module = self.agent.actor
            self.state_keys = self.agent.state_keys
        else:
            self.agent = build_dqn_agent(self.config, env, self.device)
            self.agent.loss.load_state_dict(state["agent"]["loss"])
            self.module = self.agent.q_actor
            self.state_keys = self.agent.state_keys
        self.module.eval()
        # what predict applies to a raw observation: the env's own transforms, in order
        self._transforms = [t for cls in (EncodeObservation, MaskVelocity, RunningObsNorm) if (t := find_transform(env, cls)) is not None]
        self._obs_keys = self._transforms[0].in_keys if self._transforms and isinstance(self._transforms[0], EncodeObservation) else [OBS]
        self._raw_event_shape = tuple(env.base_env.observation_spec[self._obs_keys[0]].shape[len(env.batch_size):])

    # --- TorchRL path -------------------------------------------------------------------------
    def make_env(self, num_envs: int = 1, seed: int = 0, _prime: bool = True) -> TransformedEnv:
        """The policy's env with its transforms, the normalisation frozen at the saved statistics."""
        cfg = self.config
        env = make_env(
            cfg.env_id, num_envs, self.device, seed, normalize_obs=getattr(cfg, "normalize_obs", False),
            flicker_mode=getattr(cfg, "flicker_mode", "iid"), flicker_burst=getattr(cfg, "flicker_burst", 4.0), wrappers=cfg.env_wrappers,
            prev_action=getattr(cfg, "prev_action", False),
        )
        norm = find_transform(env, RunningObsNorm)
        if norm is not None and self._norm_state is not None:
            norm.load_state_dict(self._norm_state)
            norm.freeze()
        if _prime:
            env = self.agent.prime(env)
        return env

    def as_module(self):
        """The acting TensorDict module (reads the env's observation and, if recurrent, its stored state)."""
        return self.module

    # --- plain gymnasium path -------------------------------------------------------------------
    def _batch(self, obs: Any) -> tuple[TensorDict, bool]:
        if isinstance(obs, tuple):
            obs = {str(i): o for i, o in enumerate(obs)}
        if not isinstance(obs, dict):
            obs = {self._obs_keys[0]: obs}
        obs = {k: torch.as_tensor(np.asarray(v) if not isinstance(v, torch.Tensor) else v, device=self.device) for k, v in obs.items() if k in self._obs_keys}
        first = self._obs_keys[0]
        event_ndim = len(self._event_shape(first))
        batched = obs[first].ndim > event_ndim
        if not batched:
            obs = {k: v.unsqueeze(0) for k, v in obs.items()}
        return TensorDict(obs, batch_size=[obs[first].shape[0]]), batched

    def _event_shape(self, key) -> tuple:
        if self._transforms and isinstance(self._transforms[0], EncodeObservation):
            return next(p.event_shape for p in self._transforms[0].parts if p.key == key)
        return self._raw_event_shape

    def initial_state(self, batch: int = 1) -> dict | None:
        if not self.state_keys:
            return None
        spec = self.agent.primer().primers
        return {k: torch.zeros(batch, *spec[k].shape[-2:], device=self.device) for k in self.state_keys}

    @torch.no_grad()
    def predict(self, obs: Any, state: dict | None = None, episode_start: Any = None, deterministic: bool = True):
        """(action, next state) for raw observation(s); ``state`` is what the previous call returned."""
        if getattr(self.config, "prev_action", False):
            raise UserError("this policy reads the previous action and reward (prev_action): act through make_env() / as_module(), not predict()")
        td, batched = self._batch(obs)
        n = td.batch_size[0]
        for t in self._transforms:
            td = t._call(td)
        if self.state_keys:
            if state is None:  # a first call: a fresh episode
                state, start = self.initial_state(n), torch.ones(n, dtype=torch.bool)
            else:
                start = torch.as_tensor(np.asarray(False if episode_start is None else episode_start), dtype=torch.bool).reshape(-1).expand(n)
            td.update({k: v.to(self.device) for k, v in state.items()})
            td.set(self.agent.in_keys[-1], start.reshape(n, 1).to(self.device))
        mode = ExplorationType.DETERMINISTIC if deterministic else ExplorationType.RANDOM
        with set_exploration_type(mode):
            if self.algorithm == "dqn" and not deterministic:
                self.agent.egreedy.eps.fill_(self.config.epsilon_end)
                td = self.agent.explore_policy(td)
            else:
                td = self.module(td)
        action = td.get(self.agent.action_key if self.algorithm == "recurrent_ppo" else "action")
        next_state = {k: td.get(("next", k)) for k in self.state_keys} if self.state_keys else None
        action = action.cpu().numpy()
        return (action if batched else action[0]), next_state


def load_policy(path: str | Path, device: torch.device | str = "cpu") -> TrainedPolicy:
    """The policy stored in any checkpoint of either pipeline (``best.pt``, ``latest.pt``, ``step_<N>.pt``)."""
    return TrainedPolicy(load_checkpoint(Path(path), map_location=device), device)
