"""A real SIGINT / SIGTERM at an awkward moment: the run saves its last complete step, and a resume is exact.

The signal is raised from inside the step (DQN: between exploration and the gradient step,
or between backward and the optimizer step; PPO: inside the update), where a state saved
as-is would be one a straight run never passes through.
"""
import signal

import pytest
import torch

from torchrl_memory import DQNAgent, RecurrentPPOTrainer, TrainingRun
from torchrl_memory.flat_params import FlatAdam
from torchrl_memory.pipelines import dqn, recurrent_ppo

DQN_TINY = ["--hidden-sizes", "16", "--batch-size", "8", "--min-replay-size", "32", "--buffer-capacity", "500", "--eval-episodes", "2",
            "--plot", "false", "--total-steps", "240", "--eval-every", "80", "--checkpoint-every", "1000"]
PPO_TINY = ["--num-envs", "4", "--rollout-len", "16", "--hidden-size", "16", "--envs-per-minibatch", "2", "--eval-episodes", "2",
            "--plot", "false", "--total-steps", str(6 * 64), "--eval-every", "0"]


def _signal_on_call(monkeypatch, cls, name, n, signum):
    """Raises ``signum`` in this process from inside the ``n``-th call of ``cls.name``."""
    real, calls = getattr(cls, name), {"n": 0}

    def wrapped(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == n:
            signal.raise_signal(signum)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, wrapped)


def _weights(state, *path):
    for key in path:
        state = state[key]
    return state


def _assert_same_weights(a, b):
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0)


@pytest.mark.parametrize("where", ["update", "optimizer_step"])
def test_dqn_sigint_inside_a_step_resumes_exactly(tmp_path, monkeypatch, where):
    dqn.main([*DQN_TINY, "--run-root", str(tmp_path / "a")])
    with monkeypatch.context() as m:
        if where == "update":  # after exploration and storing, before the gradient step
            _signal_on_call(m, DQNAgent, "update", 50, signal.SIGINT)
        else:  # between backward and the optimizer step
            _signal_on_call(m, FlatAdam, "step", 50, signal.SIGINT)  # the agent's optimizer
        with pytest.raises(SystemExit) as exit_info:
            dqn.main([*DQN_TINY, "--run-root", str(tmp_path / "b")])
        assert exit_info.value.code == 130
    stopped_at = TrainingRun.find(tmp_path / "b").load_latest()["counters"]["total_steps"]
    assert 0 < stopped_at < 240
    dqn.main(["--resume", str(tmp_path / "b")])
    a, b = (TrainingRun.find(tmp_path / x).load_latest() for x in "ab")
    _assert_same_weights(_weights(a, "agent", "loss"), _weights(b, "agent", "loss"))
    assert TrainingRun.find(tmp_path / "a").read_jsonl("train_episodes.jsonl") == TrainingRun.find(tmp_path / "b").read_jsonl("train_episodes.jsonl")


def test_ppo_sigterm_inside_an_update_saves_it_and_exits_143(tmp_path, monkeypatch):
    recurrent_ppo.main([*PPO_TINY, "--run-root", str(tmp_path / "a")])
    with monkeypatch.context() as m:
        _signal_on_call(m, RecurrentPPOTrainer, "train_step", 3, signal.SIGTERM)
        with pytest.raises(SystemExit) as exit_info:
            recurrent_ppo.main([*PPO_TINY, "--run-root", str(tmp_path / "b")])
        assert exit_info.value.code == 143
    # the update the signal landed in was completed and saved
    assert TrainingRun.find(tmp_path / "b").load_latest()["counters"]["total_steps"] == 3 * 64
    recurrent_ppo.main(["--resume", str(tmp_path / "b")])
    a, b = (TrainingRun.find(tmp_path / x).load_latest() for x in "ab")
    _assert_same_weights(_weights(a, "trainer", "model"), _weights(b, "trainer", "model"))
