"""Scale-out throughput: both pipelines with 1 and 2 workers, three ways.

    python benchmarks/scaleout_throughput.py                    # both envs, all modes, 1 and 2 workers
    python benchmarks/scaleout_throughput.py --modes local env --steps 40960
    python benchmarks/scaleout_throughput.py --pipelines dqn    # DQN: local (MultiAsyncCollector) and env

Modes: ``local`` = ``--collector-workers N`` (TorchRL MultiSyncCollector: env and policy
copy per process), ``ray`` = the same with ``--backend ray`` (TorchRL RayCollector),
``env`` = ``--env-workers N`` (TorchRL ParallelEnv: only the env steps in processes, the
policy stays in the main one). With 1 worker all three are the one-process pipeline
(``local`` and ``env`` identical; ``ray`` runs it as one Ray actor). For DQN ``local`` is
TorchRL's MultiAsyncCollector (``worker_steps`` steps per worker batch, the update runs while
the workers step); DQN has no Ray mode.

Each arm is the real pipeline in its own Python
process (Ray starts and stops with it), with no evaluation until the end. Reported per
arm: end-to-end env steps/s (collection + GAE + updates; Ray start-up and the final
evaluation excluded, as the pipeline reports it) and, for PPO, collection-only steps/s (env
steps over the time spent waiting for batches). Run it alone: every arm uses both cores.
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
from torchrl_memory import PPOConfig

ENVS = ["gym:CartPoleNoVel", "popgym-RepeatPreviousEasy-v0"]
ARM = """
import json, sys, contextlib, io
sys.path.insert(0, {root!r})
from torchrl_memory.pipelines import {pipeline}
with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
    out = {pipeline}.main({argv!r})
print(json.dumps({{"steps_per_s": out["steps_per_s"], "timing": out.get("timing")}}))
"""


MODE_FLAGS = {
    "local": lambda n: ["--collector-workers", str(n), "--backend", "local"],
    "ray": lambda n: ["--collector-workers", str(n), "--backend", "ray"],
    "env": lambda n: ["--env-workers", str(n)],
}


PIPELINES = {"ppo": "recurrent_ppo", "dqn": "dqn"}
DQN_MODES = ("local", "env")


def run_arm(pipeline: str, env: str, mode: str, workers: int, steps: int, num_envs: int, root: str) -> dict:
    argv = ["--env", env, "--num-envs", str(num_envs), *MODE_FLAGS[mode](workers),
            "--total-steps", str(steps), "--eval-every", "0", "--eval-episodes", "2", "--plot", "false", "--run-root", root]
    if pipeline == "dqn":  # the plain Q-network the published figures were measured with
        argv = [a for a in argv if a not in ("--backend", "local")] + ["--layer-norm", "false", "--n-step", "1"]
    code = ARM.format(root=str(Path(__file__).resolve().parents[1]), argv=argv, pipeline=PIPELINES[pipeline])
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800)
    row = {"pipeline": pipeline, "env": env, "mode": mode, "workers": workers, "num_envs": num_envs}
    if proc.returncode != 0:
        return {**row, "error": proc.stderr.strip().splitlines()[-1:]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if pipeline == "dqn":
        return {**row, "steps": steps, "end_to_end_steps_per_s": round(out["steps_per_s"])}
    batch = num_envs * PPOConfig.rollout_len  # the pipeline's default window; whole batches only
    done = -(-steps // batch) * batch
    return {**row, "steps": done, "end_to_end_steps_per_s": round(out["steps_per_s"]),
            "collection_steps_per_s": round(done / out["timing"]["collection"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pipelines", nargs="+", default=["ppo"], choices=list(PIPELINES))
    ap.add_argument("--envs", nargs="+", default=ENVS)
    ap.add_argument("--modes", nargs="+", default=list(MODE_FLAGS), choices=list(MODE_FLAGS))
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--steps", type=int, default=40_960)
    ap.add_argument("--num-envs", type=int, default=16)
    args = ap.parse_args()
    rows = []
    name = "scaleout_throughput" + ("" if args.pipelines == ["ppo"] else "_" + "_".join(args.pipelines))
    with tempfile.TemporaryDirectory() as root:
        for pipeline in args.pipelines:
            for env in args.envs:
                for mode in args.modes:
                    if pipeline == "dqn" and mode not in DQN_MODES:
                        continue
                    for workers in args.workers:
                        if mode == "env" and workers == 1 and "local" in args.modes:
                            continue  # the same one-process run as local x 1
                        rows.append(run_arm(pipeline, env, mode, workers, args.steps, args.num_envs, root))
                        print(json.dumps(rows[-1]), flush=True)
                        save(name, {"rows": rows, "note": f"PPO rollout_len {PPOConfig.rollout_len} (pipeline default); steps/s of env steps, all envs together; env x 1 is local x 1"})


if __name__ == "__main__":
    main()
