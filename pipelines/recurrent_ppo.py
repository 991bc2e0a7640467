"""Recurrent (LSTM) PPO on TorchRL.

    python pipelines/recurrent_ppo.py                      # CartPoleNoVel, defaults
    python pipelines/recurrent_ppo.py --env TMaze-20 --total-steps 200000
    python pipelines/recurrent_ppo.py --resume runs/recurrent_ppo

Reads top to bottom like the algorithm: build env and agent, then loop
{collect a [num_envs, T] window, advantages, PPO update, log, checkpoint, eval}.
"""
from __future__ import annotations


import torch
from tqdm import tqdm

from torchrl_memory import (
    EntropyCollapseError,
    PPOConfig,
    RecurrentPPOTrainer,
    TrainingRun,
    build_agent,
    compute_gae,
    make_collector,
    make_env,
    resolve_device,
)
from torchrl_memory.cli import eval_request, resolve_run_config, run_main
from torchrl_memory.device import set_cpu_threads
from torchrl_memory.envs import check_eval_env
from torchrl_memory.ppo import PPORunState, ReturnScaler
from torchrl_memory.ppo.checkpoint import check_compatible
from torchrl_memory.runs import PhaseTimer, WorkerEnv, deferred_stop, logger_for, plot_learning_curve
from torchrl_memory.serve import evaluate_checkpoint
from torchrl_memory.envs.finite_check import NonFiniteEnvDataError
from torchrl_memory.runs.interrupts import StopRequested
from torchrl_memory.runs.run_state import at_budget


def main(argv: list[str] | None = None) -> dict:
    if (request := eval_request(PPOConfig, argv)) is not None:  # --eval CHECKPOINT: play greedy episodes, no training
        return evaluate_checkpoint(*request, family="recurrent_ppo")
    # --- config: defaults < resumed run's config < command line ----------------------
    cfg, run, resumed = resolve_run_config(PPOConfig, __doc__, argv)
    if resumed is not None:  # before anything is written: a refused or finished resume leaves the run as it was
        check_compatible(resumed, cfg)
        if (note := at_budget(resumed, cfg, run.path)) is not None:
            print(f"{run.path}: {note}")
            return {"eval": None, "run_dir": str(run.path), "total_steps": resumed["counters"]["total_steps"]}
    device = resolve_device(cfg.device)
    set_cpu_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed)

    # --- env, agent, trainer, collector ------------------------------------------------
    env_kwargs = dict(normalize_obs=cfg.normalize_obs, flicker_mode=cfg.flicker_mode, flicker_burst=cfg.flicker_burst, wrappers=cfg.env_wrappers, prev_action=cfg.prev_action)
    env = make_env(cfg.env_id, cfg.num_envs, device, cfg.seed, **env_kwargs, env_workers=cfg.env_workers)
    agent = build_agent(cfg, env, device)  # cfg.model trunk, with a CNN ahead of it for image observations
    env = agent.prime(env)  # the recurrent state, declared by the agent's trunk
    eval_env = agent.prime(make_env(cfg.eval_env_id or cfg.env_id, cfg.eval_episodes, device, cfg.seed + 1_000_003, **env_kwargs))
    check_eval_env(env, eval_env, cfg.env_id, cfg.eval_env_id or cfg.env_id)  # e.g. native clone for training, the real env for evaluation
    trainer = RecurrentPPOTrainer(agent, cfg)
    scaler = ReturnScaler(cfg.num_envs, cfg.gamma) if cfg.reward_scaling else None
    collector = make_collector(
        env, agent.collect_policy, cfg.frames_per_batch, device, cfg.collector_workers, cfg.backend,
        WorkerEnv(cfg.env_id, cfg.num_envs, cfg.seed, str(device), env_kwargs, agent.primer()), cfg.ray_address,
    )

    # Ctrl-C / SIGTERM from here on take effect between updates, never inside one or inside an
    # evaluation: the first saves the last complete update and exits 130 / 143
    timer, state, bar, stopped = PhaseTimer(), None, None, None
    with deferred_stop() as stop:
        try:
            # --- run directory and run state ---------------------------------------------------
            run = run or TrainingRun.create(cfg.run_root, cfg.run_name, cfg.to_dict())
            state = PPORunState(cfg, run, trainer, collector, env, eval_env, scaler, logger_for(cfg, run.path))
            if resumed is not None:
                state.resume(resumed)
            print(f"run directory: {run.path}  device: {device}  env: {cfg.env_id} x {cfg.num_envs}  model: {cfg.model}"
                  + (f"  collector workers: {cfg.collector_workers} ({cfg.backend})" if cfg.collector_workers > 1 or cfg.backend != "local" else ""))
            print(env.observation_description + ("" if agent.input_encoder is None else f" -> {agent.input_encoder.describe()}"))
            if (note := cfg.window_note(env.max_episode_steps)) is not None:
                print(note)
            stop.check()

            # --- training loop: collect, advantages, update; log, evaluate, checkpoint ---------
            bar = tqdm(total=cfg.total_steps, initial=state.total_steps, unit="step", dynamic_ncols=True)
            steps_at_start, recent = state.total_steps, []
            batches = iter(collector)
            try:
                while state.total_steps < cfg.total_steps:
                    with timer("collection"):
                        batch = next(batches)
                    with timer("advantages"):
                        compute_gae(batch, agent, cfg.gamma, cfg.gae_lambda, scaler)
                    with timer("updates"):
                        stats = trainer.train_step(batch)

                    steps_before = state.total_steps
                    episodes = state.record_update(batch, stats)
                    best = False
                    if state.eval_due(steps_before):
                        with timer("evaluation"):
                            _, best = state.evaluate(train_s=timer.elapsed(excluding=("evaluation",)))
                    state.commit()
                    if state.checkpoint_due(steps_before) or best:
                        state.save(best)

                    recent = (recent + [e["total_reward"] for e in episodes])[-100:]
                    bar.update(batch.numel())
                    sps = (state.total_steps - steps_at_start) / max(timer.elapsed(excluding=("evaluation",)), 1e-9)
                    state.log_scalars("train", {"steps_per_s": sps})
                    state.log_scalars("time", {f"{phase}_s": seconds for phase, seconds in timer.seconds.items()})
                    bar.set_postfix(ret=f"{sum(recent) / max(len(recent), 1):.1f}", sps=f"{sps:.0f}", ent=f"{stats.entropy:.2f}", kl=f"{stats.approx_kl:.4f}")
                    stop.check()
            except EntropyCollapseError as err:  # --entropy-guard stop: evaluate, save and plot, then exit 3
                stopped = err
            bar.close()

            # --- final evaluation (unless the cadence just evaluated), checkpoint and plot -------
            best = False
            if not state.evaluated_now:
                with timer("evaluation"):
                    _, best = state.evaluate(train_s=timer.elapsed(excluding=("evaluation",)))
                state.commit()
            wall = timer.elapsed()
            if best:
                state.save(best=True)
            else:
                state.save_if_changed()
            if cfg.plot:
                plot_learning_curve(run.read_jsonl("train_episodes.jsonl"), run.read_jsonl("eval_episodes.jsonl"), run.path / "learning_curve.png", title=f"recurrent PPO on {cfg.env_id}")
            stop.check()
        except KeyboardInterrupt as err:
            code = err.exit_code if isinstance(err, StopRequested) else 130
            if state is None or state.snapshot is None:  # a second Ctrl-C before the first complete state
                print("\ninterrupted before the run state was complete: nothing saved")
            elif state.save_if_changed():
                print(f"\ninterrupted: saved the last complete update ({state.snapshot['counters']['total_steps']} steps) to {run.path / 'latest.pt'}")
            else:
                print(f"\ninterrupted: nothing new since the checkpoint of step {state.snapshot['counters']['total_steps']}")
            raise SystemExit(code)
        except NonFiniteEnvDataError as err:  # a NaN/inf from the env: one line naming it and the last good checkpoint
            raise err.stopped_at(0 if state is None else state.total_steps, None if run is None else run.path) from None
        finally:
            if bar is not None:
                bar.close()
            collector.shutdown()

    # --- report: the final evaluation, and the best one with its checkpoint -------------------
    report = state.last_report
    sps = (state.total_steps - steps_at_start) / max(wall, 1e-9)
    print(report.format())
    print(f"time: {timer.summary()}")
    print(f"greedy eval: mean {report.mean_reward:.2f} std {report.std_reward:.2f} | {sps:.0f} env steps/s | wall {wall:.1f}s | {run.path}")
    print(state.best_summary())
    if stopped is not None:
        print(f"stopped early: {stopped}")
        raise SystemExit(3)
    return {"eval": report.stats, "steps_per_s": sps, "wall_s": wall, "run_dir": str(run.path), "timing": dict(timer.seconds)}


if __name__ == "__main__":
    run_main(main)  # user errors: one line, exit status 2 (--debug: traceback)
