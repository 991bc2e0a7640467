"""``PaddedLSTMModule``: TorchRL's ``LSTMModule`` without the packed sequence in recurrent mode.

Why custom: when ``is_init`` fires inside a row, ``LSTMModule`` splits the row
into per-episode windows, pads them and runs ``nn.LSTM`` on a
``PackedSequence``. On CPU the packed path steps through the data with one
``narrow`` per time step, and autograd answers each with a zero-filled copy of
the whole input projection: O(T^2) memory traffic, about a third of a
recurrent PPO update here (12.3 -> 8.2 ms per minibatch step on CartPoleNoVel,
8 envs x 32 steps, LSTM 64). Run on the padded tensor instead, the LSTM takes
the fused oneDNN kernel and its backward.

Same outputs for every real step: padding sits after each window's last real
step, so it cannot reach them (tests/test_padded_lstm.py pins outputs and
gradients against ``LSTMModule``). What differs is the final ``(h, c)`` that
recurrent mode writes at each window's end: here they are taken after the
padding. Losses read the LSTM output only, and TorchRL's docstring already
says not to trust those values for multi-trajectory inputs; collection runs
in sequential mode, which is unchanged.
"""
from __future__ import annotations

from torch import nn
from torchrl.modules import LSTMModule
from torchrl.modules.tensordict_module import rnn as _rnn


class PaddedLSTMModule(LSTMModule):
    def _lstm(self, input, batch, steps, device, dtype, hidden0_in=None, hidden1_in=None, splits=None, is_init=None, backend="pad"):
        if splits is None or hidden0_in is None or not isinstance(self.lstm, nn.LSTM):
            return super()._lstm(input, batch, steps, device, dtype, hidden0_in, hidden1_in, splits, is_init, backend)
        # each window starts from the state stored at its first step, num_layers first for nn.LSTM
        hidden = tuple(_rnn._canonical_contiguous(h[..., 0, :, :].transpose(-3, -2)) for h in (hidden0_in, hidden1_in))
        y, (h_n, c_n) = self.lstm(input, hidden)
        return (y, *(_rnn._place_at_traj_end(s.transpose(0, 1), splits, steps) for s in (h_n, c_n)))

