"""``DqnTrainer``: env stepping, bookkeeping, evaluation and checkpoints for ``DqnAgent`` (SPEC 2.3).

One private step function does everything for a batched env step (act,
store, count, target sync, updates, episode stats, JSONL, checkpoints);
``steps()`` and ``train()`` are two ways to drive it, so they cannot drift
apart (the reference's iterator skipped all bookkeeping).

Custom rather than a TorchRL ``Collector`` because DQN interleaves an update
with every env step; a collector yields whole batches. With ``N > 1`` envs the
N transitions of one batched step are stored together, then each counts as one
env step in order (counter, target cadence, updates); with ``N = 1`` this is
exactly SPEC 2.2's order.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterator

import torch
from torchrl.envs import EnvBase

from components.dqn.agent import DqnAgent
from components.envs.lookup import native_base
from components.runs.evaluation import run_greedy_episodes
from components.keys import EPISODE_REWARD, STEP_COUNT
from components.runs.stats import EpisodeRecord, EvalReport, StatsTracker
from components.runs.run_dir import TrainingRun

FORMAT = "dqn/2"  # 2: the optimizer holds one flat parameter (flat_params.py)


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


class DqnTrainer:
    def __init__(self, env: EnvBase, agent: DqnAgent, seed: int = 0, eval_env_factory: Callable[[int, int], EnvBase] | None = None):
        self.env, self.agent, self.seed = env, agent, int(seed)
        self.num_envs = int(env.batch_size.numel()) if len(env.batch_size) else 1
        self.eval_env_factory = eval_env_factory
        self.total_steps = 0
        self.total_episodes = 0
        self.episode_ids = list(range(self.num_envs))
        self.next_episode_id = self.num_envs
        self.best_eval = -math.inf
        self.eval_count = 0
        self.td = None
        self.stats = StatsTracker()
        self.run: TrainingRun | None = None
        self.checkpoint_freq: int | None = None
        self.keep_checkpoints = 3
        self.on_eval: Callable[[EvalReport], None] | None = None

    # --- builders -----------------------------------------------------------------------
    def with_run(self, run: TrainingRun) -> "DqnTrainer":
        self.run = run
        return self

    def with_checkpoint_freq(self, steps: int) -> "DqnTrainer":
        if steps < 1:
            raise ValueError(f"checkpoint_freq must be >= 1, got {steps}")
        self.checkpoint_freq = steps
        return self

    def with_keep_checkpoints(self, keep: int) -> "DqnTrainer":
        if keep < 1:
            raise ValueError(f"keep_checkpoints must be >= 1, got {keep}")
        self.keep_checkpoints = keep
        return self

    def with_stats(self, tracker: StatsTracker) -> "DqnTrainer":
        self.stats = tracker
        return self

    # --- the one step function ------------------------------------------------------------
    def _step(self) -> list[StepMetrics]:
        agent, cfg = self.agent, self.agent.config
        if self.td is None:
            self.env.set_seed(self.seed)  # the first reset is seeded too
            self.td = self.env.reset()
        td, eps = agent.explore(self.td, self.total_steps)
        td, next_root = self.env.step_and_maybe_reset(td)
        agent.store(td)  # holds the real next observation: the reset one is in next_root
        nxt = td.get("next")
        done = nxt.get("done").reshape(-1).tolist()
        terminated = nxt.get("terminated").reshape(-1).tolist()
        rewards = nxt.get("reward").reshape(-1).tolist()
        ep_rewards = nxt.get(EPISODE_REWARD).reshape(-1).tolist()
        ep_steps = nxt.get(STEP_COUNT).reshape(-1).tolist()
        out, checkpoint_due, records = [], False, []
        # which of these env steps train; the replay does not change until the next batched step,
        # so every minibatch due now is drawn in one call
        trains = [agent.is_warm() and (self.total_steps + i) % cfg.train_freq == 0 for i in range(1, self.num_envs + 1)]
        n_updates = cfg.gradient_steps * sum(trains)
        batches = iter(agent.sample_batches(n_updates) if n_updates else ())
        for i in range(self.num_envs):
            self.total_steps += 1
            if cfg.target_update_tau is not None or self.total_steps % cfg.target_update_freq == 0:
                agent.sync_target()
            loss = None
            if trains[i]:
                for _ in range(cfg.gradient_steps):
                    loss = agent.update(next(batches))
            status = "Continuing" if not done[i] else ("Terminated" if terminated[i] else "Truncated")
            out.append(StepMetrics(self.total_steps, self.episode_ids[i], int(ep_steps[i]), rewards[i], ep_rewards[i], eps, loss is not None, bool(done[i]), status, loss))
            if done[i]:
                record = EpisodeRecord(ep_rewards[i], int(ep_steps[i]), status)
                self.stats.record(record)
                records.append({"total_steps": self.total_steps, "episode": self.episode_ids[i], **record.to_dict()})
                self.total_episodes += 1
                self.episode_ids[i] = self.next_episode_id
                self.next_episode_id += 1
            if self.checkpoint_freq and self.total_steps % self.checkpoint_freq == 0:
                checkpoint_due = True
        self.td = next_root
        if self.run is not None:
            self.run.log_jsonl("train_episodes.jsonl", records)
            if checkpoint_due:
                self.save_checkpoint()
        return out

    def steps(self) -> Iterator[StepMetrics]:
        """Endless iterator, one ``StepMetrics`` per env step, with all of ``train()``'s bookkeeping."""
        while True:
            yield from self._step()

    def train(self, n_steps: int, progress=None) -> StatsTracker:
        """Runs ``n_steps`` more env steps (a batched env may overshoot by fewer than ``num_envs``)."""
        if n_steps < 0:
            raise ValueError(f"n_steps must be >= 0, got {n_steps}")
        target = self.total_steps + n_steps
        while self.total_steps < target:
            metrics = self._step()
            if progress is not None:
                progress(self, metrics)
        return self.stats

    # --- evaluation ---------------------------------------------------------------------
    def eval(self, n_episodes: int = 10) -> EvalReport:
        """Greedy episodes on a separate env (fresh seed per evaluation); saves ``best`` on strict improvement."""
        if self.eval_env_factory is None:
            raise RuntimeError("eval() needs an eval_env_factory(n_envs, seed)")
        if n_episodes < 1:
            raise ValueError(f"n_episodes must be >= 1, got {n_episodes}")
        # eval seeds: distinct from the training seed and from each other
        env = self.eval_env_factory(n_episodes, self.seed + 1_000_003 + self.eval_count)
        self.eval_count += 1
        records = run_greedy_episodes(env, self.agent.q_actor)
        tracker = StatsTracker()
        for r in records:
            tracker.record(r)
        report = EvalReport(self.total_steps, len(records), tracker.summary(), records)
        improved = report.mean_reward > self.best_eval
        self.best_eval = max(self.best_eval, report.mean_reward)
        if self.run is not None:
            self.run.log_jsonl("eval_episodes.jsonl", [{"total_steps": self.total_steps, **r.to_dict()} for r in records])
            if improved:
                self.run.save_best(self.state_dict())
        if self.on_eval is not None:
            self.on_eval(report)
        return report

    # --- checkpoints ---------------------------------------------------------------------
    def state_dict(self) -> dict:
        base = native_base(self.env)
        return {
            "format": FORMAT,
            "config": self.agent.config.to_dict(),
            "agent": self.agent.state_dict(include_replay=self.agent.config.save_replay_buffer),
            "counters": {
                "total_steps": self.total_steps,
                "total_episodes": self.total_episodes,
                "episode_ids": list(self.episode_ids),
                "next_episode_id": self.next_episode_id,
                "best_eval": self.best_eval,
                "eval_count": self.eval_count,
            },
            "carried": None if self.td is None else self.td.clone(),
            "env_rng": None if base is None else base.rng_state(),
            "torch_rng": torch.get_rng_state(),
            "stats": self.stats,
        }

    def save_checkpoint(self) -> None:
        if self.run is None:
            raise RuntimeError("save_checkpoint() needs a run: use with_run(TrainingRun)")
        self.run.save_checkpoint(self.state_dict(), self.total_steps, keep=self.keep_checkpoints)
        self.run.update_progress(self.total_steps, self.total_episodes)

    def load_state_dict(self, state: dict) -> None:
        if state.get("format") != FORMAT:
            raise ValueError(f"checkpoint format {state.get('format')!r} is not {FORMAT!r}: not a DQN checkpoint")
        self.agent.load_state_dict(state["agent"])
        c = state["counters"]
        self.total_steps, self.total_episodes = c["total_steps"], c["total_episodes"]
        self.episode_ids, self.next_episode_id = list(c["episode_ids"]), c["next_episode_id"]
        self.best_eval, self.eval_count = c["best_eval"], c["eval_count"]
        self.td = None if state["carried"] is None else state["carried"].to(self.env.device)
        base = native_base(self.env)
        if base is not None and state["env_rng"] is not None:
            base.set_rng_state(state["env_rng"])
        torch.set_rng_state(state["torch_rng"])
        self.stats = state["stats"]
