"""``RecurrentDQNAgent``: DQN with a memory (R2D2-style: stored state, burn-in, sequence replay),
and ``build_dqn_agent``, which picks it or the MLP ``DQNAgent`` from ``DQNConfig.model``.

Everything but the network, the replay and the update is ``DQNAgent``'s: epsilon schedule,
``EGreedyModule``, TorchRL's ``DQNLoss`` as the holder of the online and target parameters
(so ``HardUpdate`` / ``SoftUpdate`` and checkpoints work unchanged), the flat fused Adam and
the gradient clip.

* **Acting**: the Q-network in sequential mode, one step from the state the env carries
  (``agent.prime(env)`` adds the trunk's primer, as for PPO: the state entering each step is
  stored with it and zeroed at every episode start).
* **Replay**: ``SequenceReplay``, each env's steps in order with the state the acting policy
  had; a gradient step samples ``batch_size`` windows of ``sequence_len`` steps.
* **Update**: ``sequence_td_loss``: burn-in over the first ``burn_in`` steps, TD(0) (or n-step) with
  double-DQN targets and the real next observation on the others.
"""
from __future__ import annotations

import torch
from tensordict import TensorDictBase
from torch import nn
from torchrl.data import Categorical
from torchrl.envs import EnvBase, ExplorationType, set_exploration_type

from .agent import TRANSITION_KEYS, DQNAgent
from .config import DQNConfig
from .recurrent_q import make_q_policy, make_recurrent_q_network, state_keys_of, trunk_of
from .sequence_loss import sequence_td_loss
from .sequence_replay import SequenceReplay


class RecurrentDQNAgent(DQNAgent):
    """DQN on a memory trunk (``config.model`` in 'lstm', 'gru', 'mingru', 'ffm', 'lru').

    Args:
        obs_dim: size of the flat observation.
        action_spec: the env's action spec, a ``Categorical`` (class indices).
        config: the ``DQNConfig``; ``hidden_size`` is the memory's width, ``hidden_sizes`` the
            head's, ``batch_size`` counts windows of ``sequence_len`` steps.
        device: where the networks and the replay live.

    Example:
        >>> agent = RecurrentDQNAgent(obs_dim, env.action_spec, DQNConfig(model="gru", num_envs=4))
        >>> env = agent.prime(env)  # the trunk's state, stored per step
    """

    manual_backward = False

    def _build_networks(self, obs_dim: int, action_spec: Categorical):
        cfg = self.config
        q_network = make_recurrent_q_network(cfg.model, obs_dim, action_spec, cfg.hidden_size, cfg.hidden_sizes, self.device, layer_norm=cfg.layer_norm, dueling=cfg.dueling)
        return q_network, make_q_policy(q_network, action_spec)

    def _q_network_of(self, policy) -> nn.Module:
        return policy.module[0]

    def _make_replay(self) -> SequenceReplay:
        return SequenceReplay(self.config.buffer_capacity, self.config.num_envs, self.device)

    @property
    def trunk(self):
        return trunk_of(self.q_net)

    @property
    def transition_keys(self) -> tuple:
        return (*TRANSITION_KEYS, self.trunk.in_keys[-1], *self.state_keys)

    # --- env side ----------------------------------------------------------------------
    @property
    def state_keys(self) -> list:
        return state_keys_of(self.trunk)

    @property
    def in_keys(self) -> list:
        """What the Q-network reads from a step: observation, recurrent state and ``is_init``."""
        return list(self.trunk.in_keys)

    def primer(self):
        return self.trunk.make_tensordict_primer()

    # --- acting ------------------------------------------------------------------------
    def explore(self, td: TensorDictBase, total_steps: int) -> tuple[TensorDictBase, float]:
        """Epsilon-greedy action from the state ``td`` carries; writes the next state under ``"next"``."""
        eps = self.set_epsilon(total_steps)
        with torch.no_grad(), set_exploration_type(ExplorationType.RANDOM):
            return self.explore_policy(td), eps

    def q_values(self, obs: torch.Tensor) -> torch.Tensor:
        raise TypeError("a recurrent Q-network needs its state: act through load_policy(...).predict(obs, state, episode_start) or a primed env")

    # --- learning ------------------------------------------------------------------------
    def is_warm(self) -> bool:
        return len(self.replay) >= max(self.config.batch_size, self.config.min_replay_size) and self.replay.can_sample(self.config.sequence_len)

    def sample_batches(self, n: int) -> list[TensorDictBase]:
        """``n`` minibatches of ``batch_size`` windows, drawn at once (the replay does not change
        between the updates of one env step)."""
        b = self.config.batch_size
        windows = self.replay.sample(n * b, self.config.sequence_len)
        return [windows[i * b : (i + 1) * b] for i in range(n)]

    def td_loss(self, window: TensorDictBase) -> torch.Tensor:
        """``sequence_td_loss`` of ``window`` ``[N, sequence_len]`` with this agent's networks and config."""
        cfg = self.config
        return sequence_td_loss(self.q_net, self.target_net, window, cfg.burn_in, cfg.gamma, cfg.double_dqn, cfg.n_step)

    def update(self, batch: TensorDictBase | None = None) -> float:
        """One gradient step on ``batch`` (windows from ``sample_batches``) or on a fresh sample."""
        return self._gradient_step(self.td_loss(batch if batch is not None else self.sample_batches(1)[0]))


def build_dqn_agent(config: DQNConfig, env: EnvBase, device: torch.device | str = "cpu") -> DQNAgent:
    """The agent ``config.model`` names, sized for ``env``: the MLP ``DQNAgent`` or a
    ``RecurrentDQNAgent`` (as ``ppo.build_agent`` for PPO). A recurrent agent's env still needs
    its primer: ``env = agent.prime(env)``."""
    from ..envs.lookup import obs_dim_of

    cls = DQNAgent if config.model == "mlp" else RecurrentDQNAgent
    return cls(obs_dim_of(env), env.action_spec, config, device)
