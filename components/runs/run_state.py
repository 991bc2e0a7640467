"""``RunState``: the bookkeeping both pipelines share, in one shape.

A run's state besides the learner: the step and episode counters, the best greedy
return so far (``best.pt`` is written on strict improvement only), the cadence of
evaluations and checkpoints (in env steps, ``run_config.crossed``), the JSONL episode
logs and their truncation on resume (the steps after the checkpoint are replayed), and
the metrics logger. ``PPORunState`` and ``DQNRunState`` extend it with what their
algorithm must snapshot; the training loop itself stays in the pipelines.

A step count is evaluated once: ``evaluated_now`` tells the pipelines' final evaluation
that the loop's cadence already evaluated at this count (an extra evaluation would move
the eval env, so a run extended from here would no longer equal a straight one). The
counters record the step of the last evaluation, so a resumed run knows whether its final
evaluation is done (``at_budget``), and the step of the best one (``best_summary``).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch
from torchrl.record.loggers import Logger

from ..run_config import RunConfig, crossed
from .run_dir import TrainingRun
from .stats import EvalReport

LOG_FILES = ("train_episodes.jsonl", "eval_episodes.jsonl")


class RunState:
    """Counters, cadences, logs, best evaluation and checkpoint writes, shared by ``PPORunState``
    and ``DQNRunState`` (see the module docstring)."""

    def __init__(self, config: RunConfig, run: TrainingRun | None = None, logger: Logger | None = None):
        self.config, self.run, self.logger = config, run, logger
        self.total_steps = 0
        self.total_episodes = 0
        self.best_eval = -math.inf
        self.best_step: int | None = None  # step count of the evaluation that set best_eval
        self.last_eval_step: int | None = None
        self.last_report: EvalReport | None = None  # this process's latest evaluation
        self.saved_progress: tuple | None = None  # (steps, last evaluation) of the newest checkpoint on disk

    # --- cadences (env steps) ---------------------------------------------------------------
    def eval_due(self, steps_before: int, steps_after: int | None = None) -> bool:
        """Whether ``(steps_before, steps_after]`` (``steps_after``: now) holds a multiple of ``eval_every``."""
        return crossed(steps_before, self.total_steps if steps_after is None else steps_after, self.config.eval_every)

    def checkpoint_due(self, steps_before: int, steps_after: int | None = None) -> bool:
        return crossed(steps_before, self.total_steps if steps_after is None else steps_after, self.config.checkpoint_every)

    @property
    def evaluated_now(self) -> bool:
        """True when an evaluation already ran at the current step count."""
        return self.last_eval_step == self.total_steps

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
        if improved:
            self.best_step = report.total_steps
        self.last_eval_step, self.last_report = report.total_steps, report
        if self.run is not None:
            self.run.log_jsonl("eval_episodes.jsonl", [{"total_steps": report.total_steps, **extra, **e.to_dict()} for e in report.episodes])
        self.log_scalars("eval", {"mean_return": report.mean_reward}, step=report.total_steps)
        return improved

    # --- counters in checkpoints --------------------------------------------------------------
    def counters(self) -> dict:
        return {"total_steps": self.total_steps, "total_episodes": self.total_episodes, "best_eval": self.best_eval,
                "best_step": self.best_step, "last_eval_step": self.last_eval_step}

    def load_counters(self, counters: dict) -> None:
        self.total_steps, self.total_episodes = int(counters["total_steps"]), int(counters["total_episodes"])
        self.best_eval = float(counters["best_eval"])
        self.best_step = counters.get("best_step")
        # checkpoints of earlier versions were written after the evaluation at their step, if one was due
        self.last_eval_step = counters.get("last_eval_step", self.total_steps)
        self.saved_progress = _progress(counters)  # the checkpoint itself is on disk

    def best_summary(self) -> str:
        """``best: 500.00 at 71,680 steps -> runs/.../best.pt``: where the best evaluation's checkpoint is."""
        return best_summary(self.counters(), None if self.run is None else self.run.path)

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
        self.saved_progress = _progress(state["counters"])

    def is_saved(self, counters: dict) -> bool:
        """Whether the newest checkpoint on disk already holds the state these counters describe."""
        return self.saved_progress == _progress(counters)


def _progress(counters: dict) -> tuple:
    """What distinguishes one saved state of a run from another: its steps and its last evaluation."""
    return counters["total_steps"], counters.get("last_eval_step", counters["total_steps"])


def best_summary(counters: dict, run_path: Path | None = None) -> str:
    """``best: 500.00 at 71,680 steps -> runs/.../best.pt`` from a run's counters (the step is
    missing from checkpoints of earlier versions)."""
    at = "" if counters.get("best_step") is None else f" at {counters['best_step']:,} steps"
    where = "" if run_path is None else f" -> {Path(run_path) / 'best.pt'}"
    return f"best: {counters['best_eval']:.2f}{at}{where}"


def at_budget(state: dict, config: RunConfig, run_path: Path | None = None) -> str | None:
    """For a resume: a note when the checkpoint ``state`` already reached ``config.total_steps`` and
    was evaluated there (nothing is left to do; the note names the best checkpoint), else None."""
    c = state["counters"]
    steps, evaluated = int(c["total_steps"]), c.get("last_eval_step", c["total_steps"])
    if steps < config.total_steps or evaluated != steps:
        return None
    return (f"already at its budget: {steps:,} of --total-steps {config.total_steps:,} steps done and evaluated; "
            f"nothing to do (extend it with --total-steps N, N > {steps:,}); {best_summary(c, run_path)}")
