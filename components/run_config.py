"""``RunConfig``: the fields every pipeline shares (task, budget, device, cadences, run files).

Both ``PPOConfig`` and ``DQNConfig`` extend it, so a field means the same thing in both:
every cadence (``eval_every``, ``checkpoint_every``) counts **env steps**, all envs
together, and an evaluation or checkpoint happens when the step counter crosses a
multiple of it. Every field carries its help text (meaning, unit, choices) in
``metadata``; ``cli.build_parser`` prints it and ``validate`` checks ``choices``.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from .config_validation import ConfigError, UserError, check, check_choice, check_divisor, check_int

LOGGERS = ("csv", "tensorboard", "wandb")
#: the largest seed: torch's and the envs' generators take 64-bit seeds, and the seeds derived
#: from it (evaluation, workers: seed + a few million at most) must fit too
MAX_SEED = 2**63 - 1
DEVICE_PATTERN = re.compile(r"auto|cpu|cuda(:[0-9]+)?")


def knob(default: Any, help: str, choices: tuple | None = None) -> Any:
    """A config field with its ``--help`` text and, optionally, its accepted values."""
    meta = {"help": help, **({"choices": choices} if choices else {})}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


def crossed(steps_before: int, steps_after: int, every: int) -> bool:
    """True when ``(steps_before, steps_after]`` holds a multiple of ``every`` (0 = never)."""
    return every > 0 and steps_before // every != steps_after // every


@dataclass
class RunConfig:
    env_id: str = knob("CartPole-v1", "gymnasium id, a built-in task (CartPoleNoVel, FlickeringCartPole[-p], TMaze[-N]), gym:<id>, or native:<id> (MiniGrid-MemoryS<size>[Random]-v0)")
    total_steps: int = knob(100_000, "training budget in env steps (all envs together)")
    num_envs: int = knob(1, "envs stepped together as one batch")
    env_workers: int = knob(1, "processes that step a gymnasium env's copies (TorchRL ParallelEnv; 1 = in process); must divide num_envs")
    collector_workers: int = knob(1, "collector processes, each stepping num_envs / N envs (TorchRL MultiSyncCollector for PPO, MultiAsyncCollector for DQN; 1 = in process); must divide num_envs")
    env_wrappers: list[str] = knob([], "gymnasium wrappers applied to each env copy, 'module:Class', comma-separated (e.g. minigrid.wrappers:ImgObsWrapper)")
    seed: int = knob(0, "seed of torch, the envs and every sampler (>= 0)")
    device: str = knob("auto", "'auto' (CUDA when present, else CPU), 'cpu' or 'cuda[:N]'")
    num_threads: int = knob(1, "CPU intra-op threads (0 = torch's default, one per core)")
    eval_every: int = knob(10_000, "env steps between greedy evaluations (0 = only the final one)")
    eval_episodes: int = knob(10, "greedy episodes per evaluation, one env each")
    eval_env_id: str = knob("", "env id of the greedy evaluations when not env_id, with the same observation and action specs (e.g. train on native:MiniGrid-MemoryS7-v0, evaluate on MiniGrid-MemoryS7-v0)")
    checkpoint_every: int = knob(10_000, "env steps between checkpoints (latest.pt, step_<N>.pt)")
    keep_checkpoints: int = knob(3, "numbered checkpoints kept (the newest)")
    logger: str = knob("csv", "metrics backend (TorchRL loggers; the JSONL episode logs are always written)", LOGGERS)
    wandb_project: str | None = knob(None, "wandb project (with --logger wandb; none = wandb's default)")
    wandb_group: str | None = knob(None, "wandb group, e.g. one per sweep (with --logger wandb)")
    run_root: str = knob("runs", "folder that holds <run_name>/v1/<run_id>/")
    run_name: str = knob("run", "name of the run folder under run_root")
    plot: bool = knob(True, "write learning_curve.png at the end")

    def validate(self):
        """Checks every field; returns ``self`` so ``Config(...).validate()`` chains."""
        check("env_id", self.env_id, isinstance(self.env_id, str) and bool(self.env_id), "a gymnasium id or a built-in task")
        check_int("total_steps", self.total_steps, 1)
        check_int("num_envs", self.num_envs, 1)
        check_divisor("env_workers", self.env_workers, "num_envs", self.num_envs)
        check_divisor("collector_workers", self.collector_workers, "num_envs", self.num_envs)
        if self.collector_workers > 1 and self.env_workers > 1:
            raise ConfigError(f"collector_workers = {self.collector_workers} with env_workers = {self.env_workers} (accepted: one of them > 1; collector worker processes cannot start env worker processes)")
        check_int("seed", self.seed, 0, MAX_SEED)
        check("device", self.device, isinstance(self.device, str) and DEVICE_PATTERN.fullmatch(self.device) is not None, "'auto', 'cpu', 'cuda' or 'cuda:N'")
        check_int("num_threads", self.num_threads, 0)
        check_int("eval_every", self.eval_every, 0)
        check_int("eval_episodes", self.eval_episodes, 1)
        check("eval_env_id", self.eval_env_id, isinstance(self.eval_env_id, str), "an env id, or empty for env_id")
        check_int("checkpoint_every", self.checkpoint_every, 1)
        check_int("keep_checkpoints", self.keep_checkpoints, 1)
        check("run_name", self.run_name, isinstance(self.run_name, str) and bool(self.run_name) and "/" not in self.run_name, "a non-empty folder name")
        for f in dataclasses.fields(self):
            if "choices" in f.metadata:
                check_choice(f.name, getattr(self, f.name), f.metadata["choices"])
        if self.logger != "csv" and importlib.util.find_spec(self.logger) is None:
            # checked here, before any run directory exists
            raise UserError(f"--logger {self.logger} needs the {self.logger!r} package, which is not installed (pip install -e '.[{self.logger}]'; accepted without it: csv)")
        return self

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def field_help(cls, name: str) -> str:
        return {f.name: f.metadata.get("help", "") for f in dataclasses.fields(cls)}[name]


#: config fields saved under an earlier name -> today's name
RENAMED_FIELDS = {"checkpoint_freq": "checkpoint_every"}


def saved_values(saved: dict | None, config_cls: type | None = None) -> dict:
    """A saved config's fields under today's names (``RENAMED_FIELDS``); fields the config class
    added since (its ``added_fields``) get the value the saved run used."""
    values = {RENAMED_FIELDS.get(k, k): v for k, v in (saved or {}).items()}
    for name, old in getattr(config_cls, "added_fields", {}).items():
        values.setdefault(name, old)
    return values


def override(base: type, name: str, default: Any) -> Any:
    """Redeclares a base field with another default, keeping its help and choices."""
    meta = {f.name: f.metadata for f in dataclasses.fields(base)}[name]
    return knob(default, meta["help"], meta.get("choices"))
