"""GAE for an LSTM critic that is right at terminations, truncations and window ends.

TorchRL's ``GAE`` module re-runs the critic over ``"next"`` in recurrent mode,
which chains the LSTM across an auto-reset (the real final observation at a
truncation is followed by the *reset* observation of the next episode), so the
bootstrap at a truncation would use the wrong state. We keep TorchRL's
functional ``generalized_advantage_estimate`` and only supply the next-state
values ourselves:

* ``V(s_t)`` is the value stored at collection time (the same forward the
  loss re-evaluates, so the ratio-identity test covers it);
* ``V(s_{t+1})`` for *every* step is one batched single-step LSTM call on the
  real next observation (``("next", <obs key>)``, the final one at a
  truncation) from the state carried to it (``("next", <state keys>)``,
  stored by the collector; the keys are the agent's). That covers the window end and truncations alike.

Then ``terminated`` zeroes the bootstrap and ``done = terminated | truncated``
cuts the lambda-trace, so nothing leaks across an episode boundary.
"""
from __future__ import annotations

import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.objectives.value.functional import generalized_advantage_estimate

from .actor_critic import LSTMActorCritic
from .reward_scaling import ReturnScaler
from ..keys import ADVANTAGE, REWARD, TERMINATED, TRUNCATED, VALUE, VALUE_TARGET


@torch.no_grad()
def next_state_values(batch: TensorDictBase, actor_critic: LSTMActorCritic) -> torch.Tensor:
    """V(real next observation, state carried to it) for every step of ``batch``.

    The keys are the agent's own (``obs_key``, ``state_keys``). A recurrent agent whose
    state is missing from ``batch["next"]`` is an error, never a silent zero state: the
    next-state values would then be those of a fresh episode.
    """
    nxt = batch.get("next")
    keys = [actor_critic.obs_key, *actor_critic.state_keys]
    missing = [k for k in keys if nxt.get(k, None) is None]
    if missing:
        raise KeyError(
            f"next_state_values: batch['next'] lacks {missing}, which the agent reads (its in_keys {actor_critic.in_keys}); "
            "a recurrent agent needs its state stored per step (append agent.primer() to the env)"
        )
    flat = TensorDict({k: nxt.get(k) for k in keys}, batch_size=batch.batch_size)
    if actor_critic.is_recurrent:
        # the carried state is already the right one: never zero it here
        flat.set(actor_critic.in_keys[-1], torch.zeros(*batch.batch_size, 1, dtype=torch.bool, device=batch.device))
    flat = flat.reshape(-1)
    actor_critic.trunk(flat)  # sequential (single-step) mode: one call over N*T rows
    actor_critic.value_head(flat)
    return flat.get(actor_critic.value_key).reshape(*batch.batch_size, 1)


@torch.no_grad()
def gae_from_values(
    batch: TensorDictBase,
    next_values: torch.Tensor,
    gamma: float,
    lmbda: float,
    reward_scaler: ReturnScaler | None = None,
    value_key=VALUE,
    advantage_key=ADVANTAGE,
    value_target_key=VALUE_TARGET,
    reward_key=REWARD,
    terminated_key=TERMINATED,
    truncated_key=TRUNCATED,
) -> TensorDictBase:
    """GAE from the stored ``state_value`` and given next-state values (``[N, T, 1]``).

    ``terminated`` stops the bootstrap; ``terminated | truncated`` cuts the trace.
    With a ``reward_scaler`` the rewards are first divided by the running std of
    the discounted return (the scaler is updated with this window). The reward and
    done entries are read under the env's keys (``reward_key``, ``terminated_key``,
    ``truncated_key``; TorchRL's names by default).
    """
    nxt = batch.get("next")
    missing = [k for k in (reward_key, terminated_key, truncated_key) if nxt.get(k, None) is None]
    if missing:
        raise KeyError(f"gae_from_values: batch['next'] lacks {missing} (an env with other names: pass its keys, e.g. reward_key=env.reward_key)")
    terminated = nxt.get(terminated_key)
    done = terminated | nxt.get(truncated_key)
    reward = nxt.get(reward_key)
    if reward_scaler is not None:
        reward_scaler.update(reward, done)
        reward = reward_scaler.scale(reward)
    advantage, value_target = generalized_advantage_estimate(
        gamma, lmbda, state_value=batch.get(value_key), next_state_value=next_values,
        reward=reward, done=done, terminated=terminated, time_dim=-2,
    )
    batch.set(advantage_key, advantage)
    batch.set(value_target_key, value_target)
    return batch


def compute_gae(
    batch: TensorDictBase,
    actor_critic: LSTMActorCritic,
    gamma: float,
    lmbda: float,
    reward_scaler: ReturnScaler | None = None,
    advantage_key=ADVANTAGE,
    value_target_key=VALUE_TARGET,
    reward_key=REWARD,
    terminated_key=TERMINATED,
    truncated_key=TRUNCATED,
) -> TensorDictBase:
    """Writes ``advantage`` and ``value_target`` into a ``[num_envs, T]`` rollout.

    The agent's own keys are read from it (``value_key``, ``obs_key``, ``state_keys``); the
    env's reward and done entries come as arguments (``reward_key=env.reward_key`` for an env
    that renames them), TorchRL's names by default."""
    return gae_from_values(
        batch, next_state_values(batch, actor_critic), gamma, lmbda, reward_scaler,
        value_key=actor_critic.value_key, advantage_key=advantage_key, value_target_key=value_target_key,
        reward_key=reward_key, terminated_key=terminated_key, truncated_key=truncated_key,
    )
