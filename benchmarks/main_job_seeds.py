"""The main jobs as a user runs them, on ten seeds: does each one END solved?

    python benchmarks/main_job_seeds.py --algo ppo            # pipelines/recurrent_ppo.py --seed 0..9
    python benchmarks/main_job_seeds.py --algo dqn            # pipelines/dqn.py --seed 0..9
    python benchmarks/main_job_seeds.py --algo ppo --seeds 10-19 --name tune_x -- --lr-floor 0.0

Each seed is the pipeline's command line with its defaults (plus any arguments after
``--``), run as its own process, two at a time, each on one thread
(``OMP_NUM_THREADS=1``, ``--num-threads 1``). Per seed it records the final greedy mean
(what a user keeps), the best evaluation and its step, the stable-solve step and seconds
(bench_common.stable_solve: the first evaluation from which every later one is >= the
threshold) and the wall time, into benchmarks/results/<name>.json, rewritten after every
seed: an interrupted campaign resumes where it stopped (seeds already in the file are
skipped; a file written with other pipeline arguments is refused, never mixed).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from bench_common import RESULTS, eval_history, machine, median, solve_summary, stable_solve

ROOT = Path(__file__).resolve().parents[1]
PIPELINES = {"ppo": "pipelines/recurrent_ppo.py", "dqn": "pipelines/dqn.py"}
FINAL_LINE = re.compile(r"greedy eval: mean (\S+) std (\S+) \| (\S+) env steps/s \| wall (\S+)s \| (.+)$")


def default_budget(algo: str) -> int:
    """The pipeline's default ``total_steps``."""
    from torchrl_memory import DQNConfig, PPOConfig

    return {"ppo": PPOConfig, "dqn": DQNConfig}[algo]().total_steps


def parse_seeds(text: list[str]) -> list[int]:
    """``["0-9"]`` or ``["0", "3", "5"]`` -> the list of seeds."""
    seeds = []
    for part in text:
        lo, _, hi = part.partition("-")
        seeds += list(range(int(lo), int(hi) + 1)) if hi else [int(lo)]
    return seeds


def run_seed(algo: str, seed: int, extra: list[str], threshold: float, root: str, script: str | None = None,
             summarise_run=None) -> dict:
    """One pipeline process on one seed; its figures from the run's own evaluation log, plus
    ``summarise_run(run_dir)`` (a dict) where given: the run directory is temporary."""
    cmd = [sys.executable, script or PIPELINES[algo], "--seed", str(seed), "--num-threads", "1", "--plot", "false",
           "--run-root", root, "--run-name", f"{algo}_seed{seed}", *extra]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    process_s = time.perf_counter() - t0
    match = next((FINAL_LINE.search(line) for line in reversed(proc.stdout.splitlines()) if FINAL_LINE.search(line)), None)
    if proc.returncode != 0 or match is None:
        raise RuntimeError(f"seed {seed}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    history = eval_history(match.group(5).strip())
    best = max(history, key=lambda e: e["value"])  # first of the highest
    more = summarise_run(match.group(5).strip()) if summarise_run else {}
    return {
        "seed": seed,
        "final": history[-1]["value"],
        "final_std": float(match.group(2)),
        "best": best["value"],
        "best_step": best["steps"],
        "stable_solve": stable_solve(history, threshold),
        "wall_s": float(match.group(4)),
        "process_s": round(process_s, 2),
        "steps_per_s": float(match.group(3)),
        "evals": [[e["steps"], round(e["value"], 3)] for e in history],
        "command": " ".join(["python", *cmd[1:4], *extra]),
        **more,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--algo", choices=sorted(PIPELINES), default="ppo")
    ap.add_argument("--seeds", nargs="+", default=["0-9"], help="seeds, e.g. 0-9 or 0 3 5")
    ap.add_argument("--jobs", type=int, default=2, help="pipeline processes at a time (one per core)")
    ap.add_argument("--threshold", type=float, default=475.0)
    ap.add_argument("--name", default=None, help="result file name (default main_job_seeds_<algo>)")
    ap.add_argument("--script", default=None, help="another entry script with the pipeline's command line (e.g. an experiment's wrapper)")
    ap.add_argument("extra", nargs="*", help="extra pipeline arguments (after --)")
    args = ap.parse_args()
    seeds = parse_seeds(args.seeds)
    path = RESULTS / f"{args.name or f'main_job_seeds_{args.algo}'}.json"
    payload = json.loads(path.read_text()) if path.exists() else None
    if payload is not None and (payload["algo"], payload["extra"]) != (args.algo, args.extra):
        raise SystemExit(f"{path} holds --algo {payload['algo']} with {payload['extra']}, not {args.algo} with {args.extra}: pass another --name")
    if payload is None:
        payload = {"algo": args.algo, "extra": args.extra, "threshold": args.threshold, "runs": []}
    if args.script:
        payload["script"] = args.script
    done = {r["seed"] for r in payload["runs"]}
    todo = [s for s in seeds if s not in done]
    print(f"{path.name}: {len(done)} seeds on file, running {todo}", flush=True)

    def write() -> None:
        runs = sorted(payload["runs"], key=lambda r: r["seed"])
        budget = int(next((a for k, a in zip(args.extra, args.extra[1:]) if k == "--total-steps"), default_budget(args.algo)))
        summary = solve_summary([r["final"] for r in runs], [r["stable_solve"] for r in runs], args.threshold, budget)
        summary["median_wall_s"] = median([r["wall_s"] for r in runs])
        payload.update(runs=runs, summary=summary, date=time.strftime("%Y-%m-%d"), machine=machine(),
                       command=" ".join(["python", "benchmarks/main_job_seeds.py", *sys.argv[1:]]))
        RESULTS.mkdir(exist_ok=True)
        path.write_text(json.dumps(payload, indent=1))

    with tempfile.TemporaryDirectory() as root, ThreadPoolExecutor(args.jobs) as pool:
        pending = {pool.submit(run_seed, args.algo, s, args.extra, args.threshold, root, args.script) for s in todo}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                r = fut.result()
                payload["runs"].append(r)
                write()
                solve = r["stable_solve"]
                print(f"seed {r['seed']}: final {r['final']:.1f}  best {r['best']:.1f} at {r['best_step']}  "
                      f"stable from {None if solve is None else solve['steps']}  wall {r['wall_s']:.1f}s", flush=True)
    write()
    print(json.dumps(payload["summary"]), flush=True)
    print(f"saved {path}")


if __name__ == "__main__":
    main()
