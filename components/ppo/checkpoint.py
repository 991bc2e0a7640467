"""What a recurrent-PPO checkpoint holds, and the checks before resuming from one.

Exact resume needs more than weights: the collector's carried tensordict (the
env state of the tensor-native envs, the LSTM state, ``is_init``, running
episode sums), every RNG (torch, env, flicker, sampler, eval env), the
observation-normalisation and reward-scaling statistics and the counters.
The carried tensordict is TorchRL's ``Collector._carrier`` (no public accessor
in 0.14); with the gymnasium backend the env's own state cannot be saved, so a
resumed run continues from the same carried observation but not bit-exactly. With
collector workers (``runs/collectors.py``) the carried state stays in the workers: the
checkpoint holds worker 0's observation normalisation and a resumed run starts fresh
episodes. The carried tensordict is stored as plain nested dicts (``tensordict_to_plain``),
so the whole checkpoint loads with ``torch.load(weights_only=True)``.
"""
from __future__ import annotations

import torch
from torchrl.collectors import Collector
from torchrl.envs import TransformedEnv

from ..envs.lookup import find_transform, native_base
from ..envs.obs_norm import RunningObsNorm
from ..envs.pomdp_transforms import Flicker
from .config import PPOConfig
from .trainer import RecurrentPPOTrainer
from .reward_scaling import ReturnScaler
from ..runs.collectors import is_in_process, push_env_state
from ..runs.run_dir import check_resume_config, tensordict_from_plain, tensordict_to_plain

#: config fields that fix tensor shapes or the task: a checkpoint only loads under the same values
SHAPE_FIELDS = ("env_id", "num_envs", "rollout_len", "model", "hidden_size", "encoder", "encoder_size", "normalize_obs", "prev_action")
FORMAT = "recurrent_ppo/2"  # 2: the optimizer holds one flat parameter (flat_params.py)


def _env_rngs(env: TransformedEnv) -> dict:
    base, flicker = native_base(env), find_transform(env, Flicker)
    return {
        "base": None if base is None else base.rng_state(),
        "flicker": None if flicker is None else flicker.rng_state(),
    }


def _load_env_rngs(env: TransformedEnv, state: dict) -> None:
    base, flicker = native_base(env), find_transform(env, Flicker)
    if base is not None and state["base"] is not None:
        base.set_rng_state(state["base"])
    if flicker is not None:
        flicker.set_rng_state(state["flicker"])


def build_state(
    config: PPOConfig,
    trainer: RecurrentPPOTrainer,
    collector: Collector,
    env: TransformedEnv,
    eval_env: TransformedEnv,
    scaler: ReturnScaler | None,
    counters: dict,
) -> dict:
    """A self-contained snapshot (tensors cloned), safe to keep in memory and write later."""
    norm = find_transform(env, RunningObsNorm)
    state = {
        "format": FORMAT,
        "config": config.to_dict(),
        "trainer": trainer.state_dict(),
        # in-process collection only: a worker process's carried tensordict cannot be read
        "carrier": tensordict_to_plain(collector._carrier) if is_in_process(collector) else None,
        "env_rng": _env_rngs(env),
        "eval_env_rng": _env_rngs(eval_env),
        "obs_norm": None if norm is None else norm.state_dict(),
        "reward_scaler": None if scaler is None else scaler.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        "counters": dict(counters),
    }
    return _clone(state)


def _clone(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    if isinstance(obj, dict):
        return {k: _clone(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clone(v) for v in obj]
    if hasattr(obj, "clone") and not isinstance(obj, (str, bytes)):
        return obj.clone()
    return obj


def check_compatible(state: dict, config: PPOConfig) -> None:
    """Raises naming every mismatch between a checkpoint and the config it is resumed under."""
    check_resume_config(state, config, FORMAT, SHAPE_FIELDS)


def restore_state(
    state: dict,
    trainer: RecurrentPPOTrainer,
    collector: Collector,
    env: TransformedEnv,
    eval_env: TransformedEnv,
    scaler: ReturnScaler | None,
) -> dict:
    """Loads a snapshot into freshly built objects; returns the counters."""
    model_now = trainer.actor_critic.state_dict()
    bad = [f"{k}: checkpoint {tuple(v.shape)} vs model {tuple(model_now[k].shape)}" for k, v in state["trainer"]["model"].items() if k in model_now and v.shape != model_now[k].shape]
    missing = sorted(set(model_now) ^ set(state["trainer"]["model"]))
    if bad or missing:
        raise ValueError(f"checkpoint weights do not fit the model: {'; '.join(bad)} {('keys differ: ' + str(missing)) if missing else ''}")
    trainer.load_state_dict(state["trainer"])
    if is_in_process(collector) and state["carrier"] is not None:
        carrier = tensordict_from_plain(state["carrier"], collector._carrier.device)
        if not collector.track_traj_ids:  # a checkpoint of a collector that kept trajectory ids
            carrier = carrier.exclude("collector")
        collector._carrier = carrier
    _load_env_rngs(env, state["env_rng"])
    _load_env_rngs(eval_env, state["eval_env_rng"])
    norm = find_transform(env, RunningObsNorm)
    if norm is not None and state["obs_norm"] is not None:
        norm.load_state_dict(state["obs_norm"])
        push_env_state(collector, env)
    if scaler is not None and state["reward_scaler"] is not None:
        scaler.load_state_dict(state["reward_scaler"])
    torch.set_rng_state(state["torch_rng"])
    if state["cuda_rng"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    return dict(state["counters"])
