"""Learning table of the memory models: every ``--model`` on the POPGym suite, side by side, one recipe.

    python benchmarks/memory_models_learning.py                      # 8 POPGym Easy envs x 5 models x seeds 0-2, 1M steps
    python benchmarks/memory_models_learning.py --envs RepeatPreviousEasy --models gru lru --seeds 0
    python benchmarks/memory_models_learning.py --envs TMaze-50 --preset tmaze --total-steps 200000 --name memory_models_tmaze50

A POPGym name (``RepeatPreviousEasy``) trains on the tensor-native env
(``--env native:popgym-<name>-v0``) and evaluates on popgym's own env (``--eval-env-id
popgym-<name>-v0``); any other id (``TMaze-50``, ``CartPoleNoVel``) trains and evaluates on itself.
Every run is ``pipelines/recurrent_ppo.py --preset <preset> --model <model>`` (plus the arguments
after ``--``), its own process, ``--jobs`` at a time, one thread each: the models differ in nothing
but the memory.

Per run: the final greedy mean of 32 episodes (the policy a user keeps), the evaluations on the way,
POPGym's own score MMER (the highest mean return of the last 100 training episodes over the run, as
RLlib's ``episode_reward_mean`` that POPGym's tables take the maximum of) and the wall time. Per env
and model: median final, per-seed finals, median MMER, median wall time.

The file ``benchmarks/results/<name>.json`` is rewritten after every run and an interrupted campaign
resumes where it stopped (runs on file are skipped; a file of another campaign is refused). Runs go
env by env, so a campaign cut short leaves whole rows. ``--start-no-run-after MINUTES`` lets one
invocation fit a time slot: runs in flight finish, no new one starts.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from bench_common import RESULTS, locked_update, machine, median
from main_job_seeds import parse_seeds, run_seed

POPGYM_ENVS = ["RepeatPreviousEasy", "RepeatFirstEasy", "CountRecallEasy", "AutoencodeEasy", "PositionOnlyCartPoleEasy",
               "NoisyPositionOnlyCartPoleEasy", "MineSweeperEasy", "HigherLowerEasy"]
#: the slowest first inside each seed, so the last runs of a row are the short ones
MODELS = ["gru", "lru", "ffm", "mingru", "mlp"]


def env_args(env: str) -> list[str]:
    """Training and evaluation env flags for a table row."""
    if "-" in env:
        return ["--env", env]
    return ["--env", f"native:popgym-{env}-v0", "--eval-env-id", f"popgym-{env}-v0"]


def run_scores(run_dir: str | Path, window: int = 100) -> dict:
    """What the pipeline's final line does not give: POPGym's MMER (the maximum over training of the
    mean return of the last ``window`` training episodes, taken after every episode once ``window``
    have ended; over all of them if fewer ever do) and the final evaluation's success rate (its
    episodes ending with a positive reward: a T-maze or MiniGrid goal reached)."""
    run_dir = Path(run_dir)
    returns = [json.loads(line)["total_reward"] for line in (run_dir / "train_episodes.jsonl").read_text().splitlines()]
    best = total = sum(returns[:window])
    for i in range(window, len(returns)):
        total += returns[i] - returns[i - window]
        best = max(best, total)
    evals = [json.loads(line) for line in (run_dir / "eval_episodes.jsonl").read_text().splitlines()]
    final = [e for e in evals if e["total_steps"] == evals[-1]["total_steps"]]
    return {"mmer": best / max(min(window, len(returns)), 1), "train_episodes": len(returns),
            "final_success": sum(e["extras"]["success"] for e in final) / len(final)}


def summarise(runs: list[dict]) -> dict:
    """Per env and model: median final greedy, finals by seed, median MMER and wall time."""
    table: dict = {}
    for r in sorted(runs, key=lambda r: r["seed"]):
        table.setdefault(r["env"], {}).setdefault(r["model"], []).append(r)

    def cell(rs: list[dict]) -> dict:
        # None where a run on file was written before the field existed
        success = [r["final_success"] for r in rs if "final_success" in r]
        episodes = [r["train_episodes"] for r in rs if "train_episodes" in r]
        return {"median_final": median([r["final"] for r in rs]), "finals": {r["seed"]: r["final"] for r in rs},
                "median_mmer": median([r["mmer"] for r in rs]),
                "median_final_success": median(success) if len(success) == len(rs) else None,
                "median_train_episodes": median(episodes) if len(episodes) == len(rs) else None,
                "median_wall_s": median([r["wall_s"] for r in rs]), "median_steps_per_s": median([r["steps_per_s"] for r in rs])}

    return {env: {model: cell(rs) for model, rs in by_model.items()} for env, by_model in table.items()}


NAMES = {"gru": "GRU", "lstm": "LSTM", "lru": "LRU", "ffm": "FFM", "mingru": "minGRU", "mlp": "MLP"}
#: the models the table compares the new ones against (not "new")
BASELINES = ("gru", "lstm", "mlp")


def markdown(table: dict, total_steps: int | None = None, baseline: str = "gru") -> str:
    """The tables the docs quote, from a result file's ``table``: median final greedy with the finals
    per seed (the best median of a row in bold), median wall time with its ratio to ``baseline``'s,
    and per new model the rows where its median is at or above ``baseline``'s. Only whole rows
    (every model, as many seeds as the fullest cell) enter the tables; the others are named below them.
    With ``total_steps`` the wall table also gives the mean training episode length of ``baseline``'s
    runs (``total_steps`` / episodes): with one episode per window, the window the update runs over."""
    models = [m for m in NAMES if any(m in row for row in table.values())]
    seeds = max(len(c["finals"]) for row in table.values() for c in row.values())
    partial = {env: sum(len(row[m]["finals"]) if m in row else 0 for m in models) for env, row in table.items()}
    partial = {env: runs for env, runs in partial.items() if runs < seeds * len(models)}
    table = {env: row for env, row in table.items() if env not in partial}
    lengths = total_steps is not None and all(row.get(baseline, {}).get("median_train_episodes") for row in table.values())
    names = [NAMES[m] for m in models]
    finals, walls = [header(["env", *names])], [header(["env", *(["episode"] if lengths else []), *names])]
    for env, row in table.items():
        best = max(c["median_final"] for c in row.values())
        cells, wall_cells = [], []
        for m in models:
            c = row[m]
            score = f"{c['median_final']:.3f}"
            per_seed = ", ".join(f"{v:.2f}" for v in c["finals"].values())
            cells.append(f"{f'**{score}**' if c['median_final'] == best else score} ({per_seed})")
            ratio = "" if m == baseline or baseline not in row else f" ({c['median_wall_s'] / row[baseline]['median_wall_s']:.2f}x)"
            wall_cells.append(f"{c['median_wall_s']:.0f} s{ratio}")
        name = env.removesuffix("Easy")
        finals.append(f"| {name} | " + " | ".join(cells) + " |")
        episode = f"{total_steps / row[baseline]['median_train_episodes']:.0f} | " if lengths else ""
        walls.append(f"| {name} | {episode}" + " | ".join(wall_cells) + " |")
    verdicts = []
    for m in (m for m in models if m not in BASELINES):
        rows = list(table) if baseline in models else []
        at_or_above = [env.removesuffix("Easy") for env in rows if row_at_or_above(table[env], m, baseline)]
        ratios = sorted(table[env][m]["median_wall_s"] / table[env][baseline]["median_wall_s"] for env in rows)
        verdicts.append(f"- {NAMES[m]}: at or above {NAMES[baseline]} on {len(at_or_above)} of {len(rows)} envs"
                        f" ({', '.join(at_or_above) or 'none'}); wall {ratios[0]:.2f}-{ratios[-1]:.2f}x {NAMES[baseline]}'s"
                        if rows else f"- {NAMES[m]}: no env beside {NAMES[baseline]}")
    note = "".join(f"\n- not complete: {env.removesuffix('Easy')} ({runs} of {seeds * len(models)} runs)" for env, runs in partial.items())
    return "\n".join(finals) + "\n\n" + "\n".join(walls) + "\n\n" + "\n".join(verdicts) + note


def header(columns: list[str]) -> str:
    return "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns)


def row_at_or_above(row: dict, model: str, baseline: str) -> bool:
    # finals are means of 32 episodes printed to 3 decimals: compare at that precision
    return round(row[model]["median_final"], 3) >= round(row[baseline]["median_final"], 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", nargs="+", default=POPGYM_ENVS, help="POPGym names (native training) or env ids")
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument("--seeds", nargs="+", default=["0-2"], help="seeds, e.g. 0-2 or 0 3 5")
    ap.add_argument("--total-steps", type=int, default=1_000_000)
    ap.add_argument("--eval-every", type=int, default=None, help="env steps between greedy evaluations (default total_steps / 4)")
    ap.add_argument("--preset", default="popgym", help="the pipeline preset every run takes")
    ap.add_argument("--threshold", type=float, default=0.9, help="an evaluation >= this counts as solved (stable solve)")
    ap.add_argument("--jobs", type=int, default=2, help="processes at a time (one per core)")
    ap.add_argument("--start-no-run-after", type=float, default=None, metavar="MINUTES", help="start no new run after this many minutes")
    ap.add_argument("--name", default=None, help="result file name (default memory_models_popgym_<steps>)")
    ap.add_argument("--table", action="store_true", help="print the markdown tables of the result file and exit (runs nothing)")
    ap.add_argument("extra", nargs="*", help="arguments added to every run (after --)")
    args = ap.parse_args()
    name = args.name or f"memory_models_popgym_{args.total_steps}"
    path = RESULTS / f"{name}.json"
    if args.table:
        if not path.exists():
            ap.error(f"--table: no result file {path} (pass the campaign's --name or --total-steps)")
        on_file = json.loads(path.read_text())
        print(markdown(summarise(on_file["runs"]), on_file["total_steps"]))
        return
    from torchrl_memory import presets
    from torchrl_memory.ppo.actor_critic import MODELS as PIPELINE_MODELS

    # bad names fail here, in one line, not after the first run of a long campaign
    if unknown := [m for m in args.models if m not in PIPELINE_MODELS]:
        ap.error(f"--models {' '.join(unknown)} (accepted: {', '.join(PIPELINE_MODELS)})")
    if args.preset not in presets.available("recurrent_ppo"):
        ap.error(f"--preset {args.preset} (accepted: {', '.join(presets.available('recurrent_ppo'))})")
    eval_every = args.eval_every or args.total_steps // 4
    campaign = {"total_steps": args.total_steps, "preset": args.preset, "eval_every": eval_every, "extra": args.extra}
    on_file = json.loads(path.read_text()) if path.exists() else {**campaign, "runs": []}
    if {k: on_file.get(k) for k in campaign} != campaign:
        raise SystemExit(f"{path} holds another campaign {({k: on_file.get(k) for k in campaign})}: pass another --name")
    done = {(r["env"], r["model"], r["seed"]) for r in on_file["runs"]}
    todo = [(env, model, seed) for env in args.envs for seed in parse_seeds(args.seeds) for model in args.models
            if (env, model, seed) not in done]
    print(f"{path.name}: {len(done)} runs on file, {len(todo)} to run", flush=True)
    command = " ".join(["python", "benchmarks/memory_models_learning.py", *sys.argv[1:]])

    def record(run: dict) -> None:
        # re-read under a lock: two invocations may share the file (e.g. envs split over two slots)
        def update(disk: dict) -> None:
            if all((r["env"], r["model"], r["seed"]) != (run["env"], run["model"], run["seed"]) for r in disk["runs"]):
                disk["runs"].append(run)
            disk["table"] = summarise(disk["runs"])
            disk.update(date=time.strftime("%Y-%m-%d"), machine=machine())
            if command not in disk.setdefault("commands", []):
                disk["commands"].append(command)
        locked_update(path, {**campaign, "runs": []}, update)

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as root, ThreadPoolExecutor(args.jobs) as pool:
        queue, running = list(todo), {}

        def submit() -> None:
            while queue and len(running) < args.jobs:
                if args.start_no_run_after is not None and time.monotonic() - t0 > 60 * args.start_no_run_after:
                    print(f"--start-no-run-after {args.start_no_run_after:g} min: {len(queue)} runs left for another invocation", flush=True)
                    queue.clear()
                    return
                env, model, seed = queue.pop(0)
                extra = ["--preset", args.preset, "--model", model, *env_args(env), "--total-steps", str(args.total_steps),
                         "--eval-every", str(eval_every), "--eval-episodes", "32", *args.extra]
                running[pool.submit(run_seed, "ppo", seed, extra, args.threshold, f"{root}/{env}_{model}", summarise_run=run_scores)] = (env, model)

        submit()
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                env, model = running.pop(fut)
                run = {"env": env, "model": model, **fut.result()}
                record(run)
                print(f"{env} {model} seed {run['seed']}: final {run['final']:.3f}  MMER {run['mmer']:.3f}  "
                      f"{run['steps_per_s']:.0f} steps/s  wall {run['wall_s']:.0f}s", flush=True)
            submit()
    if path.exists():
        for env, by_model in json.loads(path.read_text())["table"].items():
            print(env, {m: round(v["median_final"], 3) for m, v in by_model.items()})
        print(f"saved {path}")


if __name__ == "__main__":
    main()
