"""DQN on TorchRL.

    python pipelines/dqn.py                         # CartPole-v1, defaults
    python pipelines/dqn.py --env Acrobot-v1 --total-steps 100000 --min-replay-size 10000
    python pipelines/dqn.py --env CartPoleNoVel --model gru --total-steps 300000   # recurrent (R2D2-style)
    python pipelines/dqn.py --resume runs/dqn

Top to bottom: env, agent, state, then train with a greedy evaluation every
``eval_every`` steps, a final evaluation and the learning-curve PNG.
"""
from __future__ import annotations

import time

import torch
from tqdm import tqdm

from torchrl_memory import DQNConfig, DQNRunState, TrainingRun, make_env, resolve_device
from torchrl_memory.cli import eval_request, resolve_run_config, run_main
from torchrl_memory.device import set_cpu_threads
from torchrl_memory.dqn import build_dqn_agent
from torchrl_memory.envs import check_eval_env
from torchrl_memory.runs import WorkerEnv, deferred_stop, logger_for, make_async_collector, plot_learning_curve
from torchrl_memory.serve import evaluate_checkpoint
from torchrl_memory.dqn.run_state import check_compatible
from torchrl_memory.envs.finite_check import NonFiniteEnvDataError
from torchrl_memory.runs.interrupts import StopRequested
from torchrl_memory.runs.run_state import at_budget

DISPLAY_EVERY = 250  # env steps between progress-bar and throughput updates


def main(argv: list[str] | None = None) -> dict:
    if (request := eval_request(DQNConfig, argv)) is not None:  # --eval CHECKPOINT: play greedy episodes, no training
        return evaluate_checkpoint(*request, family="dqn")
    # --- config: defaults < resumed run's config < command line ----------------------------
    cfg, run, resumed = resolve_run_config(DQNConfig, __doc__, argv)
    if resumed is not None:  # before anything is written: a refused or finished resume leaves the run as it was
        check_compatible(resumed, cfg)
        if (note := at_budget(resumed, cfg, run.path)) is not None:
            print(f"{run.path}: {note}")
            return {"eval": None, "run_dir": str(run.path), "total_steps": resumed["counters"]["total_steps"]}
    device = resolve_device(cfg.device)
    set_cpu_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed)

    # --- env, agent ----------------------------------------------------------------------------
    env = make_env(cfg.env_id, cfg.num_envs, device, cfg.seed, normalize_obs=False, wrappers=cfg.env_wrappers, env_workers=cfg.env_workers)
    agent = build_dqn_agent(cfg, env, device)  # the MLP DQNAgent, or a RecurrentDQNAgent for --model lstm|gru|...
    env = agent.prime(env)  # a recurrent Q-network's state, stored per step (a no-op for the MLP)
    eval_env_factory = lambda n, seed: agent.prime(make_env(cfg.eval_env_id or cfg.env_id, n, device, seed, normalize_obs=False, wrappers=cfg.env_wrappers))
    if cfg.eval_env_id:  # checked before the run directory exists
        check_eval_env(env, eval_env_factory(1, cfg.seed), cfg.env_id, cfg.eval_env_id)

    # Ctrl-C / SIGTERM from here on take effect between batched env steps, never inside one or
    # inside an evaluation: the first saves the last complete step and exits 130 / 143
    with deferred_stop() as stop:
        state, collector, bar = None, None, None
        try:
            # --- run directory, state -------------------------------------------------------
            run = run or TrainingRun.create(cfg.run_root, cfg.run_name, cfg.to_dict())
            if cfg.collector_workers > 1:  # the envs step in TorchRL's MultiAsyncCollector workers
                worker_env = WorkerEnv(cfg.env_id, cfg.num_envs, cfg.seed, str(device), {"normalize_obs": False, "wrappers": cfg.env_wrappers})
                collector = make_async_collector(agent.explore_policy, worker_env, cfg.collector_workers, cfg.worker_steps, device)
            state = DQNRunState(env, agent, eval_env_factory, run=run, logger=logger_for(cfg, run.path), collector=collector)
            if resumed is not None:
                state.resume(resumed)
            print(f"run directory: {run.path}  device: {device}  env: {cfg.env_id} x {cfg.num_envs}  model: {cfg.model}"
                  + (f"  collector workers: {cfg.collector_workers} (MultiAsyncCollector)" if collector is not None else ""))
            print(env.observation_description)
            if cfg.model != "mlp":
                print(f"sequence replay: {cfg.batch_size} windows of {cfg.sequence_len} steps per update ({cfg.burn_in} of burn-in from the stored state, "
                      f"{cfg.sequence_len - cfg.burn_in} in the loss), each env's steps in order")
            stop.check()

            # --- train: one env step at a time; evaluate and checkpoint at their cadences --------
            bar = tqdm(total=cfg.total_steps, initial=state.total_steps, unit="step", dynamic_ncols=True)
            t_start, steps_at_start = time.time(), state.total_steps
            if state.total_steps < cfg.total_steps:
                for step in state.steps():
                    n = step.total_steps
                    bar.update(1)
                    if step.loss is not None:
                        state.log_scalars("train", {"loss": step.loss}, step=n)
                    if n % DISPLAY_EVERY == 0:
                        sps = (n - steps_at_start) / max(time.time() - t_start, 1e-9)
                        bar.set_postfix(ret=f"{state.stats.summary()['recent_reward']:.1f}", eps=f"{step.epsilon:.3f}", sps=f"{sps:.0f}")
                        state.log_scalars("train", {"epsilon": step.epsilon, "steps_per_s": sps, "learning_rate": cfg.learning_rate}, step=n)
                    if state.eval_due(n - 1, n):
                        state.eval()
                    if state.checkpoint_due(n - 1, n):
                        state.save_checkpoint()
                    if n >= cfg.total_steps:
                        break
                    if n == state.total_steps:  # the batched step is complete (its envs' steps all seen)
                        stop.check()
            bar.close()
            wall = time.time() - t_start

            # --- final evaluation (unless the cadence just evaluated), checkpoint and plot ---------
            if not state.evaluated_now:
                state.eval()
            state.save_if_changed()
            if cfg.plot:
                plot_learning_curve(run.read_jsonl("train_episodes.jsonl"), run.read_jsonl("eval_episodes.jsonl"), run.path / "learning_curve.png", title=f"DQN on {cfg.env_id}")
            stop.check()
        except KeyboardInterrupt as err:
            code = err.exit_code if isinstance(err, StopRequested) else 130
            if state is None or state.mid_step:  # a second Ctrl-C inside a step or an evaluation: its state is half done
                latest = "" if run is None or not (run.path / "latest.pt").is_file() else f"; the newest checkpoint is {run.path / 'latest.pt'}"
                print(f"\ninterrupted {'before the state existed' if state is None else 'inside a step'}: nothing saved{latest}")
            elif state.save_if_changed():
                print(f"\ninterrupted: checkpoint of the last complete step ({state.total_steps}) saved to {run.path / 'latest.pt'}")
            else:
                print(f"\ninterrupted: nothing new since the checkpoint of step {state.total_steps}")
            raise SystemExit(code)
        except NonFiniteEnvDataError as err:  # a NaN/inf from the env: one line naming it and the last good checkpoint
            raise err.stopped_at(0 if state is None else state.total_steps, None if run is None else run.path) from None
        finally:
            if bar is not None:
                bar.close()
            if collector is not None:
                collector.shutdown()

    # --- report: the final evaluation, and the best one with its checkpoint --------------------
    report = state.last_report
    sps = (state.total_steps - steps_at_start) / max(wall, 1e-9)
    print(report.format())
    print(f"greedy eval: mean {report.mean_reward:.2f} std {report.std_reward:.2f} | {sps:.0f} env steps/s | wall {wall:.1f}s | {run.path}")
    print(state.best_summary())
    return {"eval": report.stats, "steps_per_s": sps, "wall_s": wall, "run_dir": str(run.path)}


if __name__ == "__main__":
    run_main(main)  # user errors: one line, exit status 2 (--debug: traceback)
