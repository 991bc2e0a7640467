"""``TrainingRun``: the run directory both pipelines write, with atomic files and checkpoint rotation.

runs/<name>/<version>/<run_id>/
    metadata.json  config.json  train_episodes.jsonl  eval_episodes.jsonl
    metrics/ (TorchRL logger output)  learning_curve.png
    checkpoints/step_<N>.pt  latest.pt  best.pt

Every file write is atomic (temp file in the same folder, fsync, rename), so a
crash or Ctrl-C never leaves a half-written checkpoint or metadata file. I/O
errors propagate.

Why not TorchRL's ``Checkpoint`` / ``CheckpointRotation``: they store a directory (or
archive) of registered components; a run here needs one self-contained file per step
(state dicts plus the collector's carried tensordict and every RNG state, read back as
one dict by ``--resume`` and ``load_policy``), rotation that also keeps best-on-strict-
improvement, and a resume that falls back across damaged files.
"""
from __future__ import annotations

import datetime as _dt
import io
import json
import os
import sys
import secrets
import tempfile
from pathlib import Path
from typing import Any

import torch

from ..config_validation import UserError
from ..run_config import saved_values


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


class CheckpointError(UserError):
    """A checkpoint that cannot be resumed here: damaged, another pipeline's, or another config's."""


class RunNotFoundError(UserError, FileNotFoundError):
    """``--resume`` points at nothing resumable."""


PIPELINE_OF_FORMAT = {"recurrent_ppo": "pipelines/recurrent_ppo.py", "dqn": "pipelines/dqn.py"}


def check_pipeline(state: dict, expected_family: str, where) -> None:
    """Raises naming the pipeline that wrote ``state`` when it is not ``expected_family``'s."""
    found = state.get("format")
    family = str(found).split("/")[0]
    if family == expected_family:
        return
    writer = PIPELINE_OF_FORMAT.get(family)
    if writer is not None:
        raise CheckpointError(f"{where} was written by {writer} (format {found!r}); resume it with that pipeline")
    raise CheckpointError(f"{where}: checkpoint format {found!r} is not a {expected_family} checkpoint")


def check_resume_config(state: dict, config, expected_format: str, fields: tuple[str, ...]) -> None:
    """Raises naming every mismatch between a checkpoint and the config it is resumed under."""
    found = state.get("format")
    if found != expected_format:
        check_pipeline(state, expected_format.split("/")[0], "this checkpoint")
        raise CheckpointError(f"checkpoint format {found!r} (accepted: {expected_format!r}; older formats cannot be resumed)")
    saved = saved_values(state["config"], type(config))
    bad = [f"{k}: checkpoint {saved.get(k)!r} vs requested {getattr(config, k)!r}" for k in fields if saved.get(k) != getattr(config, k)]
    if bad:
        raise CheckpointError("checkpoint is incompatible with the requested config: " + "; ".join(bad) + " (these fields fix tensor shapes or the task)")


def load_checkpoint(path: Path, map_location: str | torch.device = "cpu") -> dict:
    """``torch.load`` of one of our checkpoints, or ``CheckpointError`` saying why it does not load."""
    try:
        state = torch.load(path, map_location=map_location, weights_only=False)
    except Exception as err:  # truncated, zero-length or garbage files raise many different types
        raise CheckpointError(f"{path} does not load ({type(err).__name__}: {str(err).splitlines()[0] if str(err) else 'empty'})") from None
    if not isinstance(state, dict) or "format" not in state or "counters" not in state:
        raise CheckpointError(f"{path} is not a checkpoint of this library (no format/counters entries)")
    return state


def _finite(obj, skip=("replay", "carrier", "carried")) -> bool:
    """No NaN or inf in any floating tensor of ``obj`` (the env state and replay are not weights: skipped)."""
    if isinstance(obj, torch.Tensor):
        return not obj.is_floating_point() or bool(torch.isfinite(obj).all())
    if isinstance(obj, dict):
        return all(_finite(v, skip) for k, v in obj.items() if k not in skip)
    if isinstance(obj, (list, tuple)):
        return all(_finite(v, skip) for v in obj)
    return True


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
        """Opens the run at ``path`` (a run directory, or a checkpoint file inside one), or the
        most recently updated run below it (an ancestor). A run below an ancestor whose
        metadata.json does not parse is skipped with a warning."""
        path = Path(path)
        if path.suffix == ".pt":
            if not path.is_file():
                raise RunNotFoundError(f"--resume {path}: no such checkpoint file")
            path = path.parent if path.parent.name != cls.CHECKPOINT_DIR else path.parent.parent
        if not path.exists():
            raise RunNotFoundError(f"--resume {path}: no such file or directory (accepted: a run directory, an ancestor of runs, or a checkpoint .pt)")
        direct = (path / "metadata.json").is_file()
        candidates = [path] if direct else sorted(p.parent for p in path.rglob("metadata.json"))
        runs = []
        for p in candidates:
            if not (p / "latest.pt").is_file() and not any((p / cls.CHECKPOINT_DIR).glob("step_*.pt")):
                continue
            try:
                runs.append(cls(p, json.loads((p / "metadata.json").read_text())))
            except (json.JSONDecodeError, OSError) as err:
                if direct:
                    raise RunNotFoundError(f"{p / 'metadata.json'}: not valid JSON ({err})") from None
                _warn(f"skipping {p}: its metadata.json does not parse ({err})")
        if not runs:
            raise RunNotFoundError(f"--resume {path}: no run with a checkpoint at or below it")
        return max(runs, key=lambda r: r.metadata.get("last_updated", ""))

    # --- files ----------------------------------------------------------------
    @property
    def config(self) -> dict:
        """The run's resolved config (provenance entries, named ``_*``, left out)."""
        path = self.path / "config.json"
        try:
            saved = json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise CheckpointError(f"{path}: not valid JSON ({err})") from None
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
        """The records of a JSONL log; a line cut short by a crash mid-append is dropped."""
        p = self.path / filename
        if not p.exists():
            return []
        out = []
        for line in p.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out

    def truncate_jsonl(self, filename: str, max_step: int, step_key: str = "total_steps") -> None:
        """Drops records written after ``max_step`` (used on resume: those steps are replayed)."""
        records = [r for r in self.read_jsonl(filename) if r.get(step_key, 0) <= max_step]
        atomic_write_bytes(self.path / filename, lambda f: f.write("".join(json.dumps(r) + "\n" for r in records).encode()))

    # --- checkpoints ----------------------------------------------------------
    def checkpoint_path(self, step: int) -> Path:
        return self.path / self.CHECKPOINT_DIR / f"step_{step}.pt"

    def save_checkpoint(self, state: dict, step: int, keep: int = 3, best: bool = False) -> Path:
        """Writes step_<N>.pt, checks that it loads back, then replaces latest.pt (and best.pt)
        with the same bytes; prunes to the ``keep`` highest steps.

        A state with non-finite weights is never written as best.pt (a warning says so).
        """
        buffer = io.BytesIO()
        torch.save(state, buffer)
        data = buffer.getvalue()
        numbered = self.checkpoint_path(step)
        atomic_write_bytes(numbered, lambda f: f.write(data))
        load_checkpoint(numbered)  # verified on disk before it replaces latest.pt
        atomic_write_bytes(self.path / "latest.pt", lambda f: f.write(data))
        if best:
            self._write_best(state, data)
        self.prune(keep)
        return numbered

    def save_best(self, state: dict) -> None:
        self._write_best(state, None)

    def _write_best(self, state: dict, data: bytes | None) -> None:
        if not _finite(state):
            _warn(f"not writing best.pt at {state['counters']['total_steps']} steps: the weights hold NaN or inf")
            return
        if data is None:
            atomic_torch_save(self.path / "best.pt", state)
        else:
            atomic_write_bytes(self.path / "best.pt", lambda f: f.write(data))

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

    def remove_stale_temp_files(self) -> list[Path]:
        """Deletes the temp files a killed process left mid-write (never a complete file: the rename did not happen)."""
        stale = [p for d in (self.path, self.path / self.CHECKPOINT_DIR) for p in d.glob(".*.tmp")]
        for p in stale:
            p.unlink(missing_ok=True)
        return stale

    def load_latest(self, map_location: str | torch.device = "cpu") -> dict:
        """The newest complete checkpoint: latest.pt, or a numbered one written after it (a process
        killed between the two writes), or, when latest.pt is damaged or missing, the newest
        numbered checkpoint that loads (with a one-line warning naming both). ``CheckpointError``
        listing every file tried if none loads."""
        self.remove_stale_temp_files()
        tried, latest = [], None
        if (self.path / "latest.pt").is_file():
            try:
                latest = load_checkpoint(self.path / "latest.pt", map_location)
            except CheckpointError as err:
                tried.append(str(err))
        latest_step = -1 if latest is None else latest["counters"]["total_steps"]
        for step, path in reversed(self.checkpoints()):
            if step <= latest_step:
                break
            try:
                state = load_checkpoint(path, map_location)
            except CheckpointError as err:
                tried.append(str(err))
                continue
            if tried:
                _warn(f"{tried[0]}; resuming from {path.relative_to(self.path)} instead")
            return state
        if latest is not None:
            return latest
        raise CheckpointError(f"no checkpoint of {self.path} loads; tried: " + "; ".join(tried or ["(no checkpoint files)"]))

    def load(self, path: str | Path, map_location: str | torch.device = "cpu") -> dict:
        """One named checkpoint file of this run (``--resume .../step_200.pt``)."""
        return load_checkpoint(Path(path), map_location)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)
