"""OS errors on the run directory and a missing config.json: one line (``error: ...``, exit status 2)
instead of a traceback, and a resume that works from what is left."""
import errno
import os
from pathlib import Path

import pytest

from ckpt_helpers import DQN_TINY, FRAMES, PPO_TINY, latest
from torchrl_memory import TrainingRun
from torchrl_memory.cli import run_main
from torchrl_memory.pipelines import dqn, recurrent_ppo

MAINS = {"dqn": (dqn.main, [*DQN_TINY, "--total-steps", "120", "--eval-every", "0"]),
         "recurrent_ppo": (recurrent_ppo.main, [*PPO_TINY, "--total-steps", str(2 * FRAMES), "--eval-every", "0"])}


def _one_line_error(capsys, main, argv) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        run_main(main, argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err  # the progress bar writes there too
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and err.rstrip().endswith(errors[0]) and "Traceback" not in err, err
    return errors[0]


@pytest.mark.parametrize("pipeline", sorted(MAINS))
def test_a_run_root_that_is_a_file_is_one_line(tmp_path, capsys, pipeline):
    main, args = MAINS[pipeline]
    (tmp_path / "runs").write_text("not a folder")
    line = _one_line_error(capsys, main, [*args, "--run-root", str(tmp_path / "runs")])
    assert f"--run-root {tmp_path / 'runs'}" in line


@pytest.mark.parametrize("err", [errno.EROFS, errno.ENOSPC, errno.EACCES], ids=["read-only", "no-space", "no-permission"])
def test_a_run_root_the_os_refuses_is_one_line_naming_the_reason(tmp_path, capsys, monkeypatch, err):
    real_mkdir = Path.mkdir

    def refuse(self, *args, **kwargs):
        if str(self).startswith(str(tmp_path / "runs")):
            raise OSError(err, os.strerror(err), str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", refuse)
    main, args = MAINS["dqn"]
    line = _one_line_error(capsys, main, [*args, "--run-root", str(tmp_path / "runs")])
    assert os.strerror(err) in line and "--run-root" in line


def test_a_disk_that_fills_during_the_run_is_one_line_and_the_run_resumes(tmp_path, capsys, monkeypatch):
    main, args = MAINS["dqn"]
    real_fsync, calls = os.fsync, {"n": 0}

    def full_after_a_while(fd):
        calls["n"] += 1
        if calls["n"] > 8:  # config, metadata, a first checkpoint... then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_fsync(fd)

    with monkeypatch.context() as m:
        m.setattr(os, "fsync", full_after_a_while)
        line = _one_line_error(capsys, main, [*args, "--checkpoint-every", "40", "--run-root", str(tmp_path)])
    assert "No space left on device" in line and str(tmp_path) in line
    run = TrainingRun.find(tmp_path)
    assert not list(run.path.rglob(".*.tmp"))  # no temp file left behind
    main(["--resume", str(tmp_path)])
    assert latest(tmp_path)["counters"]["total_steps"] == 120


@pytest.mark.parametrize("pipeline", sorted(MAINS))
def test_a_missing_config_json_resumes_under_the_checkpoints_config(tmp_path, capsys, pipeline):
    main, args = MAINS[pipeline]
    main([*args, "--run-root", str(tmp_path)])
    run = TrainingRun.find(tmp_path)
    (run.path / "config.json").unlink()
    steps = latest(tmp_path)["counters"]["total_steps"]
    capsys.readouterr()
    main(["--resume", str(tmp_path), "--total-steps", str(2 * steps)])
    assert "config.json is missing" in capsys.readouterr().err
    assert latest(tmp_path)["counters"]["total_steps"] == 2 * steps
    assert run.config["total_steps"] == 2 * steps  # written again
