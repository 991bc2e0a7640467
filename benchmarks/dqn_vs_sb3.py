"""Side by side, one script, one machine: our DQN vs Stable-Baselines3 DQN on CartPole-v1.

    bash benchmarks/setup_peers.sh            # once: the peer lives in benchmarks/.venv-peers
    python benchmarks/dqn_vs_sb3.py --seeds 0 1 2 --steps 50000

Both arms use the same network ([64, 64] ReLU), update-to-data ratio (train_freq 1,
gradient_steps 1), batch 64, replay 100k, 1k warm-up, hard target copy every 500 env steps,
Huber loss, grad clip 10, epsilon 1 -> 0.05 over 10k steps. Each library runs with 1, 8 and 32
envs in one process (SB3: DummyVecEnv with gradient_steps = envs, so still one update per env
step); ours also with 32 envs over 2 ``--collector-workers`` (TorchRL MultiAsyncCollector: the
env steps overlap the gradient steps, still one update per env step; SB3 has no asynchronous
collector, its SubprocVecEnv is one process per env and steps in lock step with training). Reports env steps/s (training wall clock) and the final greedy return, medians over seeds,
and the ratios of ours to SB3 with the same number of envs and to SB3's usual single env.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_common import median, save

HERE = Path(__file__).resolve().parent
SHARED = ["--learning-rate", "0.0003", "--batch-size", "64", "--buffer-capacity", "100000", "--min-replay-size", "1000",
          "--target-update-freq", "500", "--train-freq", "1", "--gradient-steps", "1", "--hidden-sizes", "64,64",
          "--epsilon-decay-steps", "10000", "--epsilon-end", "0.05", "--double-dqn", "false", "--target-update-tau", "none",
          "--lr-schedule", "constant", "--layer-norm", "false", "--n-step", "1"]


def ours(tmp: str, seed: int, steps: int, extra: list[str]) -> dict:
    from torchrl_memory.pipelines import dqn

    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        out = dqn.main([*SHARED, *extra, "--total-steps", str(steps), "--seed", str(seed), "--eval-every", "0", "--plot", "false", "--run-root", tmp])
    return {"final": out["eval"]["mean_reward"], "wall_s": out["wall_s"], "steps_per_s": out["steps_per_s"]}


def peer(seed: int, steps: int, n_envs: int) -> dict:
    python = HERE / ".venv-peers" / "bin" / "python"
    if not python.exists():
        raise SystemExit("run benchmarks/setup_peers.sh first (installs Stable-Baselines3 into benchmarks/.venv-peers)")
    out = subprocess.run([str(python), str(HERE / "peer_sb3_dqn.py"), "--seed", str(seed), "--steps", str(steps), "--n-envs", str(n_envs)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--steps", type=int, default=50_000)
    args = ap.parse_args()
    # arm -> (library, number of envs)
    arms = {"sb3": ("sb3", 1), "sb3-8envs": ("sb3", 8), "sb3-32envs": ("sb3", 32),
            "ours": ("ours", 1), "ours-8envs": ("ours", 8), "ours-32envs": ("ours", 32), "ours-32envs-2workers": ("ours", 32)}
    extra = {"ours-32envs-2workers": ["--collector-workers", "2"]}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            for arm, (lib, n_envs) in arms.items():
                r = peer(seed, args.steps, n_envs) if lib == "sb3" else ours(tmp, seed, args.steps, ["--num-envs", str(n_envs), *extra.get(arm, [])])
                r.update(arm=arm, seed=seed)
                rows.append(r)
                print(json.dumps(r), flush=True)
    summary = {arm: {"median_steps_per_s": median([r["steps_per_s"] for r in rows if r["arm"] == arm]),
                     "median_final": median([r["final"] for r in rows if r["arm"] == arm]),
                     "finals": [r["final"] for r in rows if r["arm"] == arm]} for arm in arms}
    sps = {arm: summary[arm]["median_steps_per_s"] for arm in arms}
    ratios = {"ours_vs_sb3 (1 env each)": sps["ours"] / sps["sb3"], "ours-8envs_vs_sb3-8envs": sps["ours-8envs"] / sps["sb3-8envs"],
              "ours-32envs_vs_sb3-32envs": sps["ours-32envs"] / sps["sb3-32envs"],
              "ours-32envs-2workers_vs_sb3-32envs": sps["ours-32envs-2workers"] / sps["sb3-32envs"],
              "ours-8envs_vs_sb3 (1 env)": sps["ours-8envs"] / sps["sb3"], "ours-32envs_vs_sb3 (1 env)": sps["ours-32envs"] / sps["sb3"]}
    print(json.dumps({"summary": summary, "ratios": ratios}, indent=2))
    print(save("dqn_vs_sb3", {"steps": args.steps, "seeds": args.seeds, "shared_settings": SHARED, "summary": summary, "ratios": ratios, "runs": rows}))


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
