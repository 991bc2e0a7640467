"""The stable-solve metric of the learning benchmarks, on made-up evaluation histories."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_common import eval_history, solve_summary, stable_solve  # noqa: E402


def history(values: list[float], every: int = 10_000) -> list[dict]:
    return [{"steps": every * (i + 1), "value": v, "train_s": 2.0 * (i + 1)} for i, v in enumerate(values)]


def test_holds_from_the_first_evaluation_at_or_above_the_threshold():
    assert stable_solve(history([20, 300, 475, 500, 500]), 475) == {"steps": 30_000, "train_s": 6.0}


def test_never_holds_is_none():
    assert stable_solve(history([20, 300, 400, 474.9]), 475) is None


def test_never_holds_when_the_run_ends_below_after_solving():
    # the pattern the first-crossing metric rewarded: solved early, collapsed at the end
    assert stable_solve(history([100, 500, 499.4, 500, 325.6]), 475) is None


def test_dips_and_recovers_counts_from_after_the_last_dip():
    assert stable_solve(history([100, 500, 200, 480, 300, 490, 500]), 475) == {"steps": 60_000, "train_s": 12.0}


def test_holds_only_at_the_last_evaluation():
    assert stable_solve(history([100, 500, 300, 476]), 475) == {"steps": 40_000, "train_s": 8.0}


def test_empty_history_never_holds():
    assert stable_solve([], 475) is None


def test_seconds_are_none_when_the_pipeline_logs_none():
    h = [{"steps": 5_000, "value": 500.0, "train_s": None}]
    assert stable_solve(h, 475) == {"steps": 5_000, "train_s": None}


def test_summary_counts_a_run_that_never_holds_as_the_full_budget():
    solves = [stable_solve(history(v), 475) for v in ([500, 500], [500, 100], [100, 480])]
    s = solve_summary([500.0, 100.0, 480.0], solves, 475, budget_steps=100_000, train_s=[30.0, 40.0, 50.0])
    assert s["seeds_ending_solved"] == 2 and s["seeds_holding"] == 2
    # steps 10k, 100k (never holds: the budget), 20k; seconds 2, 40 (all its training), 4
    assert s["median_stable_solve_steps"] == 20_000
    assert s["median_stable_solve_s"] == 4.0


def test_eval_history_averages_the_episodes_of_each_evaluation(tmp_path):
    rows = [{"total_steps": 2048, "train_s": 1.5, "total_reward": r, "extras": {}} for r in (400.0, 500.0)]
    rows += [{"total_steps": 1024, "train_s": 0.7, "total_reward": 10.0, "extras": {}}]
    (tmp_path / "eval_episodes.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    assert eval_history(tmp_path) == [
        {"steps": 1024, "value": 10.0, "train_s": 0.7},
        {"steps": 2048, "value": pytest.approx(450.0), "train_s": 1.5},
    ]
