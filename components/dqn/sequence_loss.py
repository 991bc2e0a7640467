"""The recurrent DQN's TD loss on windows of one env's stream (R2D2: Kapturowski et al., ICLR 2019).

For a window ``[N, L]`` from ``SequenceReplay``:

1. **Burn-in.** The first ``B`` steps are unrolled without gradient from the state stored at
   step 0, by the online and the target network each (``burn_in_state``); they carry no loss.
2. **One unroll per network** over the other ``M = L - B`` steps from that state, in recurrent
   mode (one padded RNN call or one parallel scan), zeroing the state at every ``is_init``.
3. **TD(0) targets with the real next observation.** ``Q(s'_k)`` needs the state after step
   ``k``. For a step that continues, ``s'_k`` is the next step's observation and the unroll
   already has its Q-values; after a step that ends an episode (and after the window's last
   step) the next observation is not in the stream, so the unroll input gets it inserted
   right after the step (``is_init`` False: it continues the episode), and the next step,
   which starts a new episode, resets the state anyway. A truncated step thus bootstraps from
   its real final observation with the state that saw the whole episode, a terminated one does
   not bootstrap, and the window's last step bootstraps from its own next observation.
   ``y_k = r_k + gamma * (1 - terminated_k) * Q_target(s'_k, a*)``, ``a*`` the online net's
   argmax (double DQN) or the target's. With ``n_step`` > 1 (R2D2 uses 5) the rewards of up
   to n steps are summed first, cut where an episode or the window ends (dqn/n_step.py).
4. Huber loss (smooth L1, TorchRL's ``DQNLoss`` default) over the ``N * M`` steps; the inserted
   entries and the stream's end padding are never read.

tests/dqn/test_recurrent_dqn.py pins the targets on hand-built windows (termination,
truncation, a reset inside) against step-by-step recomputation, the absence of gradient
through burn-in steps, and the Q-values against those computed while acting.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from tensordict import TensorDict
from tensordict.nn import TensorDictSequential
from torchrl.modules import set_recurrent_mode

from .n_step import n_step_targets
from .recurrent_q import ACTION_VALUE, burn_in_state, state_keys_of, trunk_of
from ..keys import ACTION


def td_stream(window: TensorDict, trunk, initial_states: tuple[torch.Tensor, ...]) -> tuple[TensorDict, torch.Tensor, torch.Tensor]:
    """The unroll input for ``window`` ``[N, M]``: its observations with each episode's real next
    observation inserted after its last step (and after the window's last step), padded at the
    end; the state ``initial_states`` at position 0, zeros elsewhere (where only ``is_init``
    positions read a stored state).

    Returns ``(stream [N, W], rows, pos)``: step ``k`` of row ``i`` sits at ``pos[i, k]`` and
    its next observation at ``pos[i, k] + 1``."""
    obs_key, init_key = trunk.in_keys[0], trunk.in_keys[-1]
    n, m = window.batch_size
    obs, next_obs = window.get(obs_key), window.get(("next", obs_key))
    is_init = window.get(init_key).reshape(n, m)
    inserted = window.get(("next", "done")).reshape(n, m).clone()
    inserted[:, -1] = True
    k = inserted.long()
    pos = torch.arange(m, device=obs.device) + k.cumsum(1) - k
    width = m + int(k.sum(1).max())
    rows = torch.arange(n, device=obs.device)[:, None].expand(n, m)
    x = obs.new_zeros(n, width, *obs.shape[2:])
    x[rows, pos] = obs
    x[rows[inserted], pos[inserted] + 1] = next_obs[inserted]
    init = torch.ones(n, width, dtype=torch.bool, device=obs.device)  # the padding: fresh, never read
    init[rows, pos] = is_init
    init[rows[inserted], pos[inserted] + 1] = False
    stream = TensorDict({obs_key: x, init_key: init.unsqueeze(-1)}, batch_size=[n, width])
    return with_initial_states(stream, trunk, initial_states), rows, pos


def with_initial_states(stream: TensorDict, trunk, initial_states: tuple[torch.Tensor, ...]) -> TensorDict:
    """``stream`` (inputs shared, not copied) with fresh state entries: ``initial_states`` at
    position 0 (zeros where that step starts an episode), zeros elsewhere."""
    out = stream.clone(False)
    init0 = stream.get(trunk.in_keys[-1])[:, 0, 0]
    for key, h in zip(state_keys_of(trunk), initial_states):
        states = h.new_zeros(*stream.batch_size, *h.shape[1:])
        states[:, 0] = torch.where(init0.reshape(-1, *[1] * (h.dim() - 1)), 0.0, h)
        out.set(key, states)
    return out


def sequence_td_terms(
    q_network: TensorDictSequential,
    target_network: TensorDictSequential,
    window: TensorDict,
    burn_in: int,
    gamma: float,
    double_dqn: bool = True,
    n_step: int = 1,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(Q(s_k, a_k), y_k)``, each ``[N, L - burn_in]``, for ``window`` ``[N, L]`` (module
    docstring): the first with gradient into ``q_network``, the targets without; ``n_step`` > 1
    sums rewards over up to n steps of the window before the bootstrap (``n_step_targets``)."""
    trunk, target_trunk = trunk_of(q_network), trunk_of(target_network)
    if burn_in > 0:
        prefix, window = window[:, :burn_in], window[:, burn_in:]
        online_h0, target_h0 = burn_in_state(trunk, prefix), burn_in_state(target_trunk, prefix)
    else:
        online_h0 = target_h0 = tuple(window.get(k)[:, 0] for k in state_keys_of(trunk))
    stream, rows, pos = td_stream(window, trunk, online_h0)
    # the same inputs (shared), the target's own state at position 0
    target_stream = with_initial_states(stream, trunk, target_h0) if burn_in > 0 else stream.clone(False)
    with set_recurrent_mode(True):
        q_all = q_network(stream).get(ACTION_VALUE)
        with torch.no_grad():
            target_next = target_network(target_stream).get(ACTION_VALUE)[rows, pos + 1]
    q = q_all[rows, pos].gather(-1, window.get(ACTION).reshape(*pos.shape, 1)).squeeze(-1)
    with torch.no_grad():
        if double_dqn:
            best = q_all[rows, pos + 1].argmax(-1, keepdim=True)
            next_value = target_next.gather(-1, best).squeeze(-1)
        else:
            next_value = target_next.max(-1).values
        terminated = window.get(("next", "terminated")).reshape(pos.shape)
        reward = window.get(("next", "reward")).reshape(pos.shape)
        done = window.get(("next", "done")).reshape(pos.shape)
        target = n_step_targets(reward, next_value, terminated, done, n_step=n_step, gamma=gamma)
    return q, target


def sequence_td_loss(*args, **kwargs) -> torch.Tensor:
    """The TD loss of a window ``[N, L]``: Huber (smooth L1) between the two halves of
    ``sequence_td_terms`` (same arguments), mean over the ``N * (L - burn_in)`` steps after the burn-in."""
    return F.smooth_l1_loss(*sequence_td_terms(*args, **kwargs))
