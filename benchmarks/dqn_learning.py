"""DQN learning benchmark: final greedy eval (10 episodes), median over seeds.

    python benchmarks/dqn_learning.py --env CartPole-v1 --steps 50000 --seeds 0 1 2 3 4
    python benchmarks/dqn_learning.py --env Acrobot-v1 --steps 100000 --seeds 0 1 2 3 4

Each run is the real pipeline (pipelines/dqn.py); extra ``--key value`` pairs after ``--``
go to the pipeline. Reports the median of the final evaluations, never a peak.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile

from bench_common import median, save


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="CartPole-v1")
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--name", default=None)
    ap.add_argument("extra", nargs="*", help="extra pipeline arguments (after --)")
    args = ap.parse_args()
    from torchrl_memory.pipelines import dqn

    rows = []
    with tempfile.TemporaryDirectory() as root:
        for seed in args.seeds:
            argv = ["--env", args.env, "--total-steps", str(args.steps), "--seed", str(seed), "--eval-every", "0",
                    "--plot", "false", "--run-root", root, *args.extra]
            with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
                out = dqn.main(argv)
            rows.append({"seed": seed, "final": out["eval"]["mean_reward"], "wall_s": out["wall_s"], "steps_per_s": out["steps_per_s"]})
            print(json.dumps(rows[-1]), flush=True)
    summary = {"median_final": median([r["final"] for r in rows]), "finals": [r["final"] for r in rows],
               "median_wall_s": median([r["wall_s"] for r in rows]), "median_steps_per_s": median([r["steps_per_s"] for r in rows])}
    path = save(args.name or f"dqn_{args.env}_{args.steps}", {"env": args.env, "steps": args.steps, "seeds": args.seeds, "extra": args.extra, "summary": summary, "runs": rows})
    print(json.dumps(summary, indent=2))
    print(f"saved {path}")


if __name__ == "__main__":
    main()
