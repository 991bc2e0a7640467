"""Ctrl-C or SIGTERM at any moment: the run saves its last complete step (or, when a second Ctrl-C
lands inside a step, nothing), exits 130 / 143 without a traceback, and resumes exactly.

Moments covered: inside a DQN step and a DQN evaluation (a second Ctrl-C), inside a PPO update (a
second Ctrl-C), right after the run directory is created, and inside the final evaluation.
"""
import signal

import pytest

from ckpt_helpers import DQN_TINY, FRAMES, PPO_TINY, assert_same_weights, digest, latest, signal_on_call
from torchrl_memory import DQNAgent, RecurrentPPOTrainer, TrainingRun
from torchrl_memory.dqn import run_state as dqn_run_state
from torchrl_memory.pipelines import dqn, recurrent_ppo
from torchrl_memory.ppo import run_state as ppo_run_state

DQN_ARGS = [*DQN_TINY, "--total-steps", "240", "--eval-every", "80", "--checkpoint-every", "40"]
PPO_ARGS = [*PPO_TINY, "--total-steps", str(6 * FRAMES), "--eval-every", str(2 * FRAMES), "--checkpoint-every", str(2 * FRAMES)]


class Escaped(Exception):
    """A SIGTERM that reached the test's own handler: the pipeline did not handle it."""


@pytest.fixture(autouse=True)
def _sigterm_fails_the_test_instead_of_killing_it():
    def escaped(signum, frame):
        raise Escaped("SIGTERM was not handled by the pipeline")

    previous = signal.signal(signal.SIGTERM, escaped)
    yield
    signal.signal(signal.SIGTERM, previous)


def _interrupted(main, args, root, code=130):
    """Runs ``main`` and checks it ended with ``SystemExit(code)``, not a traceback."""
    try:
        main([*args, "--run-root", str(root)])
    except SystemExit as exit_info:
        assert exit_info.code == code
        return
    except KeyboardInterrupt:  # re-raised as a failure: a bare KeyboardInterrupt would end the pytest session
        pytest.fail("the interrupt escaped the pipeline as a KeyboardInterrupt (a traceback for the user)")
    pytest.fail("the run was not interrupted")


# --- a second Ctrl-C inside a step ---------------------------------------------------------
def test_dqn_second_ctrl_c_inside_a_step_saves_nothing_and_the_run_resumes_exactly(tmp_path, monkeypatch, capsys):
    dqn.main([*DQN_ARGS, "--run-root", str(tmp_path / "a")])
    with monkeypatch.context() as m:
        # update 50 runs at env step 81 (updates start at 32): the exploration draw and the store are done, the update not
        signal_on_call(m, DQNAgent, "update", 50, signal.SIGINT, times=2)
        _interrupted(dqn.main, DQN_ARGS, tmp_path / "b")
    assert "nothing saved" in capsys.readouterr().out
    assert latest(tmp_path / "b")["counters"]["total_steps"] == 80  # the last periodic checkpoint, not the half step
    dqn.main(["--resume", str(tmp_path / "b")])
    assert_same_weights(latest(tmp_path / "a"), latest(tmp_path / "b"))
    assert TrainingRun.find(tmp_path / "a").read_jsonl("train_episodes.jsonl") == TrainingRun.find(tmp_path / "b").read_jsonl("train_episodes.jsonl")


def test_dqn_second_ctrl_c_inside_an_evaluation_saves_nothing(tmp_path, monkeypatch, capsys):
    with monkeypatch.context() as m:
        signal_on_call(m, dqn_run_state, "run_greedy_episodes", 2, signal.SIGINT, times=2)  # the evaluation at step 160
        _interrupted(dqn.main, DQN_ARGS, tmp_path)
    assert "nothing saved" in capsys.readouterr().out
    state = latest(tmp_path)
    assert state["counters"]["total_steps"] == 120 and state["counters"]["eval_count"] == 1


def test_ppo_second_ctrl_c_inside_an_update_saves_the_last_complete_one(tmp_path, monkeypatch):
    recurrent_ppo.main([*PPO_ARGS, "--run-root", str(tmp_path / "a")])
    with monkeypatch.context() as m:
        signal_on_call(m, RecurrentPPOTrainer, "train_step", 4, signal.SIGINT, times=2)
        _interrupted(recurrent_ppo.main, PPO_ARGS, tmp_path / "b")
    assert latest(tmp_path / "b")["counters"]["total_steps"] == 3 * FRAMES
    recurrent_ppo.main(["--resume", str(tmp_path / "b")])
    assert_same_weights(latest(tmp_path / "a"), latest(tmp_path / "b"))


# --- right after the run directory is created --------------------------------------------
@pytest.mark.parametrize("pipeline", ["dqn", "recurrent_ppo"])
def test_a_signal_right_after_the_run_directory_is_created_leaves_a_resumable_run(tmp_path, monkeypatch, pipeline):
    main, args = (dqn.main, DQN_ARGS) if pipeline == "dqn" else (recurrent_ppo.main, PPO_ARGS)
    main([*args, "--run-root", str(tmp_path / "a")])
    real_create = TrainingRun.create.__func__

    def create_then_signal(cls, *a, **k):
        run = real_create(cls, *a, **k)
        signal.raise_signal(signal.SIGTERM)
        return run

    with monkeypatch.context() as m:
        m.setattr(TrainingRun, "create", classmethod(create_then_signal))
        _interrupted(main, args, tmp_path / "b", code=143)
    assert latest(tmp_path / "b")["counters"]["total_steps"] == 0
    main(["--resume", str(tmp_path / "b")])
    assert_same_weights(latest(tmp_path / "a"), latest(tmp_path / "b"))


# --- inside the final evaluation --------------------------------------------------------
@pytest.mark.parametrize("pipeline", ["dqn", "recurrent_ppo"])
def test_ctrl_c_inside_the_final_evaluation_finishes_it_saves_and_exits_130(tmp_path, monkeypatch, capsys, pipeline):
    if pipeline == "dqn":  # evaluations at 80 and 160, then the final one at 230
        main, args, owner, final_call, budget = dqn.main, [*DQN_ARGS, "--total-steps", "230"], dqn_run_state, 3, 230
    else:  # evaluations after updates 2 and 4, then the final one after update 5
        main, args, owner, final_call, budget = recurrent_ppo.main, [*PPO_ARGS, "--total-steps", str(5 * FRAMES)], ppo_run_state, 3, 5 * FRAMES
    name = "run_greedy_episodes" if pipeline == "dqn" else "evaluate"
    with monkeypatch.context() as m:
        calls = signal_on_call(m, owner, name, final_call, signal.SIGINT)
        _interrupted(main, args, tmp_path)
        assert calls["n"] == final_call
    run = TrainingRun.find(tmp_path)
    state = run.load_latest()
    assert state["counters"]["total_steps"] == budget and state["counters"]["last_eval_step"] == budget
    assert max(r["total_steps"] for r in run.read_jsonl("eval_episodes.jsonl")) == budget
    capsys.readouterr()
    before = digest(run.path)
    main(["--resume", str(tmp_path)])  # nothing left to do
    assert "already at its budget" in capsys.readouterr().out
    assert digest(run.path) == before
