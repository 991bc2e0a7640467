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


@torch.no_grad()
def run_greedy_episodes(env: EnvBase, policy: TensorDictModuleBase, max_steps: int = 10_000) -> list[EpisodeRecord]:
    """Runs every env of ``env`` to its first episode end with the deterministic (mode) action.

    Torch's global RNG streams (CPU and CUDA) are saved and restored around the rollout:
    building or resetting an env may draw from them, and an evaluation must not change
    what training draws next.
    """
    with preserved_rng(), set_exploration_type(ExplorationType.DETERMINISTIC):
        rollout = env.rollout(max_steps, policy, break_when_any_done=False, break_when_all_done=True)
    nxt = rollout.get("next")
    done = nxt.get("done").squeeze(-1)  # [N, T]
    records = []
    for i in range(done.shape[0]):
        idx = done[i].nonzero()
        if idx.numel() == 0:
            raise RuntimeError(f"eval env {i} did not finish an episode within {max_steps} steps")
        t = int(idx[0])
        terminated = bool(nxt.get("terminated")[i, t])
        records.append(
            EpisodeRecord(
                total_reward=float(nxt.get(EPISODE_REWARD)[i, t]),
                length=int(nxt.get(STEP_COUNT)[i, t]),
                status="Terminated" if terminated else "Truncated",
                extras={"success": float(nxt.get("reward")[i, t] > 0)},
            )
        )
    return records


def evaluate(
    env: EnvBase, policy: TensorDictModuleBase, total_steps: int, max_steps: int = 10_000, track_success: bool = False
) -> EvalReport:
    """Greedy episodes -> ``EvalReport``; ``track_success`` adds the success rate (final reward > 0, the T-maze's)."""
    records = run_greedy_episodes(env, policy, max_steps)
    tracker = StatsTracker()
    if track_success:
        tracker.aggregators["success_rate"] = Mean("success")
    for r in records:
        tracker.record(r)
    return EvalReport(total_steps=total_steps, n_episodes=len(records), stats=tracker.summary(), episodes=records)
