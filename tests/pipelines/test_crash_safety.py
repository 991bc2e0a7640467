"""SIGKILL at random moments across checkpoint writes: every file left loads, resume continues, other runs untouched."""
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path


from torchrl_memory import TrainingRun
from torchrl_memory.runs.run_dir import load_checkpoint
from torchrl_memory.pipelines import dqn

ROOT = Path(__file__).resolve().parents[2]
BUDGET = 4_000
ARGS = ["--hidden-sizes", "16", "--batch-size", "8", "--min-replay-size", "32", "--buffer-capacity", "2000", "--eval-every", "500",
        "--eval-episodes", "2", "--checkpoint-every", "50", "--keep-checkpoints", "3", "--plot", "false", "--total-steps", str(BUDGET)]


def _digest(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def _kill_during_training(root: Path, delay: float) -> None:
    proc = subprocess.Popen([sys.executable, str(ROOT / "pipelines" / "dqn.py"), *ARGS, "--run-root", str(root)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while not list(root.glob("dqn/v1/*/latest.pt")):  # wait for the first checkpoint, then kill a little later
            assert proc.poll() is None and time.time() < deadline, "the training process ended before its first checkpoint"
            time.sleep(0.02)
        time.sleep(delay)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def test_sigkill_at_random_moments_leaves_a_resumable_run(tmp_path):
    rng = random.Random(0)
    other = tmp_path / "other"
    dqn.main([*ARGS, "--total-steps", "100", "--run-root", str(other)])
    before = _digest(other)
    for trial in range(3):
        root = tmp_path / f"trial{trial}"
        _kill_during_training(root, rng.uniform(0.0, 1.5))
        run = TrainingRun.find(root)
        run.remove_stale_temp_files()
        # every file left is complete
        for p in run.path.rglob("*"):
            if p.suffix == ".pt":
                load_checkpoint(p)
            elif p.suffix == ".json":
                json.loads(p.read_text())
        newest = max(load_checkpoint(p)["counters"]["total_steps"] for p in [run.path / "latest.pt", *run.path.glob("checkpoints/*.pt")])
        assert run.load_latest()["counters"]["total_steps"] == newest
        assert newest < BUDGET, "killed too late: the run had finished"
        dqn.main(["--resume", str(root)])
        done = TrainingRun.find(root)
        assert done.load_latest()["counters"]["total_steps"] == BUDGET
        steps = [r["total_steps"] for r in done.read_jsonl("train_episodes.jsonl")]
        assert steps == sorted(steps) and len(steps) == len(set(steps))  # the replayed steps were not logged twice
    assert _digest(other) == before
