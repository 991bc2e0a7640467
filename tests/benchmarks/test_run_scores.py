"""POPGym's MMER and the final success rate the memory-model learning table reports, on made-up run logs."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from memory_models_learning import run_scores, summarise  # noqa: E402


def write_run(tmp_path: Path, train_returns: list[float], evals: list[tuple[int, list[float]]]) -> Path:
    (tmp_path / "train_episodes.jsonl").write_text("".join(json.dumps({"total_reward": r}) + "\n" for r in train_returns))
    lines = [{"total_steps": steps, "total_reward": r, "extras": {"success": float(r > 0)}} for steps, rs in evals for r in rs]
    (tmp_path / "eval_episodes.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines))
    return tmp_path


def test_mmer_is_the_best_mean_of_any_window_of_consecutive_training_episodes(tmp_path):
    # windows of 3: (0,0,1)=1/3, (0,1,1)=2/3, (1,1,1)=1, (1,1,-1)=1/3, (1,-1,-1)=-1/3
    run = write_run(tmp_path, [0, 0, 1, 1, 1, -1, -1], [(100, [1.0])])
    assert run_scores(run, window=3)["mmer"] == pytest.approx(1.0)
    # the best window is not the last one, nor the single best episode
    run = write_run(tmp_path, [0, 2, 0, 0, 0.5, 0.5, 0.5], [(100, [1.0])])
    assert run_scores(run, window=3)["mmer"] == pytest.approx(2 / 3)


def test_with_fewer_episodes_than_the_window_mmer_is_their_mean(tmp_path):
    run = write_run(tmp_path, [1.0, -0.5], [(100, [1.0])])
    assert run_scores(run, window=100) == {"mmer": pytest.approx(0.25), "train_episodes": 2, "final_success": 1.0}


def test_final_success_counts_only_the_last_evaluation(tmp_path):
    run = write_run(tmp_path, [0.0], [(100, [1.0, 1.0, 1.0, 1.0]), (200, [1.0, -1.0, -1.0, -1.0])])
    assert run_scores(run)["final_success"] == pytest.approx(0.25)


def test_the_table_takes_medians_per_env_and_model():
    runs = [{"env": "E", "model": m, "seed": s, "final": f, "mmer": f, "wall_s": 10.0 * (s + 1), "steps_per_s": 1.0}
            for m, finals in {"gru": [0.1, 0.9, 0.5], "lru": [1.0, 1.0, -1.0]}.items() for s, f in enumerate(finals)]
    table = summarise(runs)["E"]
    assert table["gru"]["median_final"] == pytest.approx(0.5) and table["lru"]["median_final"] == pytest.approx(1.0)
    assert table["lru"]["finals"] == {0: 1.0, 1: 1.0, 2: -1.0}
    assert table["gru"]["median_wall_s"] == pytest.approx(20.0)
    assert table["gru"]["median_final_success"] is None  # rows without it (a file written before it existed)
