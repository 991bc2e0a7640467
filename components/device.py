"""Device choice (CUDA when present, CPU otherwise, overridable) and the CPU thread count."""
from __future__ import annotations

import re

import torch

from .config_validation import UserError


def resolve_device(flag: str = "auto") -> torch.device:
    """``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` as a ``torch.device``; a device this
    machine does not have (or a string torch does not read) is a ``UserError``."""
    if flag == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(flag)
    except (RuntimeError, TypeError):
        raise UserError(f"device {flag!r} is not a device name (accepted: 'auto', 'cpu', 'cuda' or 'cuda:N')") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise UserError(f"device {flag!r} requested but CUDA is not available (accepted here: 'auto' or 'cpu')")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        count = torch.cuda.device_count()
        raise UserError(f"device {flag!r}: this machine has {count} CUDA device{'s' if count != 1 else ''} (accepted: 'cuda:0' to 'cuda:{count - 1}', 'cpu', 'auto')")
    return device


def allocation_error(err: BaseException) -> UserError | None:
    """A one-line ``UserError`` for a failed memory allocation (a size far beyond the machine:
    ``--num-envs 1000000000``, ``--hidden-size 10000000``), or None for any other error.

    torch reports a failed CPU allocation as a ``RuntimeError`` ("can't allocate memory") and a
    failed CUDA one as ``torch.OutOfMemoryError``; Python and numpy raise ``MemoryError``."""
    text = str(err).splitlines()[0] if str(err) else ""
    if isinstance(err, torch.OutOfMemoryError):
        where = "GPU"
    elif isinstance(err, MemoryError) or (isinstance(err, RuntimeError) and "can't allocate memory" in text):
        where = "CPU"
    else:
        return None
    m = re.search(r"allocate ([0-9]+) bytes", text) or re.search(r"allocate ([0-9.]+ [KMGTPE]iB)", text)
    asked = "" if m is None else f" ({m.group(1)} bytes)" if m.group(1).isdigit() else f" ({m.group(1)})"
    return UserError(
        f"out of {where} memory: the run asked for more than this machine has{asked} "
        "(accepted: sizes that fit; the large ones are --num-envs x --rollout-len, --hidden-size / --hidden-sizes, --buffer-capacity, --eval-episodes)"
    )


def set_cpu_threads(num_threads: int) -> None:
    """Intra-op CPU threads for this process; 0 leaves torch's default (one per core).

    The pipelines default to 1: their networks are small enough that a second thread buys
    nothing measurable (on 2 cores both settings time within run-to-run noise), and with a
    fixed thread count a seed's result does not depend on the core count of a given CPU type
    (float reductions split over threads sum in a different order, and PPO on CartPoleNoVel
    amplifies that into a different final policy).
    """
    if num_threads > 0:
        torch.set_num_threads(num_threads)
