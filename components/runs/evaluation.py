"""Greedy evaluation on a separate env: one episode per env, run in parallel.

The eval env is built by the caller with its own seed; its observation
normalisation is loaded from the training env and frozen, so evaluation never
moves the training statistics nor touches a training episode.

Why not TorchRL's ``Evaluator``: it collects episodes through a ``Collector`` (threads,
processes or Ray, for asynchronous evaluation); here one ``env.rollout`` plays the first
episode of every env in parallel and stops when all are done, which is what a
deterministic, seeded, per-episode report needs, with torch's RNG streams restored.
"""
from __future__ import annotations

import sys

import torch
from tensordict.nn import TensorDictModuleBase
from torchrl.envs import EnvBase, ExplorationType, TransformedEnv, set_exploration_type

from ..envs.lookup import find_transform
from ..keys import EPISODE_REWARD, STEP_COUNT
from ..envs.obs_norm import RunningObsNorm
from .stats import EpisodeRecord, EvalReport, Mean, StatsTracker


def sync_obs_norm(train_env: TransformedEnv, eval_env: TransformedEnv) -> None:
    """Copies the training normalisation statistics into the eval env and freezes them there."""
    src, dst = find_transform(train_env, RunningObsNorm), find_transform(eval_env, RunningObsNorm)
    if src is None or dst is None:
        return
    dst.load_state_dict(src.state_dict())
    dst.freeze()


def preserved_rng():
    """Context that restores torch's global RNG streams (CPU and every CUDA device) on exit."""
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    return torch.random.fork_rng(devices=devices)


#: evaluation episodes of an env that declares no step limit end here, counted as truncated
#: (gymnasium's own limits are 200 to 1000 for its classic tasks; a greedy policy that walks in
#: circles on CliffWalking-v1, which has none, would otherwise never finish)
DEFAULT_EVAL_STEP_LIMIT = 1_000


def eval_step_limit(env: EnvBase, max_steps: int | None = None) -> int:
    """The most steps an evaluation episode runs: ``max_steps`` when given, else the env's
    declared limit (``env.max_episode_steps``, set by ``make_env``), else ``DEFAULT_EVAL_STEP_LIMIT``."""
    if max_steps is not None:
        return int(max_steps)
    declared = getattr(env, "max_episode_steps", None)
    return int(declared) if isinstance(declared, int) and declared > 0 else DEFAULT_EVAL_STEP_LIMIT


@torch.no_grad()
def run_greedy_episodes(env: EnvBase, policy: TensorDictModuleBase, max_steps: int | None = None) -> list[EpisodeRecord]:
    """Runs every env of ``env`` to its first episode end with the deterministic (mode) action.

    An episode still running after ``eval_step_limit(env, max_steps)`` steps ends there, as
    ``"Truncated"`` with the return so far; a warning on stderr says how many did and why.
    Torch's global RNG streams (CPU and CUDA) are saved and restored around the rollout:
    building or resetting an env may draw from them, and an evaluation must not change
    what training draws next.
    """
    limit = eval_step_limit(env, max_steps)
    with preserved_rng(), set_exploration_type(ExplorationType.DETERMINISTIC):
        rollout = env.rollout(limit, policy, break_when_any_done=False, break_when_all_done=True)
    nxt = rollout.get("next")
    done = nxt.get("done").reshape(*rollout.batch_size)  # [N, T]
    ended = done.any(-1)
    # the first done step of each env, or its last step when the limit came first
    first = torch.where(ended, done.int().argmax(-1), torch.full_like(ended, done.shape[-1] - 1, dtype=torch.long))
    rows = torch.arange(done.shape[0], device=done.device)

    def at(key) -> list:
        return nxt.get(key).reshape(*rollout.batch_size, -1)[rows, first, 0].tolist()

    terminated, rewards, lengths, last = at("terminated"), at(EPISODE_REWARD), at(STEP_COUNT), at("reward")
    records = [
        EpisodeRecord(
            total_reward=float(rewards[i]),
            length=int(lengths[i]),
            status="Terminated" if terminated[i] else "Truncated",
            extras={"success": float(last[i] > 0)},
        )
        for i in range(done.shape[0])
    ]
    capped = int((~ended).sum())
    if capped:
        declared = getattr(env, "max_episode_steps", None)
        why = f"the limit of {limit} steps asked for" if max_steps is not None else (
            f"the env's limit of {limit} steps" if declared else f"the default limit of {limit} steps: the env declares none")
        print(f"warning: {capped} of {len(records)} evaluation episodes did not end within {why}; "
              "they count as truncated, with the return so far", file=sys.stderr)
    return records


def evaluate(
    env: EnvBase, policy: TensorDictModuleBase, total_steps: int, max_steps: int | None = None, track_success: bool = False
) -> EvalReport:
    """Greedy episodes -> ``EvalReport``; ``track_success`` adds the success rate (final reward > 0, the T-maze's).
    ``max_steps``: the episode step cap (default: ``eval_step_limit``)."""
    records = run_greedy_episodes(env, policy, max_steps)
    tracker = StatsTracker()
    if track_success:
        tracker.aggregators["success_rate"] = Mean("success")
    for r in records:
        tracker.record(r)
    return EvalReport(total_steps=total_steps, n_episodes=len(records), stats=tracker.summary(), episodes=records)
