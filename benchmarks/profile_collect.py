"""Where one batched collection step goes: TorchRL Collector vs the env + policy floor.

    python benchmarks/profile_collect.py [--envs 64] [--steps 400]

Per batched env step (median over rounds of 16 steps, microseconds; all paths timed in one
round-robin loop, so the machine's drift hits them alike): the whole
``Collector`` step with the LSTM rollout policy (built by ``make_collector`` with the fused
policy step and ``LeanCollector``'s loop, as the pipeline builds it, and TorchRL's default ``Collector`` with the sequential
TorchRL-module policy for comparison) and the native env alone
(``step_and_maybe_reset`` with random actions, through the pipeline's transforms), each with
the native envs' lean ``step_and_maybe_reset`` and with TorchRL's own;
the rollout policy alone on a carried
tensordict, fused (ppo/rollout_policy.py) and sequential; and the floor: the bare tensor-native CartPole transition plus one LSTM
cell step (``lstm_cell``), heads and a multinomial draw on plain tensors. Then where the env step goes: the native transition
(``_step``), the partial reset (``_reset``), each transform's ``_step`` and ``_reset`` (or the
lean step's kernel standing in for it), and the
rest (TorchRL's ``EnvBase`` plumbing: checks, ``step_mdp``, the reset merge), per env step.
JSON in benchmarks/results/profile_collect.json.
"""
from __future__ import annotations

import argparse
import time
from collections import defaultdict

import torch

from bench_common import median, save


# row names (the JSON's keys)
COLLECTOR = "Collector step (env + policy + storage)"
COLLECTOR_TORCHRL_STEP = "Collector step, TorchRL's step_and_maybe_reset"
COLLECTOR_DEFAULTS = "Collector step, TorchRL's defaults (its env step, trajectory ids, module policy)"
ENV = "env alone (transforms, auto-reset)"
ENV_TORCHRL_STEP = "env alone, TorchRL's step_and_maybe_reset"
FLOOR = "floor: bare transition + LSTM cell + heads"


def env_step_parts(env, step, steps: int) -> dict:
    """Mean microseconds per env step of each part of ``step()``: every method timed is wrapped
    on its instance for the measurement and unwrapped after (the lean step's kernels for the
    bookkeeping transforms, ``envs/fused_step.py``, are wrapped in its cached plan); "TorchRL
    plumbing" is the rest."""
    parts: dict = defaultdict(float)
    wrapped = []

    def timing(label: str, inner):
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            out = inner(*args, **kwargs)
            parts[label] += time.perf_counter() - t0
            return out

        return timed

    def wrap(obj, name: str, label: str) -> None:
        setattr(obj, name, timing(label, getattr(obj, name)))
        wrapped.append((obj, name))

    wrap(env.base_env, "_step", "native transition (_step)")
    wrap(env.base_env, "_reset", "native partial reset (_reset)")
    assert env.fused
    plan = env.__dict__["_fused_cache"]
    kernels = []
    for t, step_kernel, reset_kernel in plan.kernels:
        name = type(t).__name__
        if step_kernel is None:
            wrap(t, "_step", f"{name}._step")
        if reset_kernel is None:
            wrap(t, "_reset", f"{name}._reset")
        kernels.append((t, step_kernel and timing(f"{name}, lean step kernel", step_kernel),
                        reset_kernel and timing(f"{name}, lean reset kernel", reset_kernel)))
    env.__dict__["_fused_cache"] = plan._replace(kernels=tuple(kernels))
    for _ in range(20):
        step()
    parts.clear()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    total = time.perf_counter() - t0
    for obj, name in wrapped:
        delattr(obj, name)  # back to the class's method
    env.__dict__["_fused_cache"] = plan
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
    from torchrl.collectors import Collector
    from torchrl.envs import ExplorationType, set_exploration_type

    from torchrl_memory import CartPoleEnv, make_actor_critic, make_collector, make_env, obs_dim_of

    n, T = args.envs, 16

    def build(torchrl_path: bool):
        env = make_env("CartPoleNoVel", n, seed=0)
        agent = make_actor_critic("lstm", obs_dim_of(env), env.action_spec, 64)
        env = agent.prime(env)
        env.lean_step = not torchrl_path  # False: TorchRL's own step_and_maybe_reset (envs/fused_step.py)
        return env, agent

    def env_stepper(env):
        td = env.reset()

        def env_step():
            nonlocal td
            td["action"] = torch.randint(0, 2, (n,))
            _, td = env.step_and_maybe_reset(td)

        return env_step

    # built as the pipeline builds it: with its device, the collector skips a per-step cast
    lean_env, agent = build(False)
    torchrl_env, torchrl_agent = build(True)
    collectors = [make_collector(e, a.collect_policy, n * T, torch.device("cpu")) for e, a in ((lean_env, agent), (torchrl_env, torchrl_agent))]
    # and TorchRL's defaults throughout: its env step, trajectory ids kept, the sequential module policy
    default_env, default_agent = build(True)
    collectors.append(Collector(default_env, default_agent.rollout_policy, frames_per_batch=n * T, total_frames=-1, device=torch.device("cpu")))
    lean_batches, torchrl_batches, default_batches = (iter(c) for c in collectors)
    env, _ = build(False)
    env_step = env_stepper(env)
    env_torchrl, _ = build(True)
    carried = env.reset()

    def policy_stepper(policy):
        def policy_step():
            with torch.no_grad(), set_exploration_type(ExplorationType.RANDOM):
                policy(carried.clone(False))

        return policy_step

    raw = CartPoleEnv(n, seed=0)
    state = raw._fresh_state(n)
    lstm, heads = torch.nn.LSTM(2, 64, batch_first=True), torch.nn.Linear(64, 3)
    weights = (lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0)
    h = (torch.zeros(n, 64), torch.zeros(n, 64))

    def floor_step():
        # the cheapest bare-PyTorch step we know: one lstm_cell, one head for logits and value,
        # a multinomial draw and its log-prob (what PPO stores), the transition, the auto-reset
        nonlocal state, h
        with torch.no_grad():
            obs = raw._observe(state)[:, [0, 2]]
            h = torch.lstm_cell(obs, h, *weights)
            out = heads(h[0])
            log_p = out[:, :2].log_softmax(-1)
            action = torch.multinomial(log_p.exp(), 1, True)
            log_p.gather(-1, action)
            state, _, term, trunc = raw._transition(state, action.squeeze(-1))
            fresh = raw._fresh_state(n)
            done = term | trunc
            state = {k: torch.where(done, fresh[k], v) for k, v in state.items()}

    # every path timed in one round-robin loop (one collector batch = T steps; T calls of the
    # others per round), so the machine's drift within minutes hits all of them alike
    timed = {
        COLLECTOR: (lambda: next(lean_batches), T),
        COLLECTOR_TORCHRL_STEP: (lambda: next(torchrl_batches), T),
        COLLECTOR_DEFAULTS: (lambda: next(default_batches), T),
        ENV: (env_step, 1),
        ENV_TORCHRL_STEP: (env_stepper(env_torchrl), 1),
        "rollout policy alone (fused step, the pipeline's)": (policy_stepper(agent.collect_policy), 1),
        "rollout policy alone (sequential TorchRL modules)": (policy_stepper(agent.rollout_policy), 1),
        FLOOR: (floor_step, 1),
    }
    rounds = max(args.steps // T, 20)
    samples = {name: [] for name in timed}
    for r in range(rounds + 5):  # the first 5 rounds warm up
        for name, (fn, steps_per_call) in timed.items():
            calls = T // steps_per_call
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            if r >= 5:
                samples[name].append((time.perf_counter() - t0) / T * 1e6)
    for c in collectors:
        c.shutdown()
    rows = {name: median(xs) for name, xs in samples.items()}
    collector_us, torchrl_collector_us, default_us = rows[COLLECTOR], rows[COLLECTOR_TORCHRL_STEP], rows[COLLECTOR_DEFAULTS]
    env_us, torchrl_env_us, floor_us = rows[ENV], rows[ENV_TORCHRL_STEP], rows[FLOOR]
    parts = env_step_parts(env, env_step, args.steps)
    print(f"one batched collection step, {n} envs, CartPoleNoVel, LSTM 64, 1 thread (median us)")
    for name, us in rows.items():
        print(f"  {name:<66} {us:8.0f} us")
    ratio = collector_us / floor_us
    print(f"  collector / floor: {ratio:.2f}x (issue target <= 3x)")
    print(f"  lean env step: env alone {torchrl_env_us / env_us:.2f}x, Collector step {torchrl_collector_us / collector_us:.2f}x faster than TorchRL's path")
    print(f"  pipeline's Collector step vs TorchRL's defaults: {default_us / collector_us:.2f}x faster")
    print("where the env step goes (mean us per env step; a partial reset runs on most steps at 64 envs)")
    for name, us in parts.items():
        print(f"  {name:<66} {us:8.0f} us")
    save("profile_collect", {"envs": n, "steps": args.steps, "per_step_us": rows, "ratio": ratio,
                             "speedup_vs_torchrl_defaults": default_us / collector_us, "env_step_parts_us": parts})


if __name__ == "__main__":
    main()
