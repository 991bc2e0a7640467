"""``PPORunState``: everything a recurrent-PPO run owns besides the training loop.

Counters, greedy evaluation with best-on-strict-improvement, the snapshot of the last
complete update (what Ctrl-C, a crash or the cadence writes), ``state_dict`` /
``load_state_dict`` and log truncation on resume. The loop (collect, GAE, update) stays
in ``pipelines/recurrent_ppo.py``, CleanRL style; this object is called once per update.
"""
from __future__ import annotations

from tensordict import TensorDictBase
from torchrl.collectors import Collector
from torchrl.envs import TransformedEnv
from torchrl.record.loggers import Logger

from .checkpoint import build_state, check_compatible, restore_state
from .config import PPOConfig
from .reward_scaling import ReturnScaler
from .trainer import RecurrentPPOTrainer, TrainingStats
from ..runs.collectors import mirror_worker_env
from ..runs.episode_log import finished_episodes
from ..runs.evaluation import evaluate, sync_obs_norm
from ..runs.run_dir import TrainingRun
from ..runs.run_state import RunState
from ..runs.stats import EvalReport


class PPORunState(RunState):
    """A recurrent-PPO run's state besides the loop: counters, evaluation, the snapshot of the
    last complete update, checkpoints and resume (see the module docstring)."""

    def __init__(
        self,
        config: PPOConfig,
        run: TrainingRun | None,
        trainer: RecurrentPPOTrainer,
        collector: Collector,
        env: TransformedEnv,
        eval_env: TransformedEnv,
        scaler: ReturnScaler | None = None,
        logger: Logger | None = None,
    ):
        super().__init__(config, run, logger)
        self.trainer, self.collector, self.env, self.eval_env, self.scaler = trainer, collector, env, eval_env, scaler
        self.track_success = config.env_id.startswith("TMaze")  # the T-maze's final reward is its success flag
        self.snapshot = self.state_dict()

    # --- checkpoints ----------------------------------------------------------------------
    def state_dict(self) -> dict:
        mirror_worker_env(self.collector, self.env)  # worker processes: their normalisation, read back
        return build_state(self.config, self.trainer, self.collector, self.env, self.eval_env, self.scaler, self.counters())

    def load_state_dict(self, state: dict) -> None:
        self.load_counters(restore_state(state, self.trainer, self.collector, self.env, self.eval_env, self.scaler))

    def resume(self, state: dict) -> None:
        """Checks and loads a checkpoint, drops the log records written after it.

        Until it returns there is no snapshot: an interrupt in between saves nothing (the
        fresh state built before would overwrite the run's checkpoint)."""
        check_compatible(state, self.config)
        self.snapshot = None
        self.load_state_dict(state)
        self.after_resume()
        self.commit()

    def commit(self) -> None:
        """Marks the current state as the last complete update (what ``save`` writes)."""
        self.snapshot = self.state_dict()

    def save(self, best: bool = False) -> None:
        self.write_checkpoint(self.snapshot, best=best)

    def save_if_changed(self) -> bool:
        """Saves the snapshot unless the newest checkpoint already holds it (or there is none yet);
        False when nothing was written."""
        if self.snapshot is None or self.is_saved(self.snapshot["counters"]):
            return False
        self.save()
        return True

    # --- per update ------------------------------------------------------------------------
    def record_update(self, batch: TensorDictBase, stats: TrainingStats) -> list[dict]:
        """Counts the batch's env steps, logs its finished episodes and the update statistics."""
        episodes = finished_episodes(batch, self.total_steps)
        self.total_steps += batch.numel()
        self.log_train_episodes(episodes)
        self.log_scalars("train", stats.to_dict())
        return episodes

    def evaluate(self, train_s: float | None = None) -> tuple[EvalReport, bool]:
        """Greedy episodes on the eval env with the training normalisation frozen; (report, improved)."""
        mirror_worker_env(self.collector, self.env)
        sync_obs_norm(self.env, self.eval_env)
        report = evaluate(self.eval_env, self.trainer.actor_critic.actor, self.total_steps, track_success=self.track_success)
        extra = {} if train_s is None else {"train_s": round(train_s, 3)}
        return report, self.record_eval(report, **extra)
