"""DQN on TorchRL.

    python pipelines/dqn.py                         # CartPole-v1, defaults
    python pipelines/dqn.py --env Acrobot-v1 --total-steps 100000 --min-replay-size 10000
    python pipelines/dqn.py --resume runs/dqn

Top to bottom: env, agent, trainer, then train with a greedy evaluation every
``eval_every`` steps, a final evaluation and the learning-curve PNG.
"""
from __future__ import annotations

import time

import torch
from tqdm import tqdm

from torchrl_memory import (
    DQNAgent,
    DQNConfig,
    DQNTrainer,
    TrainingRun,
    WorkerEnv,
    check_eval_env,
    deferred_stop,
    eval_request,
    evaluate_checkpoint,
    logger_for,
    make_async_collector,
    make_env,
    obs_dim_of,
    plot_learning_curve,
    resolve_device,
    resolve_run_config,
    run_main,
    set_cpu_threads,
)
from torchrl_memory.runs.interrupts import StopRequested


def main(argv: list[str] | None = None) -> dict:
    if (request := eval_request(DQNConfig, argv)) is not None:  # --eval CHECKPOINT: play greedy episodes, no training
        return evaluate_checkpoint(*request, family="dqn")
    # --- config: defaults < resumed run's config < command line ----------------------------
    cfg, run, resumed = resolve_run_config(DQNConfig, __doc__, argv)
    device = resolve_device(cfg.device)
    set_cpu_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed)

    # --- env, agent, trainer --------------------------------------------------------------
    env = make_env(cfg.env_id, cfg.num_envs, device, cfg.seed, normalize_obs=False, wrappers=cfg.env_wrappers, env_workers=cfg.env_workers)
    agent = DQNAgent(obs_dim_of(env), env.action_spec, cfg, device)
    eval_env_factory = lambda n, seed: make_env(cfg.eval_env_id or cfg.env_id, n, device, seed, normalize_obs=False, wrappers=cfg.env_wrappers)
    if cfg.eval_env_id:  # checked before the run directory exists
        check_eval_env(env, eval_env_factory(1, cfg.seed), cfg.env_id, cfg.eval_env_id)
    run = run or TrainingRun.create(cfg.run_root, cfg.run_name, cfg.to_dict())
    collector = None  # in process, the trainer steps env itself; otherwise TorchRL's MultiAsyncCollector
    if cfg.collector_workers > 1:
        worker_env = WorkerEnv(cfg.env_id, cfg.num_envs, cfg.seed, str(device), {"normalize_obs": False, "wrappers": cfg.env_wrappers})
        collector = make_async_collector(agent.explore_policy, worker_env, cfg.collector_workers, cfg.worker_steps, device)
    trainer = DQNTrainer(env, agent, eval_env_factory, run=run, logger=logger_for(cfg, run.path), collector=collector)
    if resumed is not None:
        trainer.resume(resumed)

    # --- train with periodic greedy evaluation ---------------------------------------------
    print(f"run directory: {run.path}  device: {device}  env: {cfg.env_id} x {cfg.num_envs}"
          + (f"  collector workers: {cfg.collector_workers} (MultiAsyncCollector)" if collector is not None else ""))
    print(env.observation_description)
    bar = tqdm(total=cfg.total_steps, initial=trainer.total_steps, unit="step", dynamic_ncols=True)
    t_start, steps_at_start = time.time(), trainer.total_steps

    try:
        with deferred_stop() as stop:  # Ctrl-C / SIGTERM take effect between env steps, never inside one

            def progress(tr: DQNTrainer, metrics) -> None:
                bar.update(len(metrics))
                last = metrics[-1]
                if last.loss is not None:
                    tr.log_scalars("train", {"loss": last.loss}, step=last.total_steps)
                if tr.total_steps % 250 < len(metrics):
                    sps = (tr.total_steps - steps_at_start) / max(time.time() - t_start, 1e-9)
                    bar.set_postfix(ret=f"{tr.stats.summary()['recent_reward']:.1f}", eps=f"{last.epsilon:.3f}", sps=f"{sps:.0f}")
                    tr.log_scalars("train", {"epsilon": last.epsilon, "steps_per_s": sps, "learning_rate": cfg.learning_rate}, step=last.total_steps)
                stop.check()

            while trainer.total_steps < cfg.total_steps:
                chunk = cfg.eval_every or cfg.total_steps
                trainer.train(min(chunk - trainer.total_steps % chunk, cfg.total_steps - trainer.total_steps), progress)
                if cfg.eval_every and trainer.total_steps < cfg.total_steps:
                    trainer.eval()
                    stop.check()
    except KeyboardInterrupt as err:
        bar.close()
        trainer.save_checkpoint()
        if collector is not None:
            collector.shutdown()
        print(f"\ninterrupted: checkpoint of the last complete step ({trainer.total_steps}) saved to {run.path / 'latest.pt'}")
        raise SystemExit(err.exit_code if isinstance(err, StopRequested) else 130)
    bar.close()
    wall = time.time() - t_start
    if collector is not None:
        collector.shutdown()

    # --- final evaluation, checkpoint and plot ------------------------------------------------
    report = trainer.eval()
    trainer.save_checkpoint()
    if cfg.plot:
        plot_learning_curve(run.read_jsonl("train_episodes.jsonl"), run.read_jsonl("eval_episodes.jsonl"), run.path / "learning_curve.png", title=f"DQN on {cfg.env_id}")
    sps = (trainer.total_steps - steps_at_start) / max(wall, 1e-9)
    print(report.format())
    print(f"greedy eval: mean {report.mean_reward:.2f} std {report.std_reward:.2f} | {sps:.0f} env steps/s | wall {wall:.1f}s | {run.path}")
    return {"eval": report.stats, "steps_per_s": sps, "wall_s": wall, "run_dir": str(run.path)}


if __name__ == "__main__":
    run_main(main)  # user errors: one line, exit status 2 (--debug: traceback)
