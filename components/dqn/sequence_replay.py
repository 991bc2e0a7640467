"""``SequenceReplay``: the recurrent DQN's replay, one ring of transitions per env in time order,
sampled as windows of ``L`` consecutive steps of one env.

Each stored step holds the transition and the recurrent state the acting policy had when it
chose the action (the env primer's entry, as PPO stores it), with ``is_init``. A window never
crosses into another env's data or over the ring's write position (the newest step next to
the oldest); it may cross an episode start inside its env, where ``is_init`` resets the state
in the unroll, exactly as in PPO's training windows. That choice keeps every window full:
no padding, no step of a short episode (POPGym's, or CartPole's early ones of 10-20 steps)
wasted on a pad, and the loss sees every stored step at the same rate.

Why custom rather than ``TensorDictReplayBuffer`` with ``SliceSampler``: ``SliceSampler``
cuts slices at trajectory ends (``traj_key`` / ``end_key``), so windows stop at episode
boundaries and need padding; keyed by env instead, it would not see the ring's write
position and could join the newest step to the oldest. Sampling here is index arithmetic
on preallocated ``[num_envs, capacity / num_envs]`` leaves (one TensorDict gather per
batch). tests/dqn/test_sequence_replay.py pins the windows: every one is ``L`` consecutive
steps of one env's stream as written, and all such windows are drawn (uniformly over env
and start).
"""
from __future__ import annotations

import torch
from tensordict import TensorDict, TensorDictBase

from ..runs.run_dir import tensordict_from_plain, tensordict_to_plain


class SequenceReplay:
    """Per-env rings of transitions; ``sample(n, L)`` returns ``[n, L]`` windows.

    Args:
        capacity: transitions held in all (each env holds ``capacity // num_envs``, the oldest
            dropped first).
        num_envs: the envs stepping together; ``extend`` takes one step of each.
        device: where the storage lives.
    """

    def __init__(self, capacity: int, num_envs: int, device: torch.device | str = "cpu"):
        if capacity // num_envs < 1:
            raise ValueError(f"capacity {capacity} holds no step per env for {num_envs} envs")
        self.per_env, self.num_envs, self.device = capacity // num_envs, num_envs, torch.device(device)
        self.storage: TensorDict | None = None  # [num_envs, per_env], allocated at the first extend
        self.written = 0  # steps written per env since the start (all envs step together)

    def extend(self, step: TensorDictBase) -> None:
        """Appends one batched env step ``[num_envs]`` (env i's transition at index i)."""
        step = step.reshape(-1)
        if step.shape[0] != self.num_envs:
            raise ValueError(f"extend takes one step of each of the {self.num_envs} envs, got a batch of {step.shape[0]}")
        if self.storage is None:
            self.storage = step.to(self.device).unsqueeze(1).expand(self.num_envs, self.per_env).clone()
        self.storage[:, self.written % self.per_env] = step.to(self.device)
        self.written += 1

    @property
    def filled(self) -> int:
        """Steps held per env."""
        return min(self.written, self.per_env)

    def __len__(self) -> int:
        return self.filled * self.num_envs

    def can_sample(self, length: int) -> bool:
        """Whether every env holds a window of ``length`` steps."""
        return self.filled >= length

    def sample(self, n: int, length: int) -> TensorDict:
        """``n`` windows of ``length`` consecutive steps, env and start uniform (with replacement),
        drawn from torch's global RNG (a checkpoint's RNG state makes resumed draws exact)."""
        if not self.can_sample(length):
            raise ValueError(f"a window of {length} steps needs {length} stored steps per env; {self.filled} are")
        oldest = self.written - self.filled
        start = oldest + torch.randint(self.filled - length + 1, (n,), device=self.device)
        env = torch.randint(self.num_envs, (n,), device=self.device)
        t = (start[:, None] + torch.arange(length, device=self.device)) % self.per_env
        return self.storage[env[:, None].expand(n, length), t]

    # --- persistence ------------------------------------------------------------------
    def state_dict(self) -> dict:
        return {"written": self.written, "storage": None if self.storage is None else tensordict_to_plain(self.storage)}

    def load_state_dict(self, state: dict) -> None:
        self.written = int(state["written"])
        self.storage = None if state["storage"] is None else tensordict_from_plain(state["storage"], self.device)
