"""Recurrent PPO learning benchmark: final greedy eval, median over seeds, LSTM and MLP arms side by side.

    python benchmarks/ppo_learning.py --env CartPoleNoVel --steps 100000 --seeds 0 1 2
    python benchmarks/ppo_learning.py --env FlickeringCartPole-0.5 --steps 500000 --seeds 0 1 2
    python benchmarks/ppo_learning.py --env TMaze-20 --steps 200000 --seeds 0 1 2 --arms lstm

Each run is the real pipeline (pipelines/recurrent_ppo.py) with a final greedy
evaluation of 32 episodes; extra ``--key value`` pairs after ``--`` go to the pipeline.
Reports the median (never a peak) and the time to the first greedy eval >= --threshold.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from pathlib import Path

from bench_common import median, save


def time_to_threshold(run_dir: str, threshold: float, key: str) -> float | None:
    evals: dict[int, list] = {}
    for line in (Path(run_dir) / "eval_episodes.jsonl").read_text().splitlines():
        r = json.loads(line)
        evals.setdefault(r["total_steps"], []).append(r)
    for step in sorted(evals):
        rows = evals[step]
        value = sum(r["extras"]["success"] if key == "success_rate" else r["total_reward"] for r in rows) / len(rows)
        if value >= threshold:
            return rows[0]["train_s"]
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="CartPoleNoVel")
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--arms", default="lstm,mlp")
    ap.add_argument("--threshold", type=float, default=475.0)
    ap.add_argument("--eval-every", type=int, default=10_240, help="env steps between greedy evaluations (0: final only)")
    ap.add_argument("--name", default=None)
    ap.add_argument("extra", nargs="*", help="extra pipeline arguments (after --)")
    args = ap.parse_args()
    from torchrl_memory.pipelines import recurrent_ppo

    metric = "success_rate" if args.env.startswith("TMaze") else "mean_reward"
    rows = []
    with tempfile.TemporaryDirectory() as root:
        for arm in args.arms.split(","):
            for seed in args.seeds:
                argv = ["--env", args.env, "--total-steps", str(args.steps), "--seed", str(seed), "--model", arm,
                        "--eval-every", str(args.eval_every), "--eval-episodes", "32", "--plot", "false", "--run-root", root, *args.extra]
                with contextlib.redirect_stderr(io.StringIO()):
                    out = recurrent_ppo.main(argv)
                rows.append({"arm": arm, "seed": seed, "final": out["eval"][metric], "wall_s": out["wall_s"], "steps_per_s": out["steps_per_s"],
                             "time_to_threshold_s": time_to_threshold(out["run_dir"], args.threshold, metric), "timing": out["timing"]})
                print(json.dumps(rows[-1]), flush=True)
    summary = {}
    for arm in args.arms.split(","):
        r = [x for x in rows if x["arm"] == arm]
        reached = [x["time_to_threshold_s"] for x in r if x["time_to_threshold_s"] is not None]
        summary[arm] = {"median_final": median([x["final"] for x in r]), "finals": [x["final"] for x in r],
                        "median_wall_s": median([x["wall_s"] for x in r]), "median_steps_per_s": median([x["steps_per_s"] for x in r]),
                        "seeds_reaching_threshold": len(reached), "median_time_to_threshold_s": median(reached) if len(reached) * 2 > len(r) else None}
    path = save(args.name or f"ppo_{args.env}_{args.steps}", {"env": args.env, "steps": args.steps, "seeds": args.seeds, "metric": metric,
                                                                "threshold": args.threshold, "extra": args.extra, "summary": summary, "runs": rows})
    print(json.dumps(summary, indent=2))
    print(f"saved {path}")


if __name__ == "__main__":
    main()
