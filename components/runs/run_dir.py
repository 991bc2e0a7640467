"""``TrainingRun``: the run directory both pipelines write, with atomic files and checkpoint rotation.

runs/<name>/<version>/<run_id>/
    metadata.json  config.json  train_episodes.jsonl  eval_episodes.jsonl
    metrics/ (TorchRL logger output)  learning_curve.png
    checkpoints/step_<N>.pt  latest.pt  best.pt

Every file write is atomic (temp file in the same folder, fsync, rename), so a
crash or Ctrl-C never leaves a half-written checkpoint or metadata file. I/O
errors propagate.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

import torch


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: Path, write) -> None:
    """Calls ``write(fileobj)`` on a temp file next to ``path`` and renames it into place.

    The file gets ordinary permissions (0666 less the umask, usually 0644), not the
    0600 that ``mkstemp`` gives its temp files.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, lambda f: f.write(json.dumps(obj, indent=2, default=str).encode()))


def atomic_torch_save(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, lambda f: torch.save(obj, f))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def versions() -> dict:
    """Library versions and the git commit of this checkout (when it is one), for config.json."""
    from importlib import metadata

    out = {}
    for dist in ("torch", "torchrl", "tensordict", "gymnasium", "torchrl-memory"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    try:
        import subprocess

        root = Path(__file__).resolve().parents[2]
        out["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        out["git_commit"] = None
    return out


def new_run_id() -> str:
    """Timestamp plus random suffix: unique even for runs started in the same second."""
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def check_resume_config(state: dict, config, expected_format: str, fields: tuple[str, ...]) -> None:
    """Raises naming every mismatch between a checkpoint and the config it is resumed under."""
    if state.get("format") != expected_format:
        raise ValueError(f"checkpoint format {state.get('format')!r} is not {expected_format!r}")
    saved = state["config"]
    bad = [f"{k}: checkpoint {saved.get(k)!r} vs requested {getattr(config, k)!r}" for k in fields if saved.get(k) != getattr(config, k)]
    if bad:
        raise ValueError("checkpoint is incompatible with the requested config: " + "; ".join(bad))


class TrainingRun:
    CHECKPOINT_DIR = "checkpoints"

    def __init__(self, path: Path, metadata: dict):
        self.path = Path(path)
        self.metadata = metadata

    # --- creation / lookup --------------------------------------------------
    @classmethod
    def create(cls, root: str | Path, name: str, config: dict, version: str = "v1") -> "TrainingRun":
        run_id = new_run_id()
        path = Path(root) / name / version / run_id
        path.mkdir(parents=True, exist_ok=False)
        (path / cls.CHECKPOINT_DIR).mkdir()
        now = _now()
        atomic_write_json(path / "config.json", {**config, "_versions": versions()})
        run = cls(path, {"name": name, "version": version, "run_id": run_id, "total_steps": 0, "total_episodes": 0, "started_at": now, "last_updated": now})
        run.write_metadata()
        return run

    @classmethod
    def find(cls, path: str | Path) -> "TrainingRun":
        """Opens the run at ``path``, or the most recently updated run below it (an ancestor)."""
        path = Path(path)
        if path.is_file() and path.suffix == ".pt":
            path = path.parent if path.parent.name != cls.CHECKPOINT_DIR else path.parent.parent
        if not path.exists():
            raise FileNotFoundError(f"no run at {path}")
        if (path / "metadata.json").is_file():
            candidates = [path]
        else:
            candidates = [p.parent for p in path.rglob("metadata.json") if (p.parent / "latest.pt").is_file()]
        candidates = [p for p in candidates if (p / "latest.pt").is_file()]
        if not candidates:
            raise FileNotFoundError(f"no run with a latest.pt checkpoint at or below {path}")
        best = max(candidates, key=lambda p: json.loads((p / "metadata.json").read_text())["last_updated"])
        return cls(best, json.loads((best / "metadata.json").read_text()))

    # --- files ----------------------------------------------------------------
    @property
    def config(self) -> dict:
        """The run's resolved config (provenance entries, named ``_*``, left out)."""
        path = self.path / "config.json"
        try:
            saved = json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not valid JSON ({err})") from None
        return {k: v for k, v in saved.items() if not k.startswith("_")}

    def update_config(self, config: dict, step: int) -> bool:
        """Rewrites config.json when a resume changed the config; the old file is kept as config.<step>.json.

        So a later plain ``--resume`` continues under the last config asked for (a budget
        extended with ``--total-steps`` stays extended).
        """
        if config == self.config:
            return False
        old = self.path / "config.json"
        atomic_write_bytes(self.path / f"config.{step}.json", lambda f: f.write(old.read_bytes()))
        atomic_write_json(old, {**config, "_versions": versions()})
        return True

    def write_metadata(self) -> None:
        self.metadata["last_updated"] = _now()
        atomic_write_json(self.path / "metadata.json", self.metadata)

    def update_progress(self, total_steps: int, total_episodes: int) -> None:
        self.metadata.update(total_steps=int(total_steps), total_episodes=int(total_episodes))
        self.write_metadata()

    def log_jsonl(self, filename: str, records: list[dict]) -> None:
        if not records:
            return
        with open(self.path / filename, "a") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
            f.flush()

    def read_jsonl(self, filename: str) -> list[dict]:
        p = self.path / filename
        if not p.exists():
            return []
        return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]

    def truncate_jsonl(self, filename: str, max_step: int, step_key: str = "total_steps") -> None:
        """Drops records written after ``max_step`` (used on resume: those steps are replayed)."""
        records = [r for r in self.read_jsonl(filename) if r.get(step_key, 0) <= max_step]
        atomic_write_bytes(self.path / filename, lambda f: f.write("".join(json.dumps(r) + "\n" for r in records).encode()))

    # --- checkpoints ----------------------------------------------------------
    def checkpoint_path(self, step: int) -> Path:
        return self.path / self.CHECKPOINT_DIR / f"step_{step}.pt"

    def save_checkpoint(self, state: dict, step: int, keep: int = 3, best: bool = False) -> Path:
        """Writes step_<N>.pt and latest.pt (and best.pt), prunes to ``keep`` highest steps."""
        numbered = self.checkpoint_path(step)
        atomic_torch_save(numbered, state)
        atomic_torch_save(self.path / "latest.pt", state)
        if best:
            atomic_torch_save(self.path / "best.pt", state)
        self.prune(keep)
        return numbered

    def save_best(self, state: dict) -> None:
        atomic_torch_save(self.path / "best.pt", state)

    def checkpoints(self) -> list[tuple[int, Path]]:
        out = []
        for p in (self.path / self.CHECKPOINT_DIR).glob("step_*.pt"):
            try:
                out.append((int(p.stem.split("_", 1)[1]), p))
            except ValueError:
                continue
        return sorted(out)

    def prune(self, keep: int) -> None:
        for _, p in self.checkpoints()[:-keep] if keep > 0 else []:
            p.unlink()

    def load_latest(self, map_location: str | torch.device = "cpu") -> dict:
        return torch.load(self.path / "latest.pt", map_location=map_location, weights_only=False)
