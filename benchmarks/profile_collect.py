"""Where one batched collection step goes: TorchRL Collector vs the env + policy floor.

    python benchmarks/profile_collect.py [--envs 64] [--steps 400]

Per batched env step (median over windows of 16 steps, microseconds): the whole
``Collector`` step with the LSTM rollout policy; the native env alone (``step_and_maybe_reset``
with random actions, through the pipeline's transforms); the rollout policy alone on a carried
tensordict; and the floor: the bare tensor-native CartPole transition plus one ``nn.LSTM``
cell step and heads on plain tensors. JSON in benchmarks/results/profile_collect.json.
"""
from __future__ import annotations

import argparse

import torch

from bench_common import median_us, save


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=400)
    args = ap.parse_args()
    torch.set_num_threads(1)
    from torchrl.collectors import Collector
    from torchrl.envs import ExplorationType, set_exploration_type

    from components import CartPoleEnv, make_actor_critic, make_env, obs_dim_of

    n, T = args.envs, 16
    env = make_env("CartPoleNoVel", n, seed=0)
    agent = make_actor_critic("lstm", obs_dim_of(env), env.action_spec, 64)
    env = agent.prime(env)
    collector = Collector(env, agent.rollout_policy, frames_per_batch=n * T, total_frames=-1)
    it = iter(collector)
    collector_us = median_us(lambda: next(it), max(args.steps // T, 20), warmup=20) / T
    collector.shutdown()

    td = env.reset()

    def env_step():
        nonlocal td
        td["action"] = torch.randint(0, 2, (n,))
        _, td = env.step_and_maybe_reset(td)

    env_us = median_us(env_step, args.steps, warmup=20)
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
            "rollout policy alone": policy_us, "floor: bare transition + LSTM cell + heads": floor_us}
    for name, us in rows.items():
        print(f"  {name:<44} {us:8.0f} us")
    ratio = collector_us / floor_us
    print(f"  collector / floor: {ratio:.2f}x (issue target <= 3x)")
    save("profile_collect", {"envs": n, "steps": args.steps, "per_step_us": rows, "ratio": ratio})


if __name__ == "__main__":
    main()
