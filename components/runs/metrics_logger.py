"""TorchRL logger (csv / tensorboard / wandb) writing under the run directory."""
from __future__ import annotations

from pathlib import Path

from torchrl.record.loggers import Logger

from components.config_validation import UserError


def make_metrics_logger(kind: str, run_dir: Path) -> Logger:
    """A TorchRL logger under ``run_dir``; a backend whose package is missing is a one-line user error."""
    needs = {"tensorboard": "tensorboard", "wandb": "wandb"}.get(kind)
    if needs is not None:
        import importlib.util

        if importlib.util.find_spec(needs) is None:
            raise UserError(f"--logger {kind} needs the {needs!r} package, which is not installed (pip install -e '.[{needs}]'; accepted without it: csv)")
    if kind == "csv":
        from torchrl.record.loggers.csv import CSVLogger

        return CSVLogger(exp_name="metrics", log_dir=str(run_dir))
    if kind == "tensorboard":
        from torchrl.record.loggers.tensorboard import TensorboardLogger

        return TensorboardLogger(exp_name="metrics", log_dir=str(run_dir))
    if kind == "wandb":
        from torchrl.record.loggers.wandb import WandbLogger

        return WandbLogger(exp_name=Path(run_dir).name, save_dir=str(run_dir))
    raise UserError(f"logger {kind!r} (accepted: one of ['csv', 'tensorboard', 'wandb'])")
