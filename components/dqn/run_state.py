"""``DQNRunState``: DQN's run state (counters, statistics, evaluation, checkpoints), as
``PPORunState`` is PPO's, and its collection: ``steps()`` steps the env for ``DQNAgent``.

One private step function does everything for a batched env step (act, store, count,
target sync, updates, episode stats, JSONL); ``steps()`` yields its env steps one by one
and ``train()`` drives the same iterator, adding evaluations and checkpoints at their
cadences exactly as ``pipelines/dqn.py``'s loop does. Counters, best-on-strict-improvement
evaluation, cadences and log truncation come from ``RunState``, as for PPO; seed,
cadences and checkpoint retention are read from the agent's ``DQNConfig``.

A checkpoint is only written between batched steps (after the env moved on to the next
observation, so every checkpoint is an exact resume point); ``mid_step`` is True while a
step or an evaluation is under way, when the state is one a straight run never stops in
(a second Ctrl-C lands there: the pipeline then saves nothing).

Custom rather than a TorchRL ``Collector`` in process because DQN interleaves an update
with every env step; a collector yields whole batches. With ``N > 1`` envs the N
transitions of one batched step are stored together, then each counts as one env step in
order (counter, target cadence, updates); with ``N = 1`` this is the textbook order
(act, store, count, target sync, update).

With ``collector_workers > 1`` the envs step in TorchRL's ``MultiAsyncCollector`` workers
instead (``make_async_collector``) while this process trains: each of their ``[k, T]``
batches is stored at once, then counted step by step (time-major) exactly like an
in-process batched step. Episodes in flight are not checkpointed, so such a run resumes
with fresh episodes (replay, weights, optimizer and counters exact).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

import torch
from torchrl.envs import EnvBase
from torchrl.record.loggers import Logger

from .agent import DQNAgent
from .n_step import STEPS_AFTER
from ..envs.lookup import native_base
from ..keys import EPISODE_REWARD, STEP_COUNT
from ..runs.evaluation import preserved_rng, run_greedy_episodes
from ..runs.run_dir import TrainingRun, check_resume_config, tensordict_from_plain, tensordict_to_plain
from ..runs.run_state import RunState
from ..runs.stats import EpisodeRecord, EvalReport, StatsTracker

FORMAT = "dqn/2"  # 2: the optimizer holds one flat parameter (flat_params.py)
#: config fields that fix tensor shapes or the task: a checkpoint only loads under the same values
SHAPE_FIELDS = ("env_id", "num_envs", "model", "hidden_size", "hidden_sizes", "layer_norm", "dueling", "buffer_capacity", "double_dqn")


def check_compatible(state: dict, config) -> None:
    """Raises naming every mismatch between a checkpoint and the ``DQNConfig`` it is resumed under.

    With n-step returns and a stored replay, ``collector_workers`` is fixed too: the n-step fold
    reads each env's next step ``num_envs / collector_workers`` slots on, as the replay was
    written (dqn/n_step.py)."""
    fields = SHAPE_FIELDS
    if config.n_step > 1 and "replay" in state.get("agent", {}):
        fields = (*fields, "collector_workers")
    check_resume_config(state, config, FORMAT, fields)


@dataclass
class StepMetrics:
    total_steps: int
    episode: int  # 0-based id of the episode this step belongs to
    episode_step: int  # 1-based
    reward: float
    episode_reward: float
    epsilon: float
    did_update: bool
    episode_done: bool
    episode_status: str  # "Continuing" / "Terminated" / "Truncated"
    loss: float | None = None


class DQNRunState(RunState):
    """Drives a ``DQNAgent`` on an env: env steps with their bookkeeping (``steps()``, ``train()``),
    greedy evaluations (``eval()``), checkpoints and exact resume.

    Args:
        env: the training env (batched: its copies step together).
        agent: the ``DQNAgent``; its config gives seed, cadences and checkpoint retention.
        eval_env_factory: ``(n_envs, seed) -> env`` for evaluations (a fresh env each time).
        run: the run directory checkpoints and logs go to (None: no files).
        logger: a TorchRL logger for scalars (None: none).
        collector: ``make_async_collector``'s collector, to step the envs in worker processes.
    """

    def __init__(
        self,
        env: EnvBase,
        agent: DQNAgent,
        eval_env_factory: Callable[[int, int], EnvBase] | None = None,
        run: TrainingRun | None = None,
        logger: Logger | None = None,
        collector=None,
    ):
        super().__init__(agent.config, run, logger)
        self.collector, self._batches = collector, None  # collector: make_async_collector's, or None to step env here
        self.env, self.agent, self.seed = env, agent, agent.config.seed
        self.num_envs = int(env.batch_size.numel()) if len(env.batch_size) else 1
        self.eval_env_factory = eval_env_factory
        self.episode_ids = list(range(self.num_envs))
        self.next_episode_id = self.num_envs
        self.eval_count = 0
        self.td = None
        self.stats = StatsTracker()
        self.mid_step = False

    @contextmanager
    def _changing(self):
        """Marks the state incomplete while the body runs; an exception escaping it (a second
        Ctrl-C) leaves ``mid_step`` True, so nothing saves that half-done state."""
        self.mid_step = True
        yield
        self.mid_step = False

    # --- the one step function ------------------------------------------------------------
    def _step(self) -> list[StepMetrics]:
        """One batched env step in process, or one batch from the collector's workers."""
        with self._changing():
            if self.collector is not None:
                eps = self.agent.set_epsilon(self.total_steps)  # goes to the worker whose batch is taken next
                if self._batches is None:
                    self._batches = iter(self.collector)
                batch = next(self._batches)
                # time-major, so the k envs' transitions of one batched step count before the next step's
                flat = batch.transpose(0, 1).reshape(-1)
                if STEPS_AFTER in self.agent.transition_keys:  # n-step windows stop at the batch's end
                    k, w = batch.shape
                    flat.set(STEPS_AFTER, torch.arange(w - 1, -1, -1, device=flat.device).repeat_interleave(k))
                return self._account(flat, eps, flat.get(("collector", "traj_ids")).tolist())
            if self.td is None:
                self.env.set_seed(self.seed)  # the first reset is seeded too
                self.td = self.env.reset()
            td, eps = self.agent.explore(self.td, self.total_steps)
            td, next_root = self.env.step_and_maybe_reset(td)
            out = self._account(td, eps, self.episode_ids)  # td holds the real next observation: the reset one is in next_root
            self.td = next_root
            return out

    def _account(self, td, eps: float, episode_ids: list[int]) -> list[StepMetrics]:
        """Stores the transitions ``td`` (1-D), then counts each as one env step in order:
        counter, target cadence, updates, episode stats, JSONL.

        ``episode_ids`` is the run state's own per-env list in process (renumbered here when an
        episode ends), or the collector's trajectory ids, one per transition."""
        agent, cfg = self.agent, self.agent.config
        agent.store(td)
        nxt = td.get("next")
        done = nxt.get("done").reshape(-1).tolist()
        terminated = nxt.get("terminated").reshape(-1).tolist()
        rewards = nxt.get("reward").reshape(-1).tolist()
        ep_rewards = nxt.get(EPISODE_REWARD).reshape(-1).tolist()
        ep_steps = nxt.get(STEP_COUNT).reshape(-1).tolist()
        out, records, n = [], [], len(done)
        # which of these env steps train; the replay does not change until the next call,
        # so every minibatch due now is drawn in one call
        trains = [agent.is_warm() and (self.total_steps + i) % cfg.train_freq == 0 for i in range(1, n + 1)]
        n_updates = cfg.gradient_steps * sum(trains)
        batches = iter(agent.sample_batches(n_updates) if n_updates else ())
        for i in range(n):
            self.total_steps += 1
            if cfg.target_update_tau is not None or self.total_steps % cfg.target_update_freq == 0:
                agent.sync_target()
            loss = None
            if trains[i]:
                if cfg.lr_schedule == "linear":  # a function of the step count alone: resumes exactly
                    agent.set_learning_rate(cfg.learning_rate * max(1.0 - self.total_steps / cfg.total_steps, cfg.lr_floor))
                for _ in range(cfg.gradient_steps):
                    loss = agent.update(next(batches))
            status = "Continuing" if not done[i] else ("Terminated" if terminated[i] else "Truncated")
            out.append(StepMetrics(self.total_steps, episode_ids[i], int(ep_steps[i]), rewards[i], ep_rewards[i], eps, loss is not None, bool(done[i]), status, loss))
            if done[i]:
                record = EpisodeRecord(ep_rewards[i], int(ep_steps[i]), status)
                self.stats.record(record)
                records.append({"total_steps": self.total_steps, "episode": episode_ids[i], **record.to_dict()})
                if self.collector is None:
                    self.episode_ids[i] = self.next_episode_id
                    self.next_episode_id += 1
        self.log_train_episodes(records)
        return out

    def steps(self) -> Iterator[StepMetrics]:
        """Endless iterator, one ``StepMetrics`` per env step (a batched step's envs one by one, in
        the order they count), with all the per-step bookkeeping. Evaluations and checkpoints are
        the caller's, when ``eval_due`` / ``checkpoint_due`` say so; the run state is that
        after the whole batched step, so the batched step has ended when
        ``metrics.total_steps == self.total_steps``."""
        while True:
            yield from self._step()

    def train(self, n_steps: int) -> StatsTracker:
        """``n_steps`` more env steps (a batched env may overshoot by fewer than ``num_envs``), with a
        greedy evaluation (given an ``eval_env_factory``) and a checkpoint (given a run) whenever
        their cadence is reached: ``pipelines/dqn.py``'s loop without the display."""
        if n_steps < 0:
            raise ValueError(f"n_steps must be >= 0, got {n_steps}")
        target = self.total_steps + n_steps
        if n_steps == 0:
            return self.stats
        for metrics in self.steps():
            n = metrics.total_steps
            if self.eval_env_factory is not None and self.eval_due(n - 1, n):
                self.eval()
            if self.run is not None and self.checkpoint_due(n - 1, n):
                self.save_checkpoint()
            if n >= target:
                break
        return self.stats

    # --- evaluation ---------------------------------------------------------------------
    def eval(self, n_episodes: int | None = None) -> EvalReport:
        """Greedy episodes on a fresh env (a new seed per evaluation); saves ``best.pt`` on strict improvement.

        Leaves training untouched: its own env, and torch's RNG streams restored afterwards.
        """
        if self.eval_env_factory is None:
            raise RuntimeError("eval() needs an eval_env_factory(n_envs, seed)")
        n_episodes = self.config.eval_episodes if n_episodes is None else n_episodes
        if n_episodes < 1:
            raise ValueError(f"n_episodes must be >= 1, got {n_episodes}")
        with self._changing():
            with preserved_rng():
                # eval seeds: distinct from the training seed and from each other
                env = self.eval_env_factory(n_episodes, self.seed + 1_000_003 + self.eval_count)
                records = run_greedy_episodes(env, self.agent.q_actor)
            self.eval_count += 1
            tracker = StatsTracker()
            for r in records:
                tracker.record(r)
            report = EvalReport(self.total_steps, len(records), tracker.summary(), records)
            if self.record_eval(report) and self.run is not None:
                self.run.save_best(self.state_dict())
        return report

    # --- checkpoints ---------------------------------------------------------------------
    def state_dict(self) -> dict:
        base = native_base(self.env)
        return {
            "format": FORMAT,
            "config": self.agent.config.to_dict(),
            "agent": self.agent.state_dict(include_replay=self.agent.config.save_replay_buffer),
            "counters": {
                **self.counters(),
                "episode_ids": list(self.episode_ids),
                "next_episode_id": self.next_episode_id,
                "eval_count": self.eval_count,
            },
            # plain data only (the file is read with weights_only=True)
            "carried": None if self.td is None else tensordict_to_plain(self.td.clone()),
            "env_rng": None if base is None else base.rng_state(),
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
            "stats": self.stats.state_dict(),
        }

    def save_checkpoint(self) -> None:
        """Writes step_<N>.pt and latest.pt. Call it between batched steps (never while ``mid_step``):
        the state is then that of the last complete one."""
        if self.mid_step:
            raise RuntimeError("save_checkpoint() during a step or an evaluation would save a state no straight run passes through")
        self.write_checkpoint(self.state_dict())

    def save_if_changed(self) -> bool:
        """Saves the last complete step unless the newest checkpoint already holds it; False when
        nothing was saved (already on disk, or ``mid_step``: no complete state to save)."""
        if self.mid_step or self.is_saved(self.counters()):
            return False
        self.save_checkpoint()
        return True

    def resume(self, state: dict) -> None:
        """Checks and loads a checkpoint, drops the log records written after it."""
        check_compatible(state, self.config)
        self.load_state_dict(state)
        self.after_resume()

    def load_state_dict(self, state: dict) -> None:
        if state.get("format") != FORMAT:
            raise ValueError(f"checkpoint format {state.get('format')!r} is not {FORMAT!r}: not a DQN checkpoint")
        self.agent.load_state_dict(state["agent"])
        c = state["counters"]
        self.load_counters(c)
        self.episode_ids, self.next_episode_id, self.eval_count = list(c["episode_ids"]), c["next_episode_id"], c["eval_count"]
        # the collector's workers cannot restore episodes in flight: they start fresh ones
        self.td = None if state["carried"] is None or self.collector is not None else tensordict_from_plain(state["carried"], self.env.device)
        base = native_base(self.env)
        if base is not None and state["env_rng"] is not None:
            base.set_rng_state(state["env_rng"])
        torch.set_rng_state(state["torch_rng"])
        if state.get("cuda_rng") is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        self.stats = StatsTracker.from_state_dict(state["stats"])


#: the earlier spelling, kept as an alias
DQNTrainer = DqnTrainer = DQNRunState  # earlier names
