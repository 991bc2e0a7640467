"""Eval-only mode of the pipelines: ``--eval CHECKPOINT --episodes N``.

Loads the policy (``load_policy``), plays N greedy episodes on N envs seeded 1..N (on
the gymnasium backend env i gets seed i + 1; the
tensor-native envs draw from one generator seeded 1), prints the report and appends one
record per episode to ``eval_only.jsonl`` beside the checkpoint.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..config_validation import UserError
from ..runs.evaluation import evaluate
from .policy import load_policy


def evaluate_checkpoint(path: str | Path, episodes: int, family: str, device: str = "cpu") -> dict:
    """``--eval``: ``episodes`` greedy episodes of the checkpoint at ``path`` (a ``family`` pipeline's),
    printed and appended to ``eval_only.jsonl`` beside it; returns the report's stats and episodes."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"--eval {path}: no such checkpoint file (accepted: a .pt file of a run, e.g. runs/.../best.pt)")
    if episodes < 1:
        raise UserError(f"--episodes {episodes} (accepted: an integer >= 1)")
    policy = load_policy(path, device)
    if policy.algorithm != family:
        raise UserError(f"{path} is a {policy.algorithm} checkpoint; evaluate it with pipelines/{policy.algorithm}.py")
    env = policy.make_env(episodes, seed=1)
    report = evaluate(env, policy.as_module(), total_steps=0, track_success=policy.config.env_id.startswith("TMaze"))
    out = path.parent / "eval_only.jsonl"
    with open(out, "a") as f:
        for i, e in enumerate(report.episodes):
            f.write(json.dumps({"checkpoint": path.name, "seed": i + 1, **e.to_dict()}) + "\n")
    print(f"{path}: {report.format().replace('eval @ 0 steps: ', '')}")
    print(f"episodes written to {out}")
    return {"eval": report.stats, "episodes": [e.to_dict() for e in report.episodes]}
