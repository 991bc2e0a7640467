"""Shared pieces of the checkpoint tests: tiny configs, signals from inside a call, weight comparison, file digests."""
import hashlib
import signal
from pathlib import Path

import torch

from torchrl_memory import TrainingRun

DQN_TINY = ["--hidden-sizes", "16", "--batch-size", "8", "--min-replay-size", "32", "--buffer-capacity", "500", "--eval-episodes", "2", "--plot", "false"]
PPO_TINY = ["--num-envs", "4", "--rollout-len", "16", "--hidden-size", "16", "--envs-per-minibatch", "2", "--eval-episodes", "2", "--plot", "false"]
FRAMES = 4 * 16  # env steps per PPO update with PPO_TINY


def signal_on_call(monkeypatch, owner, name, n, signum, times=1):
    """Raises ``signum`` in this process ``times`` times from inside the ``n``-th call of ``owner.name``
    (a class's method or a module's function), before the real call runs."""
    real, calls = getattr(owner, name), {"n": 0}

    def wrapped(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == n:
            for _ in range(times):
                signal.raise_signal(signum)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)  # on a class, a plain function becomes a method: self is args[0]
    return calls


def latest(root) -> dict:
    return TrainingRun.find(root).load_latest()


def weights(state: dict) -> dict:
    """The learned tensors of a checkpoint of either pipeline (flattened)."""
    src = state["agent"]["loss"] if "agent" in state else state["trainer"]["model"]
    out = {}

    def walk(obj, prefix):
        if isinstance(obj, torch.Tensor):
            out[prefix] = obj
        elif isinstance(obj, dict):
            for k, v in obj.items():
                walk(v, f"{prefix}.{k}")

    walk(src, "")
    return out


def assert_same_weights(a: dict, b: dict) -> None:
    wa, wb = weights(a), weights(b)
    assert wa.keys() == wb.keys() and wa
    for key in wa:
        torch.testing.assert_close(wa[key], wb[key], rtol=0, atol=0, msg=key)


def digest(folder: Path) -> dict:
    """sha256 of every file below ``folder``: a resume that must change nothing leaves it equal."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(folder).rglob("*")) if p.is_file()}
