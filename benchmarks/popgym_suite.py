"""POPGym memory suite through the recurrent PPO pipeline: LSTM, GRU and MLP arms side by side.

    python benchmarks/popgym_suite.py --steps 100000 --seeds 0 1 2
    python benchmarks/popgym_suite.py --envs RepeatFirstEasy --models lstm --steps 50000 --seeds 0
    python benchmarks/popgym_suite.py --envs MiniGrid-MemoryS7-v0 --models lstm mlp --name minigrid_memory_s7
    python benchmarks/popgym_suite.py --preset popgym --envs CountRecallEasy --steps 1000000   # a named recipe

Without ``--preset`` every run gets ``RECIPE`` below; with it, the pipeline applies that preset
(components/presets/, the single source of the named recipes) instead.

The score is POPGym's own: its envs scale rewards so that an episode's return lies in
[-1, 1] (e.g. RepeatFirst pays +-1/(cards - 1) per step), so the mean greedy episodic
return is the normalised score. Each run is the real pipeline with a final greedy
evaluation of 32 episodes; extra ``--key value`` pairs after ``--`` go to the pipeline.
Medians over seeds; JSON (every run) in benchmarks/results/popgym_suite_<steps>.json.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

from bench_common import median, save

ENVS = ["RepeatPreviousEasy", "RepeatFirstEasy", "CountRecallEasy", "AutoencodeEasy", "StatelessCartPoleEasy",
        "NoisyStatelessCartPoleEasy", "MineSweeperEasy", "HigherLowerEasy"]
#: rollout shape for POPGym: 16 envs x 64-step windows (most Easy episodes fit one window, so
#: backprop-through-time reaches a cue at the episode start), 4 trajectories per minibatch
RECIPE = ["--num-envs", "16", "--rollout-len", "64", "--envs-per-minibatch", "4", "--hidden-size", "128", "--learning-rate", "0.0005"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", nargs="+", default=ENVS)
    ap.add_argument("--models", nargs="+", default=["lstm", "gru", "mlp"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--name", default=None)
    ap.add_argument("--preset", default=None, help="a pipeline preset (python pipelines/recurrent_ppo.py --preset list) in place of RECIPE")
    ap.add_argument("extra", nargs="*", help="extra pipeline arguments (after --)")
    args = ap.parse_args()
    from torchrl_memory.pipelines import recurrent_ppo

    rows = []
    recipe = ["--preset", args.preset] if args.preset else RECIPE
    name = args.name or f"popgym_suite_{args.steps}" + (f"_{args.preset}" if args.preset else "")
    with tempfile.TemporaryDirectory() as root:
        for env in args.envs:
            for model in args.models:
                for seed in args.seeds:
                    env_id = env if "-" in env else f"popgym-{env}-v0"  # full ids (MiniGrid-MemoryS7-v0) as they are
                    argv = ["--env", env_id, "--model", model, "--seed", str(seed), "--total-steps", str(args.steps),
                            "--eval-every", "0", "--eval-episodes", "32", "--plot", "false", "--run-root", root, *recipe, *args.extra]
                    t0 = time.time()
                    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
                        out = recurrent_ppo.main(argv)
                    final = [json.loads(x) for x in (Path(out["run_dir"]) / "eval_episodes.jsonl").read_text().splitlines()]
                    success = sum(e["extras"]["success"] for e in final) / len(final)  # final reward > 0 (MiniGrid: reached the goal)
                    train = [json.loads(x) for x in (Path(out["run_dir"]) / "train_episodes.jsonl").read_text().splitlines()]
                    rows.append({"env": env, "model": model, "seed": seed, "score": out["eval"]["mean_reward"], "success_rate": success,
                                 "wall_s": time.time() - t0, "steps_per_s": out["steps_per_s"],
                                 "train_curve": _train_curve(train, args.steps)})
                    print(json.dumps(rows[-1]), flush=True)
                    # written after every run, so a cut-off benchmark keeps what it measured
                    save(name, {"steps": args.steps, "recipe": recipe + args.extra, "rows": rows, "summary": _summary(rows)})
    for env, by_model in _summary(rows).items():
        print(env, {m: round(v["median"], 3) for m, v in by_model.items()})


def _train_curve(episodes: list[dict], steps: int, bins: int = 10) -> list[dict]:
    """Mean training return and fraction of positive returns (MiniGrid: goal reached) per tenth
    of the budget: shows whether a run that ended below target was still improving (the run
    directory itself is temporary)."""
    out = []
    for b in range(bins):
        lo, hi = steps * b / bins, steps * (b + 1) / bins
        rets = [e["total_reward"] for e in episodes if lo < e["total_steps"] <= hi]
        if rets:
            out.append({"up_to_steps": int(hi), "episodes": len(rets), "mean_return": sum(rets) / len(rets),
                        "positive_return": sum(r > 0 for r in rets) / len(rets)})
    return out


def _summary(rows: list[dict]) -> dict:
    out: dict = {}
    for r in rows:
        out.setdefault(r["env"], {}).setdefault(r["model"], []).append(r["score"])
    return {env: {m: {"median": median(v), "scores": v} for m, v in ms.items()} for env, ms in out.items()}


if __name__ == "__main__":
    main()
