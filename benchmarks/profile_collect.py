"""Where one batched collection step goes: TorchRL Collector vs the env + policy floor.

    python benchmarks/profile_collect.py [--envs 64] [--steps 400]

Per batched env step (median over windows of 16 steps, microseconds): the whole
``Collector`` step with the LSTM rollout policy (built by ``make_collector``, as the
pipeline builds it) and the native env alone
(``step_and_maybe_reset`` with random actions, through the pipeline's transforms), each with
the native envs' lean ``step_and_maybe_reset`` and with TorchRL's own (interleaved, twice);
the rollout policy alone on a carried
tensordict; and the floor: the bare tensor-native CartPole transition plus one ``nn.LSTM``
cell step and heads on plain tensors. Then where the env step goes: the native transition
(``_step``), the partial reset (``_reset``), each transform's ``_step`` and ``_reset``, and the
rest (TorchRL's ``EnvBase`` plumbing: checks, ``step_mdp``, the reset merge), per env step.
JSON in benchmarks/results/profile_collect.json.
"""
from __future__ import annotations

import argparse
import time
from collections import defaultdict

import torch

from bench_common import median, median_us, save


def env_step_parts(env, step, steps: int) -> dict:
    """Mean microseconds per env step of each part of ``step()``: every method timed is wrapped
    on its instance for the measurement and unwrapped after; "TorchRL plumbing" is the rest."""
    parts: dict = defaultdict(float)
    wrapped = []

    def wrap(obj, name: str, label: str) -> None:
        inner = getattr(obj, name)

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            out = inner(*args, **kwargs)
            parts[label] += time.perf_counter() - t0
            return out

        setattr(obj, name, timed)
        wrapped.append((obj, name))

    wrap(env.base_env, "_step", "native transition (_step)")
    wrap(env.base_env, "_reset", "native partial reset (_reset)")
    for t in env.transform:
        wrap(t, "_step", f"{type(t).__name__}._step")
        wrap(t, "_reset", f"{type(t).__name__}._reset")
    for _ in range(20):
        step()
    parts.clear()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    total = time.perf_counter() - t0
    for obj, name in wrapped:
        delattr(obj, name)  # back to the class's method
    rows = {k: v / steps * 1e6 for k, v in parts.items()}
    rows["TorchRL plumbing (the rest)"] = (total - sum(parts.values())) / steps * 1e6
    rows["env step, total"] = total / steps * 1e6
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=400)
    args = ap.parse_args()
    torch.set_num_threads(1)
    from torchrl.envs import ExplorationType, TransformedEnv, set_exploration_type

    from components import CartPoleEnv, make_actor_critic, make_collector, make_env, obs_dim_of

    n, T = args.envs, 16

    def build(torchrl_path: bool):
        env = make_env("CartPoleNoVel", n, seed=0)
        agent = make_actor_critic("lstm", obs_dim_of(env), env.action_spec, 64)
        env = agent.prime(env)
        if torchrl_path:  # TorchRL's own step_and_maybe_reset in place of the lean one (envs/fused_step.py)
            env.step_and_maybe_reset = lambda td: TransformedEnv.step_and_maybe_reset(env, td)
        return env, agent

    def env_stepper(env):
        td = env.reset()

        def env_step():
            nonlocal td
            td["action"] = torch.randint(0, 2, (n,))
            _, td = env.step_and_maybe_reset(td)

        return env_step

    def measure(torchrl_path: bool) -> tuple[float, float]:
        """(Collector step, env step alone), median us."""
        env, agent = build(torchrl_path)
        # built as the pipeline builds it: with its device, the collector skips a per-step cast
        collector = make_collector(env, agent.rollout_policy, n * T, torch.device("cpu"))
        it = iter(collector)
        collector_us = median_us(lambda: next(it), max(args.steps // T, 20), warmup=20) / T
        collector.shutdown()
        return collector_us, median_us(env_stepper(env), args.steps, warmup=20)

    # lean and TorchRL paths interleaved, twice: the machine's speed drifts within minutes
    runs = {False: [], True: []}
    for _ in range(2):
        for torchrl_path in (False, True):
            runs[torchrl_path].append(measure(torchrl_path))
    (collector_us, env_us), (torchrl_collector_us, torchrl_env_us) = (
        tuple(median(x) for x in zip(*runs[p])) for p in (False, True)
    )
    env, agent = build(False)
    env_step = env_stepper(env)
    parts = env_step_parts(env, env_step, args.steps)
    carried = env.reset()

    def policy_step():
        with torch.no_grad(), set_exploration_type(ExplorationType.RANDOM):
            agent.rollout_policy(carried.clone(False))

    policy_us = median_us(policy_step, args.steps, warmup=20)

    raw = CartPoleEnv(n, seed=0)
    state = raw._fresh_state(n)
    lstm, heads = torch.nn.LSTM(2, 64, batch_first=True), torch.nn.Linear(64, 3)
    h = (torch.zeros(1, n, 64), torch.zeros(1, n, 64))

    def floor_step():
        nonlocal state, h
        with torch.no_grad():
            obs = raw._observe(state)[:, [0, 2]].reshape(n, 1, 2)
            y, h = lstm(obs, h)
            logits = heads(y.squeeze(1))[:, :2]
            action = torch.distributions.Categorical(logits=logits).sample()
            state, _, term, trunc = raw._transition(state, action)
            fresh = raw._fresh_state(n)
            done = term | trunc
            state = {k: torch.where(done, fresh[k], v) for k, v in state.items()}

    floor_us = median_us(floor_step, args.steps, warmup=20)
    print(f"one batched collection step, {n} envs, CartPoleNoVel, LSTM 64, 1 thread (median us)")
    rows = {"Collector step (env + policy + storage)": collector_us, "env alone (transforms, auto-reset)": env_us,
            "Collector step, TorchRL's step_and_maybe_reset": torchrl_collector_us,
            "env alone, TorchRL's step_and_maybe_reset": torchrl_env_us,
            "rollout policy alone": policy_us, "floor: bare transition + LSTM cell + heads": floor_us}
    for name, us in rows.items():
        print(f"  {name:<44} {us:8.0f} us")
    ratio = collector_us / floor_us
    print(f"  collector / floor: {ratio:.2f}x (issue target <= 3x)")
    print(f"  lean env step: env alone {torchrl_env_us / env_us:.2f}x, Collector step {torchrl_collector_us / collector_us:.2f}x faster than TorchRL's path")
    print("where the env step goes (mean us per env step; a partial reset runs on most steps at 64 envs)")
    for name, us in parts.items():
        print(f"  {name:<44} {us:8.0f} us")
    save("profile_collect", {"envs": n, "steps": args.steps, "per_step_us": rows, "ratio": ratio, "env_step_parts_us": parts})


if __name__ == "__main__":
    main()
