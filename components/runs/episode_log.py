"""Finished episodes out of a ``[num_envs, T]`` batch, as JSONL-ready records."""
from __future__ import annotations

import torch
from tensordict import TensorDictBase

from ..keys import EPISODE_REWARD, STEP_COUNT


def finished_episodes(batch: TensorDictBase, steps_before: int) -> list[dict]:
    """One record per episode that ended in ``batch``; ``total_steps`` counts env steps up to its end."""
    nxt = batch.get("next")
    done = nxt.get("done").squeeze(-1)
    if not bool(done.any()):
        return []
    num_envs = batch.batch_size[0]
    env_idx, t_idx = done.nonzero(as_tuple=True)
    rewards = nxt.get(EPISODE_REWARD).squeeze(-1)[env_idx, t_idx].tolist()
    lengths = nxt.get(STEP_COUNT).squeeze(-1)[env_idx, t_idx].tolist()
    terminated = nxt.get("terminated").squeeze(-1)[env_idx, t_idx].tolist()
    order = torch.argsort(t_idx * num_envs + env_idx).tolist()
    return [
        {
            "total_steps": steps_before + (int(t_idx[k]) + 1) * num_envs,
            "env": int(env_idx[k]),
            "total_reward": rewards[k],
            "length": int(lengths[k]),
            "status": "Terminated" if terminated[k] else "Truncated",
        }
        for k in order
    ]
