"""Recurrent DQN beside the MLP DQN and recurrent PPO, at the same env-step budget, on one env.

    python benchmarks/recurrent_dqn.py --env CartPoleNoVel --total-steps 300000 --seeds 0-4
    python benchmarks/recurrent_dqn.py --env native:popgym-RepeatPreviousEasy-v0 --total-steps 300000 --seeds 0-4

Arms, each the pipeline's own command line plus ``--env`` and ``--total-steps``:

* ``rdqn``: ``pipelines/dqn.py --preset recurrent-dqn`` (a GRU Q-network, R2D2-style);
* ``mlp_dqn``: ``pipelines/dqn.py`` with its defaults (the memoryless Q-network a user gets),
  plus ``--mlp-args``;
* ``ppo``: ``pipelines/recurrent_ppo.py`` with its defaults (``--preset popgym`` on a POPGym env).

Every (arm, seed) is its own process, two at a time, one thread each (``OMP_NUM_THREADS=1``,
``--num-threads 1``). Per run: the final greedy mean (what a user keeps), best evaluation,
stable solve (``--threshold``; the first evaluation from which every later one holds), wall
time and env steps/s; per arm the median final and how many seeds end >= the threshold.
The file ``benchmarks/results/recurrent_dqn_<env>_<steps>.json`` is rewritten after every
run: an interrupted campaign resumes where it stopped (runs on file are skipped).
"""
from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from bench_common import RESULTS, locked_update, machine, median, solve_summary
from main_job_seeds import parse_seeds, run_seed

ARMS = {
    "rdqn": ("dqn", ["--preset", "recurrent-dqn"]),
    # the MLP DQN's defaults: the memoryless DQN a user gets, learning from about as many transitions
    # per env step (batch 128 every step) as the preset's 32 windows x 15 steps every 4
    "mlp_dqn": ("dqn", []),
    "ppo": ("ppo", []),
}


def arm_args(arm: str, env: str, total_steps: int, eval_every: int) -> tuple[str, list[str]]:
    algo, extra = ARMS[arm]
    if arm == "ppo" and "popgym-" in env:
        extra = ["--preset", "popgym"]
    return algo, [*extra, "--env", env, "--total-steps", str(total_steps), "--eval-every", str(eval_every)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="CartPoleNoVel")
    ap.add_argument("--total-steps", type=int, default=300_000)
    ap.add_argument("--eval-every", type=int, default=None, help="env steps between evaluations (default total_steps / 20)")
    ap.add_argument("--seeds", nargs="+", default=["0-4"], help="seeds, e.g. 0-4 or 0 3 5")
    ap.add_argument("--arms", nargs="+", choices=sorted(ARMS), default=sorted(ARMS))
    ap.add_argument("--threshold", type=float, default=None, help="solved at >= this (default 475 on CartPole tasks, else 0.9)")
    ap.add_argument("--jobs", type=int, default=2, help="processes at a time (one per core)")
    ap.add_argument("--name", default=None, help="result file name (default recurrent_dqn_<env>_<steps>)")
    ap.add_argument("--mlp-args", default="", help="arguments added to the mlp_dqn arm, in one string, e.g. '--n-step 1 --layer-norm false'")
    ap.add_argument("extra", nargs="*", help="arguments added to the rdqn arm (after --), e.g. -- --model mingru")
    args = ap.parse_args()
    threshold = args.threshold if args.threshold is not None else (475.0 if "CartPole" in args.env and "popgym" not in args.env else 0.9)
    eval_every = args.eval_every or args.total_steps // 20
    name = args.name or f"recurrent_dqn_{re.sub(r'[^A-Za-z0-9.-]+', '_', args.env)}_{args.total_steps}"
    path = RESULTS / f"{name}.json"
    mlp_extra = shlex.split(args.mlp_args)
    payload = json.loads(path.read_text()) if path.exists() else {"env": args.env, "total_steps": args.total_steps, "threshold": threshold, "rdqn_extra": args.extra, "mlp_extra": mlp_extra, "arms": {}}
    campaign = (payload["env"], payload["total_steps"], payload.get("rdqn_extra", []), payload.get("mlp_extra", []))
    if campaign != (args.env, args.total_steps, args.extra, mlp_extra):
        raise SystemExit(f"{path} holds another campaign {campaign}: pass another --name")
    seeds = parse_seeds(args.seeds)
    todo = [(a, s) for a in args.arms for s in seeds if s not in {r["seed"] for r in payload["arms"].get(a, {}).get("runs", [])}]
    print(f"{path.name}: running {todo}", flush=True)
    mine: dict = {}  # this invocation's runs by arm
    command = " ".join(["python", "benchmarks/recurrent_dqn.py", *sys.argv[1:]])

    def write() -> None:
        # two campaigns on one file (e.g. the arms split over two invocations, one per core) merge
        # here: the file is re-read under a lock and only this invocation's runs are added to it
        def update(disk: dict) -> None:
            for arm, entry in mine.items():
                target = disk["arms"].setdefault(arm, {"args": entry["args"], "runs": []})
                seen = {r["seed"] for r in target["runs"]}
                target["runs"] += [r for r in entry["runs"] if r["seed"] not in seen]
            for entry in disk["arms"].values():
                runs = sorted(entry["runs"], key=lambda r: r["seed"])
                summary = solve_summary([r["final"] for r in runs], [r["stable_solve"] for r in runs], threshold, args.total_steps)
                summary.update(median_wall_s=median([r["wall_s"] for r in runs]), median_steps_per_s=median([r["steps_per_s"] for r in runs]))
                entry.update(runs=runs, summary=summary)
            disk.update(date=time.strftime("%Y-%m-%d"), machine=machine())
            disk.setdefault("commands", [])
            if command not in disk["commands"]:
                disk["commands"].append(command)
        payload.update(locked_update(path, payload, update))

    with tempfile.TemporaryDirectory() as root, ThreadPoolExecutor(args.jobs) as pool:
        futures = {}
        for arm, seed in todo:
            algo, extra = arm_args(arm, args.env, args.total_steps, eval_every)
            extra = [*extra, *{"rdqn": args.extra, "mlp_dqn": mlp_extra}.get(arm, [])]
            futures[pool.submit(run_seed, algo, seed, extra, threshold, f"{root}/{arm}")] = (arm, extra)
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                arm, extra = futures[fut]
                r = fut.result()
                mine.setdefault(arm, {"args": extra, "runs": []})["runs"].append(r)
                write()
                print(f"{arm} seed {r['seed']}: final {r['final']:.3f}  best {r['best']:.3f} at {r['best_step']}  "
                      f"{r['steps_per_s']:.0f} steps/s  wall {r['wall_s']:.0f}s", flush=True)
    write()
    for arm, entry in payload["arms"].items():
        print(arm, json.dumps(entry["summary"]), flush=True)
    print(f"saved {path}")


if __name__ == "__main__":
    main()
