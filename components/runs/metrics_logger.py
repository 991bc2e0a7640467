"""TorchRL logger (csv / tensorboard / wandb) writing under the run directory."""
from __future__ import annotations

from pathlib import Path

from torchrl.record.loggers import Logger

from ..config_validation import UserError


def make_metrics_logger(kind: str, run_dir: Path, hparams: dict | None = None, project: str | None = None, group: str | None = None) -> Logger:
    """A TorchRL logger under ``run_dir``; a backend whose package is missing is a one-line user error."""
    needs = {"tensorboard": "tensorboard", "wandb": "wandb"}.get(kind)
    if needs is not None:
        import importlib.util

        if importlib.util.find_spec(needs) is None:
            raise UserError(f"--logger {kind} needs the {needs!r} package, which is not installed (pip install -e '.[{needs}]'; accepted without it: csv)")
    if kind == "csv":
        from torchrl.record.loggers.csv import CSVLogger

        logger = CSVLogger(exp_name="metrics", log_dir=str(run_dir))
    elif kind == "tensorboard":
        from torchrl.record.loggers.tensorboard import TensorboardLogger

        logger = TensorboardLogger(exp_name="metrics", log_dir=str(run_dir))
    elif kind == "wandb":
        from torchrl.record.loggers.wandb import WandbLogger

        logger = WandbLogger(exp_name=Path(run_dir).name, save_dir=str(run_dir), project=project, group=group)
    else:
        raise UserError(f"logger {kind!r} (accepted: one of ['csv', 'tensorboard', 'wandb'])")
    if hparams:
        # the resolved config, once per process (lists as text: not every backend takes them)
        logger.log_hparams({k: (v if isinstance(v, (int, float, str, bool)) or v is None else str(v)) for k, v in hparams.items()})
    return logger


def logger_for(config, run_dir: Path) -> Logger:
    """The metrics logger a ``RunConfig`` asks for, under ``run_dir``, with the config logged as hyper-parameters."""
    return make_metrics_logger(config.logger, run_dir, hparams=config.to_dict(), project=config.wandb_project, group=config.wandb_group)
