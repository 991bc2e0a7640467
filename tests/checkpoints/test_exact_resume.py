"""Every checkpoint is an exact resume point: resuming from a numbered mid-run checkpoint, or from the
one the damaged-latest.pt fallback picks, ends with the same weights and logs as a straight run."""
import shutil

import pytest

from ckpt_helpers import DQN_TINY, FRAMES, PPO_TINY, assert_same_weights, latest
from torchrl_memory import TrainingRun
from torchrl_memory.pipelines import dqn, recurrent_ppo

DQN_ARGS = [*DQN_TINY, "--total-steps", "240", "--eval-every", "80", "--checkpoint-every", "60", "--keep-checkpoints", "5"]
PPO_ARGS = [*PPO_TINY, "--total-steps", str(6 * FRAMES), "--eval-every", str(2 * FRAMES), "--checkpoint-every", str(FRAMES), "--keep-checkpoints", "6"]


def _evals(run: TrainingRun) -> list[dict]:
    """The evaluation records without their wall-clock field."""
    return [{k: v for k, v in r.items() if k != "train_s"} for r in run.read_jsonl("eval_episodes.jsonl")]


def _straight_and_copy(tmp_path, main, args):
    """A straight run in a/, and a copy of it in b/ to resume from one of its checkpoints."""
    main([*args, "--run-root", str(tmp_path / "a")])
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    return TrainingRun.find(tmp_path / "a"), TrainingRun.find(tmp_path / "b")


RECURRENT = ["--env", "CartPoleNoVel", "--model", "gru", "--hidden-size", "8", "--sequence-len", "8", "--burn-in", "2", "--batch-size", "4"]


@pytest.mark.parametrize("extra", [["--num-envs", "1"], ["--num-envs", "4"], ["--num-envs", "2", *RECURRENT], ["--num-envs", "2", "--n-step", "1"]], ids=["1env", "4envs", "recurrent", "one-step"])
def test_dqn_resume_from_a_numbered_midway_checkpoint_equals_the_straight_run(tmp_path, extra):
    # the recurrent case: its replay holds each step's stored state, its env the state in flight;
    # the defaults' n-step fold reads the replay's write position, which the checkpoint must restore
    a, b = _straight_and_copy(tmp_path, dqn.main, [*DQN_ARGS, *extra])
    dqn.main(["--resume", str(b.checkpoint_path(120))])
    assert_same_weights(latest(tmp_path / "a"), latest(tmp_path / "b"))
    assert a.read_jsonl("train_episodes.jsonl") == b.read_jsonl("train_episodes.jsonl")
    assert _evals(a) == _evals(b)


def test_dqn_resume_through_the_damaged_latest_fallback_equals_the_straight_run(tmp_path):
    a, b = _straight_and_copy(tmp_path, dqn.main, DQN_ARGS)
    # as after a kill -9 while latest.pt was being replaced: only step_60 and step_120 complete
    for step in (180, 240):
        b.checkpoint_path(step).unlink()
    (b.path / "latest.pt").write_bytes((b.path / "latest.pt").read_bytes()[:100])
    assert b.load_latest()["counters"]["total_steps"] == 120
    dqn.main(["--resume", str(tmp_path / "b")])
    assert_same_weights(latest(tmp_path / "a"), latest(tmp_path / "b"))
    assert _evals(a) == _evals(b)


def test_ppo_resume_from_a_numbered_midway_checkpoint_equals_the_straight_run(tmp_path):
    a, b = _straight_and_copy(tmp_path, recurrent_ppo.main, PPO_ARGS)
    recurrent_ppo.main(["--resume", str(b.checkpoint_path(3 * FRAMES))])
    assert_same_weights(latest(tmp_path / "a"), latest(tmp_path / "b"))
    assert a.read_jsonl("train_episodes.jsonl") == b.read_jsonl("train_episodes.jsonl")
    assert _evals(a) == _evals(b)
