"""``DqnAgent``: Q-network, epsilon-greedy acting, TorchRL ``DQNLoss``, target updates, replay (SPEC 2.2).

Reused from TorchRL: ``MLP``, ``QValueActor``, ``EGreedyModule`` (its ``eps``
is set from our step-indexed schedule), ``DQNLoss`` (TD(0) target
r + gamma * (1 - terminated) * max_a' Q_target(s', a'), so truncated
transitions bootstrap), ``HardUpdate`` / ``SoftUpdate`` and a
``TensorDictReplayBuffer`` on ``LazyTensorStorage`` on the training device.
The cadence is ours: ``HardUpdate(value_network_update_interval=N)`` copies
every N+1 calls, so we build it with interval 0 (copy on every call) and call
it exactly when ``total_steps % target_update_freq == 0``.
"""
from __future__ import annotations

import copy

import torch
from tensordict import TensorDict, TensorDictBase
from tensordict.nn import TensorDictSequential
from torchrl.data import Categorical, LazyTensorStorage, TensorDictReplayBuffer, TensorSpec
from torchrl.envs import ExplorationType, set_exploration_type
from torchrl.modules import MLP, EGreedyModule, QValueActor
from torchrl.objectives import DQNLoss, HardUpdate, SoftUpdate

from components.dqn_config import DqnConfig
from components.epsilon_schedule import LinearEpsilon
from components.keys import ACTION, OBS

#: what one stored transition holds: the real next observation, before any reset
TRANSITION_KEYS = (OBS, ACTION, ("next", OBS), ("next", "reward"), ("next", "terminated"), ("next", "truncated"), ("next", "done"))


class DqnAgent:
    def __init__(self, obs_dim: int, action_spec: TensorSpec, config: DqnConfig, device: torch.device | str = "cpu"):
        self.config = config.validate()
        self.device = torch.device(device)
        if not hasattr(action_spec, "space") or not hasattr(action_spec.space, "n"):
            raise ValueError(f"DQN needs a discrete action space, got {type(action_spec).__name__}")
        # per-sample spec: the env's may carry its batch dims
        self.action_spec = action_spec = Categorical(action_spec.space.n, device=self.device)
        net = MLP(in_features=obs_dim, out_features=action_spec.space.n, num_cells=list(config.hidden_sizes), activation_class=torch.nn.ReLU, device=self.device)
        self.q_actor = QValueActor(net, in_keys=[OBS], spec=action_spec)
        self.egreedy = EGreedyModule(action_spec, eps_init=config.epsilon_start, eps_end=config.epsilon_end, annealing_num_steps=1)
        self.explore_policy = TensorDictSequential(self.q_actor, self.egreedy)
        self.epsilon = LinearEpsilon(config.epsilon_start, config.epsilon_end, config.epsilon_decay_steps)
        self.loss = DQNLoss(self.q_actor, loss_function="smooth_l1", delay_value=True, double_dqn=config.double_dqn, action_space=action_spec)
        self.loss.make_value_estimator(gamma=config.gamma)
        if config.target_update_tau is None:
            self.target_updater = HardUpdate(self.loss, value_network_update_interval=0)
        else:
            self.target_updater = SoftUpdate(self.loss, tau=config.target_update_tau)
        # DQNLoss(delay_value=True) creates the target as a detached copy of the online net: it
        # starts equal (the reference built it independently at random; tests pin this)
        self.params = list(self.loss.value_network_params.values(True, True))
        self.optimizer = torch.optim.Adam(self.params, lr=config.learning_rate, eps=1e-8)
        self.replay = TensorDictReplayBuffer(storage=LazyTensorStorage(config.buffer_capacity, device=self.device), batch_size=config.batch_size)

    # --- acting -----------------------------------------------------------------------
    def explore(self, td: TensorDictBase, total_steps: int) -> tuple[TensorDictBase, float]:
        """Epsilon-greedy action with epsilon = schedule(total_steps before this step)."""
        eps = self.epsilon(total_steps)
        self.egreedy.eps.fill_(eps)
        with torch.no_grad(), set_exploration_type(ExplorationType.RANDOM):
            return self.explore_policy(td), eps

    @torch.no_grad()
    def q_values(self, obs: torch.Tensor) -> torch.Tensor:
        """Online Q-values for raw observation tensor(s) ``[..., obs_dim]``."""
        obs = obs.to(self.device)
        return self.q_actor(TensorDict({OBS: obs}, batch_size=obs.shape[:-1]))["action_value"]

    def act(self, obs: torch.Tensor) -> torch.Tensor:
        """Greedy action(s) for raw observation tensor(s)."""
        return self.q_values(obs).argmax(-1)

    # --- learning -------------------------------------------------------------------
    def store(self, transitions: TensorDictBase) -> None:
        self.replay.extend(transitions.select(*TRANSITION_KEYS).to(self.device))

    def is_warm(self) -> bool:
        return len(self.replay) >= max(self.config.batch_size, self.config.min_replay_size)

    def update(self) -> float:
        batch = self.replay.sample()
        loss = self.loss(batch)["loss"]
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.config.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.params, self.config.max_grad_norm)
        self.optimizer.step()
        return float(loss.detach())

    def sync_target(self) -> None:
        self.target_updater.step()

    # --- persistence ------------------------------------------------------------------
    def state_dict(self, include_replay: bool = True) -> dict:
        state = {"loss": self.loss.state_dict(), "optimizer": self.optimizer.state_dict()}
        if include_replay:
            state["replay"] = self.replay.state_dict()
        return state

    def load_state_dict(self, state: dict) -> None:
        self.loss.load_state_dict(state["loss"])
        self.optimizer.load_state_dict(state["optimizer"])
        if "replay" in state:
            self.replay.load_state_dict(state["replay"])

    def save(self, path) -> None:
        from components.training_run import atomic_torch_save

        atomic_torch_save(path, {"config": self.config.to_dict(), **self.state_dict()})

    def load(self, path) -> None:
        state = torch.load(path, map_location=self.device, weights_only=False)
        self.load_state_dict(state)

    def export_policy(self) -> QValueActor:
        """A detached, inference-only copy of the greedy Q-policy (no optimizer, no target net)."""
        policy = copy.deepcopy(self.q_actor).eval()
        for p in policy.parameters():
            p.requires_grad_(False)
        return policy
