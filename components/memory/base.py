"""``ScanMemoryModule``: the TensorDict face every parallel-scan memory model shares, with the
conventions of TorchRL's ``LSTMModule`` / ``GRUModule``.

* Keys belong to the module: ``in_keys = [input, state, is_init]``,
  ``out_keys = [output, ("next", state)]`` (defaults ``"recurrent_state"``, as ``GRUModule``).
* ``make_tensordict_primer()`` declares the state the env stores with each step (the state
  entering that step), zero-filled at reset.
* Two modes, switched by ``torchrl.modules.set_recurrent_mode`` (or
  ``default_recurrent_mode``), read through ``recurrent_mode``:

  - sequential (collection): input ``[*B, F]``, one step from the stored state, which
    restarts from zeros where ``is_init``;
  - recurrent (training): input ``[*B, T, F]``, time the last batch dim; every row starts
    from the state stored at its first step and restarts from zeros at every ``is_init``
    inside it, all through one reset-aware scan (``scan.py``), no split, no padding.

Both modes run the same ``_run`` (sequential is a window of length 1), so the step the
collector took and the step the loss recomputes are the same maths.

Unlike TorchRL's modules, recurrent mode writes the exact next state at every step (the
scan computes them all anyway), not only at the window's last step; and an episode starting
inside a window restarts from zeros, not from the state stored at its ``is_init`` step (the
same whenever the primer zero-fills the state at reset, as it does by default).

Under ``torch.autocast`` the states stay float32 / complex64 (``at_least_float32``). The
parallel scan is a custom ``autograd.Function`` without a vmap rule: under ``torch.func``
transforms (``vmap``, ``grad``) pass ``scan="loop"``.

The state is stored as a real tensor of ``state_shape`` with at most two dims (complex
states keep real and imaginary parts in a trailing dim of 2), so replay buffers,
checkpoints and code that reads a state's trailing ``[layers, hidden]`` dims work unchanged.
"""
from __future__ import annotations

from typing import Sequence

import torch
from tensordict import TensorDictBase, unravel_key_list
from tensordict.nn import TensorDictModuleBase, dispatch
from torchrl.data import Unbounded
from torchrl.modules import recurrent_mode as _recurrent_mode_context

from .scan import linear_scan, scan_loop

SCANS = {"parallel": linear_scan, "loop": scan_loop}


class ScanMemoryModule(TensorDictModuleBase):
    """Keys, primer, modes and reshaping; a model supplies ``state_shape`` and ``_run``.

    Args:
        in_key / in_keys: the input key (the state and ``is_init`` keys then default to
            ``"recurrent_state"`` and ``"is_init"``), or all three keys.
        out_key / out_keys: the output key (the next state then goes to
            ``("next", "recurrent_state")``), or both keys.
        default_recurrent_mode: the mode outside any ``set_recurrent_mode`` context
            (``None``: sequential).
        scan: ``"parallel"`` (``linear_scan``) or ``"loop"`` (``scan_loop``, the step-by-step
            definition: for tests and timing).
    """

    DEFAULT_IN_KEYS = ["recurrent_state"]
    DEFAULT_OUT_KEYS = [("next", "recurrent_state")]

    def __init__(
        self,
        *,
        in_key=None,
        in_keys: Sequence | None = None,
        out_key=None,
        out_keys: Sequence | None = None,
        default_recurrent_mode: bool | None = None,
        scan: str = "parallel",
    ):
        super().__init__()
        if (in_key is None) == (in_keys is None):
            raise ValueError(f"pass in_key or in_keys, not both or neither (got in_key={in_key!r}, in_keys={in_keys!r})")
        if (out_key is None) == (out_keys is None):
            raise ValueError(f"pass out_key or out_keys, not both or neither (got out_key={out_key!r}, out_keys={out_keys!r})")
        in_keys = unravel_key_list([in_key, *self.DEFAULT_IN_KEYS] if in_key is not None else list(in_keys))
        out_keys = unravel_key_list([out_key, *self.DEFAULT_OUT_KEYS] if out_key is not None else list(out_keys))
        if len(in_keys) == 2:
            in_keys = [*in_keys, "is_init"]
        if len(in_keys) != 3 or len(out_keys) != 2:
            raise ValueError(
                f"{type(self).__name__} reads [input, state, is_init] and writes [output, ('next', state)]; "
                f"got in_keys={in_keys}, out_keys={out_keys}"
            )
        if scan not in SCANS:
            raise ValueError(f"scan {scan!r} (accepted: one of {list(SCANS)})")
        self.in_keys = in_keys
        self.out_keys = out_keys
        self._recurrent_mode = default_recurrent_mode
        self.scan_impl = scan

    # --- what a model supplies ----------------------------------------------------------------
    state_shape: tuple[int, ...]

    def _run(self, x: torch.Tensor, h0: torch.Tensor | None, reset: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x [N, T, F]``, stored state ``h0 [N, *state_shape]`` (``None``: zeros), ``reset [N, T]``
        -> (output ``[N, T, out]``, the state after every step ``[N, T, *state_shape]``)."""
        raise NotImplementedError

    def scan(self, a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None, reset: torch.Tensor) -> torch.Tensor:
        """The model's recurrence ``h_t = a_t * h_{t-1} + b_t`` with resets, by ``scan_impl``."""
        return SCANS[self.scan_impl](a, b, h0, reset)

    # --- TorchRL conventions ----------------------------------------------------------------
    @property
    def recurrent_mode(self) -> bool:
        mode = _recurrent_mode_context()
        return bool(self._recurrent_mode) if mode is None else mode

    @recurrent_mode.setter
    def recurrent_mode(self, value):
        raise RuntimeError("recurrent_mode cannot be changed in place: use the torchrl.modules.set_recurrent_mode context manager")

    @property
    def canonical_keys(self) -> list:
        """The keys whose layout matters to this module (as ``LSTMModule.canonical_keys``), for
        ``torchrl.modules.canonicalize_rnn_subset``."""
        return list(self.in_keys) + list(self.out_keys)

    def canonicalize(self, data: TensorDictBase, *, inplace: bool = False) -> TensorDictBase:
        """``data`` with this module's keys made contiguous, other leaves untouched (as ``LSTMModule.canonicalize``)."""
        from torchrl.modules import canonicalize_rnn_subset

        return canonicalize_rnn_subset(data, [self], inplace=inplace)

    def make_tensordict_primer(self):
        """The env transform that declares and zero-fills the state entry (as ``GRUModule``'s)."""
        from torchrl.envs import TensorDictPrimer

        state_key = self.in_keys[1] if isinstance(self.in_keys[1], tuple) else (self.in_keys[1],)
        next_key = self.out_keys[1] if isinstance(self.out_keys[1], tuple) else (self.out_keys[1],)
        if next_key != ("next", *state_key):
            raise RuntimeError(
                f"make_tensordict_primer needs out_keys[1] == ('next', in_keys[1]); got in_keys={self.in_keys}, out_keys={self.out_keys}"
            )
        return TensorDictPrimer({state_key: Unbounded(shape=self.state_shape)}, expand_specs=True)

    def _encode(self, x: torch.Tensor) -> torch.Tensor:
        # optional network ahead of the memory (e.g. ppo/image_encoder.py's CNN), set as ``module.input_encoder``
        encoder = getattr(self, "input_encoder", None)
        return x if encoder is None else encoder(x)

    @dispatch  # keyword calls, as LSTMModule accepts them
    def forward(self, tensordict: TensorDictBase) -> TensorDictBase:
        x = self._encode(tensordict.get(self.in_keys[0]))
        stored = tensordict.get(self.in_keys[1], None)
        is_init = tensordict.get(self.in_keys[-1])
        batch = tensordict.batch_size
        if self.recurrent_mode:
            if tensordict.ndim == 0:
                raise ValueError(f"{type(self).__name__} in recurrent mode needs a time dim (the last batch dim); got a 0-dim tensordict")
            T = batch[-1]
            n = batch.numel() // T
            # each row starts from the state stored at its first step
            h0 = None if stored is None else stored.reshape(n, T, *self.state_shape)[:, 0]
        else:
            T, n = 1, batch.numel()
            h0 = None if stored is None else stored.reshape(n, *self.state_shape)
        y, states = self._run(x.reshape(n, T, x.shape[-1]), h0, is_init.reshape(n, T))
        tensordict.set(self.out_keys[0], y.reshape(*batch, y.shape[-1]))
        tensordict.set(self.out_keys[1], states.reshape(*batch, *self.state_shape))
        return tensordict


def at_least_float32(x: torch.Tensor) -> torch.Tensor:
    """``x`` in float32 where autocast made it half or bfloat16: a state summed over a whole
    window keeps float32 precision, and complex states stay complex64 (``torch.complex`` takes
    no bfloat16, and complex32 is poorly supported)."""
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def complex_state(h: torch.Tensor | None, shape: tuple[int, ...]) -> torch.Tensor | None:
    """A stored real state ``[N, ..., 2]`` as the complex tensor ``[N, *shape]`` it holds."""
    return None if h is None else torch.view_as_complex(h.contiguous().reshape(h.shape[0], *shape, 2))


def real_state(h: torch.Tensor, state_shape: tuple[int, ...]) -> torch.Tensor:
    """Complex states ``[N, T, ...]`` as the real ``[N, T, *state_shape]`` layout stored per step."""
    return torch.view_as_real(h).reshape(*h.shape[:2], *state_shape)

