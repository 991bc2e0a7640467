"""Device choice (CUDA when present, CPU otherwise, overridable) and the CPU thread count."""
from __future__ import annotations

import torch

from .config_validation import UserError


def resolve_device(flag: str = "auto") -> torch.device:
    if flag == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(flag)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise UserError(f"device {flag!r} requested but CUDA is not available (accepted here: 'auto' or 'cpu')")
    return device


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
