"""``PaddedLSTMModule`` / ``PaddedGRUModule``: TorchRL's ``LSTMModule`` / ``GRUModule`` with a
leaner forward for both of their modes.

Same keys, same ``make_tensordict_primer``, same ``set_recurrent_mode`` switch; a
drop-in subclass (``is_init`` is read through ``in_keys[-1]``, where ``LSTMModule`` puts it). Why custom (all measured on CartPoleNoVel, 2-core CPU):

* recurrent mode (the loss): when ``is_init`` fires inside a row, ``LSTMModule``
  splits the row into per-episode windows, pads them and runs ``nn.LSTM`` on a
  ``PackedSequence``. On CPU the packed path steps through the data with one
  ``narrow`` per time step, and autograd answers each with a zero-filled copy of
  the whole input projection: O(T^2) memory traffic, a third of an update
  step. Here the padded windows go to ``nn.LSTM`` as a plain tensor (the fused
  oneDNN kernel), and the split and the way back are three gathers with indices
  computed from ``is_init`` instead of whole-tensordict split/pad/unpad
  (~1 ms per call). Padding sits after each window's last real step, so it
  cannot reach any real output.
* sequential mode (the collector): the same single-step maths without the
  reshape/update round trip through a second tensordict.

Outputs and gradients equal ``LSTMModule``'s and ``GRUModule``'s (tests/ppo/test_padded_rnn.py). One
difference: the final state that recurrent mode writes at each window's
last step are taken after the padding. The losses read the LSTM output only,
and TorchRL's own docstring says not to trust those values for
multi-trajectory inputs; the states the collector stores come from sequential
mode, which is exact.
"""
from __future__ import annotations

import torch
from tensordict.nn import dispatch
from torch import nn
from torchrl.modules import GRUModule, LSTMModule


class _PaddedRecurrentForward:
    """The fast paths, written once for any cell whose state is a tuple of ``[layers, B, H]`` tensors.

    A subclass names its ``torch.nn`` RNN (``_rnn``) and how many state keys it has; keys are
    the module's own: ``in_keys = [input, *states, is_init]``, ``out_keys = [output, *("next", state)]``.
    """

    _num_states: int = 1

    def _rnn(self) -> nn.RNNBase:
        raise NotImplementedError

    def _call_rnn(self, x, states):
        y, out = self._rnn()(x, states if self._num_states > 1 else states[0])
        return y, (out if self._num_states > 1 else (out,))

    def _encode(self, x):
        # optional CNN ahead of the cell (ppo/image_encoder.py), set as ``module.input_encoder``
        encoder = getattr(self, "input_encoder", None)
        return x if encoder is None else encoder(x)

    @dispatch  # keyword calls (module(obs=x, recurrent_state_h=h, ...)) as LSTMModule accepts them
    def forward(self, tensordict):
        states = self._stored_states(tensordict)
        if states is None or tensordict.ndim == 0:  # no stored state, or not a batch: TorchRL's path
            if getattr(self, "input_encoder", None) is None:
                return super().forward(tensordict)
            inner = tensordict.copy()  # TorchRL's path on the encoded input, outputs copied back
            inner.set(self.in_keys[0], self._encode(tensordict.get(self.in_keys[0])))
            return tensordict.update(super().forward(inner).select(*self.out_keys, strict=False))
        if self.recurrent_mode:
            return self._recurrent_forward(tensordict, states)
        return self._step_forward(tensordict, states)

    def _stored_states(self, td):
        """The states as stored in ``td``, or ``None`` where the fast paths do not apply."""
        rnn = self._rnn()
        if not isinstance(rnn, (nn.LSTM, nn.GRU)) or rnn.bidirectional:
            return None
        states = tuple(td.get(k, None) for k in self.in_keys[1 : 1 + self._num_states])
        return None if any(s is None for s in states) else states

    def _step_forward(self, td, states):
        """Sequential mode (collection): one step for every batch entry, state zeroed where ``is_init``.

        Same maths as TorchRL's sequential path without its reshape/update round trip
        through a second tensordict (~0.3 ms per collector step here).
        """
        x = self._encode(td.get(self.in_keys[0]))
        n = td.batch_size.numel()
        fresh = td.get(self.in_keys[-1]).reshape(n, 1, 1)
        hidden = tuple(torch.where(fresh, 0.0, s.reshape(n, *s.shape[-2:])).transpose(0, 1).contiguous() for s in states)
        y, out = self._call_rnn(x.reshape(n, 1, x.shape[-1]), hidden)
        td.set(self.out_keys[0], y.reshape(*td.batch_size, y.shape[-1]))
        for key, new, like in zip(self.out_keys[1:], out, states):
            td.set(key, new.transpose(0, 1).reshape(like.shape))
        return td

    def _recurrent_forward(self, td, states):
        """Recurrent mode: time is the last batch dim, the others are folded into rows (as in
        TorchRL); one padded RNN call, with windows split at ``is_init``.

        The split and the way back are three gathers with indices computed from ``is_init``
        (TorchRL's split-and-pad builds and unpads whole tensordicts: ~1 ms per call here).
        """
        x = self._encode(td.get(self.in_keys[0]))
        n, T = td.batch_size.numel(), td.batch_size[-1]
        starts = td.get(self.in_keys[-1]).reshape(n // T, T).clone()
        starts[:, 0] = True  # every row opens a window, from the state stored at its first step
        flat_starts = starts.reshape(-1).nonzero().squeeze(-1)  # [W] window starts, row-major
        lengths = torch.diff(flat_starts, append=flat_starts.new_tensor([n]))
        window = starts.reshape(-1).cumsum(0) - 1  # window of every step
        pos = torch.arange(n, device=x.device) - flat_starts[window]  # its position in the window
        width = int(lengths.max())
        # padded grid [W, width]: past a window's end, repeat its last step (outputs there are dropped)
        grid = flat_starts[:, None] + torch.minimum(torch.arange(width, device=x.device)[None], lengths[:, None] - 1)
        xs = x.reshape(n, x.shape[-1])[grid]
        hidden = tuple(s.reshape(n, *s.shape[-2:])[flat_starts].transpose(0, 1).contiguous() for s in states)
        y, out = self._call_rnn(xs, hidden)
        td.set(self.out_keys[0], y.reshape(-1, y.shape[-1])[window * width + pos].reshape(*td.batch_size, -1))
        # like TorchRL: the final state at each window's last step, zeros elsewhere (see module docstring)
        last = flat_starts + lengths - 1
        for key, state, like in zip(self.out_keys[1:], out, states):
            buf = torch.zeros(n, *like.shape[-2:], device=like.device, dtype=state.dtype)
            td.set(key, buf.index_copy(0, last, state.transpose(0, 1)).reshape(like.shape))
        return td


class PaddedLSTMModule(_PaddedRecurrentForward, LSTMModule):
    """TorchRL's ``LSTMModule`` with the fused padded forward (module docstring): same
    constructor, keys, primer, ``set_recurrent_mode`` and keyword calls.

    Args:
        input_size, hidden_size, num_layers, ...: as ``LSTMModule`` (``nn.LSTM``'s arguments).
        in_key / in_keys, out_key / out_keys: as ``LSTMModule``; the defaults read
            ``[in_key, "recurrent_state_h", "recurrent_state_c", "is_init"]``.

    Example:
        >>> lstm = PaddedLSTMModule(input_size=3, hidden_size=8, in_key="observation", out_key="embed")
        >>> env = env.append_transform(lstm.make_tensordict_primer())  # stores the state per step
        >>> with set_recurrent_mode(True):  # a [B, T] window in one nn.LSTM call
        ...     td = lstm(td)
    """

    _num_states = 2

    def _rnn(self) -> nn.RNNBase:
        return self.lstm


class PaddedGRUModule(_PaddedRecurrentForward, GRUModule):
    """TorchRL's ``GRUModule`` with the fused padded forward (module docstring): same constructor,
    keys (``[in_key, "recurrent_state", "is_init"]``), primer, ``set_recurrent_mode`` and
    keyword calls; see ``PaddedLSTMModule``."""

    _num_states = 1

    def _rnn(self) -> nn.RNNBase:
        return self.gru
