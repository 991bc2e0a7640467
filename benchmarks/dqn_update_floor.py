"""Where a DQN env step's time goes, at one update per env step: the update vs everything else.

    python benchmarks/dqn_update_floor.py

With the settings of benchmarks/dqn_vs_sb3.py (MLP 4-64-64-2, batch 64, vanilla DQN, one
update per env step) it times, in one process:
  * ``DqnAgent.update()`` alone (sample, TD loss, backward, clip, fused Adam), with its
    hand-written backward (dqn/manual_backward.py) and with autograd (``manual_backward = False``),
    and the same gradient step in bare PyTorch with no library code (autograd, per-tensor Adam,
    as SB3 runs it);
  * a whole ``DQNRunState`` env step with 1 and with 8 envs (act, env step, store, update,
    bookkeeping), per env step;
  * with 1 env, the parts of that step alone: acting (``agent.explore``), the env's
    ``step_and_maybe_reset`` (TorchRL ``TransformedEnv`` over the native CartPole) and storing
    the transition (``agent.store``: ``TensorDictReplayBuffer.extend``).
At one update per env step the update is a floor under the per-step time whatever the env
count; what is above it is acting, the env and storing, which batching envs divides.
Medians of --repeats timings.
"""
from __future__ import annotations

import argparse
import copy
import statistics
import time

import torch
import torch.nn.functional as F

from bench_common import save


def timed(fn, n: int, repeats: int) -> float:
    """Median seconds per call of ``fn`` over ``repeats`` blocks of ``n`` calls."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times)


def bare_pytorch_update_s(n: int, repeats: int) -> float:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))
    target = copy.deepcopy(net).requires_grad_(False)
    params = list(net.parameters())
    opt = torch.optim.Adam(params, lr=3e-4)
    size = 100_000
    obs, next_obs = torch.randn(size, 4), torch.randn(size, 4)
    action, reward, terminated = torch.randint(0, 2, (size,)), torch.randn(size), torch.rand(size) < 0.05

    def update() -> None:
        idx = torch.randint(size, (64,))
        q = net(obs[idx]).gather(-1, action[idx].unsqueeze(-1)).squeeze(-1)
        with torch.no_grad():
            y = reward[idx] + 0.99 * (~terminated[idx]) * target(next_obs[idx]).max(-1).values
        loss = F.smooth_l1_loss(q, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 10.0)
        opt.step()

    timed(update, 200, 1)
    return timed(update, n, repeats)


def ours(num_envs: int, n: int, repeats: int) -> tuple[float, float, float, dict]:
    """Seconds per update (hand-written backward, autograd), per env step, and the step's parts."""
    from torchrl_memory import DQNAgent as DqnAgent, DQNConfig as DqnConfig, DQNRunState as DqnTrainer, make_env
    from torchrl_memory.envs import obs_dim_of

    cfg = DqnConfig(batch_size=64, hidden_sizes=[64, 64], min_replay_size=1000, double_dqn=False, target_update_tau=None,
                    target_update_freq=500, learning_rate=3e-4, epsilon_end=0.05, num_envs=num_envs, seed=0,
                    lr_schedule="constant", layer_norm=False, n_step=1).validate()  # the plain MLP: the hand-written backward's
    env = make_env("CartPole-v1", num_envs, "cpu", 0, normalize_obs=False)
    agent = DqnAgent(obs_dim_of(env), env.action_spec, cfg)
    trainer = DqnTrainer(env, agent)
    trainer.train(2000)
    update_s = timed(agent.update, n, repeats)
    agent.manual_backward = False
    autograd_s = timed(agent.update, n, repeats)
    agent.manual_backward = True
    per_env_step_s = timed(lambda: trainer.train(num_envs), max(n // num_envs, 1), repeats) / num_envs
    return update_s, autograd_s, per_env_step_s, step_parts(trainer, n, repeats)


def step_parts(trainer, n: int, repeats: int) -> dict:
    """Seconds per call of each part of one in-process trainer step, each timed alone."""
    agent, env = trainer.agent, trainer.env
    carried = trainer.td
    stepped, _ = env.step_and_maybe_reset(agent.explore(carried.clone(), trainer.total_steps)[0])

    def env_step() -> None:
        nonlocal carried
        carried.set("action", torch.randint(0, 2, env.batch_size))  # CartPole's two actions
        _, carried = env.step_and_maybe_reset(carried)

    return {"act": timed(lambda: agent.explore(trainer.td, trainer.total_steps), n, repeats),
            "env_step": timed(env_step, n, repeats), "store": timed(lambda: agent.store(stepped), n, repeats)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    bare = bare_pytorch_update_s(args.n, args.repeats)
    update_1, autograd_1, step_1, parts_1 = ours(1, args.n, args.repeats)
    _, _, step_8, _ = ours(8, args.n, args.repeats)
    us = lambda s: round(s * 1e6, 1)
    result = {"threads": args.threads, "n": args.n, "repeats": args.repeats,
              "bare_pytorch_update_us": us(bare), "ours_update_us": us(update_1), "ours_update_autograd_us": us(autograd_1),
              "ours_env_step_us_1_env": us(step_1), "ours_env_step_us_8_envs": us(step_8),
              "ours_1_env_parts_us (each alone)": {k: us(v) for k, v in parts_1.items()},
              "ours_env_steps_per_s_ceiling (1 / update)": round(1 / update_1)}
    print(result)
    print(save("dqn_update_floor", result))


if __name__ == "__main__":
    main()
