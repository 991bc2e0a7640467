"""A finished run stays finished: resuming it changes no file, a refused resume writes nothing, every
step count is evaluated once (so an extension equals a straight run), and the end of a run names the
best evaluation and its checkpoint."""
import re

import pytest
import torch

from ckpt_helpers import DQN_TINY, FRAMES, PPO_TINY, assert_same_weights, digest, latest
from torchrl_memory import TrainingRun
from torchrl_memory.dqn import run_state as dqn_run_state
from torchrl_memory.pipelines import dqn, recurrent_ppo
from torchrl_memory.runs.run_dir import CheckpointError
from torchrl_memory.runs.stats import EpisodeRecord

PIPELINES = {
    "dqn": (dqn.main, [*DQN_TINY, "--total-steps", "160", "--eval-every", "80"], ["--hidden-sizes", "32"]),
    "recurrent_ppo": (recurrent_ppo.main, [*PPO_TINY, "--total-steps", str(2 * FRAMES), "--eval-every", str(FRAMES)], ["--hidden-size", "32"]),
}


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_resuming_a_finished_run_changes_no_file(tmp_path, capsys, pipeline):
    main, args, _ = PIPELINES[pipeline]
    main([*args, "--run-root", str(tmp_path)])
    run = TrainingRun.find(tmp_path)
    before = digest(run.path)
    capsys.readouterr()
    out = main(["--resume", str(tmp_path)])
    assert "already at its budget" in capsys.readouterr().out and out["eval"] is None
    assert digest(run.path) == before
    main(["--resume", str(tmp_path), "--total-steps", str(latest(tmp_path)["counters"]["total_steps"])])  # the same budget, given
    assert digest(run.path) == before


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_a_refused_resume_writes_nothing(tmp_path, pipeline):
    main, args, incompatible = PIPELINES[pipeline]
    main([*args, "--run-root", str(tmp_path)])
    run = TrainingRun.find(tmp_path)
    before = digest(run.path)
    with pytest.raises(CheckpointError, match="checkpoint 16 vs requested 32|checkpoint \\[16\\] vs requested \\[32\\]"):
        main(["--resume", str(tmp_path), "--total-steps", "100000", *incompatible])
    assert digest(run.path) == before  # metrics/texts/hparams0.txt still holds the run's own config


@pytest.mark.parametrize("n_step, refused", [(3, True), (1, False)])
def test_n_step_replay_refuses_a_resume_that_changes_collector_workers(tmp_path, n_step, refused):
    """The n-step fold reads the replay at the stride it was written with (envs per stored step)."""
    args = [*DQN_TINY, "--num-envs", "2", "--total-steps", "80", "--eval-every", "0", "--n-step", str(n_step)]
    dqn.main([*args, "--run-root", str(tmp_path)])
    resume = ["--resume", str(tmp_path), "--total-steps", "96", "--collector-workers", "2", "--worker-steps", "4"]
    if refused:
        before = digest(TrainingRun.find(tmp_path).path)
        with pytest.raises(CheckpointError, match="collector_workers: checkpoint 1 vs requested 2"):
            dqn.main(resume)
        assert digest(TrainingRun.find(tmp_path).path) == before
    else:
        dqn.main(resume)
        assert latest(tmp_path)["counters"]["total_steps"] == 96


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_a_budget_that_is_a_multiple_of_eval_every_is_evaluated_once_at_the_end(tmp_path, pipeline):
    main, args, _ = PIPELINES[pipeline]
    main([*args, "--run-root", str(tmp_path)])
    steps = [r["total_steps"] for r in TrainingRun.find(tmp_path).read_jsonl("eval_episodes.jsonl")]
    budget = latest(tmp_path)["counters"]["total_steps"]
    assert steps == sorted(steps) and steps.count(budget) == 2 and len(steps) == 4  # two evaluations of 2 episodes each


def test_a_constant_lr_ppo_extension_is_bit_identical_to_a_straight_run(tmp_path):
    args = [*PPO_TINY, "--lr-schedule", "constant", "--eval-every", str(FRAMES)]
    recurrent_ppo.main([*args, "--total-steps", str(4 * FRAMES), "--run-root", str(tmp_path / "a")])
    recurrent_ppo.main([*args, "--total-steps", str(2 * FRAMES), "--run-root", str(tmp_path / "b")])
    recurrent_ppo.main(["--resume", str(tmp_path / "b"), "--total-steps", str(4 * FRAMES)])
    assert_same_weights(latest(tmp_path / "a"), latest(tmp_path / "b"))
    a, b = (TrainingRun.find(tmp_path / x) for x in "ab")
    drop_time = lambda records: [{k: v for k, v in r.items() if k != "train_s"} for r in records]
    assert drop_time(a.read_jsonl("eval_episodes.jsonl")) == drop_time(b.read_jsonl("eval_episodes.jsonl"))
    assert torch.equal(a.load_latest()["eval_env_rng"]["base"], b.load_latest()["eval_env_rng"]["base"])


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_the_end_of_a_run_names_the_best_evaluation_and_its_checkpoint(tmp_path, capsys, pipeline):
    main, args, _ = PIPELINES[pipeline]
    main([*args, "--run-root", str(tmp_path)])
    out = capsys.readouterr().out
    found = re.search(r"^best: (-?[\d.]+) at ([\d,]+) steps -> (\S+)$", out, re.MULTILINE)
    assert found, out
    best = torch.load(found.group(3), weights_only=True)
    assert f"{best['counters']['best_eval']:.2f}" == found.group(1)
    assert best["counters"]["best_step"] == int(found.group(2).replace(",", ""))


def test_a_final_evaluation_below_the_best_still_points_at_the_better_checkpoint(tmp_path, capsys, monkeypatch):
    returns = iter([10.0, 30.0, 20.0])  # evaluations at 80, 160, then the final one at 200
    monkeypatch.setattr(dqn_run_state, "run_greedy_episodes", lambda env, policy: [EpisodeRecord(next(returns), 5, "Terminated")])
    dqn.main([*DQN_TINY, "--total-steps", "200", "--eval-every", "80", "--run-root", str(tmp_path)])
    out = capsys.readouterr().out
    run = TrainingRun.find(tmp_path)
    assert "eval @ 200 steps: 1 episodes, return 20.00" in out
    assert f"best: 30.00 at 160 steps -> {run.path / 'best.pt'}" in out
    assert torch.load(run.path / "best.pt", weights_only=True)["counters"]["total_steps"] == 160
