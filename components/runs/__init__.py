"""What both pipelines share around training: the run directory and its checkpoints, run state,
episode statistics, greedy evaluation, collectors, loggers, the learning-curve plot and the
interrupt handling.

    >>> from torchrl_memory.runs import TrainingRun, StatsTracker, evaluate, make_collector
"""
from .collectors import WorkerEnv, make_async_collector, make_collector
from .episode_log import finished_episodes
from .evaluation import evaluate, preserved_rng, run_greedy_episodes, sync_obs_norm
from .interrupts import StopRequested, deferred_stop
from .learning_curve import plot_learning_curve
from .metrics_logger import logger_for, make_metrics_logger
from .phase_timer import PhaseTimer
from .run_dir import CheckpointError, RunNotFoundError, TrainingRun
from .run_state import RunState
from .stats import EpisodeRecord, EvalReport, StatsTracker

__all__ = [
    "CheckpointError", "EpisodeRecord", "EvalReport", "PhaseTimer", "RunNotFoundError", "RunState", "StatsTracker",
    "StopRequested", "TrainingRun", "WorkerEnv", "deferred_stop", "evaluate", "finished_episodes", "logger_for",
    "make_async_collector", "make_collector", "make_metrics_logger", "plot_learning_curve", "preserved_rng",
    "run_greedy_episodes", "sync_obs_norm",
]
