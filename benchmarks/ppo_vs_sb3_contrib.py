"""Side by side, one script, one machine: our recurrent PPO vs sb3-contrib RecurrentPPO on CartPoleNoVel.

    bash benchmarks/setup_peers.sh            # once: the peer lives in benchmarks/.venv-peers
    python benchmarks/ppo_vs_sb3_contrib.py            # seeds 0-4, every arm

Arms (each seed in turn, on an otherwise idle machine):
  sb3-contrib      its rl-zoo tuned settings (8 envs x 32 steps, 20 epochs, LSTM 64 + critic LSTM)
  ours-same-hp     our pipeline with those hyper-parameters (8 x 32, 20 epochs, one 256-step minibatch,
                   LSTM 64, lr 1e-3, gamma 0.98, lambda 0.8, ent 0): the speed ratio (a)
  ours-native      our defaults, tensor-native env: time to a stable solve (b)
  ours-gym         our defaults on TorchRL's GymEnv backend (gym:CartPoleNoVel)
  ours-tuned       our settings tuned for CartPoleNoVel, as sb3-contrib's are (128 envs x 16, 512-step
                   minibatches, lr 5e-3, value coefficient 1.0): chosen by time to 475 on seeds 10-20,
                   never on the reported seeds (tune_ppo_cartpole.py); everything else at our defaults
Each arm runs its own default budget (the peer's 100k; our recipe at our pipeline's default,
which is longer because it is chosen for the run to END solved), unless ``--steps`` sets one.
Times exclude the periodic greedy evaluations in every arm (``train_s``). Every arm with
evaluations (every 5,120 steps, 16 episodes) reports the time to a stable solve: the first
evaluation from which every later one, the final one included, is >= 475 (a seed that never
holds counts as its whole training time), with the median final and the seeds that end solved.
The JSON is rewritten after every run; rerunning the command resumes a cut-off campaign.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

from bench_common import RESULTS, eval_history, median, save, solve_summary, stable_solve

HERE = Path(__file__).resolve().parent
THRESHOLD = 475.0
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
            "stable_solve": stable_solve(eval_history(out["run_dir"]), THRESHOLD) if eval_every else None,
            "timing": {k: round(v, 2) for k, v in out["timing"].items()}}


def peer(seed: int, steps: int) -> dict:
    python = HERE / ".venv-peers" / "bin" / "python"
    if not python.exists():
        raise SystemExit("run benchmarks/setup_peers.sh first (installs sb3-contrib into benchmarks/.venv-peers)")
    out = subprocess.run([str(python), str(HERE / "peer_sb3_recurrent_ppo.py"), "--seed", str(seed), "--steps", str(steps)],
                         check=True, capture_output=True, text=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    history = [{"steps": step, "train_s": t, "value": score} for step, t, score in r.pop("curve")]
    return {**r, "stable_solve": stable_solve(history, THRESHOLD)}


PEER_STEPS = 100_000  # rl-zoo's budget for sb3-contrib on CartPoleNoVel


def arm_budget(arm: str, steps: int | None) -> int:
    """``--steps`` when given; else each arm's own default budget: the peer's and the same-hp
    speed arm's 100k, our pipeline's default for the arms that run our recipe."""
    if steps is not None:
        return steps
    if arm in ("sb3-contrib", "ours-same-hp"):
        return PEER_STEPS
    from torchrl_memory import PPOConfig

    return PPOConfig().total_steps


def run_arm(arm: str, tmp: str, seed: int, steps: int) -> dict:
    if arm == "sb3-contrib":
        return peer(seed, steps)
    if arm == "ours-same-hp":
        return ours(tmp, seed, steps, SAME_HP, eval_every=0)
    if arm == "ours-native":
        return ours(tmp, seed, steps, [], eval_every=5_120)
    if arm == "ours-gym":
        return ours(tmp, seed, steps, ["--env", "gym:CartPoleNoVel"], eval_every=5_120)
    if arm == "ours-tuned":
        return ours(tmp, seed, steps, TUNED, eval_every=5_120)
    raise SystemExit(f"unknown arm {arm!r}")


def summarize(rows: list[dict], arms: list[str]) -> tuple[dict, dict]:
    """Per arm: median final, seeds ending solved, median stable-solve seconds (a seed that
    never holds counts as all its training time); ratios of the peer's to ours."""
    summary = {}
    for arm in arms:
        rs = [r for r in rows if r["arm"] == arm]
        if not rs:
            continue
        solve = solve_summary([r["final"] for r in rs], [r["stable_solve"] for r in rs], THRESHOLD, rs[0]["budget_steps"], [r["train_s"] for r in rs])
        if arm == "ours-same-hp":  # no periodic evaluations: its final and its speed only
            solve = {k: v for k, v in solve.items() if "stable" not in k and k != "seeds_holding"}
        summary[arm] = {**solve, "median_train_s": median([r["train_s"] for r in rs]), "median_steps_per_s": median([r["steps_per_s"] for r in rs])}
    ratios = {}
    if "sb3-contrib" in summary and "ours-same-hp" in summary:
        ratios["steps_per_s_same_hp_vs_sb3"] = summary["ours-same-hp"]["median_steps_per_s"] / summary["sb3-contrib"]["median_steps_per_s"]
    for arm in ("ours-native", "ours-gym", "ours-tuned"):
        if arm in summary and "sb3-contrib" in summary:
            ratios[f"stable_solve_s_sb3_over_{arm}"] = summary["sb3-contrib"]["median_stable_solve_s"] / summary[arm]["median_stable_solve_s"]
    return summary, ratios


def main() -> None:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--steps", type=int, default=None, help="every arm's budget (default: each arm's own, see arm_budget)")
    ap.add_argument("--arms", default="sb3-contrib,ours-same-hp,ours-native,ours-gym,ours-tuned")
    ap.add_argument("--name", default="ppo_vs_sb3_contrib_stable", help="result file under benchmarks/results/ (resumed when it exists)")
    args = ap.parse_args()
    arms = args.arms.split(",")
    path = RESULTS / f"{args.name}.json"
    rows = []
    if path.exists():  # resume: the (arm, seed) pairs already on file are not run again
        saved = json.loads(path.read_text())
        if saved.get("steps") != args.steps or any("stable_solve" not in r for r in saved["runs"]):
            raise SystemExit(f"{path} holds another campaign (steps {saved.get('steps')}): pass another --name")
        rows = saved["runs"]
    done = {(r["arm"], r["seed"]) for r in rows}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            for arm in arms:
                if (arm, seed) in done:
                    continue
                budget = arm_budget(arm, args.steps)
                r = run_arm(arm, tmp, seed, budget)
                r.update(arm=arm, seed=seed, budget_steps=budget)
                rows.append(r)
                print(json.dumps(r), flush=True)
                summary, ratios = summarize(rows, arms)  # written after every run: a cut-off campaign resumes
                save(args.name, {"steps": args.steps, "seeds": sorted({r["seed"] for r in rows}), "threshold": THRESHOLD,
                                 "summary": summary, "ratios": ratios, "runs": rows})
    summary, ratios = summarize(rows, arms)
    print(json.dumps({"summary": summary, "ratios": ratios}, indent=2))
    print(save(args.name, {"steps": args.steps, "seeds": sorted({r["seed"] for r in rows}), "threshold": THRESHOLD,
                           "summary": summary, "ratios": ratios, "runs": rows}))


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
