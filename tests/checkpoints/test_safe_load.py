"""Loading a checkpoint never runs code: every file holds tensors and plain data only and is read with
``torch.load(weights_only=True)``; checkpoints of the previous version (which pickled TensorDicts and the
stats tracker) still load through an explicit allow-list; a crafted pickle is refused, nothing runs."""
import io
import json
import os
import shutil
from pathlib import Path

import pytest
import torch

from ckpt_helpers import DQN_TINY, FRAMES, PPO_TINY, latest
from torchrl_memory import DQNAgent, DQNConfig, TrainingRun, load_policy, make_env
from torchrl_memory.cli import run_main
from torchrl_memory.pipelines import dqn, recurrent_ppo
from torchrl_memory.runs.run_dir import LEGACY_GLOBALS, CheckpointError, load_checkpoint
from torchrl_memory.runs.stats import StatsTracker

LEGACY = Path(__file__).resolve().parents[1] / "fixtures" / "legacy"
MAINS = {"dqn": dqn.main, "recurrent_ppo": recurrent_ppo.main}


def _legacy_run(tmp_path, pipeline: str) -> Path:
    """A copy of the previous version's run (config.json, metadata.json, latest.pt, logs)."""
    dst = tmp_path / f"{pipeline}_run"
    shutil.copytree(LEGACY / ("dqn_run" if pipeline == "dqn" else "ppo_run"), dst)
    return dst


# --- what is written ---------------------------------------------------------------------
@pytest.mark.parametrize("pipeline", sorted(MAINS))
def test_every_checkpoint_holds_only_tensors_and_plain_data(tmp_path, pipeline):
    args = [*DQN_TINY, "--total-steps", "120", "--eval-every", "60", "--checkpoint-every", "60"] if pipeline == "dqn" else \
        [*PPO_TINY, "--total-steps", str(2 * FRAMES), "--eval-every", str(FRAMES), "--checkpoint-every", str(FRAMES)]
    MAINS[pipeline]([*args, "--run-root", str(tmp_path)])
    files = list(tmp_path.rglob("*.pt"))
    assert len(files) >= 4  # latest, best, two numbered
    for path in files:
        assert torch.serialization.get_unsafe_globals_in_checkpoint(path) == [], path
        torch.load(path, weights_only=True)


# --- checkpoints of the previous version -----------------------------------------------
def test_the_allow_list_covers_the_legacy_checkpoints_and_holds_no_general_callable():
    allowed = {entry[1] if isinstance(entry, tuple) else f"{entry.__module__}.{entry.__qualname__}" for entry in LEGACY_GLOBALS}
    for name in ("dqn_run", "ppo_run"):
        needed = set(torch.serialization.get_unsafe_globals_in_checkpoint(LEGACY / name / "latest.pt"))
        assert needed and needed <= allowed, needed - allowed
    assert not {"builtins.exec", "builtins.eval", "posix.system", "os.system", "builtins.getattr"} & allowed


@pytest.mark.parametrize("pipeline", sorted(MAINS))
def test_a_legacy_run_resumes_evaluates_and_loads_as_a_policy(tmp_path, capsys, pipeline):
    run_dir = _legacy_run(tmp_path, pipeline)
    state = load_checkpoint(run_dir / "latest.pt")
    steps = state["counters"]["total_steps"]
    # load_policy, then --eval in this process
    policy = load_policy(run_dir / "latest.pt")
    action, _ = policy.predict(torch.zeros(policy._raw_event_shape).numpy())
    assert action.shape == ()
    out = MAINS[pipeline](["--eval", str(run_dir / "latest.pt"), "--episodes", "2"])
    assert len(out["episodes"]) == 2
    # --resume: the run is at its budget; a larger one continues it and writes plain-data checkpoints
    capsys.readouterr()
    MAINS[pipeline](["--resume", str(run_dir)])
    assert "already at its budget" in capsys.readouterr().out
    more = steps + (100 if pipeline == "dqn" else 2 * FRAMES)
    MAINS[pipeline](["--resume", str(run_dir), "--total-steps", str(more), "--plot", "false"])
    resumed = latest(run_dir)
    assert resumed["counters"]["total_steps"] == more
    assert torch.serialization.get_unsafe_globals_in_checkpoint(run_dir / "latest.pt") == []


def test_the_legacy_dqn_stats_tracker_is_read_back_with_its_episodes():
    state = load_checkpoint(LEGACY / "dqn_run" / "latest.pt")
    tracker = StatsTracker.from_state_dict(state["stats"])
    assert tracker.episodes == state["counters"]["total_episodes"] == 14
    assert tracker.summary()["mean_reward"] > 0 and len(tracker.aggregators["recent_reward"].values) == 14


# --- a crafted checkpoint ------------------------------------------------------------------
class _RunsCode:
    """Pickles as a call: ``os.system`` or ``exec`` of code that writes ``marker``."""

    def __init__(self, marker: Path, via: str):
        self.marker, self.via = marker, via

    def __reduce__(self):
        if self.via == "os.system":
            return os.system, (f"touch {self.marker}",)
        return exec, (f"open({str(self.marker)!r}, 'w').write('ran')",)


def _crafted(path: Path, pipeline: str, marker: Path, via: str) -> Path:
    """A file shaped like one of ``pipeline``'s checkpoints whose pickle would run code."""
    config = json.loads((LEGACY / ("dqn_run" if pipeline == "dqn" else "ppo_run") / "config.json").read_text())
    counters = {"total_steps": 0, "total_episodes": 0, "best_eval": 0.0}
    torch.save({"format": f"{pipeline}/2", "config": config, "counters": counters, "payload": _RunsCode(marker, via)}, path)
    return path


@pytest.mark.parametrize("via", ["os.system", "exec"])
@pytest.mark.parametrize("pipeline", sorted(MAINS))
def test_a_checkpoint_whose_pickle_would_run_code_is_refused_everywhere(tmp_path, capsys, pipeline, via):
    marker = tmp_path / "code_ran"
    run_dir = _legacy_run(tmp_path, pipeline)
    path = _crafted(run_dir / "latest.pt", pipeline, marker, via)
    # load_policy and DQNAgent.load
    with pytest.raises(CheckpointError, match="refused") as err:
        load_policy(path)
    assert "\n" not in str(err.value)
    if pipeline == "dqn":
        env = make_env("CartPole-v1", 1, normalize_obs=False)
        with pytest.raises(CheckpointError, match="refused"):
            DQNAgent(4, env.action_spec, DQNConfig(hidden_sizes=[8, 8], batch_size=16, min_replay_size=100, buffer_capacity=300)).load(path)
    # --eval, --resume of the run directory, --resume of the file: one line, exit status 2
    for argv in (["--eval", str(path)], ["--resume", str(run_dir)], ["--resume", str(path)]):
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_info:
            run_main(MAINS[pipeline], argv)
        assert exit_info.value.code == 2, argv
        err_lines = capsys.readouterr().err.strip().splitlines()
        assert len(err_lines) == 1 and err_lines[0].startswith("error: ") and "refused" in err_lines[0], (argv, err_lines)
    assert not marker.exists()


def test_a_crafted_latest_is_not_skipped_for_an_older_checkpoint(tmp_path):
    dqn.main([*DQN_TINY, "--total-steps", "120", "--eval-every", "0", "--checkpoint-every", "60", "--run-root", str(tmp_path)])
    run = TrainingRun.find(tmp_path)
    marker = tmp_path / "code_ran"
    _crafted(run.checkpoint_path(120), "dqn", marker, "exec")
    (run.path / "latest.pt").unlink()
    with pytest.raises(CheckpointError, match="refused"):
        run.load_latest()  # a damaged file would fall back to step_60.pt; this one stops the resume
    assert not marker.exists()


def test_a_tensordict_round_trips_through_plain_data():
    from tensordict import NonTensorStack, TensorDict

    from torchrl_memory.runs.run_dir import tensordict_from_plain, tensordict_to_plain

    td = TensorDict({"obs": torch.randn(2, 3), "inner": TensorDict({"x": torch.arange(8).reshape(2, 4)}, [2, 4]), "note": "same"}, [2])
    td.set("mission", NonTensorStack.from_list(["left", "right"]))
    buffer = io.BytesIO()
    torch.save(tensordict_to_plain(td), buffer)
    buffer.seek(0)
    back = tensordict_from_plain(torch.load(buffer, weights_only=True))
    assert back.batch_size == td.batch_size and back["inner"].batch_size == (2, 4)
    assert torch.equal(back["obs"], td["obs"]) and torch.equal(back["inner", "x"], td["inner", "x"])
    assert back.get("note").data == "same" and back.get("mission").tolist() == ["left", "right"]
