"""Linear epsilon schedule indexed by env steps (the step count before the current step)."""
from __future__ import annotations


class LinearEpsilon:
    """``start`` at step 0, linear to ``end`` at ``decay_steps``, flat after (warm-up steps count)."""

    def __init__(self, start: float = 1.0, end: float = 0.05, decay_steps: int = 50_000):
        for name, v in (("epsilon_start", start), ("epsilon_end", end)):
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name}={v} out of range [0, 1]")
        if decay_steps < 1:
            raise ValueError(f"epsilon_decay_steps={decay_steps} out of range: accepted an integer >= 1")
        self.start, self.end, self.decay_steps = float(start), float(end), int(decay_steps)

    def __call__(self, step: int) -> float:
        frac = min(max(step, 0) / self.decay_steps, 1.0)
        return self.start + frac * (self.end - self.start)
