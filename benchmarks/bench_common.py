"""Helpers shared by the benchmark scripts: machine description, medians, result files, and
the stable-solve metric every learning benchmark reports."""
from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Callable

RESULTS = Path(__file__).resolve().parent / "results"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def machine() -> str:
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return f"{os.cpu_count()} cores ({cpu}), {gpu}, Python {platform.python_version()}, torch {torch.__version__}"


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def eval_history(run_dir: str | Path, key: str = "mean_reward") -> list[dict]:
    """A run's greedy evaluations in step order, from its ``eval_episodes.jsonl``:
    ``[{"steps", "value", "train_s"}]``, value the mean return (or the success rate with
    ``key="success_rate"``), train_s the training seconds logged with it (None when the
    pipeline logs none)."""
    evals: dict[int, list] = {}
    for line in (Path(run_dir) / "eval_episodes.jsonl").read_text().splitlines():
        r = json.loads(line)
        evals.setdefault(r["total_steps"], []).append(r)
    out = []
    for step in sorted(evals):
        rows = evals[step]
        value = sum(r["extras"]["success"] if key == "success_rate" else r["total_reward"] for r in rows) / len(rows)
        out.append({"steps": step, "value": value, "train_s": rows[0].get("train_s")})
    return out


def stable_solve(history: list[dict], threshold: float) -> dict | None:
    """The first evaluation from which every later one, up to the end of the budget, is
    >= ``threshold``: ``{"steps", "train_s"}`` of that evaluation, or None when the last
    evaluation is below it (the run never holds). ``history`` is ``eval_history``'s list.

    Unlike "the first evaluation >= threshold" this cannot be won by a recipe that touches
    the threshold once and falls back: a dip later moves the solve past the dip.
    """
    start = None
    for i, e in enumerate(history):
        if e["value"] < threshold:
            start = None
        elif start is None:
            start = i
    if start is None:
        return None
    return {"steps": history[start]["steps"], "train_s": history[start].get("train_s")}


def solve_summary(finals: list[float], solves: list[dict | None], threshold: float, budget_steps: int,
                  train_s: list[float] | None = None) -> dict:
    """Per-arm figures that luck cannot win: the median final evaluation, how many runs end
    >= threshold, how many hold a stable solve, and the median step of it with a run that
    never holds counted as the full ``budget_steps``. With ``train_s`` (each run's training
    seconds) also the median stable-solve seconds, a run that never holds counted as all
    of its training time."""
    out = {
        "median_final": median(finals),
        "finals": finals,
        "seeds_ending_solved": sum(f >= threshold for f in finals),
        "seeds_holding": sum(s is not None for s in solves),
        "median_stable_solve_steps": median([budget_steps if s is None else s["steps"] for s in solves]),
    }
    if train_s is not None:
        out["median_stable_solve_s"] = median([t if s is None or s.get("train_s") is None else s["train_s"] for s, t in zip(solves, train_s)])
    return out


def save(name: str, payload: dict) -> Path:
    RESULTS.mkdir(exist_ok=True)
    payload = {"date": dt.date.today().isoformat(), "machine": machine(), "command": " ".join(["python", *sys.argv]), **payload}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2))
    return path


def locked_update(path: Path, default: dict, update: Callable[[dict], None]) -> dict:
    """Read ``path`` (or ``default``), apply ``update`` in place and write it back atomically, all
    under an exclusive lock: two campaign processes adding runs to one results file both land."""
    with open(Path(tempfile.gettempdir()) / f"{path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        disk = json.loads(path.read_text()) if path.exists() else default
        update(disk)
        path.parent.mkdir(exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(disk, indent=1))
        tmp.replace(path)
    return disk


def median_us(fn, repeats: int, warmup: int = 5) -> float:
    """Median wall time of ``fn()`` in microseconds over ``repeats`` calls, after ``warmup`` calls."""
    import time

    for _ in range(warmup):
        fn()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out) * 1e6


def ppo_default_setup():
    """The PPO pipeline's default pieces on its default env (LSTM, recurrent state primed):
    ``(cfg, env, agent)``, shared by the profiles that time one update or one collection step."""
    from torchrl_memory import PPOConfig, make_actor_critic, make_env, obs_dim_of

    cfg = PPOConfig().validate()
    env = make_env(cfg.env_id, cfg.num_envs, seed=0)
    agent = make_actor_critic("lstm", obs_dim_of(env), env.action_spec, cfg.hidden_size)
    return cfg, agent.prime(env), agent


def ppo_first_minibatch(cfg, env, agent):
    """One collected batch with its advantages, a trainer, and the sampler's first minibatch:
    ``(batch, trainer, minibatch)``."""
    from torchrl.collectors import Collector

    from torchrl_memory import RecurrentPPOTrainer, compute_gae

    collector = Collector(env, agent.rollout_policy, frames_per_batch=cfg.frames_per_batch, total_frames=-1)
    batch = next(iter(collector))
    collector.shutdown()
    compute_gae(batch, agent, cfg.gamma, cfg.gae_lambda)
    trainer = RecurrentPPOTrainer(agent, cfg)
    return batch, trainer, next(trainer.sampler.epoch(batch))
