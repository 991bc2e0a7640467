"""User mistakes get one line and exit status 2; damaged run directories still resume."""
import dataclasses
import math
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import torch

from torchrl_memory import ConfigError, DQNConfig, PPOConfig, TrainingRun
from torchrl_memory.pipelines import dqn, recurrent_ppo

ROOT = Path(__file__).resolve().parents[2]
PPO_TINY = ["--num-envs", "4", "--rollout-len", "16", "--hidden-size", "16", "--envs-per-minibatch", "2", "--eval-episodes", "2", "--plot", "false", "--eval-every", "0"]
FRAMES = 64



@pytest.mark.parametrize(
    "main,argv,says",
    [
        (recurrent_ppo.main, ["--num-envs", "0"], r"'num_envs' = 0 .*\(accepted: an integer >= 1\)"),
        (recurrent_ppo.main, ["--clip-range-vf", "nan"], r"'clip_range_vf' = nan"),
        (recurrent_ppo.main, ["--gamma", "abc"], r"--gamma 'abc': cannot parse it \(accepted: float\)"),
        (recurrent_ppo.main, ["--kl-stop", "sometimes"], r"'kl_stop' = 'sometimes' .*\['update', 'epoch'\]"),
        (recurrent_ppo.main, ["--env", "NoSuchEnv-v9"], r"unknown env id 'NoSuchEnv-v9' \(accepted: "),
        (recurrent_ppo.main, ["--env", "nosuchmodule:Foo-v0"], r"needs the Python package 'nosuchmodule'"),
        (recurrent_ppo.main, ["--device", "cuda:3"] if not torch.cuda.is_available() else ["--num-envs", "-1"], r"(CUDA is not available|'num_envs')"),
        (recurrent_ppo.main, ["--eval-env-id", "TMaze"], r"eval_env_id 'TMaze' does not match env_id 'CartPoleNoVel': observation size 3 vs 2"),
        (dqn.main, ["--eval-env-id", "TMaze"], r"eval_env_id 'TMaze' does not match env_id 'CartPole-v1': observation size 3 vs 4"),
        (dqn.main, ["--env", "Pendulum-v1"], r"DQN needs a discrete action space"),
        (dqn.main, ["--learning-rate", "inf"], r"'learning_rate' = inf"),
        (dqn.main, ["--resume", "/no/such/run"], r"--resume /no/such/run: no such file or directory"),
    ],
)
def test_user_errors_are_one_line_with_exit_status_2(tmp_path, capsys, main, argv, says, user_error_line):
    import re

    line = user_error_line(main, [*argv, "--run-root", str(tmp_path)])
    assert re.search(says, line), line
    assert not any(tmp_path.iterdir())  # nothing was written


def test_a_missing_logger_backend_is_a_user_error(tmp_path, capsys, user_error_line):
    import importlib.util

    if importlib.util.find_spec("tensorboard") is not None:
        pytest.skip("tensorboard is installed here")
    line = user_error_line(recurrent_ppo.main, ["--logger", "tensorboard", "--run-root", str(tmp_path)])
    assert "needs the 'tensorboard' package" in line and not any(tmp_path.iterdir())


def test_the_command_line_prints_no_traceback_unless_debug(tmp_path):
    cmd = [sys.executable, str(ROOT / "pipelines" / "dqn.py"), "--batch-size", "0", "--run-root", str(tmp_path)]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("error: config field 'batch_size' = 0")
    debug = subprocess.run([*cmd, "--debug"], capture_output=True, text=True, cwd=ROOT)
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "ConfigError" in debug.stderr


def _float_fields(cls):
    hints = typing.get_type_hints(cls)
    return [f.name for f in dataclasses.fields(cls) if hints[f.name] in (float, typing.Optional[float])]


@pytest.mark.parametrize("cls", [PPOConfig, DQNConfig])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, float("1e999")])
def test_no_non_finite_number_passes_validation(cls, bad):
    fields = _float_fields(cls)
    assert len(fields) >= 5
    for name in fields:
        with pytest.raises(ConfigError, match=repr(name)):
            cls(**{name: bad}).validate()


# --- damaged run directories -------------------------------------------------------------


def _ppo(tmp_path, *extra):
    return recurrent_ppo.main([*PPO_TINY, "--run-root", str(tmp_path), *extra])


@pytest.mark.parametrize("damage", [b"", b"garbage, not a checkpoint", "truncate"])
def test_a_damaged_latest_falls_back_to_the_newest_checkpoint_that_loads(tmp_path, capsys, damage):
    _ppo(tmp_path, "--total-steps", str(3 * FRAMES), "--checkpoint-every", str(FRAMES))
    run = TrainingRun.find(tmp_path)
    latest = run.path / "latest.pt"
    latest.write_bytes(latest.read_bytes()[:100] if damage == "truncate" else damage)
    (run.path / "checkpoints" / f"step_{3 * FRAMES}.pt").write_bytes(b"")  # the newest numbered one is damaged too
    capsys.readouterr()
    state = run.load_latest()
    assert state["counters"]["total_steps"] == 2 * FRAMES
    warning = capsys.readouterr().err
    assert "latest.pt does not load" in warning and f"step_{2 * FRAMES}.pt" in warning
    out = recurrent_ppo.main(["--resume", str(tmp_path), "--total-steps", str(4 * FRAMES)])
    assert TrainingRun.find(tmp_path).load_latest()["counters"]["total_steps"] == 4 * FRAMES and out["eval"]["episodes"] == 2


def test_no_loadable_checkpoint_is_one_error_listing_what_was_tried(tmp_path, capsys, user_error_line):
    _ppo(tmp_path, "--total-steps", str(2 * FRAMES), "--checkpoint-every", str(FRAMES))
    run = TrainingRun.find(tmp_path)
    for p in [run.path / "latest.pt", *run.path.glob("checkpoints/*.pt")]:
        p.write_bytes(b"\x00")
    line = user_error_line(recurrent_ppo.main, ["--resume", str(tmp_path)])
    assert "no checkpoint of" in line and "latest.pt does not load" in line and f"step_{FRAMES}.pt does not load" in line


def test_resume_from_a_named_checkpoint_file_starts_there(tmp_path):
    _ppo(tmp_path / "a", "--total-steps", str(4 * FRAMES), "--checkpoint-every", str(FRAMES), "--keep-checkpoints", "4")
    run = TrainingRun.find(tmp_path / "a")
    final = run.load_latest()["trainer"]["model"]
    recurrent_ppo.main(["--resume", str(run.checkpoint_path(2 * FRAMES))])  # replays updates 3 and 4 from step 128
    assert run.read_jsonl("train_episodes.jsonl")[-1]["total_steps"] <= 4 * FRAMES
    again = TrainingRun.find(tmp_path / "a").load_latest()
    assert again["counters"]["total_steps"] == 4 * FRAMES
    for key in final:  # the replay from the named file is exact
        torch.testing.assert_close(again["trainer"]["model"][key], final[key], rtol=0, atol=0)


def test_resuming_the_other_pipelines_run_names_the_pipeline(tmp_path, capsys, user_error_line):
    _ppo(tmp_path, "--total-steps", str(FRAMES))
    line = user_error_line(dqn.main, ["--resume", str(tmp_path)])
    assert "written by pipelines/recurrent_ppo.py" in line


def test_a_broken_config_json_names_the_file(tmp_path, capsys, user_error_line):
    _ppo(tmp_path, "--total-steps", str(FRAMES))
    run = TrainingRun.find(tmp_path)
    (run.path / "config.json").write_text("{not json")
    line = user_error_line(recurrent_ppo.main, ["--resume", str(run.path)])
    assert "config.json: not valid JSON" in line


def test_a_sibling_with_broken_metadata_does_not_block_resuming_another(tmp_path, capsys):
    _ppo(tmp_path, "--total-steps", str(FRAMES))
    _ppo(tmp_path, "--total-steps", str(FRAMES))
    runs = sorted((tmp_path / "recurrent_ppo" / "v1").iterdir())
    (runs[0] / "metadata.json").write_text("{")
    assert TrainingRun.find(tmp_path).path == runs[1]
    assert "skipping" in capsys.readouterr().err


def test_non_finite_weights_are_never_written_as_best(tmp_path, capsys):
    run = TrainingRun.create(tmp_path, "x", {})
    state = {"format": "dqn/2", "counters": {"total_steps": 5, "total_episodes": 0}, "agent": {"loss": {"w": torch.tensor([1.0, math.nan])}}}
    run.save_checkpoint(state, 5, best=True)
    assert not (run.path / "best.pt").exists() and (run.path / "latest.pt").exists()
    assert "not writing best.pt" in capsys.readouterr().err


def test_a_kill_between_the_numbered_and_the_latest_write_resumes_from_the_numbered_one(tmp_path):
    run = TrainingRun.create(tmp_path, "x", {})
    state = lambda n: {"format": "dqn/2", "counters": {"total_steps": n, "total_episodes": 0}}
    run.save_checkpoint(state(10), 10)
    torch.save(state(20), run.checkpoint_path(20))  # step_20.pt complete, latest.pt still at 10
    assert run.load_latest()["counters"]["total_steps"] == 20
