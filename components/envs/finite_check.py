"""``CheckFiniteEnvData``: a NaN or inf from an env stops the run at the step it appears, naming it.

A gymnasium env that returns a NaN observation or reward otherwise fails far from the
cause: the policy's sampling raises inside the collector, the PPO loss turns non-finite
three steps later, or DQN trains on, and saves, NaN weights. This transform sits right
after the env (before any encoding, normalisation or reward sum, which would spread the
value) and checks every float observation entry and the reward of each step and reset:
one ``isfinite`` per entry over all copies and one read of the combined flag per step,
so the common case costs a few microseconds. The tensor-native envs (``CartPoleEnv``,
``TMazeEnv``, ``MiniGridMemoryEnv``) cannot produce such values and do not get it.

The error is a ``UserError``: the pipelines print it as one line and exit 2. It is raised
before the step reaches a policy, a replay buffer, an update or a checkpoint, so every
checkpoint on disk holds only finite data; ``NonFiniteEnvDataError.stopped_at`` adds the
run's step count and its newest checkpoint to the message.
"""
from __future__ import annotations

from pathlib import Path

import torch
from tensordict import TensorDictBase
from torchrl.data import Composite
from torchrl.envs.transforms import Transform

from ..config_validation import UserError


class NonFiniteEnvDataError(UserError):
    """An env returned NaN or inf in an observation entry or the reward.

    ``copy``: which of the batched env copies; ``episode_step``: the step of that copy's
    episode (0 = the reset observation); ``steps_before``: env steps (all copies) taken in
    the current batch before the failing one, set by a collector that steps several times
    per batch. ``stopped_at`` fills in the run's last complete step and checkpoint."""

    def __init__(self, env_id: str, entry: str, copy: int, num_envs: int, episode_step: int | None, value: float):
        self.env_id, self.entry, self.copy, self.num_envs = env_id, entry, copy, num_envs
        self.episode_step, self.value = episode_step, value
        self.steps_before = 0
        self.run_steps: int | None = None
        self.checkpoint: str | None = None
        self.checkpoint_missing = False
        super().__init__(self._message())

    @property
    def env_step(self) -> int | None:
        """The failing transition's 1-based number in the run's env-step count (copies in order), once known."""
        if self.run_steps is None:
            return None
        return self.run_steps + self.steps_before + self.copy + 1

    def stopped_at(self, run_steps: int, run_path: str | Path | None) -> "NonFiniteEnvDataError":
        """Adds the run's last complete step (``run_steps``) and its newest checkpoint on disk to the message."""
        self.run_steps = int(run_steps)
        if run_path is not None:
            path = Path(run_path)
            numbered = sorted((p for p in path.glob("checkpoints/step_*.pt") if p.stem[5:].isdigit()), key=lambda p: int(p.stem[5:]))
            newest = path / "latest.pt" if (path / "latest.pt").is_file() else (numbered[-1] if numbered else None)
            self.checkpoint = None if newest is None else str(newest)
            self.checkpoint_missing = newest is None
        self.args = (self._message(),)
        return self

    def _message(self) -> str:
        when = "in its reset observation" if self.episode_step == 0 else (
            f"at step {self.episode_step} of its episode" if self.episode_step is not None else "at a step")
        where = f"env {self.env_id!r} copy {self.copy} (of {self.num_envs})"
        line = f"{where} returned a non-finite {self.entry} ({self.value}) {when}"
        if self.env_step is not None:
            line += f", env step {self.env_step} of the run"
        line += "; stopped before it reached an update or a checkpoint"
        if self.checkpoint is not None:
            line += f"; last good checkpoint: {self.checkpoint}"
        elif self.checkpoint_missing:
            line += "; no checkpoint written yet"
        return line + " (accepted: finite observations and rewards; a gymnasium wrapper can clip or replace the values)"


class CheckFiniteEnvData(Transform):
    """Raises ``NonFiniteEnvDataError`` when a float observation entry or the reward holds NaN or inf.

    ``obs_keys``: the env's observation entries (the float ones are checked, integer ones cannot
    hold NaN); ``env_id`` names the env in the error. Leaves the data untouched."""

    def __init__(self, obs_keys: list, env_id: str, reward_key="reward", step_count_key="step_count"):
        super().__init__(in_keys=[], out_keys=[])
        self.obs_keys, self.env_id, self.reward_key, self.step_count_key = list(obs_keys), env_id, reward_key, step_count_key
        self._float_keys: list | None = None

    def _checked_keys(self) -> list:
        if self._float_keys is None:
            spec: Composite = self.parent.observation_spec if self.parent is not None else Composite()
            self._float_keys = [k for k in self.obs_keys if k in spec.keys(True) and spec[k].dtype.is_floating_point]
        return self._float_keys

    def _check(self, td: TensorDictBase, keys: list, root: TensorDictBase | None) -> None:
        n = td.batch_size.numel()
        flags = [torch.isfinite(t).reshape(n, -1).all(-1) for t in (td.get(k, None) for k in keys) if t is not None]
        if not flags:
            return
        ok = flags[0] if len(flags) == 1 else torch.stack(flags).all(0)
        if bool(ok.all()):  # the one device read per step
            return
        self._raise(td, keys, root, n)

    def _raise(self, td: TensorDictBase, keys: list, root: TensorDictBase | None, n: int) -> None:
        for copy in range(n):
            for key in keys:
                t = td.get(key, None)
                if t is None:
                    continue
                row = t.reshape(n, -1)[copy]
                bad = row[~torch.isfinite(row)]
                if bad.numel():
                    entry = "reward" if key == self.reward_key else ("observation" if key == "observation" else f"observation entry {key!r}")
                    step = 0 if root is None else self._episode_step(root, copy, n)
                    raise NonFiniteEnvDataError(self.env_id, entry, copy, n, step, float(bad[0]))

    def _episode_step(self, root: TensorDictBase, copy: int, n: int) -> int | None:
        count = root.get(self.step_count_key, None)  # the StepCounter's count before this step
        return None if count is None else int(count.reshape(n, -1)[copy, 0]) + 1

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        self._check(next_tensordict, [*self._checked_keys(), self.reward_key], tensordict)
        return next_tensordict

    def _reset(self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase) -> TensorDictBase:
        # the copies not reset hold the observation their last step returned, checked then
        self._check(tensordict_reset, self._checked_keys(), None)
        return tensordict_reset

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return next_tensordict
