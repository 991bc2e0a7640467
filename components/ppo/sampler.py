"""Recurrent minibatch sampler: whole env trajectories, or fixed-length chunks from their stored state.

Custom because TorchRL's ``SliceSampler`` draws slices with replacement from a
replay buffer; PPO needs each env trajectory exactly once per epoch, in a fresh
seeded order, with the time axis intact so the LSTM can run over it in one call.
TorchRL's ``SamplerWithoutReplacement`` has the same once-per-epoch rule, but it draws
from a replay buffer's storage: the rollout would be copied into a buffer every update
for what one ``randperm`` over the env axis does.
"""
from __future__ import annotations

from typing import Iterator

import torch
from tensordict import TensorDictBase

from ..keys import ACTION, ADVANTAGE, HIDDEN_C, HIDDEN_H, IS_INIT, LOG_PROB, MASK, OBS, VALUE, VALUE_TARGET

#: what the loss reads with the default keys; everything else (stale trunk outputs, logits, env state) is left behind
TRAIN_KEYS = (OBS, HIDDEN_H, HIDDEN_C, IS_INIT, ACTION, LOG_PROB, VALUE, ADVANTAGE, VALUE_TARGET)


class RecurrentMinibatchSampler:
    """Yields ``[B, L]`` minibatches from a ``[num_envs, T]`` rollout.

    * ``chunk_len=None``: ``B = envs_per_minibatch`` whole env trajectories
      (``L = T``); every env exactly once per epoch; the last minibatch may be short.
    * ``chunk_len=L``: the rollout is cut into ``T / L`` chunks per env; each
      chunk starts from the recurrent state stored at its first step (truncated
      BPTT), and a minibatch holds ``envs_per_minibatch * T / L`` chunks so it
      carries as many steps as in whole-trajectory mode.

    Every minibatch carries a boolean ``mask_key`` entry (``[B, L, 1]``) marking valid
    steps; the loss reduces through it. With ``T % L == 0`` enforced there is no
    padding today, but the loss never assumes that. ``keys`` are the entries a
    minibatch keeps (``RecurrentPPOTrainer`` passes the agent's and the loss's own);
    a missing one is an error naming it.
    """

    def __init__(
        self,
        num_envs: int,
        rollout_len: int,
        envs_per_minibatch: int,
        chunk_len: int | None = None,
        seed: int = 0,
        keys: tuple = TRAIN_KEYS,
        mask_key=MASK,
    ):
        if not 1 <= envs_per_minibatch <= num_envs:
            raise ValueError(f"envs_per_minibatch={envs_per_minibatch} out of range [1, {num_envs}] (num_envs)")
        if chunk_len is not None and not (1 <= chunk_len <= rollout_len and rollout_len % chunk_len == 0):
            raise ValueError(
                f"chunk_len={chunk_len} must divide rollout_len={rollout_len} and lie in [1, {rollout_len}] (or be None)"
            )
        self.num_envs, self.rollout_len = num_envs, rollout_len
        self.envs_per_minibatch, self.chunk_len = envs_per_minibatch, chunk_len
        self.keys, self.mask_key = tuple(dict.fromkeys(keys)), mask_key
        self.generator = torch.Generator()
        self.generator.manual_seed(seed)

    def num_minibatches(self) -> int:
        return -(-self.num_envs // self.envs_per_minibatch)

    def _sequences(self, batch: TensorDictBase) -> TensorDictBase:
        if tuple(batch.batch_size) != (self.num_envs, self.rollout_len):
            raise ValueError(
                f"rollout batch has shape {tuple(batch.batch_size)}, expected ({self.num_envs}, {self.rollout_len})"
            )
        missing = [k for k in self.keys if batch.get(k, None) is None]
        if missing:
            raise KeyError(f"rollout batch lacks {missing} (the sampler keeps {list(self.keys)})")
        seqs = batch.select(*self.keys)
        if self.chunk_len is not None and self.chunk_len != self.rollout_len:
            seqs = seqs.reshape(self.num_envs * (self.rollout_len // self.chunk_len), self.chunk_len)
        seqs.set(self.mask_key, torch.ones(*seqs.batch_size, 1, dtype=torch.bool, device=batch.device))
        return seqs

    def epoch(self, batch: TensorDictBase) -> Iterator[TensorDictBase]:
        """One epoch of minibatches in a fresh order drawn from the seeded generator."""
        seqs = self._sequences(batch)
        n = seqs.batch_size[0]
        per_mb = self.envs_per_minibatch * (n // self.num_envs)
        order = torch.randperm(n, generator=self.generator).to(batch.device)
        # one gather per entry for the whole epoch; the minibatches are then views of it
        # (the same minibatches as indexing with each slice of ``order``, a quarter of the calls)
        shuffled = seqs[order]
        for start in range(0, n, per_mb):
            yield shuffled[start : start + per_mb]

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        self.generator.set_state(state["generator"])
