"""Peer arm: sb3-contrib RecurrentPPO with its own defaults on a POPGym env (run with benchmarks/.venv-peers/bin/python).

Defaults as shipped (``MlpLstmPolicy``, n_steps 128, batch 128, 10 epochs, lr 3e-4, LSTM 256,
gamma 0.99, lambda 0.95, clip 0.2, ent 0) over 8 envs; SB3 one-hot encodes Discrete
observations itself. Final greedy evaluation: 32 episodes, deterministic actions, the
mean episodic return (POPGym's normalised score). Prints one JSON line.
"""
from __future__ import annotations

import argparse
import json
import time

import popgym  # noqa: F401  (registers the popgym-* ids)
import torch
from sb3_contrib import RecurrentPPO
from stable_baselines3.common.env_util import make_vec_env

from peer_sb3_eval import greedy_eval


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", required=True)
    ap.add_argument("--steps", type=int, default=150_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)  # as our pipeline (num_threads 1); both arms single-process
    env = make_vec_env(args.env, n_envs=8, seed=args.seed)
    model = RecurrentPPO("MlpLstmPolicy", env, seed=args.seed, device="cpu")
    t0 = time.time()
    model.learn(args.steps)
    train_s = time.time() - t0
    score = greedy_eval(model, args.env, n=32)
    print(json.dumps({"arm": "sb3-contrib", "env": args.env, "seed": args.seed, "score": score, "train_s": train_s, "steps_per_s": args.steps / train_s}))


if __name__ == "__main__":
    main()
