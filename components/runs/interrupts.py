"""``deferred_stop``: Ctrl-C and SIGTERM end a run at the next step boundary, never mid-step.

Why: a checkpoint must hold the state after a *complete* step. An interrupt that lands
between DQN's exploration draw and its gradient step, or between a backward and the
optimizer step, leaves a state no straight run ever passes through, and a resume from
it is not exact. Inside the context the first SIGINT/SIGTERM only sets a flag; the loop
calls ``check()`` at its boundaries, which raises ``StopRequested`` (a
``KeyboardInterrupt``, so plain ``except KeyboardInterrupt`` handlers still run). A
second Ctrl-C interrupts at once, as without the context. Outside the main thread
(where handlers cannot be installed) the context does nothing.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator


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


def leave_interrupts_to_the_main_process() -> None:
    """Called where a worker process builds its envs: Ctrl-C and SIGTERM are the main process's.

    A terminal's Ctrl-C reaches every process of the group, and so does a group SIGTERM
    (``kill -TERM -PGID``, a batch scheduler cancelling a job). A collector or env worker
    killed by it mid-batch leaves the main process waiting for a batch that never comes,
    so the run can neither finish its step nor save. In the workers SIGINT is ignored and
    SIGTERM is ignored while the main process lives: it finishes the step, saves, and shuts
    the workers down (TorchRL's shutdown ends stragglers with SIGKILL, so nothing waits on
    an ignored SIGTERM). An orphaned worker (its main process gone) still dies of SIGTERM.
    Does nothing in the main process (no multiprocessing parent)."""
    import multiprocessing
    import os

    if multiprocessing.parent_process() is None:
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent_pid = os.getppid()

    def on_sigterm(signum, frame):
        if os.getppid() != parent_pid:  # re-parented: nobody is left to shut this worker down
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)
