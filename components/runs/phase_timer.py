"""``PhaseTimer``: wall seconds per named phase of a training loop (collect, update, eval, ...)."""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator


class PhaseTimer:
    """Wall time per named phase of a run (collection, advantages, updates, evaluation), for the end-of-run split."""

    def __init__(self):
        self.start = time.perf_counter()
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - t0

    def elapsed(self, excluding: tuple[str, ...] = ()) -> float:
        """Seconds since the timer started, minus the time spent in the ``excluding`` phases."""
        return time.perf_counter() - self.start - sum(self.seconds.get(p, 0.0) for p in excluding)

    def summary(self) -> str:
        return ", ".join(f"{p} {s:.1f}s" for p, s in self.seconds.items())
