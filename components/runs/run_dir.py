"""``TrainingRun``: the run directory both pipelines write, with atomic files and checkpoint rotation.

runs/<name>/<version>/<run_id>/
    metadata.json  config.json  train_episodes.jsonl  eval_episodes.jsonl
    metrics/ (TorchRL logger output)  learning_curve.png
    checkpoints/step_<N>.pt  latest.pt  best.pt

Every file write is atomic (temp file in the same folder, fsync, rename), so a
crash or Ctrl-C never leaves a half-written checkpoint or metadata file. An OS error
on a run file (read-only or full disk, no permission, a file where a folder should be)
is a one-line ``RunDirError`` naming the path.

A checkpoint holds only tensors and plain data (dicts, lists, strings, numbers, None):
TensorDicts are stored as ``tensordict_to_plain`` dicts, the episode statistics as
``StatsTracker.state_dict()``. Every load is ``torch.load(weights_only=True)``, so a
checkpoint cannot run code; checkpoints of earlier versions, which pickled TensorDicts
and the stats tracker, are read through an explicit allow-list of those classes
(``LEGACY_GLOBALS``) and converted to today's form.

Why not TorchRL's ``Checkpoint`` / ``CheckpointRotation``: they store a directory (or
archive) of registered components; a run here needs one self-contained file per step
(state dicts plus the collector's carried tensordict and every RNG state, read back as
one dict by ``--resume`` and ``load_policy``), rotation that also keeps best-on-strict-
improvement, and a resume that falls back across damaged files.
"""
from __future__ import annotations

import collections
import datetime as _dt
import io
import json
import os
import pickle
import re
import sys
import secrets
import tempfile
from pathlib import Path
from typing import Any

import torch
from tensordict import NonTensorStack, TensorDict, TensorDictBase, is_non_tensor
from tensordict._reductions import _make_td

from ..config_validation import UserError
from ..run_config import saved_values
from . import stats


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class RunDirError(UserError):
    """An OS error on a run file or folder: read-only or full disk, no permission, a file in the way."""


def os_error(err: OSError, doing: str) -> RunDirError:
    """``err`` as one line: what was being done, the path, the OS's reason."""
    where = f" at {err.filename}" if err.filename and str(err.filename) not in doing else ""
    return RunDirError(f"cannot {doing}: {err.strerror or type(err).__name__}{where} (accepted: a writable folder with free space)")


def atomic_write_bytes(path: Path, write) -> None:
    """Calls ``write(fileobj)`` on a temp file next to ``path`` and renames it into place.

    The file gets ordinary permissions (0666 less the umask, usually 0644), not the
    0600 that ``mkstemp`` gives its temp files. An OS error is a ``RunDirError``.
    """
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(err, OSError):
            raise os_error(err, f"write {path}") from None
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


class UnsafeCheckpointError(CheckpointError):
    """A file whose pickle names code to call (not tensors and plain data): refused, never run."""


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


# --- plain-data checkpoints ----------------------------------------------------------------
def tensordict_to_plain(td: TensorDictBase) -> dict:
    """A TensorDict as ``{"batch_size": [...], "entries": {key: tensor | nested | non-tensor}}``, which
    ``torch.load(weights_only=True)`` reads back; ``tensordict_from_plain`` inverts it. A non-tensor
    entry is ``{"non_tensor": data}`` (one value for the batch) or ``{"non_tensor_stack": [...]}``
    (one per element); its data must itself be plain (strings, numbers, lists, dicts)."""
    entries = {}
    for key in td.keys():
        value = td.get(key)
        if isinstance(value, NonTensorStack):
            entries[key] = {"non_tensor_stack": value.tolist()}
        elif is_non_tensor(value):
            entries[key] = {"non_tensor": value.data}
        elif isinstance(value, TensorDictBase):
            entries[key] = tensordict_to_plain(value)
        else:
            entries[key] = value
    return {"batch_size": list(td.batch_size), "entries": entries}


def tensordict_from_plain(plain: dict, device: torch.device | str | None = None) -> TensorDict:
    """The TensorDict ``tensordict_to_plain`` stored (nested batch sizes kept), its tensors on ``device``."""
    td = TensorDict({}, batch_size=plain["batch_size"], device=device)
    for key, value in plain["entries"].items():
        if isinstance(value, dict) and "entries" in value:
            td.set(key, tensordict_from_plain(value, device))
        elif isinstance(value, dict) and "non_tensor" in value:
            td.set_non_tensor(key, value["non_tensor"])
        elif isinstance(value, dict) and "non_tensor_stack" in value:
            td.set(key, NonTensorStack.from_list(value["non_tensor_stack"]))
        else:
            td.set(key, value if device is None else value.to(device))
    return td


def _stats_classes() -> list[type]:
    return [stats.StatsTracker, stats.Aggregator, *stats.AGGREGATORS.values(), stats.EpisodeRecord]


def _legacy_deque(iterable=(), maxlen=None) -> list:
    """Reads a pickled ``collections.deque`` as a list: the weights-only unpickler appends items to
    lists only. Earlier versions pickled one deque, the values of the stats tracker's
    ``RollingMean``; ``_to_plain`` turns it back into a deque."""
    return list(iterable)


#: the window of the one ``RollingMean`` earlier versions' stats tracker held ("recent_reward")
LEGACY_ROLLING_WINDOW = 100

#: what checkpoints of earlier versions pickled besides tensors and plain data, by the names they
#: were pickled under (the package was once named ``components``); nothing else is ever unpickled
LEGACY_GLOBALS: list = [
    TensorDict,
    _make_td,  # _make_td(cls, state): cls.__new__ plus __setstate__; cls can only be an allowed class
    (_legacy_deque, "collections.deque"),
    *[(cls, f"{prefix}.runs.stats.{cls.__name__}") for prefix in ("components", "torchrl_memory") for cls in _stats_classes()],
]


def _to_plain(obj):
    """A legacy checkpoint's TensorDicts and stats tracker in today's plain form. Containers are
    updated in place: a state dict's ``OrderedDict`` keeps its type and its ``_metadata``."""
    if isinstance(obj, TensorDictBase):
        return tensordict_to_plain(obj)
    if isinstance(obj, stats.StatsTracker):
        for agg in obj.aggregators.values():
            if isinstance(agg, stats.RollingMean) and not isinstance(agg.values, collections.deque):
                agg.values = collections.deque(agg.values, maxlen=LEGACY_ROLLING_WINDOW)
        return obj.state_dict()
    if isinstance(obj, (dict, list)):
        for k, v in (obj.items() if isinstance(obj, dict) else enumerate(obj)):
            if (plain := _to_plain(v)) is not v:
                obj[k] = plain
    return obj


def read_checkpoint_file(path: Path, map_location: str | torch.device = "cpu") -> Any:
    """``torch.load(path, weights_only=True)``: tensors and plain data only, plus ``LEGACY_GLOBALS``
    (converted to plain data). A file naming any other callable or class is refused with
    ``UnsafeCheckpointError`` without running anything; one that does not load at all (truncated,
    empty, garbage, missing) raises ``CheckpointError``."""
    try:
        with torch.serialization.safe_globals(LEGACY_GLOBALS):
            obj = torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as err:
        named = re.search(r"GLOBAL ([\w.]+)", str(err))
        if named is not None:
            raise UnsafeCheckpointError(
                f"{path} is refused: its pickle calls {named.group(1)}, and a checkpoint may hold only tensors and plain data "
                "(loading it could run code; it was not loaded)"
            ) from None
        raise CheckpointError(f"{path} does not load (not tensors and plain data: {_reason(err)})") from None
    except Exception as err:  # truncated, zero-length or garbage files raise many different types
        raise CheckpointError(f"{path} does not load ({type(err).__name__}: {_reason(err)})") from None
    return _to_plain(obj)


def _reason(err: BaseException) -> str:
    """The informative line of an error message (torch's weights-only errors open with advice)."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    if not lines:
        return "empty"
    useful = [line for line in lines if not line.startswith(("Weights only load failed", "Check the documentation", "Please file an issue"))]
    return (useful or lines)[0]


def load_checkpoint(path: Path, map_location: str | torch.device = "cpu") -> dict:
    """One of our checkpoints (``read_checkpoint_file``), or ``CheckpointError`` saying why it does not load."""
    state = read_checkpoint_file(path, map_location)
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
    """One run directory (see the module docstring for its layout): creation, lookup for
    ``--resume``, atomic run files, JSONL logs and the rotation of checkpoints."""

    CHECKPOINT_DIR = "checkpoints"

    def __init__(self, path: Path, metadata: dict):
        self.path = Path(path)
        self.metadata = metadata

    # --- creation / lookup --------------------------------------------------
    @classmethod
    def create(cls, root: str | Path, name: str, config: dict, version: str = "v1") -> "TrainingRun":
        """A new run directory under ``root``; ``RunDirError`` (one line) when the OS refuses it."""
        run_id = new_run_id()
        path = Path(root) / name / version / run_id
        try:
            path.mkdir(parents=True, exist_ok=False)
            (path / cls.CHECKPOINT_DIR).mkdir()
        except OSError as err:
            raise os_error(err, f"create the run directory under --run-root {root}") from None
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
        except OSError as err:
            raise CheckpointError(f"{path}: cannot read it ({err.strerror or type(err).__name__})") from None
        if not isinstance(saved, dict):
            raise CheckpointError(f"{path}: a JSON {type(saved).__name__}, not the run's config (accepted: a JSON object)")
        return {k: v for k, v in saved.items() if not k.startswith("_")}

    def resume_config(self, state: dict) -> dict:
        """The config a resume of this run starts from: config.json, or, when that file is
        missing, the config saved in the checkpoint ``state`` (a warning says so; the resume
        writes config.json again)."""
        if not (self.path / "config.json").exists():
            _warn(f"{self.path / 'config.json'} is missing: resuming under the config saved in the checkpoint")
            return dict(state["config"])
        return self.config

    def update_config(self, config: dict, step: int) -> bool:
        """Rewrites config.json when a resume changed the config; the old file is kept as config.<step>.json.

        So a later plain ``--resume`` continues under the last config asked for (a budget
        extended with ``--total-steps`` stays extended).
        """
        old = self.path / "config.json"
        if old.exists():
            if config == self.config:
                return False
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
        try:
            with open(self.path / filename, "a") as f:
                for r in records:
                    f.write(json.dumps(r) + "\n")
                f.flush()
        except OSError as err:
            raise os_error(err, f"append to {self.path / filename}") from None

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
            try:
                p.unlink(missing_ok=True)
            except OSError:  # a read-only run: the temp file stays, and is never read
                pass
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
            except UnsafeCheckpointError:
                raise  # not damage: no quiet fallback past a file that tries to run code
            except CheckpointError as err:
                tried.append(str(err))
        latest_step = -1 if latest is None else latest["counters"]["total_steps"]
        for step, path in reversed(self.checkpoints()):
            if step <= latest_step:
                break
            try:
                state = load_checkpoint(path, map_location)
            except UnsafeCheckpointError:
                raise
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
