"""Env-only steps per second: a tensor-native env vs TorchRL's gym wrapper (batched, one process) vs raw gymnasium vector env.

    python benchmarks/env_throughput.py --sizes 16 256 4096
    python benchmarks/env_throughput.py --env MiniGrid-MemoryS7-v0 --sizes 16 64 256
    python benchmarks/env_throughput.py --env popgym-RepeatPreviousEasy-v0 --sizes 64 1024 16384

``--env``: CartPole-v1 (native ``CartPoleEnv``), a MiniGrid Memory id (native
``MiniGridMemoryEnv``; every copy of minigrid's env under ``NavigationActions``, three actions) or
a POPGym id (the tensor-native POPGym env vs popgym's own env).

Random actions, auto-reset included (TorchRL ``step_and_maybe_reset``; gymnasium's own autoreset).
Median of 3 timed repeats after a warm-up.
"""
from __future__ import annotations

import argparse
import json
import time

import torch

from bench_common import median, save


def time_torchrl(env, steps: int) -> float:
    td = env.reset()
    for _ in range(5):
        td["action"] = env.action_spec.rand()
        _, td = env.step_and_maybe_reset(td)
    t = time.perf_counter()
    for _ in range(steps):
        td["action"] = env.action_spec.rand()
        _, td = env.step_and_maybe_reset(td)
    return steps * env.batch_size.numel() / (time.perf_counter() - t)


def time_gymnasium(n: int, steps: int, gym_id: str = "CartPole-v1", wrappers: tuple = ()) -> float:
    import gymnasium as gym

    env = gym.make_vec(gym_id, num_envs=n, vectorization_mode="sync", wrappers=list(wrappers))
    env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(16)]  # drawn ahead: the loop times the env alone
    t = time.perf_counter()
    for i in range(steps):
        env.step(actions[i % 16])
    return steps * n / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[16, 256, 4096])
    ap.add_argument("--budget", type=int, default=400_000, help="env steps per timed repeat")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--env", default="CartPole-v1", help="CartPole-v1 or a MiniGrid Memory id")
    args = ap.parse_args()
    from torchrl_memory import CartPoleEnv, MiniGridMemoryEnv
    from torchrl_memory.envs.factory import EnvSpec, _base_env
    from torchrl_memory.envs.minigrid_wrappers import NavigationActions

    memory = args.env.startswith("MiniGrid-Memory")
    popgym = args.env.startswith("popgym-")
    if popgym:
        import popgym  # noqa: F401  (registers the ids for gymnasium)
        from torchrl_memory.envs.popgym import make_native_popgym

        native = lambda n: make_native_popgym(args.env, n, args.device, 0)
        spec, wrappers = EnvSpec("gym", args.env), ()
    elif memory:
        import minigrid  # noqa: F401  (registers the ids for gymnasium)

        native = lambda n: MiniGridMemoryEnv(args.env, 3, num_envs=n, device=args.device, seed=0)
        spec, wrappers = EnvSpec("gym", args.env), (NavigationActions,)
    else:
        native = lambda n: CartPoleEnv(n, device=args.device, seed=0)
        spec, wrappers = EnvSpec("gym", "CartPole"), ()

    results = []
    for n in args.sizes:
        steps = max(20, args.budget // n)
        row = {"num_envs": n}
        row["native"] = median([time_torchrl(native(n), steps) for _ in range(3)])
        gym_steps = max(10, min(steps, 20_000 // n))
        # TorchRL's GymWrapper over gymnasium's SyncVectorEnv: our gym backend (GymEnv(num_envs=n) would fork n processes)
        row["torchrl_gymenv"] = median([time_torchrl(_base_env(spec, n, torch.device("cpu"), 0, list(wrappers))[0], gym_steps) for _ in range(3)])
        row["raw_gymnasium_vector"] = median([time_gymnasium(n, gym_steps, spec.base, wrappers) for _ in range(3)])
        row["native_vs_gymnasium"] = row["native"] / row["raw_gymnasium_vector"]
        row["native_vs_torchrl_gymenv"] = row["native"] / row["torchrl_gymenv"]
        results.append(row)
        print(json.dumps({k: round(v) if isinstance(v, float) and v > 100 else round(v, 1) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
    name = f"env_throughput_{args.device}" if not (memory or popgym) else f"env_throughput_{args.env}_{args.device}"
    print(save(name, {"env": args.env, "results": results}))


if __name__ == "__main__":
    main()
