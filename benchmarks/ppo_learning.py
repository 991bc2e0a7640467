"""Recurrent PPO learning benchmark: final greedy eval, median over seeds, LSTM and MLP arms side by side.

    python benchmarks/ppo_learning.py --env CartPoleNoVel --steps 100000 --seeds 0 1 2
    python benchmarks/ppo_learning.py --env FlickeringCartPole-0.5 --steps 500000 --seeds 0 1 2
    python benchmarks/ppo_learning.py --env TMaze-20 --steps 200000 --seeds 0 1 2 --arms lstm

Each run is the real pipeline (pipelines/recurrent_ppo.py) with a final greedy
evaluation of 32 episodes; extra ``--key value`` pairs after ``--`` go to the pipeline.
Reports the median final (never a peak), how many seeds end >= --threshold, and the time to a
stable solve (bench_common.stable_solve: the first evaluation from which every later one holds).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile

from bench_common import eval_history, median, save, solve_summary, stable_solve


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
                             "train_s": out["wall_s"] - out["timing"]["evaluation"],
                             "stable_solve": stable_solve(eval_history(out["run_dir"], metric), args.threshold), "timing": out["timing"]})
                print(json.dumps(rows[-1]), flush=True)
    summary = {}
    for arm in args.arms.split(","):
        r = [x for x in rows if x["arm"] == arm]
        summary[arm] = {**solve_summary([x["final"] for x in r], [x["stable_solve"] for x in r], args.threshold, args.steps, [x["train_s"] for x in r]),
                        "median_wall_s": median([x["wall_s"] for x in r]), "median_steps_per_s": median([x["steps_per_s"] for x in r])}
    path = save(args.name or f"ppo_{args.env}_{args.steps}", {"env": args.env, "steps": args.steps, "seeds": args.seeds, "metric": metric,
                                                                "threshold": args.threshold, "extra": args.extra, "summary": summary, "runs": rows})
    print(json.dumps(summary, indent=2))
    print(f"saved {path}")


if __name__ == "__main__":
    main()
