"""A NaN or inf from the env stops the run with one line naming the step, the entry and the env;
the checkpoints on disk hold only finite data and the message names the newest."""
import pytest
import torch

import input_envs  # noqa: F401  (registers the test envs)
from torchrl_memory import make_env
from torchrl_memory.cli import run_main
from torchrl_memory.envs.finite_check import NonFiniteEnvDataError
from torchrl_memory.pipelines import dqn, recurrent_ppo
from torchrl_memory.runs.run_dir import TrainingRun

PPO = ["--num-envs", "4", "--rollout-len", "16", "--envs-per-minibatch", "2", "--hidden-size", "16", "--total-steps", "1024", "--eval-every", "0"]
DQN = ["--num-envs", "4", "--hidden-sizes", "16", "--batch-size", "8", "--min-replay-size", "32", "--buffer-capacity", "500", "--total-steps", "1024", "--eval-every", "0"]


@pytest.mark.parametrize("main,args", [(recurrent_ppo.main, PPO), (dqn.main, DQN)], ids=["ppo", "dqn"])
@pytest.mark.parametrize("env_id,entry,shown", [("NaNReward-v0", "reward", "nan"), ("InfObservation-v0", "observation", "inf")])
def test_non_finite_env_data_is_one_line_naming_step_entry_env_and_checkpoint(tmp_path, capsys, main, args, env_id, entry, shown):
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        run_main(main, [*args, "--env", env_id, "--checkpoint-every", "64", "--eval-episodes", "2", "--plot", "false", "--run-root", str(tmp_path)])
    assert exit_info.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith(f"error: env '{env_id}' copy ") and f"non-finite {entry} ({shown})" in line, line
    step = int(line.split("env step ")[1].split(" ")[0])
    run = TrainingRun.find(tmp_path)
    assert f"last good checkpoint: {run.path / 'latest.pt'}" in line
    state = run.load_latest()
    assert 0 < state["counters"]["total_steps"] < step  # saved before the bad step, never after
    assert _all_finite(state["trainer"] if "trainer" in state else state["agent"])


def _all_finite(obj) -> bool:
    if isinstance(obj, torch.Tensor):
        return not obj.is_floating_point() or bool(torch.isfinite(obj).all())
    if isinstance(obj, dict) and "_len" in obj and "_storage" in obj:  # a replay storage: the rows written so far
        # (the rest of its capacity is allocated but never written or sampled, and may hold any bits)
        return all(_all_finite(v[: obj["_len"]]) for v in obj["_storage"].values())
    if isinstance(obj, dict):
        return all(_all_finite(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return all(_all_finite(v) for v in obj)
    return True


def test_the_error_names_the_copy_and_its_episode_step():
    env = make_env("NaNReward-v0", 3, normalize_obs=False)
    env.set_seed(0)
    with pytest.raises(NonFiniteEnvDataError) as info:
        env.rollout(200, break_when_any_done=False)
    err = info.value
    assert (err.entry, err.copy, err.num_envs) == ("reward", 0, 3)
    assert err.episode_step is not None and 1 <= err.episode_step <= 20  # episodes last 20 steps
    assert "env step" not in str(err)  # the run's step count is added by the pipeline that knows it


def test_finite_data_passes_untouched():
    env = make_env("gym:CartPole-v1", 2, normalize_obs=False)
    env.set_seed(0)
    assert env.rollout(30, break_when_any_done=False)["next", "reward"].isfinite().all()
