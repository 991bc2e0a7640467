"""Does ``torch.compile`` pay on the hot paths? Eager vs compiled, side by side in one run.

    python benchmarks/compile_options.py [--repeats 100]

Default shapes of the pipeline (CartPoleNoVel, 64 envs x 16 steps, LSTM 64, 256-step
minibatches, 1 thread). Arms, each the median microseconds per call after a warm-up that
includes the compilation (whose wall time is reported separately):

- the rollout policy on one batched step, eager vs ``torch.compile(policy)``;
- one batched step of TorchRL's ``Collector``, ``compile_policy=False`` vs ``True``;
- one PPO loss forward + backward, eager vs ``torch.compile(loss)``, with the largest
  difference of the three loss terms between the two (the compiled path must compute the
  same losses to be worth keeping).

Inductor compiles for the CPU here (gcc). JSON in benchmarks/results/compile_options.json.
"""
from __future__ import annotations

import argparse
import time

import torch

from bench_common import median_us, ppo_default_setup, ppo_first_minibatch, save

LOSS_TERMS = ("loss_objective", "loss_critic", "loss_entropy")


def timed_first_call(fn) -> tuple[float, object]:
    """(seconds, result) of one call: for a compiled function, its compilation included."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=100)
    args = ap.parse_args()
    torch.set_num_threads(1)
    from torchrl.collectors import Collector
    from torchrl.envs import ExplorationType, set_exploration_type

    cfg, env, agent = ppo_default_setup()
    n, T = cfg.num_envs, cfg.rollout_len
    rows: dict[str, dict] = {}

    # --- rollout policy ------------------------------------------------------------------------
    carried = env.reset()

    def policy_call(policy):
        def call():
            with torch.no_grad(), set_exploration_type(ExplorationType.RANDOM):
                policy(carried.clone(False))
        return call

    compiled_policy = torch.compile(agent.rollout_policy)
    rows["rollout policy, one batched step"] = {
        "eager_us": median_us(policy_call(agent.rollout_policy), args.repeats, warmup=10),
        "compile_s": timed_first_call(policy_call(compiled_policy))[0],
        "compiled_us": median_us(policy_call(compiled_policy), args.repeats, warmup=10),
    }

    # --- collector step ------------------------------------------------------------------------
    row = {}
    for compiled in (False, True):
        t0 = time.perf_counter()
        collector = Collector(env, agent.rollout_policy, frames_per_batch=n * T, total_frames=-1, compile_policy=compiled)
        it = iter(collector)
        next(it)
        start = time.perf_counter() - t0
        us = median_us(lambda: next(it), max(args.repeats // 4, 10), warmup=3) / T
        collector.shutdown()
        row.update({"compiled_us" if compiled else "eager_us": us, **({"compile_s": start} if compiled else {})})
    rows["Collector, one batched step (compile_policy)"] = row

    # --- loss forward + backward ---------------------------------------------------------------
    torch.compiler.reset()
    _, trainer, mb = ppo_first_minibatch(cfg, env, agent)
    compiled_loss = torch.compile(trainer.loss)

    def fwd_bwd(loss_fn):
        def call():
            out = loss_fn(mb)
            trainer.flat_params.grad.zero_()
            sum(out[k] for k in LOSS_TERMS).backward()
            return out
        return call

    eager_out = fwd_bwd(trainer.loss)()
    row = {"eager_us": median_us(fwd_bwd(trainer.loss), args.repeats, warmup=5)}
    row["compile_s"], compiled_out = timed_first_call(fwd_bwd(compiled_loss))
    row["compiled_us"] = median_us(fwd_bwd(compiled_loss), args.repeats, warmup=5)
    row["max_abs_loss_diff"] = max(float((eager_out[k] - compiled_out[k]).detach().abs()) for k in LOSS_TERMS)
    rows["PPO loss forward + backward (256 steps)"] = row

    print(f"torch.compile vs eager, {n} envs, LSTM {cfg.hidden_size}, 1 thread (median us)")
    for name, r in rows.items():
        r["speedup"] = r["eager_us"] / r["compiled_us"]
        extra = f"  max loss diff {r['max_abs_loss_diff']:.1e}" if "max_abs_loss_diff" in r else ""
        print(f"  {name:<46} eager {r['eager_us']:8.0f}  compiled {r['compiled_us']:8.0f}  ({r['speedup']:.2f}x, compile {r['compile_s']:.1f}s){extra}")
    save("compile_options", {"repeats": args.repeats, "rows": rows})


if __name__ == "__main__":
    main()
