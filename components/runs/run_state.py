"""``RunState``: the bookkeeping both pipelines share, in one shape.

A run's state besides the learner: the step and episode counters, the best greedy
return so far (``best.pt`` is written on strict improvement only), the cadence of
evaluations and checkpoints (in env steps, ``run_config.crossed``), the JSONL episode
logs and their truncation on resume (the steps after the checkpoint are replayed), and
the metrics logger. ``PPORunState`` and ``DQNTrainer`` extend it with what their
algorithm must snapshot; the training loop itself stays in the pipelines.
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torchrl.record.loggers import Logger

from ..run_config import RunConfig, crossed
from .run_dir import TrainingRun
from .stats import EvalReport

LOG_FILES = ("train_episodes.jsonl", "eval_episodes.jsonl")


class RunState:
    def __init__(self, config: RunConfig, run: TrainingRun | None = None, logger: Logger | None = None):
        self.config, self.run, self.logger = config, run, logger
        self.total_steps = 0
        self.total_episodes = 0
        self.best_eval = -math.inf

    # --- cadences (env steps) ---------------------------------------------------------------
    def eval_due(self, steps_before: int) -> bool:
        return crossed(steps_before, self.total_steps, self.config.eval_every)

    def checkpoint_due(self, steps_before: int) -> bool:
        return crossed(steps_before, self.total_steps, self.config.checkpoint_every)

    # --- logs ---------------------------------------------------------------------------------
    def log_scalars(self, prefix: str, values: dict[str, Any], step: int | None = None) -> None:
        if self.logger is None:
            return
        for key, value in values.items():
            if isinstance(value, (int, float, bool)) or (isinstance(value, torch.Tensor) and value.numel() == 1):
                self.logger.log_scalar(f"{prefix}/{key}", float(value), step=self.total_steps if step is None else step)

    def log_train_episodes(self, records: list[dict]) -> None:
        """Appends finished training episodes to the JSONL log; their mean return and length go to the logger."""
        self.total_episodes += len(records)
        if self.run is not None:
            self.run.log_jsonl("train_episodes.jsonl", records)
        if records:
            n = len(records)
            self.log_scalars("train", {
                "episode_return": sum(r["total_reward"] for r in records) / n,
                "episode_length": sum(r["length"] for r in records) / n,
            })

    def record_eval(self, report: EvalReport, **extra) -> bool:
        """Logs a greedy evaluation; True when it strictly beats every earlier one (then save best)."""
        improved = report.mean_reward > self.best_eval
        self.best_eval = max(self.best_eval, report.mean_reward)
        if self.run is not None:
            self.run.log_jsonl("eval_episodes.jsonl", [{"total_steps": report.total_steps, **extra, **e.to_dict()} for e in report.episodes])
        self.log_scalars("eval", {"mean_return": report.mean_reward}, step=report.total_steps)
        return improved

    # --- counters in checkpoints --------------------------------------------------------------
    def counters(self) -> dict:
        return {"total_steps": self.total_steps, "total_episodes": self.total_episodes, "best_eval": self.best_eval}

    def load_counters(self, counters: dict) -> None:
        self.total_steps, self.total_episodes = int(counters["total_steps"]), int(counters["total_episodes"])
        self.best_eval = float(counters["best_eval"])

    def after_resume(self) -> None:
        """Once a checkpoint is loaded: drop log records written after it (those steps run
        again) and record the config it now runs under (config.json; the old one is kept)."""
        if self.run is not None:
            for name in LOG_FILES:
                self.run.truncate_jsonl(name, self.total_steps)
            self.run.update_config(self.config.to_dict(), self.total_steps)

    def write_checkpoint(self, state: dict, best: bool = False) -> None:
        if self.run is None:
            raise RuntimeError("saving a checkpoint needs a run directory (TrainingRun)")
        steps = state["counters"]["total_steps"]
        self.run.save_checkpoint(state, steps, keep=self.config.keep_checkpoints, best=best)
        self.run.update_progress(steps, state["counters"]["total_episodes"])
