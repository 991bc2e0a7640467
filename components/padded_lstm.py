"""``PaddedLSTMModule``: TorchRL's ``LSTMModule`` with a leaner forward for both of its modes.

Same keys, same ``make_tensordict_primer``, same ``set_recurrent_mode`` switch; a
drop-in subclass. Why custom (all measured on CartPoleNoVel, 2-core CPU):

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

Outputs and gradients equal ``LSTMModule``'s (tests/test_padded_lstm.py). One
difference: the final ``(h, c)`` that recurrent mode writes at each window's
last step are taken after the padding. The losses read the LSTM output only,
and TorchRL's own docstring says not to trust those values for
multi-trajectory inputs; the states the collector stores come from sequential
mode, which is exact.
"""
from __future__ import annotations

import torch
from torch import nn
from torchrl.modules import LSTMModule
from torchrl.modules.tensordict_module import rnn as _rnn


class PaddedLSTMModule(LSTMModule):
    def forward(self, tensordict):
        if not isinstance(self.lstm, nn.LSTM) or self.lstm.bidirectional:
            return super().forward(tensordict)
        if not self.recurrent_mode:
            return self._step_forward(tensordict)
        if tensordict.ndim == 2:
            return self._recurrent_forward(tensordict)
        return super().forward(tensordict)

    def _step_forward(self, td):
        """Sequential mode (collection): one step for every batch entry, state zeroed where ``is_init``.

        Same maths as ``LSTMModule``'s sequential path without its reshape/update round trip
        through a second tensordict (~0.3 ms per collector step here).
        """
        x_key, h_key, c_key = self.in_keys[:3]
        x, h, c = td.get(x_key), td.get(h_key, None), td.get(c_key, None)
        if h is None or c is None:
            return super().forward(td)
        n = td.batch_size.numel()
        fresh = td.get("is_init").reshape(n, 1, 1)
        hidden = tuple(torch.where(fresh, 0.0, s.reshape(n, *s.shape[-2:])).transpose(0, 1).contiguous() for s in (h, c))
        y, (h_n, c_n) = self.lstm(x.reshape(n, 1, x.shape[-1]), hidden)
        td.set(self.out_keys[0], y.reshape(*td.batch_size, y.shape[-1]))
        td.set(self.out_keys[1], h_n.transpose(0, 1).reshape(h.shape))
        td.set(self.out_keys[2], c_n.transpose(0, 1).reshape(c.shape))
        return td

    def _recurrent_forward(self, td):
        """Recurrent mode over a ``[B, T]`` tensordict: one padded LSTM call, windows split at ``is_init``.

        The split and the way back are three gathers with indices computed from ``is_init``
        (TorchRL's split-and-pad builds and unpads whole tensordicts: ~1 ms per call here).
        """
        x_key, h_key, c_key = self.in_keys[:3]
        x, h, c = td.get(x_key), td.get(h_key, None), td.get(c_key, None)
        if h is None or c is None:  # no stored state: LSTMModule's zero-initialised path
            return super().forward(td)
        B, T = td.batch_size
        starts = td.get("is_init").reshape(B, T).clone()
        starts[:, 0] = True  # every row opens a window, from the state stored at its first step
        flat_starts = starts.reshape(-1).nonzero().squeeze(-1)  # [W] window starts, row-major
        n = B * T
        lengths = torch.diff(flat_starts, append=flat_starts.new_tensor([n]))
        window = starts.reshape(-1).cumsum(0) - 1  # window of every step
        pos = torch.arange(n, device=x.device) - flat_starts[window]  # its position in the window
        width = int(lengths.max())
        # padded grid [W, width]: past a window's end, repeat its last step (outputs there are dropped)
        grid = flat_starts[:, None] + torch.minimum(torch.arange(width, device=x.device)[None], lengths[:, None] - 1)
        xs = x.reshape(n, *x.shape[2:])[grid]
        hidden = tuple(s.reshape(n, *s.shape[2:])[flat_starts].transpose(0, 1).contiguous() for s in (h, c))
        y, (h_n, c_n) = self.lstm(xs, hidden)
        td.set(self.out_keys[0], y.reshape(-1, y.shape[-1])[window * width + pos].reshape(B, T, -1))
        # like LSTMModule: the final state at each window's last step, zeros elsewhere (see module docstring)
        last = flat_starts + lengths - 1
        for key, state, like in ((self.out_keys[1], h_n, h), (self.out_keys[2], c_n, c)):
            out = torch.zeros(n, *like.shape[2:], device=like.device, dtype=state.dtype)
            td.set(key, out.index_copy(0, last, state.transpose(0, 1)).reshape(like.shape))
        return td

    def _lstm(self, input, batch, steps, device, dtype, hidden0_in=None, hidden1_in=None, splits=None, is_init=None, backend="pad"):
        # reached through LSTMModule.forward for the inputs the fast paths leave to it (e.g. [E, B, T]):
        # its split-and-pad still runs, but the LSTM gets the padded tensor, not a PackedSequence
        if splits is None or hidden0_in is None or not isinstance(self.lstm, nn.LSTM):
            return super()._lstm(input, batch, steps, device, dtype, hidden0_in, hidden1_in, splits, is_init, backend)
        # each window starts from the state stored at its first step, num_layers first for nn.LSTM
        hidden = tuple(_rnn._canonical_contiguous(h[..., 0, :, :].transpose(-3, -2)) for h in (hidden0_in, hidden1_in))
        y, (h_n, c_n) = self.lstm(input, hidden)
        return (y, *(_rnn._place_at_traj_end(s.transpose(0, 1), splits, steps) for s in (h_n, c_n)))

