"""Shared machinery of the tensor-native POPGym envs: the draws, the card deck, the reset of flagged rows.

Every random draw of these envs goes through one ``Draws`` object (``env.draws``) with a
handful of methods (uniform and normal numbers, a card from a deck, one of several options,
a permutation), each told which env rows it draws for. That keeps the envs short and lets the
lockstep tests (``tests/envs/popgym``) put popgym's own draws (its deck order, mines, ships,
bandit means, noise) in their place: the test swaps ``env.draws`` for a scripted one, and
everything else runs as in training.

Decks are kept as the count of cards of each kind (suit, rank or colour) still to be dealt,
and a card is dealt by drawing a kind in proportion to those counts: the sequence of kinds
that comes out is distributed exactly as the kinds read off a shuffled deck, while a reset
costs a few numbers per env instead of a shuffle of up to 832 cards.
"""
from __future__ import annotations

import torch
from tensordict import TensorDictBase

from ..native import NativeEnvBase
from ...tensordict_speedups import tensordict_unchecked


class Draws:
    """The random draws of a batched POPGym env, from the env's seeded generator.

    ``rows``: the env rows drawn for (a LongTensor of ``k`` indices), or ``None`` for all of
    them; the results have ``k`` (or ``num_envs``) rows. This implementation ignores it (each
    call draws fresh numbers for the rows it is given); a scripted replacement uses it to
    return the draws of particular envs.
    """

    def __init__(self, generator: torch.Generator, device: torch.device):
        self.g, self.device = generator, device

    def uniform(self, shape: tuple, rows: torch.Tensor | None, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """U[0, 1) numbers of ``shape`` (rows first)."""
        return torch.rand(shape, generator=self.g, device=self.device, dtype=dtype)

    def normal(self, shape: tuple, rows: torch.Tensor | None) -> torch.Tensor:
        """Standard normal float64 numbers of ``shape`` (rows first)."""
        return torch.randn(shape, generator=self.g, device=self.device, dtype=torch.float64)

    def choice(self, valid: torch.Tensor, rows: torch.Tensor | None) -> torch.Tensor:
        """A uniformly chosen index of a True entry of each row of ``valid`` [k, m] (bool), as [k, 1].
        A row with no True entry gets ``m - 1``."""
        return weighted_choice(valid.to(torch.int64), self.uniform((valid.shape[0], 1), rows, torch.float64))

    def deal(self, counts: torch.Tensor, rows: torch.Tensor | None) -> torch.Tensor:
        """One card per row from a deck of ``counts`` [k, kinds] cards of each kind: its kind, [k, 1]."""
        return weighted_choice(counts, self.uniform((counts.shape[0], 1), rows, torch.float64))

    def permutation(self, k: int, m: int, rows: torch.Tensor | None) -> torch.Tensor:
        """``k`` uniform random permutations of ``range(m)``, [k, m]."""
        return torch.rand((k, m), generator=self.g, device=self.device).argsort(-1)


def weighted_choice(weights: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """The index ``i`` of each row of non-negative integer ``weights`` [k, m] with probability
    ``weights[i] / weights.sum()``, from U[0, 1) numbers ``u`` [k, 1]; [k, 1] int64."""
    total = weights.sum(-1, keepdim=True)
    r = torch.minimum((u * total).long(), (total - 1).clamp(min=0))  # a uniform integer in [0, total)
    return (weights.cumsum(-1) <= r).sum(-1, keepdim=True).clamp(max=weights.shape[-1] - 1)


class PopGymEnvBase(NativeEnvBase):
    """``NativeEnvBase`` whose resets draw fresh state for the flagged rows only.

    ``one_hot_observation``: the observation is one-hot codes (what ``EncodeObservation`` makes
    of popgym's Discrete / MultiDiscrete spaces), so, as on the gymnasium path, it gets no
    running normalisation; the CartPoles, whose observation is a float Box, set it False.

    A subclass writes ``_fresh_rows(rows)`` (the start state of envs ``rows``, or of all envs
    when ``rows`` is None) in place of ``_fresh_state``. At 16,384 envs some row ends on nearly
    every step; drawing a fresh state for every row then (the base class's way) would cost
    more than the step itself. On a GPU the flagged rows are found with one ``nonzero`` (a sync).
    """

    one_hot_observation: bool = True

    def __init__(self, num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        super().__init__(num_envs=num_envs, device=device, seed=seed)
        self.draws = Draws(self.rng, self.device)
        # what the rows that are not reset hold in a reset's output when the request carries no
        # state (TorchRL's auto-reset keeps those rows from its own tensordict): zeros
        self._blank = {k: self.observation_spec[k].zero() for k in self.state_keys}

    def _fresh_rows(self, rows: torch.Tensor | None) -> dict:
        raise NotImplementedError

    def _fresh_state(self, n: int) -> dict:
        return self._fresh_rows(None)

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs) -> TensorDictBase:
        n = self.batch_size[0]
        mask = None if tensordict is None else tensordict.get("_reset", None)
        if mask is None or bool(mask.all()):
            state = self._fresh_rows(None)
        else:
            rows = mask.reshape(n).nonzero().squeeze(-1)
            fresh = self._fresh_rows(rows)
            carried = all(k in tensordict.keys() for k in fresh)
            state = {k: (tensordict.get(k) if carried else self._blank[k]).index_copy(0, rows, fresh[k]) for k in fresh}
        false = torch.zeros((n, 1), dtype=torch.bool, device=self.device)
        return tensordict_unchecked(
            {**self._observation(state), **state, "done": false, "terminated": false.clone(), "truncated": false.clone()},
            self.batch_size,
            self.device,
        )

    def _rows_count(self, rows: torch.Tensor | None) -> int:
        return self.batch_size[0] if rows is None else int(rows.numel())


def one_hot(index: torch.Tensor, n: int) -> torch.Tensor:
    """float32 one-hot [k, n] of an int index [k, 1] or [k] (what ``EncodeObservation`` makes of a Discrete)."""
    return torch.nn.functional.one_hot(index.reshape(-1), n).to(torch.float32)
