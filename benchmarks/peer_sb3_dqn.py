"""Peer arm: Stable-Baselines3 DQN (run with benchmarks/.venv-peers/bin/python); prints one JSON line.

Same network, update-to-data ratio and replay settings as the ours-arm it is compared with
(passed on the command line); greedy evaluation of 10 episodes at the end.
"""
from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np
from stable_baselines3 import DQN
from stable_baselines3.common.env_util import make_vec_env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", default="CartPole-v1")
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--buffer", type=int, default=100_000)
    ap.add_argument("--learning-starts", type=int, default=1000)
    ap.add_argument("--target-update", type=int, default=500)
    ap.add_argument("--train-freq", type=int, default=1)
    ap.add_argument("--gradient-steps", type=int, default=1)
    ap.add_argument("--hidden", type=int, nargs="+", default=[64, 64])
    ap.add_argument("--eps-steps", type=int, default=10_000)
    ap.add_argument("--eps-end", type=float, default=0.05)
    ap.add_argument("--n-envs", type=int, default=1, help="DummyVecEnv size; gradient_steps is scaled by it to keep one update per env step")
    args = ap.parse_args()
    env = make_vec_env(args.env, n_envs=args.n_envs, seed=args.seed) if args.n_envs > 1 else gym.make(args.env)
    model = DQN("MlpPolicy", env, learning_rate=args.lr, batch_size=args.batch_size, buffer_size=args.buffer,
                learning_starts=args.learning_starts, target_update_interval=args.target_update, train_freq=args.train_freq,
                gradient_steps=args.gradient_steps * args.n_envs, exploration_fraction=args.eps_steps / args.steps, exploration_final_eps=args.eps_end,
                max_grad_norm=10, gamma=0.99, policy_kwargs=dict(net_arch=args.hidden), seed=args.seed, device="cpu")
    t0 = time.time()
    model.learn(args.steps)
    wall = time.time() - t0
    returns = []
    eval_env = gym.make(args.env)
    for i in range(10):
        obs, _ = eval_env.reset(seed=10_000 + i)
        done, total = False, 0.0
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, r, term, trunc, _ = eval_env.step(action)
            total += r
            done = term or trunc
        returns.append(total)
    print(json.dumps({"arm": "sb3" if args.n_envs == 1 else f"sb3-{args.n_envs}envs", "seed": args.seed, "final": float(np.mean(returns)), "wall_s": wall, "steps_per_s": args.steps / wall}))


if __name__ == "__main__":
    main()
