"""Side by side, one script, one machine: our recurrent PPO vs sb3-contrib RecurrentPPO on two POPGym envs.

    bash benchmarks/setup_peers.sh            # once: the peer lives in benchmarks/.venv-peers
    python benchmarks/popgym_vs_sb3_contrib.py --seeds 0 1 2 --steps 150000
    python benchmarks/popgym_vs_sb3_contrib.py --envs popgym-RepeatFirstEasy-v0 --name ...   # one env per process

Same env-step budget for every arm; each seed runs the arms in turn. Arms:
  sb3-contrib   RecurrentPPO, its own defaults (peer_sb3_popgym.py), 8 envs
  ours-gru      our pipeline, GRU trunk, the env's recipe below
  ours-lstm     our pipeline, LSTM trunk, the same recipe
Score: the final greedy mean episodic return over 32 episodes (POPGym's normalised score,
in [-1, 1]). ``train_s`` excludes the final evaluation in every arm. Medians over seeds.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import tempfile
from pathlib import Path

from bench_common import median, save

HERE = Path(__file__).resolve().parent
#: per env: our rollout shape. RepeatFirstEasy episodes last 51 steps; windows that hold a whole
#: episode let backprop-through-time reach the first card (benchmarks/results/popgym_repeatfirst_aligned*)
RECIPES = {
    "popgym-RepeatFirstEasy-v0": ["--rollout-len", "51"],
    # the pipeline's defaults (64 envs x 16, width 64, lr 1.5e-3): chosen on seeds 10-20 over the suite
    # recipe of the first comparison (2026-12-03: --num-envs 16 --rollout-len 64 --envs-per-minibatch 4
    # --hidden-size 128 --learning-rate 0.0005), which ended 3 LSTM seeds of 11 below 1.0 against none,
    # in half the time (benchmarks/results/tune_poscartpole_*.json: popgym_suite.py with each recipe)
    "popgym-PositionOnlyCartPoleEasy-v0": [],
}


def ours(env: str, model: str, seed: int, steps: int, root: str) -> dict:
    from torchrl_memory.pipelines import recurrent_ppo

    argv = ["--env", env, "--model", model, "--seed", str(seed), "--total-steps", str(steps), "--eval-every", "0",
            "--eval-episodes", "32", "--plot", "false", "--run-root", root, *RECIPES[env]]
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        out = recurrent_ppo.main(argv)
    train_s = out["wall_s"] - out["timing"]["evaluation"]
    return {"arm": f"ours-{model}", "env": env, "seed": seed, "score": out["eval"]["mean_reward"], "train_s": train_s, "steps_per_s": out["steps_per_s"]}


def peer(env: str, seed: int, steps: int) -> dict:
    python = HERE / ".venv-peers" / "bin" / "python"
    if not python.exists():
        raise SystemExit("run benchmarks/setup_peers.sh first (installs sb3-contrib into benchmarks/.venv-peers)")
    out = subprocess.run([str(python), str(HERE / "peer_sb3_popgym.py"), "--env", env, "--seed", str(seed), "--steps", str(steps)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", nargs="+", default=list(RECIPES))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--steps", type=int, default=150_000)
    ap.add_argument("--arms", default="sb3-contrib,ours-gru,ours-lstm")
    ap.add_argument("--name", default=None, help="result file name (default popgym_vs_sb3_contrib_<steps>)")
    args = ap.parse_args()
    name = args.name or f"popgym_vs_sb3_contrib_{args.steps}"
    rows = []
    with tempfile.TemporaryDirectory() as root:
        for env in args.envs:
            for seed in args.seeds:
                for arm in args.arms.split(","):
                    rows.append(peer(env, seed, args.steps) if arm == "sb3-contrib" else ours(env, arm.split("-")[1], seed, args.steps, root))
                    print(json.dumps(rows[-1]), flush=True)
                    save(name, {"steps": args.steps, "seeds": args.seeds, "recipes": RECIPES, "rows": rows, "summary": summary(rows)})
    print(json.dumps(summary(rows), indent=2))


def summary(rows: list[dict]) -> dict:
    out: dict = {}
    for r in rows:
        out.setdefault(r["env"], {}).setdefault(r["arm"], []).append(r)
    res = {}
    for env, arms in out.items():
        res[env] = {arm: {"median_score": median([r["score"] for r in rs]), "scores": [round(r["score"], 3) for r in rs],
                          "median_train_s": median([r["train_s"] for r in rs])} for arm, rs in arms.items()}
        peer_s = res[env].get("sb3-contrib", {}).get("median_train_s")
        for arm, v in res[env].items():
            if peer_s and arm != "sb3-contrib":
                v["speedup_vs_sb3_contrib"] = round(peer_s / v["median_train_s"], 2)
    return res


if __name__ == "__main__":
    main()
