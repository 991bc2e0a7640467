"""Helpers shared by the benchmark scripts: machine description, medians, result files."""
from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import sys
from pathlib import Path

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


def save(name: str, payload: dict) -> Path:
    RESULTS.mkdir(exist_ok=True)
    payload = {"date": dt.date.today().isoformat(), "machine": machine(), "command": " ".join(["python", *sys.argv]), **payload}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2))
    return path


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
