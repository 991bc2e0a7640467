"""Lockstep harness: popgym's own envs and the tensor-native ones, fed the same random draws.

Each popgym env gets a recording stand-in for its ``np_random``: every number popgym draws
(deck shuffles, the cart's start, noise, bandit means and pulls, mine cells) is logged as it is
drawn, translated into the native env's draw (``Draws``: a card dealt, a uniform number, ...)
and queued for that env's row in a ``ScriptedDraws``, which the native env then draws from.
Everything else (dealing, scoring, physics, episode ends, the partial resets of finished rows)
runs as in training, and every observation (popgym's through ``EncodeObservation``), reward,
terminated and truncated flag is compared at every step.
"""
from __future__ import annotations

from collections import Counter, deque

import gymnasium as gym
import numpy as np
import torch

from torchrl_memory.envs.observation_encoding import EncodeObservation
from torchrl_memory.envs.factory import make_env
from torchrl_memory.envs.lookup import find_transform
from torchrl_memory.envs.popgym import make_native_popgym
from tensordict import TensorDict


class Recorder:
    """A numpy ``Generator`` that logs what it draws, in the units the native env draws in."""

    def __init__(self, seed: int):
        self.g, self.log = np.random.default_rng(seed), []

    def random(self, size=None, dtype=np.float64):
        v = self.g.random(size, dtype=dtype)
        self.log.append(("uniform", np.asarray(v)))
        return v

    def uniform(self, low=0.0, high=1.0, size=None):  # numpy: low + (high - low) * U[0, 1)
        u = self.g.random(size)
        self.log.append(("uniform", np.asarray(u)))
        return low + (high - low) * u

    def normal(self, loc=0.0, scale=1.0, size=None):  # numpy: loc + scale * N(0, 1)
        z = self.g.standard_normal(np.broadcast(np.asarray(loc), np.asarray(scale)).shape if size is None else size)
        self.log.append(("normal", np.asarray(z)))
        return loc + scale * z

    def shuffle(self, x):
        self.g.shuffle(x)
        self.log.append(("permutation", np.array(x)))

    def choice(self, a, size=None, replace=True):
        v = self.g.choice(a, size=size, replace=replace)
        self.log.append(("choices", np.asarray(v)))
        return v

    def integers(self, *args, **kwargs):  # Battleship's ship placement: recorded as placements instead
        return self.g.integers(*args, **kwargs)

    def drain(self) -> list:
        log, self.log = self.log, []
        return log


class ScriptedDraws:
    """``Draws`` from per-row queues of ``(kind, value)``; checks that each draw is one the env may make."""

    def __init__(self, num_envs: int):
        self.queues = [deque() for _ in range(num_envs)]

    def _rows(self, rows, k):
        return list(range(k)) if rows is None else rows.tolist()

    def _pop(self, row, kind):
        assert self.queues[row], f"row {row}: the native env draws a {kind} popgym did not draw"
        got, value = self.queues[row].popleft()
        assert got == kind, f"row {row}: the native env draws a {kind} where popgym drew a {got}"
        return value

    def uniform(self, shape, rows, dtype=torch.float32):
        return torch.stack([torch.as_tensor(self._pop(r, "uniform")).to(dtype).reshape(shape[1:]) for r in self._rows(rows, shape[0])])

    def normal(self, shape, rows):
        return torch.stack([torch.as_tensor(self._pop(r, "normal")).double().reshape(shape[1:]) for r in self._rows(rows, shape[0])])

    def choice(self, valid, rows):
        out = []
        for i, r in enumerate(self._rows(rows, valid.shape[0])):
            index = int(self._pop(r, "choice"))
            assert bool(valid[i, index]), f"row {r}: option {index} is not open"
            out.append(index)
        return torch.tensor(out).reshape(-1, 1)

    def deal(self, counts, rows):
        out = []
        for i, r in enumerate(self._rows(rows, counts.shape[0])):
            if int(counts[i].sum()) == 0:  # an empty deck deals nothing (the env ignores this draw)
                out.append(0)
                continue
            kind = int(self._pop(r, "deal"))
            assert int(counts[i, kind]) > 0, f"row {r}: dealt a card of kind {kind}, none left"
            out.append(kind)
        return torch.tensor(out).reshape(-1, 1)

    def permutation(self, k, m, rows):
        return torch.stack([torch.as_tensor(self._pop(r, "permutation")).long() for r in self._rows(rows, k)])

    def push(self, row, items):
        self.queues[row].extend(items)

    def empty(self) -> bool:
        return not any(self.queues)


def popgym_encoder(gym_id: str):
    """popgym observation -> the flat float vector the gymnasium path gives after ``EncodeObservation``."""
    env = make_env(gym_id, 1, normalize_obs=False)
    enc = find_transform(env, EncodeObservation)

    def encode(obs) -> torch.Tensor:
        if enc is None:
            return torch.as_tensor(np.asarray(obs, dtype=np.float32))
        items = {str(i): o for i, o in enumerate(obs)} if isinstance(obs, tuple) else {"observation": obs}
        td = TensorDict({k: torch.as_tensor(np.asarray(v)).reshape(1, *np.shape(v)) for k, v in items.items()}, batch_size=[1])
        return enc._encode(td)["observation"][0]

    return encode


def lockstep(name: str, translate, policy, num_envs: int, steps: int, seed: int = 0, prepare=None) -> dict:
    """Steps ``num_envs`` popgym envs ``name`` and a native env of as many rows together for
    ``steps`` steps, ``policy(row, popgym_env, rng)`` choosing each row's action; asserts every
    output equal. ``translate(popgym_env, log)``: the native draws for what popgym drew.
    ``prepare(popgym_env)``: extra instrumentation of each popgym env. Returns counts of how
    episodes ended, by ``(policy row % 3, terminated, truncated)``, and their returns."""
    gym_id = f"popgym-{name}-v0"
    encode = popgym_encoder(gym_id)
    native = make_native_popgym(name, num_envs, seed=seed)
    script = native.draws = ScriptedDraws(num_envs)
    reals, recorders = [], []
    for i in range(num_envs):
        real = gym.make(gym_id).unwrapped
        recorders.append(Recorder(seed * 1000 + i))
        real._np_random = recorders[i]
        if prepare is not None:
            prepare(real)
        obs, _ = real.reset()
        script.push(i, translate(real, recorders[i].drain()))
        reals.append((real, obs))
    td = native.reset()
    for i, (_, obs) in enumerate(reals):
        assert torch.equal(td["observation"][i], encode(obs)), f"row {i}: first observations differ"
    reals = [r for r, _ in reals]
    rng = np.random.default_rng(seed)
    ends, returns = Counter(), [0.0] * num_envs
    for t in range(steps):
        actions = [policy(i, real, rng) for i, real in enumerate(reals)]
        results = []
        for i, real in enumerate(reals):
            obs, reward, terminated, truncated, _ = real.step(actions[i])
            script.push(i, translate(real, recorders[i].drain()))
            returns[i] += reward
            if terminated or truncated:
                ends[(i % 3, terminated, truncated)] += 1
                ends[("return", i % 3, round(returns[i], 3))] += 1
                returns[i] = 0.0
                real.reset()
                script.push(i, translate(real, recorders[i].drain()))
            results.append((obs, reward, terminated, truncated))
        td["action"] = torch.as_tensor(np.stack(actions))
        out, td = native.step_and_maybe_reset(td)
        nxt = out["next"]
        for i, (obs, reward, terminated, truncated) in enumerate(results):
            where = f"step {t}, row {i}"
            assert torch.equal(nxt["observation"][i], encode(obs)), f"{where}: observations differ: {nxt['observation'][i]} vs {encode(obs)}"
            assert float(nxt["reward"][i]) == np.float32(reward), f"{where}: rewards differ: {float(nxt['reward'][i])} vs {reward}"
            assert bool(nxt["terminated"][i]) == terminated and bool(nxt["truncated"][i]) == truncated, f"{where}: episode ends differ"
    assert all(not q or all(k == "deal" for k, _ in q) for q in script.queues)
    return ends


def wrong(correct: int, n: int) -> int:
    return (int(correct) + 1) % n
