"""Scale-out throughput: the recurrent PPO pipeline with 1 and 2 collector workers, multiprocess and Ray.

    python benchmarks/scaleout_throughput.py                    # both envs, local and ray, 1 and 2 workers
    python benchmarks/scaleout_throughput.py --backends local --steps 40960

Each arm is the real pipeline (``--collector-workers N --backend B``) in its own Python
process (Ray starts and stops with it), with no evaluation until the end. Reported per
arm: end-to-end env steps/s (collection + GAE + updates; Ray start-up and the final
evaluation excluded, as the pipeline reports it) and collection-only steps/s (env steps
over the time spent waiting for batches). Run it alone: every arm uses both cores.
JSON in benchmarks/results/scaleout_throughput.json.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_common import save

ENVS = ["gym:CartPoleNoVel", "popgym-RepeatPreviousEasy-v0"]
ARM = """
import json, sys, contextlib, io
sys.path.insert(0, {root!r})
from pipelines import recurrent_ppo
with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
    out = recurrent_ppo.main({argv!r})
print(json.dumps({{"steps_per_s": out["steps_per_s"], "timing": out["timing"]}}))
"""


def run_arm(env: str, backend: str, workers: int, steps: int, num_envs: int, root: str) -> dict:
    argv = ["--env", env, "--num-envs", str(num_envs), "--collector-workers", str(workers), "--backend", backend,
            "--total-steps", str(steps), "--eval-every", "0", "--eval-episodes", "2", "--plot", "false", "--run-root", root]
    code = ARM.format(root=str(Path(__file__).resolve().parents[1]), argv=argv)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        return {"env": env, "backend": backend, "workers": workers, "error": proc.stderr.strip().splitlines()[-1:]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    done = (steps // (num_envs * 16) + (steps % (num_envs * 16) > 0)) * num_envs * 16
    return {"env": env, "backend": backend, "workers": workers, "num_envs": num_envs, "steps": done,
            "end_to_end_steps_per_s": round(out["steps_per_s"]), "collection_steps_per_s": round(done / out["timing"]["collection"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", nargs="+", default=ENVS)
    ap.add_argument("--backends", nargs="+", default=["local", "ray"])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--steps", type=int, default=40_960)
    ap.add_argument("--num-envs", type=int, default=16)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as root:
        for env in args.envs:
            for backend in args.backends:
                for workers in args.workers:
                    rows.append(run_arm(env, backend, workers, args.steps, args.num_envs, root))
                    print(json.dumps(rows[-1]), flush=True)
                    save("scaleout_throughput", {"rows": rows, "note": "rollout_len 16 (pipeline default); steps/s of env steps, all envs together"})


if __name__ == "__main__":
    main()
