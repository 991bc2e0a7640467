"""Render the benchmark JSONs in ``benchmarks/results/`` as PNGs under ``docs/img/``.

    python benchmarks/plot_results.py [--results benchmarks/results] [--out docs/img] [--only NAME ...]

The result files come from different scripts and differ in shape; each is matched to one of the
plotters below by the keys it holds:

- learning benchmarks (``ppo_learning.py``, ``dqn_learning.py``, ``popgym_suite.py``): the final
  greedy score of every seed as a dot and the median of each arm as a bar, ``<name>.png``; where
  the rows hold training curves (``train_curve``), one line per seed, ``<name>_curves.png``.
  Files that differ only by a ``_seedN`` suffix or an arm (``_lstm``, ``_gru``, ``_mlp``) are one
  benchmark, drawn in one figure (e.g. ``minigrid_memory_s7_native_8000000_{lstm,mlp}_seed{0,1,2}``
  -> ``minigrid_memory_s7_native_8000000.png``);
- ``memory_models_learning.py``: the same dots and bars per env and memory model;
- comparisons with sb3-contrib / SB3: scores per seed beside the speed ratios as bars;
- speed benchmarks (throughput, scale-out, profiles, ``torch.compile``): bars, with the ratio
  the docs quote written on each.

A file whose shape none of them knows is skipped with a printed note, never an error.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import textwrap
from collections import Counter, defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.ticker import FuncFormatter  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ARM_COLORS = {"lstm": "#1f77b4", "gru": "#2ca02c", "mingru": "#ff7f0e", "ffm": "#d62728", "lru": "#9467bd", "mlp": "#7f7f7f", "dqn": "#1f77b4"}
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
LINESTYLES = ["-", "--", ":", "-."]
DPI = 90


def group_name(stem: str) -> str:
    """The benchmark a result file belongs to: its name without a ``_seedN`` suffix or an arm token."""
    stem = re.sub(r"_seed\d+$", "", stem)
    return re.sub(r"_(lstm|gru|mlp)(?=_|$)", "", stem)


def _color(arm: str, i: int) -> str:
    return ARM_COLORS.get(arm, PALETTE[i % len(PALETTE)])


def _caption(meta: dict) -> str:
    """One line under each figure: the date and machine the numbers come from."""
    machine = str(meta.get("machine", "")).replace(", no GPU", "").replace("(Intel(R) Xeon(R) Processor)", "(Intel Xeon)")
    return f"{meta.get('date', '?')}, {machine}"


def _finish(fig, path: Path, caption: str) -> None:
    fig.text(0.01, 0.005, caption, fontsize=7, color="#555555", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.1)
    plt.close(fig)
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def plot_seeds(
    data: dict[str, dict[str, list[float]]],
    title: str,
    ylabel: str,
    path: Path,
    caption: str,
    threshold: float | None = None,
    percent: bool = False,
) -> None:
    """Per group (env) and arm: each seed's value as a dot, the arm's median as a bar."""
    groups = list(data)
    arms: list[str] = []
    for g in groups:
        arms += [a for a in data[g] if a not in arms]
    width = 0.8 / max(len(arms), 1)
    fig, ax = plt.subplots(figsize=(min(11.0, max(5.5, 0.55 * len(groups) * max(len(arms), 1) + 3.0)), 3.6))
    scale = 100.0 if percent else 1.0
    crowded = len(arms) * len(groups) > 20  # side-by-side labels would overlap: stand them upright
    for j, arm in enumerate(arms):
        for i, g in enumerate(groups):
            values = data[g].get(arm)
            if not values:
                continue
            x = i + (j - (len(arms) - 1) / 2) * width
            med = statistics.median(values) * scale
            ax.bar(x, med, width * 0.9, color=_color(arm, j), alpha=0.35, label=arm if i == 0 or arm not in data[groups[0]] else None)
            spread = [x + (k - (len(values) - 1) / 2) * width * 0.6 / max(len(values), 1) for k in range(len(values))]  # equal seeds stay visible
            ax.scatter(spread, [v * scale for v in values], color=_color(arm, j), s=18, zorder=3)
            top = max(max(values) * scale, med, 0.0)
            ax.annotate(f"{med:.3g}", (x, top), textcoords="offset points", xytext=(0, 3), ha="center", va="bottom",
                        fontsize=6 if crowded else 7, rotation=90 if crowded else 0)
    if crowded:
        ax.margins(y=0.25)  # room above the tallest bar for its upright label
    if threshold is not None:
        ax.axhline(threshold * scale, color="#d62728", lw=0.8, ls="--", label=f"target {threshold * scale:g}")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=8, rotation=20 if len(groups) > 3 else 0, ha="right" if len(groups) > 3 else "center")
    ax.set_ylabel(ylabel + (" (%)" if percent else ""))
    ax.set_title(title, fontsize=9)
    ax.axhline(0, color="black", lw=0.5)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="bar: median\ndots: seeds", title_fontsize=7)
    _finish(fig, path, caption)


def plot_curves(curves: dict[str, dict[int, list[tuple[int, float]]]], title: str, ylabel: str, path: Path, caption: str) -> None:
    """One line per (arm, seed): the training curve the benchmark recorded."""
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for j, (arm, seeds) in enumerate(curves.items()):
        for k, (seed, points) in enumerate(sorted(seeds.items())):
            xs, ys = zip(*points)
            style = LINESTYLES[k % len(LINESTYLES)]
            ax.plot(xs, ys, color=_color(arm, j), marker="o", ms=2.5, lw=1.2, ls=style, label=f"{arm} seed {seed}")
    ax.set_xlabel("env steps")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1e6:g}M" if v >= 1e6 else f"{v / 1e3:g}k"))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _finish(fig, path, caption)


def plot_bars(
    labels: list[str],
    values: list[float],
    title: str,
    ylabel: str,
    path: Path,
    caption: str,
    notes: list[str] | None = None,
    ref: float | None = None,
    log: bool = False,
    kinds: list[str] | None = None,
) -> None:
    """Horizontal bars, one per label, each annotated with its note (a ratio) or value; bars of one kind share a colour."""
    lines = sum(len(textwrap.wrap(label, 36)) for label in labels)
    fig, ax = plt.subplots(figsize=(9.0, 0.2 * lines + 0.15 * len(labels) + 1.3))
    y = list(range(len(labels)))[::-1]
    order = list(dict.fromkeys(kinds)) if kinds else []
    colors = [PALETTE[order.index(k) % len(PALETTE)] for k in kinds] if kinds else PALETTE[0]
    ax.barh(y, values, color=colors, alpha=0.8)
    for yi, v, note in zip(y, values, notes or [f"{v:,.3g}" for v in values]):
        ax.annotate(note, (v, yi), textcoords="offset points", xytext=(3, 0), va="center", fontsize=7)
    if ref is not None:
        ax.axvline(ref, color="black", lw=0.8, ls="--")
    if log:
        ax.set_xscale("log")
    ax.set_yticks(y)
    ax.set_yticklabels([textwrap.fill(label, 36) for label in labels], fontsize=7)
    ax.set_xlabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.margins(x=0.4 if not log else 0.0)
    if log:
        ax.set_xlim(min(values) / 2, max(values) * 150)
    _finish(fig, path, caption)


# ---- the benchmark families -------------------------------------------------------------------


def _short(env: str) -> str:
    """POPGym ids without their ``popgym-`` / ``-v0`` wrapping, for labels."""
    return env.replace("popgym-", "").removesuffix("-v0")


def _learning_runs(name: str, files: list[tuple[str, dict]], out: Path) -> bool:
    """``ppo_learning.py`` / ``dqn_learning.py``: ``summary`` per arm (or one arm) with ``finals``."""
    meta = files[0][1]
    data: dict[str, dict[str, list[float]]] = defaultdict(dict)
    for _, o in files:
        summary = o["summary"]
        arms = {"dqn": summary} if "finals" in summary else summary
        for arm, s in arms.items():
            data[o.get("env", name)][arm] = s["finals"]
    metric = meta.get("metric", "mean_reward")
    percent = metric == "success_rate"
    ylabel = "final greedy success" if percent else "final greedy return"
    title = f"{name}: {meta.get('steps', 0):,} steps, seeds {meta.get('seeds')}"
    plot_seeds(dict(data), title, ylabel, out / f"{name}.png", _caption(meta), meta.get("threshold"), percent)
    return True


def _suite_rows(name: str, files: list[tuple[str, dict]], out: Path) -> bool:
    """``popgym_suite.py``: ``rows`` of (env, model, seed, score[, success_rate, train_curve])."""
    meta = files[0][1]
    seen: set[tuple[str, str, int]] = set()
    rows = []
    for _, o in files:
        for r in o["rows"]:
            key = (r["env"], r["model"], r["seed"])
            if key not in seen:  # a rerun of the same seed in a second file is drawn once
                seen.add(key)
                rows.append(r)
    minigrid = all("MiniGrid" in r["env"] and "success_rate" in r for r in rows)
    value = "success_rate" if minigrid else "score"
    data: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        env = _short(r["env"]) if not minigrid else r["env"]
        data[env][r["model"]].append(r[value])
    steps = {o.get("steps") for _, o in files}
    title = f"{name}: {'/'.join(f'{s:,}' for s in sorted(steps))} steps"
    ylabel = "final greedy success" if minigrid else "final greedy score (POPGym, [-1, 1])"
    plot_seeds({e: dict(a) for e, a in data.items()}, title, ylabel, out / f"{name}.png", _caption(meta), percent=minigrid)
    curves: dict[str, dict[int, list[tuple[int, float]]]] = defaultdict(dict)
    for r in rows:
        if r.get("train_curve"):
            key = "positive_return" if minigrid else "mean_return"
            label = r["model"] if len(data) == 1 else f"{r['env']} {r['model']}"
            curves[label][r["seed"]] = [(p["up_to_steps"], p[key] * (100 if minigrid else 1)) for p in r["train_curve"]]
    if curves:
        ylabel = "training success (%)" if minigrid else "mean training return"
        plot_curves(dict(curves), f"{name}: training curves", ylabel, out / f"{name}_curves.png", _caption(meta))
    return True


def _ppo_vs_peer(name: str, o: dict, out: Path) -> bool:
    """``ppo_vs_sb3_contrib.py`` / ``dqn_vs_sb3.py``: finals per arm and the ``ratios`` as bars."""
    budget = f"{o['steps']:,} steps" if o.get("steps") else "each arm's own budget"
    plot_seeds({"": {arm: s["finals"] for arm, s in o["summary"].items()}}, f"{name}: final greedy return per seed, {budget}", "final greedy return", out / f"{name}.png", _caption(o), 475.0 if "stable" in name else None)
    ratios = o.get("ratios", {})
    if ratios:
        labels = list(ratios)
        plot_bars(labels, [ratios[k] for k in labels], f"{name}: speed ratios (medians)", "ratio (x)", out / f"{name}_ratios.png", _caption(o), [f"{ratios[k]:.2f}x" for k in labels], ref=1.0)
    return True


def _popgym_vs_peer(name: str, o: dict, out: Path) -> bool:
    """``popgym_vs_sb3_contrib.py``: score per seed per arm; training-time speed-ups as bars."""
    data: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in o["rows"]:
        data[_short(r["env"])][r["arm"]].append(r["score"])
    plot_seeds({e: dict(a) for e, a in data.items()}, f"{name}: {o['steps']:,} steps", "final greedy score (POPGym)", out / f"{name}.png", _caption(o))
    labels, values = [], []
    for env, arms in o["summary"].items():
        for arm, s in arms.items():
            if "speedup_vs_sb3_contrib" in s:
                labels.append(f"{_short(env)}, {arm}")
                values.append(s["speedup_vs_sb3_contrib"])
    if labels:
        plot_bars(labels, values, f"{name}: training time, sb3-contrib / ours", "speed-up (x)", out / f"{name}_ratios.png", _caption(o), [f"{v:.1f}x" for v in values], ref=1.0)
    return True


def _scaleout(name: str, o: dict, out: Path) -> bool:
    """``scaleout_throughput.py``: env steps/s per mode, as the ratio to one process."""
    base = {r["env"]: r for r in o["rows"] if r["mode"] == "local" and r["workers"] == 1}
    mode_names = {"local": "collector workers", "ray": "Ray workers", "env": "env workers"}
    labels, values, notes, kinds = [], [], [], []
    for r in o["rows"]:
        one = base[r["env"]]
        for key in ("end_to_end_steps_per_s", "collection_steps_per_s"):
            if key not in r:
                continue
            ratio = r[key] / one[key]
            kind = "one process" if r is one else f"{mode_names.get(r['mode'], r['mode'])} x{r['workers']}"
            part = "" if "collection_steps_per_s" not in r else (", end to end" if key.startswith("end") else ", collection")
            labels.append(f"{_short(r['env'])}: {kind}{part}")
            values.append(ratio)
            notes.append(f"{ratio:.2f}x ({r[key]:,} steps/s)")
            kinds.append(kind)
    plot_bars(labels, values, f"{name}: env steps/s relative to one process", "ratio to one process (x)", out / f"{name}.png", _caption(o), notes, ref=1.0, kinds=kinds)
    return True


def _env_throughput(name: str, o: dict, out: Path) -> bool:
    """``env_throughput.py``: steps/s per env count, native vs TorchRL's wrapper vs raw gymnasium."""
    labels, values, notes, kinds = [], [], [], []
    for r in o["results"]:
        for key, label in (("native", "native"), ("torchrl_gymenv", "TorchRL GymWrapper"), ("raw_gymnasium_vector", "raw gymnasium vector")):
            labels.append(f"{r['num_envs']} envs: {label}")
            values.append(r[key])
            note = f"{r[key]:,.0f}"
            if key == "native":
                note += f" ({r['native_vs_torchrl_gymenv']:.1f}x TorchRL wrapper, {r['native_vs_gymnasium']:.2f}x raw)"
            notes.append(note)
            kinds.append(label)
    plot_bars(labels, values, f"{name}: env steps/s (random actions, auto-reset)", "env steps/s (log)", out / f"{name}.png", _caption(o), notes, log=True, kinds=kinds)
    return True


def _profile_update(name: str, o: dict, out: Path) -> bool:
    labels = list(o["phases_us"]) + ["bare-PyTorch floor"]
    values = list(o["phases_us"].values()) + [o["floor_us"]]
    notes = [f"{v:,.0f} us" for v in values]
    notes[-2] += f" ({o['ratio']:.2f}x floor)"
    plot_bars(labels, values, f"{name}: one PPO minibatch update ({o['minibatch_steps']} steps), median", "microseconds", out / f"{name}.png", _caption(o), notes, ref=o["floor_us"])
    return True


def _profile_collect(name: str, o: dict, out: Path) -> bool:
    per = o["per_step_us"]
    labels = list(per)
    notes = [f"{v:,.0f} us" for v in per.values()]
    notes[0] += f" ({o['ratio']:.2f}x floor)"
    floor = next((v for k, v in per.items() if k.startswith("floor")), None)
    plot_bars(labels, list(per.values()), f"{name}: one batched collection step, {o['envs']} envs, median", "microseconds", out / f"{name}.png", _caption(o), notes, ref=floor)
    return True


def _compile_options(name: str, o: dict, out: Path) -> bool:
    labels = list(o["rows"])
    values = [r["speedup"] for r in o["rows"].values()]
    notes = [f"{r['speedup']:.2f}x ({r['eager_us']:,.0f} -> {r['compiled_us']:,.0f} us)" for r in o["rows"].values()]
    plot_bars(labels, values, f"{name}: torch.compile speed / eager speed", "compiled / eager speed (x)", out / f"{name}.png", _caption(o), notes, ref=1.0)
    return True


def _dqn_update_floor(name: str, o: dict, out: Path) -> bool:
    parts = {
        "bare PyTorch update (per-tensor Adam)": o["bare_pytorch_update_us"],
        "ours, update (autograd)": o["ours_update_autograd_us"],
        "ours, update": o["ours_update_us"],
        "ours, env step, 1 env": o["ours_env_step_us_1_env"],
        "ours, env step, 8 envs (per env)": o["ours_env_step_us_8_envs"],
    }
    parts.update({f"1-env part: {k}": v for k, v in o.get("ours_1_env_parts_us (each alone)", {}).items()})
    plot_bars(list(parts), list(parts.values()), f"{name}: DQN costs, microseconds", "microseconds", out / f"{name}.png", _caption(o))
    return True


def _tuning(name: str, o: dict, out: Path) -> bool:
    """``tune_ppo_cartpole.py``: time to a greedy 475 per seed, one column per candidate."""
    data = {r["candidate"]: {"lstm": [t for t in r["time_to_475_s"] if t is not None]} for r in o["rows"]}
    plot_seeds(data, f"{name}: time to a greedy mean >= 475", "seconds", out / f"{name}.png", _caption(o))
    return True


def _main_job_seeds(name: str, o: dict, out: Path) -> bool:
    """``main_job_seeds.py``: the final greedy return per seed, and every seed's greedy evaluations over training."""
    algo, runs, summary = o["algo"], o["runs"], o["summary"]
    steps = max(r["evals"][-1][0] for r in runs if r.get("evals"))
    title = f"{name}: {steps:,} steps, {summary['seeds_ending_solved']} of {len(runs)} seeds end >= {o['threshold']:g}"
    plot_seeds({"": {algo: [r["final"] for r in runs]}}, title, "final greedy return", out / f"{name}.png", _caption(o), o["threshold"])
    curves = {algo: {r["seed"]: [tuple(e) for e in r["evals"]] for r in runs if r.get("evals")}}
    plot_curves(curves, f"{name}: greedy evaluations per seed", "greedy return", out / f"{name}_curves.png", _caption(o))
    return True


def _memory_models(name: str, o: dict, out: Path) -> bool:
    """``memory_models.py``: each model's speed-up over the padded LSTM per window length and width (1 = as fast)."""
    rows = [r for r in o["rows"] if r["model"] != "lstm"]
    labels = [f"{r['model']} width {r['width']}, " + (f"T={r['T']} update" if "update_us" in r else "one collection step") for r in rows]
    values = [r["lstm_over_model"] for r in rows]
    plot_bars(labels, values, f"{name}: trunk update (forward + backward), LSTM time / model time", "speed-up over the LSTM",
              out / f"{name}.png", _caption(o), notes=[f"{v:.2f}x" for v in values], ref=1.0, kinds=[r["model"] for r in rows])
    return True


def _arms_side_by_side(name: str, o: dict, out: Path) -> bool:
    """``recurrent_dqn.py``: the final greedy return of every seed per arm, at one env and budget."""
    data = {_short(o["env"]): {arm: entry["summary"]["finals"] for arm, entry in o["arms"].items()}}
    solved = ", ".join(f"{arm} {e['summary']['seeds_ending_solved']}/{len(e['runs'])}" for arm, e in o["arms"].items())
    title = f"{name}: {o['total_steps']:,} steps; seeds ending >= {o['threshold']:g}: {solved}"
    plot_seeds(data, title, "final greedy return", out / f"{name}.png", _caption(o), o["threshold"])
    return True


def _models_table(name: str, o: dict, out: Path) -> bool:
    """``memory_models_learning.py``: the final greedy score of every seed per env and model, whole
    rows only (as the ``--table`` the docs quote)."""
    data: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    order = [m for m in ARM_COLORS if m != "dqn"]  # the memories first, the MLP baseline last
    per_env = Counter(r["env"] for r in o["runs"])
    runs = [r for r in o["runs"] if per_env[r["env"]] == max(per_env.values())]
    for r in sorted(runs, key=lambda r: (order.index(r["model"]) if r["model"] in order else len(order), r["seed"])):
        data[_short(r["env"])][r["model"]].append(r["final"])
    title = f"{name}: {o['total_steps']:,} steps, --preset {o['preset']}, final greedy per seed"
    plot_seeds({e: dict(m) for e, m in data.items()}, title, "final greedy return", out / f"{name}.png", _caption(o))
    return True


def plot_group(name: str, files: list[tuple[str, dict]], out: Path) -> bool:
    """Draws one benchmark; False (with a printed note) when its shape is not one known here."""
    o = files[0][1]
    try:
        if "table" in o and "runs" in o and "preset" in o:
            return _models_table(name, o, out)
        if isinstance(o.get("arms"), dict) and o["arms"] and "env" in o:
            return _arms_side_by_side(name, o, out)
        if "rows" in o and isinstance(o["rows"], list) and o["rows"] and "lstm_over_model" in o["rows"][0]:
            return _memory_models(name, o, out)
        if "rows" in o and isinstance(o["rows"], list) and o["rows"] and "model" in o["rows"][0]:
            return _suite_rows(name, files, out)
        if "algo" in o and "runs" in o and len(files) == 1:
            return _main_job_seeds(name, o, out)
        if "summary" in o and "runs" in o and "ratios" not in o:
            return _learning_runs(name, files, out)
        if len(files) > 1:
            print(f"skipped {name}: {len(files)} files of a kind drawn one at a time")
            return False
        if "ratios" in o and "summary" in o:
            return _ppo_vs_peer(name, o, out)
        if "rows" in o and isinstance(o["rows"], list) and o["rows"] and "arm" in o["rows"][0]:
            return _popgym_vs_peer(name, o, out)
        if "rows" in o and isinstance(o["rows"], list) and o["rows"] and "mode" in o["rows"][0]:
            return _scaleout(name, o, out)
        if "rows" in o and isinstance(o["rows"], list) and o["rows"] and "candidate" in o["rows"][0]:
            return _tuning(name, o, out)
        if "results" in o and o["results"] and "native" in o["results"][0]:
            return _env_throughput(name, o, out)
        if "phases_us" in o:
            return _profile_update(name, o, out)
        if "per_step_us" in o:
            return _profile_collect(name, o, out)
        if isinstance(o.get("rows"), dict):
            return _compile_options(name, o, out)
        if "bare_pytorch_update_us" in o:
            return _dqn_update_floor(name, o, out)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        plt.close("all")
        print(f"skipped {name}: unexpected structure ({type(e).__name__}: {e})")
        return False
    print(f"skipped {name}: no plotter for its keys {sorted(o)}")
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results", help="folder of result JSONs")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder for the PNGs")
    parser.add_argument("--only", nargs="*", default=None, help="draw only these benchmarks (names as in the PNG file names)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    groups: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for path in sorted(args.results.glob("*.json")):
        try:
            result = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            print(f"skipped {path.name}: not readable JSON ({e})")
            continue
        if not isinstance(result, dict):
            print(f"skipped {path.name}: not a JSON object")
            continue
        groups[group_name(path.stem)].append((path.stem, result))
    drawn = 0
    for name, files in groups.items():
        if args.only is None or name in args.only:
            drawn += plot_group(name, files, args.out)
    print(f"{drawn} benchmarks drawn into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
