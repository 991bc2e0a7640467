"""benchmarks/plot_results.py draws the result JSONs it knows and skips, with a note, those it does not."""
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _plotter():
    spec = importlib.util.spec_from_file_location("plot_results", ROOT / "benchmarks" / "plot_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_known_results_become_pngs_and_unknown_ones_a_note(tmp_path, capsys):
    results, out = tmp_path / "results", tmp_path / "img"
    results.mkdir()
    row = {"env": "popgym-RepeatFirstEasy-v0", "model": "lstm", "score": 0.5, "train_curve": [{"up_to_steps": 1000, "mean_return": 0.1}, {"up_to_steps": 2000, "mean_return": 0.4}]}
    for seed in (0, 1):  # two per-seed files of one benchmark: one figure
        suite = {"date": "2026-12-06", "machine": "2 cores", "steps": 2000, "rows": [{**row, "seed": seed}]}
        (results / f"suite_demo_lstm_seed{seed}.json").write_text(json.dumps(suite))
    (results / "odd.json").write_text(json.dumps({"date": "2026-12-06", "something": [1, 2]}))
    (results / "broken.json").write_text("{not json")
    assert _plotter().main(["--results", str(results), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["suite_demo.png", "suite_demo_curves.png"]
    assert "skipped odd: no plotter" in printed and "skipped broken.json" in printed


def test_every_picture_in_docs_img_comes_from_a_result_file():
    plotter = _plotter()
    groups = {plotter.group_name(p.stem) for p in (ROOT / "benchmarks" / "results").glob("*.json")}
    drawn = {p.stem.removesuffix("_curves").removesuffix("_ratios") for p in (ROOT / "docs" / "img").glob("*.png")}
    assert drawn <= groups, sorted(drawn - groups)
