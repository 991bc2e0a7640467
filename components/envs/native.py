"""Shared machinery of the tensor-native batched envs (CartPole, T-maze, MiniGrid Memory).

A subclass declares its hidden state entries, a fresh-state sampler, an
observation function and a transition; this base turns them into a TorchRL
``EnvBase`` with ``batch_size=[num_envs]``, partial resets driven by the
``"_reset"`` mask (so TorchRL's auto-reset puts the real final observation in
``"next"`` and the reset one at the next root), and one seeded
``torch.Generator`` on the env device (env ``i`` draws its own slice of every
batched sample, so indices get different streams).
"""
from __future__ import annotations

import torch
from tensordict import TensorDictBase
from torchrl.data import Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from ..tensordict_speedups import tensordict_unchecked


class NativeEnvBase(EnvBase):
    """Base of the tensor-native envs: ``num_envs`` copies stepped as one batch of tensors on
    ``device``, with their state as hidden entries and one seeded ``torch.Generator`` for every
    random draw. A subclass declares its state spec and writes the batched reset and step.

    Args:
        num_envs: copies in the batch (``batch_size=[num_envs]``).
        device: where the state and every output live.
        seed: seeds the generator (None: nondeterministic).
    """

    obs_dim: int = 0

    def __init__(self, num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        super().__init__(device=device, batch_size=torch.Size([num_envs]))
        self.rng = torch.Generator(device=self.device)
        self.rng.manual_seed(0 if seed is None else int(seed))
        n = self.batch_size
        state_spec = self._make_state_spec()
        self._state_keys = list(state_spec)
        self.observation_spec = Composite(
            **self._make_observation_spec(),
            **state_spec,
            shape=n,
            device=self.device,
        )
        self.action_spec = Categorical(self._action_n(), shape=n, device=self.device)
        self.reward_spec = Unbounded(shape=(*n, 1), device=self.device)
        self.done_spec = Composite(
            done=Categorical(2, shape=(*n, 1), dtype=torch.bool, device=self.device),
            terminated=Categorical(2, shape=(*n, 1), dtype=torch.bool, device=self.device),
            truncated=Categorical(2, shape=(*n, 1), dtype=torch.bool, device=self.device),
            shape=n,
            device=self.device,
        )

    # --- to implement -------------------------------------------------------
    def _make_observation_spec(self) -> dict:
        """The observation entries; by default one flat float ``"observation"`` of ``obs_dim``.
        An env with several entries overrides this and returns them as a dict from ``_observe``."""
        return {"observation": Unbounded(shape=(*self.batch_size, self.obs_dim), dtype=torch.float32, device=self.device)}

    def _make_state_spec(self) -> dict:
        raise NotImplementedError

    def _action_n(self) -> int:
        raise NotImplementedError

    def _fresh_state(self, n: int) -> dict:
        raise NotImplementedError

    def _observe(self, state: dict) -> torch.Tensor | dict:
        raise NotImplementedError

    def _transition(self, state: dict, action: torch.Tensor):
        """Returns (next_state, reward, terminated, truncated), the last three shaped [n, 1]
        (the done entries then match the spec as written, so TorchRL's ``_complete_done`` has
        nothing to fill or reshape and the lean env step skips it)."""
        raise NotImplementedError

    # --- TorchRL plumbing ----------------------------------------------------
    def _observation(self, state: dict) -> dict:
        obs = self._observe(state)
        return obs if isinstance(obs, dict) else {"observation": obs}

    @property
    def state_keys(self) -> list[str]:
        # read on every step: take the names from the spec built once in __init__
        return self._state_keys

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs) -> TensorDictBase:
        n = self.batch_size[0]
        fresh = self._fresh_state(n)
        reset = None if tensordict is None else tensordict.get("_reset", None)
        if reset is not None and all(k in tensordict.keys() for k in fresh):
            # partial reset with the state at hand: envs not flagged keep theirs. (The
            # collector's auto-reset passes only "_reset"; EnvBase.reset then merges
            # the fresh rows into the carried tensordict itself.)
            mask = reset.reshape(n, 1)
            state = {k: torch.where(mask, fresh[k], tensordict.get(k)) for k in fresh}
        else:
            state = fresh
        false = torch.zeros((n, 1), dtype=torch.bool, device=self.device)
        # built here, batch-shaped on self.device: no per-entry validation (a few us each, every step)
        return tensordict_unchecked(
            {**self._observation(state), **state, "done": false, "terminated": false.clone(), "truncated": false.clone()},
            self.batch_size,
            self.device,
        )

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        state = {k: tensordict.get(k) for k in self.state_keys}
        state, reward, terminated, truncated = self._transition(state, tensordict.get("action"))
        return tensordict_unchecked(
            {
                **self._observation(state),
                **state,
                "reward": reward,
                "done": terminated | truncated,
                "terminated": terminated,
                "truncated": truncated,
            },
            self.batch_size,
            self.device,
        )

    def _set_seed(self, seed: int | None) -> None:
        self.rng.manual_seed(0 if seed is None else int(seed))

    def rng_state(self) -> torch.Tensor:
        return self.rng.get_state()

    def set_rng_state(self, state: torch.Tensor) -> None:
        self.rng.set_state(state)
