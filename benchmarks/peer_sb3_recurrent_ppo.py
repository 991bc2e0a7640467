"""Peer arm: sb3-contrib RecurrentPPO on CartPoleNoVel (run with benchmarks/.venv-peers/bin/python).

Settings: the rl-zoo tuned ones for CartPoleNoVel-v1 (8 envs x 32 steps, batch 256, 20 epochs,
LSTM 64 with a critic LSTM, lr lin 1e-3, clip lin 0.2, gamma 0.98, lambda 0.8, ent 0, VecNormalize).
Every --eval-every rollouts a greedy evaluation (16 episodes) is run and its time excluded from
the training clock, exactly as our pipeline's ``train_s``. Prints one JSON line whose ``curve``
(every evaluation, the final one last) the caller reads the stable solve from.
"""
from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import RecurrentPPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecNormalize

from peer_sb3_eval import greedy_eval


class NoVelocity(gym.ObservationWrapper):
    def __init__(self, env):
        super().__init__(env)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)

    def observation(self, obs):
        return obs[[0, 2]].astype(np.float32)


def make_env():
    return NoVelocity(gym.make("CartPole-v1"))


def linear(start):
    return lambda progress: progress * start


class TimedEval(BaseCallback):
    def __init__(self, every, vecnorm):
        super().__init__()
        self.every, self.vecnorm = every, vecnorm
        self.rollouts, self.eval_s, self.t0 = 0, 0.0, time.time()
        self.curve = []  # (env steps, training seconds, greedy mean): the history the stable solve is read from

    def _on_step(self):
        return True

    def _on_rollout_end(self):
        self.rollouts += 1
        if self.every and self.rollouts % self.every == 0:
            train_s = time.time() - self.t0 - self.eval_s
            t = time.time()
            score = greedy_eval(self.model, make_env, n=16, normalize=self.vecnorm.normalize_obs)
            self.eval_s += time.time() - t
            self.curve.append((self.num_timesteps, train_s, score))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-every", type=int, default=20, help="rollouts between greedy evals, 5120 steps as in our arm (0: final only)")
    args = ap.parse_args()
    torch.set_num_threads(torch.get_num_threads())
    venv = VecNormalize(make_vec_env(make_env, n_envs=8, seed=args.seed), norm_obs=True, norm_reward=True)
    model = RecurrentPPO(
        "MlpLstmPolicy", venv, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0,
        learning_rate=linear(1e-3), clip_range=linear(0.2), seed=args.seed, device="cpu",
        policy_kwargs=dict(ortho_init=False, activation_fn=torch.nn.ReLU, lstm_hidden_size=64, enable_critic_lstm=True, net_arch=dict(pi=[64], vf=[64])),
    )
    cb = TimedEval(args.eval_every, venv)
    t0 = time.time()
    model.learn(args.steps, callback=cb)
    wall = time.time() - t0
    venv.training = False
    final = greedy_eval(model, make_env, n=32, normalize=venv.normalize_obs)
    train_s = wall - cb.eval_s
    print(json.dumps({"arm": "sb3-contrib", "seed": args.seed, "final": final, "train_s": train_s, "steps_per_s": args.steps / train_s,
                      "curve": [*cb.curve, (model.num_timesteps, train_s, final)]}))


if __name__ == "__main__":
    main()
