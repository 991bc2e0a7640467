"""``DQNAgent``: Q-network, epsilon-greedy acting, TorchRL ``DQNLoss``, target updates, replay; every piece of DQN except the loop.

Reused from TorchRL: ``MLP``, ``QValueActor``, ``EGreedyModule`` (its ``eps``
is set from our step-indexed schedule; ``explore_policy`` is what async collector
workers run, while in-process acting takes the same maths on plain
tensors, see ``_explore_plain``), ``DQNLoss`` (TD(0) target
r + gamma * (1 - terminated) * max_a' Q_target(s', a'), so truncated
transitions bootstrap), ``HardUpdate`` / ``SoftUpdate`` and a
``TensorDictReplayBuffer`` on ``LazyTensorStorage`` on the training device.
The cadence is ours: ``HardUpdate(value_network_update_interval=N)`` copies
every N+1 calls, so we build it with interval 0 (copy on every call) and call
it exactly when ``total_steps % target_update_freq == 0``.

Why the gradient step does not call ``DQNLoss.forward``: on a 2-core CPU its
TensorDict bookkeeping (clone, params swapped in and out with ``to_module``,
``step_mdp``, the value estimator, the priority write) costs ~0.7 ms per call,
more than the whole forward/backward of a small MLP, and DQN makes one call per
env step. ``td_loss`` computes the same quantity on plain tensors from the same
parameters: the online MLP is the one ``DQNLoss`` optimises, and the target MLP
used here *shares storage* with ``DQNLoss.target_value_network_params``, so
``HardUpdate``/``SoftUpdate``/``load_state_dict`` (all in place) move it too.
tests/test_dqn.py pins loss and gradients equal to ``DQNLoss`` (vanilla and
double, terminated and truncated transitions, after target syncs and a load).
For a plain Linear/ReLU MLP (``--layer-norm false``), ``update`` computes that gradient by hand
(dqn/manual_backward.py: ~0.1 ms less per step than autograd), pinned equal to autograd's; the
default LayerNorm network (dqn/q_mlp.py) and a dueling one take autograd's.
"""
from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from tensordict import TensorDict, TensorDictBase
from tensordict.nn import TensorDictModuleBase, TensorDictSequential
from torchrl.data import Categorical, LazyTensorStorage, OneHot, TensorDictReplayBuffer, TensorSpec
from torchrl.envs import EnvBase, ExplorationType, set_exploration_type
from torchrl.modules import EGreedyModule, QValueActor
from torchrl.objectives import DQNLoss, HardUpdate, SoftUpdate

from ..config_validation import UserError
from .config import DQNConfig
from .epsilon_schedule import LinearEpsilon
from .n_step import STEPS_AFTER, fold_n_step
from .q_mlp import make_q_mlp
from .manual_backward import huber_td_step_grads, mlp_forward, plain_mlp_layers
from ..flat_params import clip_flat_grad_norm_, flatten_parameters, fused_adam
from ..keys import ACTION, OBS
from ..memory.trunk import with_primer

#: what one stored transition holds: the real next observation, before any reset
TRANSITION_KEYS = (OBS, ACTION, ("next", OBS), ("next", "reward"), ("next", "terminated"), ("next", "truncated"), ("next", "done"))


class DQNAgent:
    """DQN's learner without the loop: Q-network, epsilon-greedy acting, TD loss and updates, target syncs, replay.

    Args:
        obs_dim: size of the flat observation.
        action_spec: the env's action spec, a ``Categorical`` (class indices).
        config: the ``DQNConfig`` (network sizes, optimiser, replay, exploration schedule).
        device: where the networks and the replay live.
    """

    manual_backward: bool = True  # False: autograd through td_loss always (a test's or a benchmark's reference)

    def __init__(self, obs_dim: int, action_spec: TensorSpec, config: DQNConfig, device: torch.device | str = "cpu"):
        self.config = config.validate()
        self.device = torch.device(device)
        if not isinstance(action_spec, Categorical):
            hint = " (one-hot encoded; build the env with categorical_action_encoding=True, as make_env does)" if isinstance(action_spec, OneHot) else ""
            raise UserError(f"DQN needs a discrete action space as class indices (Categorical), got {type(action_spec).__name__}{hint}")
        # per-sample spec: the env's may carry its batch dims
        self.action_spec = action_spec = Categorical(action_spec.space.n, device=self.device)
        self.q_net, self.q_actor = self._build_networks(obs_dim, action_spec)
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
        # starts equal, never an independent random draw (tests pin this)
        self.params = list(self.loss.value_network_params.values(True, True))
        # a second MLP whose weights are the target tensors themselves (see the module docstring)
        target_actor = copy.deepcopy(self.q_actor)
        self.loss.target_value_network_params.to_module(target_actor)
        self.target_net = self._q_network_of(target_actor)
        # one flat buffer + fused Adam: clip and step are one kernel each, not one per tensor
        self.flat_params = flatten_parameters(self.params)
        self.optimizer = fused_adam(self.flat_params, config.learning_rate, eps=1e-8)
        self.replay = self._make_replay()
        self._layers = plain_mlp_layers(self.q_net)
        if self._layers is not None and sum(p.numel() for m in self._layers for p in m.parameters()) != self.flat_params.numel():
            self._layers = None  # the hand-written backward must cover every parameter
        self._target_layers = None if self._layers is None else plain_mlp_layers(self.target_net)

    # --- what a subclass with another network changes ----------------------------------------
    def _build_networks(self, obs_dim: int, action_spec: Categorical) -> tuple[torch.nn.Module, TensorDictModuleBase]:
        """(the Q-network, the greedy policy around it): here a ReLU MLP in a ``QValueActor``."""
        net = make_q_mlp(obs_dim, action_spec.space.n, self.config.hidden_sizes, self.device, layer_norm=self.config.layer_norm, dueling=self.config.dueling)
        return net, QValueActor(net, in_keys=[OBS], spec=action_spec)

    def _q_network_of(self, policy: TensorDictModuleBase) -> torch.nn.Module:
        """The Q-network inside a copy of the greedy policy (``_build_networks``' second item)."""
        return policy.module[0].module

    def _make_replay(self):
        return TensorDictReplayBuffer(storage=LazyTensorStorage(self.config.buffer_capacity, device=self.device), batch_size=self.config.batch_size)

    @property
    def transition_keys(self) -> tuple:
        """What ``store`` keeps of a step (with collector workers and n-step returns, also how far
        each transition's window may read in its batch: dqn/n_step.py)."""
        if self.config.n_step > 1 and self.config.collector_workers > 1:
            return (*TRANSITION_KEYS, STEPS_AFTER)
        return TRANSITION_KEYS

    # --- env side: the MLP has no recurrent state ------------------------------------------
    @property
    def state_keys(self) -> list:
        """The recurrent-state entries the Q-network reads (stored per step); [] for the MLP."""
        return []

    def primer(self):
        """The env transform that declares and zero-fills the Q-network's recurrent state, or None (MLP)."""
        return None

    def prime(self, env: EnvBase) -> EnvBase:
        """Appends ``primer()`` to ``env`` (a no-op for the MLP); returns the env."""
        return with_primer(env, self.primer())

    # --- acting -----------------------------------------------------------------------
    def explore(self, td: TensorDictBase, total_steps: int) -> tuple[TensorDictBase, float]:
        """Epsilon-greedy action with epsilon = schedule(total_steps before this step)."""
        eps = self.set_epsilon(total_steps)
        if td.get(OBS).dim() == 2:
            return self._explore_plain(td), eps
        with torch.no_grad(), set_exploration_type(ExplorationType.RANDOM):
            return self.explore_policy(td), eps

    @torch.no_grad()
    def _explore_plain(self, td: TensorDictBase) -> TensorDictBase:
        """``explore_policy`` (``QValueActor`` then ``EGreedyModule``) as tensor maths on the Q-network
        (``mlp_forward`` for a plain Linear/ReLU MLP, the module itself for a LayerNorm or dueling one).

        Why: DQN acts once per env step, and with one env the two TensorDict modules cost ~0.3 ms,
        more than the Q-network. Same entries (``action``, ``action_value``, the greedy action's
        ``chosen_action_value``) and the same random draws in the same order (one uniform per env
        against epsilon, then one random action per env), so the same RNG state gives the same
        actions; tests/dqn/test_dqn.py pins it against ``explore_policy``."""
        obs = td.get(OBS)
        q = mlp_forward(self._layers, obs) if self._layers is not None else self.q_net(obs)
        greedy = q.argmax(-1)
        explore = torch.rand(td.shape, device=self.device) < self.egreedy.eps
        random_action = torch.randint(0, q.shape[-1], greedy.shape, device=self.device, dtype=self.action_spec.dtype)
        td.set(ACTION, torch.where(explore, random_action, greedy))
        td.set("action_value", q)
        td.set("chosen_action_value", q.gather(-1, greedy.unsqueeze(-1)))
        return td

    def set_epsilon(self, total_steps: int) -> float:
        """Sets the ``EGreedyModule``'s epsilon (a buffer: collectors ship it with the weights) to the schedule's value."""
        eps = self.epsilon(total_steps)
        self.egreedy.eps.fill_(eps)
        return eps

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
        self.replay.extend(transitions.select(*self.transition_keys).to(self.device))

    def is_warm(self) -> bool:
        return len(self.replay) >= max(self.config.batch_size, self.config.min_replay_size)

    def sample_batches(self, n: int) -> list[tuple[torch.Tensor, ...]]:
        """``n`` minibatches, uniform with replacement (TorchRL's ``RandomSampler`` rule), drawn at once
        (the replay does not change between the updates of one env step), each as
        ``(obs, action, next_obs, reward, terminated, discount)``: discount is None for one-step
        transitions (the target uses gamma), else g^k per sample of the n-step fold (dqn/n_step.py).

        Reads the buffer's preallocated storage leaves directly: ``replay.sample()`` builds and
        indexes a TensorDict per call (~0.3 ms here), ten times the cost of five ``index_select``.
        """
        cfg, storage = self.config, self.replay.storage
        b = cfg.batch_size
        idx = torch.randint(len(storage), (n * b,), device=self.device)
        data = storage._storage  # LazyTensorStorage's TensorDict of [capacity, ...] leaves
        obs = data.get(OBS).index_select(0, idx).reshape(n, b, -1)
        action = data.get(ACTION).index_select(0, idx).reshape(n, b)
        if cfg.n_step == 1:
            next_obs = data.get(("next", OBS)).index_select(0, idx).reshape(n, b, -1)
            # per-sample scalars: reward and terminated carry a trailing 1
            reward, terminated = (data.get(k).index_select(0, idx).reshape(n, b) for k in (("next", "reward"), ("next", "terminated")))
            return [(obs[i], action[i], next_obs[i], reward[i], terminated[i], None) for i in range(n)]
        newest = (self.replay._writer._cursor - 1) % storage.max_size
        # each env's next step: num_envs slots on (in process) or num_envs / collector_workers (a worker's batch)
        stride = cfg.num_envs // cfg.collector_workers
        next_obs, reward, terminated, discount = fold_n_step(data, idx, n_step=cfg.n_step, gamma=cfg.gamma, stride=stride, newest=newest)
        next_obs, reward, terminated, discount = next_obs.reshape(n, b, -1), reward.reshape(n, b), terminated.reshape(n, b), discount.reshape(n, b)
        return [(obs[i], action[i], next_obs[i], reward[i], terminated[i], discount[i]) for i in range(n)]

    def td_target(self, next_obs: torch.Tensor, reward: torch.Tensor, terminated: torch.Tensor, discount: torch.Tensor | None = None) -> torch.Tensor:
        """r + discount * (1 - terminated) * Q_target(s', a*), a* = argmax of the online net (double DQN)
        or of the target net; discount is gamma (None) or an n-step batch's g^k; truncated
        transitions are not terminated, so they bootstrap."""
        plain = self._target_layers is not None  # then both nets are plain Linear/ReLU MLPs: skip the module calls
        with torch.no_grad():
            next_q = mlp_forward(self._target_layers, next_obs) if plain else self.target_net(next_obs)
            if self.config.double_dqn:
                online_q = mlp_forward(self._layers, next_obs) if plain else self.q_net(next_obs)
                next_value = next_q.gather(-1, online_q.argmax(-1, keepdim=True)).squeeze(-1)
            else:
                next_value = next_q.max(-1).values
            # r + discount * (1 - terminated) * next_value, in place on the fresh next_value
            return next_value.masked_fill_(terminated, 0.0).mul_(self.config.gamma if discount is None else discount).add_(reward)

    def td_loss(self, obs: torch.Tensor, action: torch.Tensor, next_obs: torch.Tensor, reward: torch.Tensor, terminated: torch.Tensor, discount: torch.Tensor | None = None) -> torch.Tensor:
        """``DQNLoss``'s value: Huber (smooth L1) between Q(s, a) and the TD target, batch mean."""
        q = self.q_net(obs).gather(-1, action.unsqueeze(-1)).squeeze(-1)
        return F.smooth_l1_loss(q, self.td_target(next_obs, reward, terminated, discount))

    def update(self, batch: tuple[torch.Tensor, ...] | None = None) -> float:
        """One gradient step on ``batch`` (from ``sample_batches``) or on a fresh sample.

        The loss and gradient come from ``huber_td_step_grads`` (the same maths by hand,
        dqn/manual_backward.py) where the network is a plain Linear/ReLU MLP, else from autograd
        through ``td_loss``; ``manual_backward = False`` takes autograd always."""
        obs, action, *target_terms = batch if batch is not None else self.sample_batches(1)[0]
        if self._layers is not None and self.manual_backward:
            # every parameter's gradient is overwritten by the hand-written backward
            loss = huber_td_step_grads(self._layers, obs, action, self.td_target(*target_terms))
            return self._clip_and_step(loss)
        return self._gradient_step(self.td_loss(obs, action, *target_terms))

    def _gradient_step(self, loss: torch.Tensor) -> float:
        """Backpropagates ``loss`` into the flat gradient, then clips and steps; returns the loss."""
        self.flat_params.grad.zero_()  # the per-parameter grads are views of it (flat_params.py)
        loss.backward()
        return self._clip_and_step(loss)

    def _clip_and_step(self, loss: torch.Tensor) -> float:
        if self.config.max_grad_norm is not None:
            clip_flat_grad_norm_(self.flat_params, self.config.max_grad_norm)
        self.optimizer.step()
        return loss.item()

    def set_learning_rate(self, lr: float) -> None:
        """The optimizer's step size from now on (the linear schedule sets it before each update)."""
        for group in self.optimizer.param_groups:
            group["lr"] = lr

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
        from ..runs.run_dir import atomic_torch_save

        atomic_torch_save(path, {"config": self.config.to_dict(), **self.state_dict()})

    def load(self, path) -> None:
        """Loads a file written by ``save`` or a pipeline checkpoint (which nests the agent under ``"agent"``).

        Read with ``torch.load(weights_only=True)`` (``read_checkpoint_file``): a file that would
        run code is refused with a one-line ``CheckpointError``."""
        from ..runs.run_dir import CheckpointError, read_checkpoint_file

        state = read_checkpoint_file(path, map_location=self.device)
        if not isinstance(state, dict) or not isinstance(state.get("agent", state), dict) or "loss" not in state.get("agent", state):
            raise CheckpointError(f"{path} holds no DQN agent (accepted: a file of DQNAgent.save or a pipelines/dqn.py checkpoint)")
        self.load_state_dict(state.get("agent", state))

    def export_policy(self) -> QValueActor:
        """A detached, inference-only copy of the greedy Q-policy (no optimizer, no target net)."""
        policy = copy.deepcopy(self.q_actor).eval()
        for p in policy.parameters():
            p.requires_grad_(False)
        return policy


#: the earlier spelling, kept as an alias
DqnAgent = DQNAgent
