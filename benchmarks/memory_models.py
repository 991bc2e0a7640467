"""One trunk update (forward + backward) and one collection step per memory model, beside the
padded LSTM and GRU the PPO agent uses today.

    python benchmarks/memory_models.py [--batch 16] [--lengths 16,64,256,1024] [--widths 64,256]
                                       [--models lstm,gru,mingru,ffm,lru] [--repeats 20] [--threads 1]

For each width and window length T: a ``[batch, T]`` minibatch as the PPO loss sees it (input
of that width, the state stored at every step, ``is_init`` true at the first step and then at
random with probability --reset-prob, so episodes start inside windows), run in recurrent mode
and backpropagated from a sum of the trunk's output (median microseconds over --repeats,
models interleaved round-robin so drift hits them alike). Then one sequential (collection)
step for the same batch of envs. The trunk only: the heads and the loss cost the same for
every model. Each row also gives the LSTM's time over the model's (speedup, > 1 is faster).
JSON in benchmarks/results/<--name>.json (default memory_models_update).
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from bench_common import save

MODELS = ("lstm", "gru", "mingru", "ffm", "lru")


def make_trunk(name: str, width: int):
    """The trunk ``name`` at ``width`` (input and output), keys ``obs`` -> ``embed``."""
    from torchrl_memory import PaddedGRUModule, PaddedLSTMModule
    from torchrl_memory.memory import MEMORY_MODELS

    keys = {"in_key": "obs", "out_key": "embed"}
    if name == "lstm":
        return PaddedLSTMModule(input_size=width, hidden_size=width, **keys)
    if name == "gru":
        return PaddedGRUModule(input_size=width, hidden_size=width, **keys)
    return MEMORY_MODELS[name](width, width, **keys)


def make_batch(trunk, batch: int, T: int, width: int, reset_prob: float, generator: torch.Generator):
    """A ``[batch, T]`` tensordict with the entries ``trunk`` reads (zero stored states)."""
    from tensordict import TensorDict

    is_init = torch.rand(batch, T, 1, generator=generator) < reset_prob
    is_init[:, 0] = True
    td = TensorDict({"obs": torch.randn(batch, T, width, generator=generator), "is_init": is_init}, [batch, T])
    for key, spec in trunk.make_tensordict_primer().primers.items(True, True):
        td.set(key, torch.zeros(batch, T, *spec.shape))
    return td


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lengths", default="16,64,256,1024")
    ap.add_argument("--widths", default="64,256")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--reset-prob", type=float, default=1 / 64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--name", default="memory_models_update", help="result file name under benchmarks/results")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    from torchrl.modules import set_recurrent_mode

    models = args.models.split(",")
    unknown = sorted(set(models) - set(MODELS))
    if unknown:
        ap.error(f"--models: unknown {unknown} (accepted: {list(MODELS)})")
    lengths = [int(t) for t in args.lengths.split(",")]
    widths = [int(w) for w in args.widths.split(",")]
    gen = torch.Generator().manual_seed(0)
    rows = []
    for width in widths:
        trunks = {m: make_trunk(m, width) for m in models}
        for T in lengths:
            batches = {m: make_batch(trunks[m], args.batch, T, width, args.reset_prob, gen) for m in models}

            def update(m):
                with set_recurrent_mode(True):
                    out = trunks[m](batches[m].clone(False))
                out.get("embed").sum().backward()

            times = _round_robin({m: (lambda m=m: update(m)) for m in models}, args.repeats)
            for m in models:
                rows.append({"model": m, "width": width, "T": T, "update_us": times[m]})
        steps = {m: make_batch(trunks[m], args.batch, 1, width, args.reset_prob, gen)[:, 0] for m in models}

        @torch.no_grad()
        def step(m):
            trunks[m](steps[m].clone(False))

        step_times = _round_robin({m: (lambda m=m: step(m)) for m in models}, args.repeats * 10)
        for m in models:
            rows.append({"model": m, "width": width, "T": 1, "collect_step_us": step_times[m]})
    for row in rows:
        key = "update_us" if "update_us" in row else "collect_step_us"
        ref = next((r[key] for r in rows if r["model"] == "lstm" and r["width"] == row["width"] and r["T"] == row["T"] and key in r), None)
        row["lstm_over_model"] = None if ref is None else round(ref / row[key], 2)
        print(f"{row['model']:>7} width {row['width']:>4} T {row['T']:>5} {key} {row[key]:>12.0f}  lstm/model {row['lstm_over_model']}")
    config = {k: getattr(args, k) for k in ("batch", "reset_prob", "repeats", "threads")}
    print(save(args.name, {"config": config, "rows": rows}))


def _round_robin(fns: dict, repeats: int, warmup: int = 3) -> dict:
    """Median microseconds of each ``fn`` over ``repeats`` rounds, one call of each per round."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    samples = {k: [] for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            samples[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) * 1e6 for k, v in samples.items()}


if __name__ == "__main__":
    main()
