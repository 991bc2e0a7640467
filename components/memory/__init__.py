"""Memory models that run as a reset-aware parallel scan over time, with TorchRL's
``LSTMModule`` conventions (keys, primer, sequential / recurrent modes).

``MEMORY_MODELS`` maps a model name to its class; every class takes
``(input_size, hidden_size, *, in_key(s), out_key(s), device, default_recurrent_mode, scan)``.
``linear_scan`` / ``scan_loop`` are the shared recurrence (parallel, and its definition);
``make_trunk`` builds any memory by name (these and the LSTM/GRU) for PPO and DQN alike.
"""
from __future__ import annotations

from .base import ScanMemoryModule
from .ffm import FFMModule
from .lru import LRUModule
from .mingru import MinGRUModule
from .scan import linear_scan, scan_loop
from .trunk import TRUNK_MODELS, make_trunk

MEMORY_MODELS: dict[str, type[ScanMemoryModule]] = {"ffm": FFMModule, "lru": LRUModule, "mingru": MinGRUModule}

__all__ = ["FFMModule", "LRUModule", "MEMORY_MODELS", "MinGRUModule", "ScanMemoryModule", "TRUNK_MODELS", "linear_scan", "make_trunk", "scan_loop"]
