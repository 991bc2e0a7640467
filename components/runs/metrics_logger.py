"""TorchRL logger (csv / tensorboard / wandb) writing under the run directory."""
from __future__ import annotations

from pathlib import Path

from torchrl.record.loggers import Logger


def make_metrics_logger(kind: str, run_dir: Path) -> Logger:
    if kind == "csv":
        from torchrl.record.loggers.csv import CSVLogger

        return CSVLogger(exp_name="metrics", log_dir=str(run_dir))
    if kind == "tensorboard":
        from torchrl.record.loggers.tensorboard import TensorboardLogger

        return TensorboardLogger(exp_name="metrics", log_dir=str(run_dir))
    if kind == "wandb":
        from torchrl.record.loggers.wandb import WandbLogger

        return WandbLogger(exp_name=Path(run_dir).name, save_dir=str(run_dir))
    raise ValueError(f"logger {kind!r} is not one of ['csv', 'tensorboard', 'wandb']")
