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
    build_agent,
    EntropyCollapseError,
    PhaseTimer,
    PPOConfig,
    PPORunState,
    RecurrentPPOTrainer,
    ReturnScaler,
    TrainingRun,
    WorkerEnv,
    check_eval_env,
    compute_gae,
    deferred_stop,
    eval_request,
    evaluate_checkpoint,
    logger_for,
    make_env,
    make_collector,
    plot_learning_curve,
    resolve_device,
    resolve_run_config,
    run_main,
    set_cpu_threads,
)
from torchrl_memory.runs.interrupts import StopRequested


def main(argv: list[str] | None = None) -> dict:
    if (request := eval_request(PPOConfig, argv)) is not None:  # --eval CHECKPOINT: play greedy episodes, no training
        return evaluate_checkpoint(*request, family="recurrent_ppo")
    # --- config: defaults < resumed run's config < command line ----------------------
    cfg, run, resumed = resolve_run_config(PPOConfig, __doc__, argv)
    device = resolve_device(cfg.device)
    set_cpu_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed)

    # --- env, agent, trainer, collector, run state ------------------------------------
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
    run = run or TrainingRun.create(cfg.run_root, cfg.run_name, cfg.to_dict())
    state = PPORunState(cfg, run, trainer, collector, env, eval_env, scaler, logger_for(cfg, run.path))
    if resumed is not None:
        state.resume(resumed)

    # --- training loop: collect, advantages, update; log, evaluate, checkpoint -------------
    print(f"run directory: {run.path}  device: {device}  env: {cfg.env_id} x {cfg.num_envs}  model: {cfg.model}"
          + (f"  collector workers: {cfg.collector_workers} ({cfg.backend})" if cfg.collector_workers > 1 or cfg.backend != "local" else ""))
    print(env.observation_description + ("" if agent.input_encoder is None else f" -> {agent.input_encoder.describe()}"))
    if (note := cfg.window_note(env.max_episode_steps)) is not None:
        print(note)
    bar = tqdm(total=cfg.total_steps, initial=state.total_steps, unit="step", dynamic_ncols=True)
    timer, steps_at_start, recent = PhaseTimer(), state.total_steps, []
    batches, stopped = iter(collector), None
    try:
        with deferred_stop() as stop:  # Ctrl-C / SIGTERM take effect between updates
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
    except KeyboardInterrupt as err:
        bar.close()
        state.save()
        print(f"\ninterrupted: saved the last complete update ({state.snapshot['counters']['total_steps']} steps) to {run.path / 'latest.pt'}")
        collector.shutdown()
        raise SystemExit(err.exit_code if isinstance(err, StopRequested) else 130)
    except EntropyCollapseError as err:  # --entropy-guard stop: evaluate, save and plot, then exit 3
        stopped = err
    bar.close()

    # --- final evaluation, checkpoint and plot -------------------------------------------
    with timer("evaluation"):
        report, best = state.evaluate(train_s=timer.elapsed(excluding=("evaluation",)))
    wall = timer.elapsed()
    state.commit()
    state.save(best)
    collector.shutdown()
    if cfg.plot:
        plot_learning_curve(run.read_jsonl("train_episodes.jsonl"), run.read_jsonl("eval_episodes.jsonl"), run.path / "learning_curve.png", title=f"recurrent PPO on {cfg.env_id}")
    sps = (state.total_steps - steps_at_start) / max(wall, 1e-9)
    print(report.format())
    print(f"time: {timer.summary()}")
    print(f"greedy eval: mean {report.mean_reward:.2f} std {report.std_reward:.2f} | {sps:.0f} env steps/s | wall {wall:.1f}s | {run.path}")
    if stopped is not None:
        print(f"stopped early: {stopped}")
        raise SystemExit(3)
    return {"eval": report.stats, "steps_per_s": sps, "wall_s": wall, "run_dir": str(run.path), "timing": dict(timer.seconds)}


if __name__ == "__main__":
    run_main(main)  # user errors: one line, exit status 2 (--debug: traceback)
