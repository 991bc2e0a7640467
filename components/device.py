"""Device choice: CUDA when present, CPU otherwise, overridable."""
from __future__ import annotations

import torch


def resolve_device(flag: str = "auto") -> torch.device:
    if flag == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(flag)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {flag!r} requested but CUDA is not available (use 'auto' or 'cpu')")
    return device
