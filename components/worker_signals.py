"""The signal policy of worker processes (collector workers, env workers, Ray actors).

A leaf module (standard library only) so that ``envs/`` and ``runs/`` both import it without
importing each other; ``runs/interrupts.py`` re-exports it next to the main process's side,
``deferred_stop``.
"""
from __future__ import annotations

import multiprocessing
import os
import signal


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
    if multiprocessing.parent_process() is None:
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent_pid = os.getppid()

    def on_sigterm(signum, frame):
        if os.getppid() != parent_pid:  # re-parented: nobody is left to shut this worker down
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)
