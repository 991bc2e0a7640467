"""Greedy evaluation of an sb3-contrib recurrent model, shared by the peer arms (run in benchmarks/.venv-peers).

``n`` envs seeded ``seed``..``seed + n - 1`` play one episode each with deterministic actions and
the recurrent state carried (``episode_start`` at resets); returns the mean episodic return.
``normalize`` maps raw observations to what the model was trained on (e.g. a frozen VecNormalize).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from stable_baselines3.common.env_util import make_vec_env


def greedy_eval(model, env, n: int, seed: int = 10_000, normalize: Callable | None = None) -> float:
    """``env``: a gymnasium id or an env factory, as ``make_vec_env`` takes them."""
    venv = make_vec_env(env, n_envs=n, seed=seed)
    returns, done_mask, totals = np.zeros(n), np.zeros(n, bool), np.zeros(n)
    obs, state, starts = venv.reset(), None, np.ones(n, bool)
    while not done_mask.all():
        action, state = model.predict(normalize(obs) if normalize else obs, state=state, episode_start=starts, deterministic=True)
        obs, rew, dones, _ = venv.step(action)
        totals += rew * ~done_mask
        newly = dones & ~done_mask
        returns[newly] = totals[newly]
        done_mask |= dones
        starts = dones
    return float(returns.mean())
