"""The recurrent PPO pipeline end to end: run files, Ctrl-C + exact resume, bad input, T-maze learning."""
import json

import pytest
import torch

from torchrl_memory import RecurrentPPOTrainer, TrainingRun
from torchrl_memory.pipelines import recurrent_ppo

TINY = ["--num-envs", "4", "--rollout-len", "16", "--hidden-size", "16", "--envs-per-minibatch", "2", "--eval-episodes", "2", "--plot", "false"]
FRAMES = 4 * 16


def _run(tmp_path, *extra):
    return recurrent_ppo.main([*TINY, "--run-root", str(tmp_path), *extra])


def test_tiny_job_writes_every_run_file(tmp_path):
    out = recurrent_ppo.main([*TINY[:-2], "--run-root", str(tmp_path), "--total-steps", str(4 * FRAMES), "--eval-every", str(2 * FRAMES), "--checkpoint-every", str(FRAMES), "--keep-checkpoints", "2"])
    run = TrainingRun.find(tmp_path)
    names = {p.name for p in run.path.iterdir()}
    assert {"metadata.json", "config.json", "latest.pt", "best.pt", "train_episodes.jsonl", "eval_episodes.jsonl", "learning_curve.png", "metrics", "checkpoints"} <= names
    assert [s for s, _ in run.checkpoints()] == [3 * FRAMES, 4 * FRAMES]  # pruned to the 2 highest
    meta = json.loads((run.path / "metadata.json").read_text())
    assert meta["total_steps"] == 4 * FRAMES and meta["total_episodes"] == len(run.read_jsonl("train_episodes.jsonl"))
    assert json.loads((run.path / "config.json").read_text())["total_steps"] == 4 * FRAMES
    assert {r["total_steps"] for r in run.read_jsonl("eval_episodes.jsonl")} == {2 * FRAMES, 4 * FRAMES}
    scalars = run.path / "metrics" / "scalars"
    for name in ("train/approx_kl", "train/episode_return", "train/episode_length", "train/steps_per_s", "train/learning_rate", "time/updates_s", "eval/mean_return"):
        assert (scalars / f"{name}.csv").exists(), name
    assert "clip_range: 0.2" in (run.path / "metrics" / "texts" / "hparams0.txt").read_text()  # the resolved config
    assert out["eval"]["episodes"] == 2


def _interrupt_after(monkeypatch, n_updates):
    real = RecurrentPPOTrainer.train_step

    def step(self, batch):
        if self.updates_done == n_updates:
            raise KeyboardInterrupt
        return real(self, batch)

    monkeypatch.setattr(RecurrentPPOTrainer, "train_step", step)


@pytest.mark.parametrize("model", ["lstm", "gru", "mingru", "ffm", "lru"])
def test_ctrl_c_saves_and_resume_matches_straight_run(tmp_path, monkeypatch, model):
    k = 3
    straight = _run(tmp_path / "a", "--total-steps", str(2 * k * FRAMES), "--eval-every", "0", "--model", model)
    with monkeypatch.context() as m:
        _interrupt_after(m, k)
        with pytest.raises(SystemExit) as exit_info:
            _run(tmp_path / "b", "--total-steps", str(2 * k * FRAMES), "--eval-every", "0", "--model", model)
        assert exit_info.value.code == 130
    assert TrainingRun.find(tmp_path / "b").load_latest()["counters"]["total_steps"] == k * FRAMES
    resumed = recurrent_ppo.main(["--resume", str(tmp_path / "b")])

    a, b = TrainingRun.find(tmp_path / "a"), TrainingRun.find(tmp_path / "b")
    wa, wb = a.load_latest()["trainer"]["model"], b.load_latest()["trainer"]["model"]
    for key in wa:
        torch.testing.assert_close(wa[key], wb[key], rtol=0, atol=1e-6)
    assert a.read_jsonl("train_episodes.jsonl") == b.read_jsonl("train_episodes.jsonl")
    assert straight["eval"]["mean_reward"] == resumed["eval"]["mean_reward"]


def test_bad_config_fails_before_any_work(tmp_path):
    from torchrl_memory import ConfigError

    with pytest.raises(ConfigError, match=r"'envs_per_minibatch' = 9 .*\[1, 4\]"):
        _run(tmp_path, "--envs-per-minibatch", "9")
    with pytest.raises(ValueError, match="unknown env id 'NotAnEnv-v0'"):
        _run(tmp_path, "--env", "NotAnEnv-v0")
    assert not (tmp_path / "recurrent_ppo").exists()  # no run directory was created


def test_resume_with_incompatible_config_names_the_mismatch(tmp_path):
    _run(tmp_path, "--total-steps", str(FRAMES), "--eval-every", "0")
    with pytest.raises(ValueError, match="hidden_size: checkpoint 16 vs requested 32"):
        recurrent_ppo.main(["--resume", str(tmp_path), "--hidden-size", "32"])


def test_tmaze_short_corridor_is_solved(tmp_path):
    out = recurrent_ppo.main(["--env", "TMaze-5", "--total-steps", "30000", "--eval-every", "0", "--eval-episodes", "64", "--run-root", str(tmp_path), "--plot", "false"])
    assert out["eval"]["success_rate"] >= 0.95


def test_gym_backend_runs_end_to_end(tmp_path):
    out = _run(tmp_path, "--env", "gym:CartPoleNoVel", "--total-steps", str(2 * FRAMES), "--eval-every", "0")
    assert out["eval"]["episodes"] == 2


def test_continuous_actions_train_with_tanh_normal(tmp_path):
    out = _run(tmp_path, "--env", "Pendulum-v1", "--total-steps", str(2 * FRAMES), "--eval-every", "0", "--entropy-guard", "false")
    assert out["eval"]["episodes"] == 2 and out["eval"]["mean_reward"] < 0


def test_an_extended_budget_survives_a_plain_resume(tmp_path, monkeypatch):
    _run(tmp_path, "--total-steps", str(2 * FRAMES), "--eval-every", "0")
    with monkeypatch.context() as m:
        _interrupt_after(m, 4)  # the extension is cut off after 4 of its 6 updates
        with pytest.raises(SystemExit):
            recurrent_ppo.main(["--resume", str(tmp_path), "--total-steps", str(6 * FRAMES)])
    out = recurrent_ppo.main(["--resume", str(tmp_path)])  # no budget given: the last one asked for holds
    run = TrainingRun.find(tmp_path)
    assert run.load_latest()["counters"]["total_steps"] == 6 * FRAMES
    saved = json.loads((run.path / "config.json").read_text())
    assert saved["total_steps"] == 6 * FRAMES and saved["_versions"]["torchrl"]
    assert json.loads((run.path / f"config.{2 * FRAMES}.json").read_text())["total_steps"] == 2 * FRAMES
    assert out["eval"]["episodes"] == 2


def test_run_files_have_ordinary_permissions(tmp_path):
    import stat

    _run(tmp_path, "--total-steps", str(FRAMES), "--eval-every", "0")
    run = TrainingRun.find(tmp_path)
    for path in [run.path / "latest.pt", run.path / "config.json", run.path / "metadata.json", *run.path.glob("checkpoints/*.pt")]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask(), path
    assert stat.S_IMODE((run.path / "checkpoints").stat().st_mode) == 0o777 & ~_umask()


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask
