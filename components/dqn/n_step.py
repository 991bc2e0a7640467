"""n-step returns for the MLP DQN, folded from the replay at sample time.

For a sampled transition at step t of one env, the target of ``DQNAgent.td_target`` becomes

    r_t + g r_{t+1} + ... + g^{k-1} r_{t+k-1} + g^k (1 - terminated_{t+k-1}) max_a Q_target(s_{t+k}, a)

with k = n, or fewer where the episode ended (terminated *or* truncated) at step t+k-1 or where
step t+k-1 is the newest one stored. ``s_{t+k}`` is the real next observation stored with step
t+k-1 (the final one before a reset), so a truncated window bootstraps from where the episode
really stopped and a terminated one does not bootstrap at all.

Why custom and not TorchRL's ``MultiStepTransform``: that transform keeps each transition's own
done flags ("entries in done_keys are left untouched") while its next observation and summed
reward run up to the end of the window, so a window that reaches a termination is stored with
``terminated`` False and ``DQNLoss`` bootstraps from the terminal observation
(tests/dqn/test_n_step.py shows it on a hand-built episode). It also holds the last n steps
back in a buffer of its own, which a checkpoint would have to carry for an exact resume. Folding
at sample time needs no state beyond the replay itself: the storage already holds each env's
steps in order, ``num_envs`` slots apart (the in-process loop extends one batched step at a time);
a collector worker's batch ``[k envs, W steps]`` is stored time-major, so k slots apart, and its
transitions carry ``STEPS_AFTER`` (W - 1 - t) because the next batch may come from another worker:
their windows stop at the end of their batch (a shorter, still exact, bootstrap).
The folded batch fed to TorchRL's ``DQNLoss`` (with ``steps_to_next_obs``, which its TD(0)
estimator turns into g^k) gives our loss exactly (tests/dqn/test_n_step.py).
"""
from __future__ import annotations

import torch
from tensordict import TensorDictBase

from ..keys import OBS

#: per-transition bound on the look-ahead, stored with collector batches: how many later steps of
#: the same env follow it, ``stride`` slots apart, in the same stored batch
STEPS_AFTER = "n_step_steps_after"


def fold_n_step(
    data: TensorDictBase,
    idx: torch.Tensor,
    *,
    n_step: int,
    gamma: float,
    stride: int,
    newest: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The n-step (next observation, reward, terminated, discount g^k) of the transitions at ``idx``.

    Args:
        data: the replay storage's ``[capacity]`` TensorDict of transitions, a circular buffer.
        idx: storage slots of the sampled transitions (1-D).
        n_step: steps summed at most (1 gives the stored transition back, with discount g).
        gamma: the discount g.
        stride: slots between one env's consecutive steps (the number of envs stepped together).
        newest: the slot written last; no window reads past it.

    Where ``data`` holds ``STEPS_AFTER``, no window reads more steps past a transition than it says.
    """
    capacity = data.shape[0]
    reward_all = data.get(("next", "reward")).reshape(capacity)
    done_all = data.get(("next", "done")).reshape(capacity)
    ahead = (newest - idx).remainder(capacity)  # slots stored after idx
    steps_after = data.get(STEPS_AFTER, None)
    room = None if steps_after is None else steps_after.reshape(capacity)[idx]
    reward = reward_all[idx]  # advanced indexing copies: the sum below does not touch the storage
    last = idx
    steps = torch.ones_like(idx)
    alive = ~done_all[idx]
    discount = 1.0
    for j in range(1, n_step):
        alive &= ahead >= j * stride
        if room is not None:
            alive &= room >= j
        nxt = (idx + j * stride).remainder(capacity)
        discount *= gamma
        reward += torch.where(alive, reward_all[nxt], 0.0) * discount
        last = torch.where(alive, nxt, last)
        steps += alive
        alive &= ~done_all[nxt]
    next_obs = data.get(("next", OBS)).index_select(0, last)
    terminated = data.get(("next", "terminated")).reshape(capacity)[last]
    return next_obs, reward, terminated, torch.pow(gamma, steps.to(reward.dtype))


def n_step_targets(
    reward: torch.Tensor,
    next_value: torch.Tensor,
    terminated: torch.Tensor,
    done: torch.Tensor,
    *,
    n_step: int,
    gamma: float,
) -> torch.Tensor:
    """n-step TD targets along the last (time) axis of a window: the recurrent DQN's counterpart of
    ``fold_n_step``, from per-step one-step terms.

    Step k's target sums ``reward`` over steps k..k+m-1 and bootstraps with g^m from
    ``next_value`` at step k+m-1 (zero where that step terminated), m = n_step or fewer where an
    episode ends (``done``: terminated or truncated) or the window ends first. ``next_value[k]`` is
    the target network's value of step k's real next observation (sequence_loss.py), so a
    truncated episode bootstraps from its final observation here too.

    Args:
        reward, next_value: ``[..., M]`` floats.
        terminated, done: ``[..., M]`` bools.
        n_step: steps summed at most (1: the one-step target r + g (1 - terminated) v).
        gamma: the discount g.
    """
    m = reward.shape[-1]
    one_step = next_value.masked_fill(terminated, 0.0)  # what each step bootstraps from, read unshifted
    bootstrap = one_step.clone()
    target = reward.clone()
    tail = torch.full_like(reward, gamma)  # g^(steps summed), applied to the bootstrap
    alive = ~done
    discount = 1.0
    for j in range(1, min(n_step, m)):
        discount *= gamma
        alive = alive[..., : m - j]  # step k + j exists for k < m - j
        target[..., : m - j] += torch.where(alive, reward[..., j:], 0.0) * discount
        bootstrap[..., : m - j] = torch.where(alive, one_step[..., j:], bootstrap[..., : m - j])
        tail[..., : m - j] = torch.where(alive, discount * gamma, tail[..., : m - j])
        alive = alive & ~done[..., j:]
    return target + tail * bootstrap
