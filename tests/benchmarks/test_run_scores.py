"""POPGym's MMER and the final success rate the memory-model learning table reports, on made-up run logs."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from memory_models_learning import markdown, run_scores, summarise  # noqa: E402


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


def test_the_markdown_tables_bold_the_best_median_give_wall_ratios_and_count_rows_at_or_above_the_gru():
    runs = [{"env": env, "model": m, "seed": s, "final": f, "mmer": f, "wall_s": wall, "steps_per_s": 1.0}
            for env, cells in {"AEasy": {"gru": (0.5, 100.0), "ffm": (0.5, 50.0), "mlp": (-1.0, 25.0)},
                               "BEasy": {"gru": (0.9, 200.0), "ffm": (0.2, 80.0), "mlp": (-1.0, 40.0)}}.items()
            for m, (f, wall) in cells.items() for s in range(3)]
    text = markdown(summarise(runs))
    assert "| A | **0.500** (0.50, 0.50, 0.50) | **0.500** (0.50, 0.50, 0.50) | -1.000 (-1.00, -1.00, -1.00) |" in text
    assert "| B | 200 s | 80 s (0.40x) | 40 s (0.20x) |" in text
    assert "- FFM: at or above GRU on 1 of 2 envs (A); wall 0.40-0.50x GRU's" in text
    assert "MLP:" not in text  # a baseline, not a new model
    assert "not complete" not in text
    # a row missing a run is named, not tabled
    text = markdown(summarise([r for r in runs if not (r["env"] == "BEasy" and r["model"] == "mlp" and r["seed"] == 2)]))
    assert "| B |" not in text and "- not complete: B (8 of 9 runs)" in text
    assert "- FFM: at or above GRU on 1 of 1 envs (A); wall 0.50-0.50x GRU's" in text


def test_the_wall_table_gives_the_mean_episode_length_of_the_gru_runs_when_every_run_has_its_episode_count():
    runs = [{"env": "AEasy", "model": m, "seed": s, "final": 0.0, "mmer": 0.0, "wall_s": 10.0, "steps_per_s": 1.0,
             "train_episodes": episodes} for m, episodes in {"gru": 2000, "lru": 999, "mlp": 1}.items() for s in range(3)]
    assert "| env | episode | GRU | LRU | MLP |\n|---|---|---|---|---|" in markdown(summarise(runs), total_steps=100_000)
    assert "| A | 50 | 10 s | 10 s (1.00x) | 10 s (1.00x) |" in markdown(summarise(runs), total_steps=100_000)
    # without the step count, or with a run written before episodes were counted, no such column
    assert "episode" not in markdown(summarise(runs))
    del runs[0]["train_episodes"]
    assert "episode" not in markdown(summarise(runs), total_steps=100_000)
