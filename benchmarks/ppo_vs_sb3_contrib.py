"""Side by side, one script, one machine: our recurrent PPO vs sb3-contrib RecurrentPPO on CartPoleNoVel.

    bash benchmarks/setup_peers.sh            # once: the peer lives in benchmarks/.venv-peers
    python benchmarks/ppo_vs_sb3_contrib.py --seeds 0 1 2

Arms (each seed in turn, on an otherwise idle machine):
  sb3-contrib      its rl-zoo tuned settings (8 envs x 32 steps, 20 epochs, LSTM 64 + critic LSTM)
  ours-same-hp     our pipeline with those hyper-parameters (8 x 32, 20 epochs, one 256-step minibatch,
                   LSTM 64, lr 1e-3, gamma 0.98, lambda 0.8, ent 0): the speed ratio (a)
  ours-native      our defaults, tensor-native env: time to a greedy mean >= 475 (b)
  ours-gym         our defaults on TorchRL's GymEnv backend (gym:CartPoleNoVel)
  ours-tuned       our settings tuned for CartPoleNoVel, as sb3-contrib's are (128 envs x 16, 512-step
                   minibatches, lr 5e-3, value coefficient 1.0): chosen by time to 475 on seeds 10-20,
                   never on the reported seeds (tune_ppo_cartpole.py); everything else at our defaults
Times exclude the periodic greedy evaluations in every arm (``train_s``).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

from bench_common import median, save
from ppo_learning import time_to_threshold

HERE = Path(__file__).resolve().parent
SAME_HP = ["--num-envs", "8", "--rollout-len", "32", "--n-epochs", "20", "--envs-per-minibatch", "8", "--hidden-size", "64",
           "--learning-rate", "0.001", "--gamma", "0.98", "--gae-lambda", "0.8", "--ent-coef", "0", "--entropy-guard", "false"]
TUNED = ["--num-envs", "128", "--envs-per-minibatch", "32", "--learning-rate", "0.005", "--vf-coef", "1.0"]  # tune_ppo_cartpole.py's W6


def ours(tmp: str, seed: int, steps: int, extra: list[str], eval_every: int) -> dict:
    from torchrl_memory.pipelines import recurrent_ppo

    argv = ["--total-steps", str(steps), "--seed", str(seed), "--eval-every", str(eval_every), "--eval-episodes", "16",
            "--plot", "false", "--run-root", tmp, *extra]
    with contextlib.redirect_stderr(io.StringIO()):
        out = recurrent_ppo.main(argv)
    train_s = out["wall_s"] - out["timing"]["evaluation"]
    return {"final": out["eval"]["mean_reward"], "train_s": train_s, "steps_per_s": steps / train_s,
            "time_to_threshold_s": time_to_threshold(out["run_dir"], 475.0, "mean_reward") if eval_every else None,
            "timing": {k: round(v, 2) for k, v in out["timing"].items()}}


def peer(seed: int, steps: int) -> dict:
    python = HERE / ".venv-peers" / "bin" / "python"
    if not python.exists():
        raise SystemExit("run benchmarks/setup_peers.sh first (installs sb3-contrib into benchmarks/.venv-peers)")
    out = subprocess.run([str(python), str(HERE / "peer_sb3_recurrent_ppo.py"), "--seed", str(seed), "--steps", str(steps)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--arms", default="sb3-contrib,ours-same-hp,ours-native,ours-gym,ours-tuned")
    args = ap.parse_args()
    arms = args.arms.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            for arm in arms:
                if arm == "sb3-contrib":
                    r = peer(seed, args.steps)
                elif arm == "ours-same-hp":
                    r = ours(tmp, seed, args.steps, SAME_HP, eval_every=0)
                elif arm == "ours-native":
                    r = ours(tmp, seed, args.steps, [], eval_every=5_120)
                elif arm == "ours-gym":
                    r = ours(tmp, seed, args.steps, ["--env", "gym:CartPoleNoVel"], eval_every=5_120)
                elif arm == "ours-tuned":
                    r = ours(tmp, seed, args.steps, TUNED, eval_every=5_120)
                else:
                    raise SystemExit(f"unknown arm {arm!r}")
                r.update(arm=arm, seed=seed)
                r.pop("curve", None)
                rows.append(r)
                print(json.dumps(r), flush=True)
    summary = {}
    for arm in arms:
        rs = [r for r in rows if r["arm"] == arm]
        reached = [r["time_to_threshold_s"] for r in rs if r.get("time_to_threshold_s") is not None]
        summary[arm] = {"median_final": median([r["final"] for r in rs]), "finals": [r["final"] for r in rs],
                        "median_train_s": median([r["train_s"] for r in rs]), "median_steps_per_s": median([r["steps_per_s"] for r in rs]),
                        "seeds_reaching_475": len(reached), "median_time_to_475_s": median(reached) if 2 * len(reached) > len(rs) else None}
    ratios = {}
    if "sb3-contrib" in summary and "ours-same-hp" in summary:
        ratios["steps_per_s_same_hp_vs_sb3"] = summary["ours-same-hp"]["median_steps_per_s"] / summary["sb3-contrib"]["median_steps_per_s"]
    peer_t = summary.get("sb3-contrib", {}).get("median_time_to_475_s") or summary.get("sb3-contrib", {}).get("median_train_s")
    for arm in ("ours-native", "ours-gym", "ours-tuned"):
        if arm in summary and peer_t and summary[arm]["median_time_to_475_s"]:
            ratios[f"time_to_475_sb3_over_{arm}"] = peer_t / summary[arm]["median_time_to_475_s"]
    print(json.dumps({"summary": summary, "ratios": ratios}, indent=2))
    print(save("ppo_vs_sb3_contrib", {"steps": args.steps, "seeds": args.seeds, "summary": summary, "ratios": ratios, "runs": rows}))


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
