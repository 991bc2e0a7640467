"""``deferred_stop``: Ctrl-C and SIGTERM end a run at the next step boundary, never mid-step.

Why: a checkpoint must hold the state after a *complete* step. An interrupt that lands
between DQN's exploration draw and its gradient step, or between a backward and the
optimizer step, leaves a state no straight run ever passes through, and a resume from
it is not exact. Inside the context the first SIGINT/SIGTERM only sets a flag; the loop
calls ``check()`` at its boundaries, which raises ``StopRequested`` (a
``KeyboardInterrupt``, so plain ``except KeyboardInterrupt`` handlers still run). A
second Ctrl-C interrupts at once, as without the context, possibly mid-step: the
pipelines then save the snapshot of the last complete update (PPO) or nothing (DQN,
whose state mid-step is no resume point), never the half-done state. Outside the main
thread (where handlers cannot be installed) the context does nothing.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

from ..worker_signals import leave_interrupts_to_the_main_process  # noqa: F401  (re-exported: the workers' side)


class StopRequested(KeyboardInterrupt):
    """A SIGINT or SIGTERM arrived; ``signum`` says which (exit status 128 + signum)."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class StopFlag:
    def __init__(self):
        self.signum: int | None = None

    def check(self) -> None:
        """Raises ``StopRequested`` if a stop signal arrived since the context opened."""
        if self.signum is not None:
            raise StopRequested(self.signum)


@contextmanager
def deferred_stop() -> Iterator[StopFlag]:
    """Context in which SIGINT and SIGTERM set a flag instead of stopping; ``check()`` on the
    yielded ``StopFlag`` raises ``StopRequested`` at a boundary. A second Ctrl-C raises at once."""
    flag = StopFlag()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum, frame):
        if flag.signum is not None and signum == signal.SIGINT:
            raise StopRequested(signum)  # second Ctrl-C: stop now
        flag.signum = signum

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
