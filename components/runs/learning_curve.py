"""Learning-curve PNG from a run's JSONL logs (training episodes and greedy evals)."""
from __future__ import annotations

from pathlib import Path


def plot_learning_curve(train: list[dict], evals: list[dict], path: Path, title: str = "") -> Path:
    """Writes ``path`` (PNG): training-episode returns with their moving mean, and the greedy
    evaluations (mean and spread), over env steps; the rows are those of the run's JSONL logs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    if train:
        steps = [r["total_steps"] for r in train]
        rets = [r["total_reward"] for r in train]
        ax.plot(steps, rets, ".", ms=2, alpha=0.3, color="tab:blue", label="training episodes")
        window = max(1, min(50, len(rets) // 10))
        smooth = [sum(rets[max(0, i - window + 1) : i + 1]) / len(rets[max(0, i - window + 1) : i + 1]) for i in range(len(rets))]
        ax.plot(steps, smooth, color="tab:blue", label=f"training (mean of last {window})")
    if evals:
        by_step: dict[int, list[float]] = {}
        for r in evals:
            by_step.setdefault(r["total_steps"], []).append(r["total_reward"])
        xs = sorted(by_step)
        ax.plot(xs, [sum(by_step[x]) / len(by_step[x]) for x in xs], "o-", color="tab:red", label="greedy eval (mean)")
    ax.set_xlabel("env steps")
    ax.set_ylabel("episode return")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
