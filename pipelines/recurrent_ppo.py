"""Recurrent (LSTM) PPO on TorchRL.

    python pipelines/recurrent_ppo.py                      # CartPoleNoVel, defaults
    python pipelines/recurrent_ppo.py --env TMaze-20 --total-steps 200000
    python pipelines/recurrent_ppo.py --resume runs/recurrent_ppo

Reads top to bottom like the algorithm: build env and agent, then loop
{collect a [num_envs, T] window, advantages, PPO update, log, checkpoint, eval}.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
from torchrl.collectors import Collector
from tqdm import tqdm

from components import (
    EntropyCollapseError,
    EvalReport,
    PPOConfig,
    RecurrentPPOTrainer,
    ReturnScaler,
    TrainingRun,
    build_state,
    check_compatible,
    compute_gae,
    resolve_run_config,
    evaluate,
    finished_episodes,
    make_env,
    make_lstm_actor_critic,
    make_mlp_actor_critic,
    make_metrics_logger,
    obs_dim_of,
    plot_learning_curve,
    resolve_device,
    set_cpu_threads,
    restore_state,
    sync_obs_norm,
)


def main(argv: list[str] | None = None) -> dict:
    # --- config: defaults < resumed run's config < command line ----------------------
    cfg, run, resumed = resolve_run_config(PPOConfig, __doc__, argv)
    if resumed is not None:
        check_compatible(resumed, cfg)
    device = resolve_device(cfg.device)
    set_cpu_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed)

    # --- env, agent, trainer, collector -------------------------------------------
    env_kwargs = dict(normalize_obs=cfg.normalize_obs, lstm_hidden_size=cfg.hidden_size, flicker_mode=cfg.flicker_mode, flicker_burst=cfg.flicker_burst)
    env = make_env(cfg.env_id, cfg.num_envs, device, cfg.seed, **env_kwargs)
    eval_env = make_env(cfg.env_id, cfg.eval_episodes, device, cfg.seed + 1_000_003, **env_kwargs)
    make_agent = make_lstm_actor_critic if cfg.model == "lstm" else make_mlp_actor_critic
    agent = make_agent(obs_dim_of(env), env.action_spec, cfg.hidden_size, device)
    run = run or TrainingRun.create(cfg.run_root, cfg.run_name, cfg.to_dict())
    trainer = RecurrentPPOTrainer(agent, cfg, on_entropy_collapse=lambda _: save(best=False))
    scaler = ReturnScaler(cfg.num_envs, cfg.gamma) if cfg.reward_scaling else None
    collector = Collector(env, agent.rollout_policy, frames_per_batch=cfg.frames_per_batch, total_frames=-1, device=device)
    counters = {"total_steps": 0, "total_episodes": 0, "best_eval": float("-inf")}
    if resumed is not None:
        counters = restore_state(resumed, trainer, collector, env, eval_env, scaler)
        for log in ("train_episodes.jsonl", "eval_episodes.jsonl"):
            run.truncate_jsonl(log, counters["total_steps"])
    logger = make_metrics_logger(cfg.logger, run.path)
    track_success = cfg.env_id.startswith("TMaze")
    snapshot = build_state(cfg, trainer, collector, env, eval_env, scaler, counters)

    def save(best: bool) -> None:
        run.save_checkpoint(snapshot, snapshot["counters"]["total_steps"], keep=cfg.keep_checkpoints, best=best)
        run.update_progress(snapshot["counters"]["total_steps"], snapshot["counters"]["total_episodes"])

    def greedy_eval() -> EvalReport:
        # training seconds so far in this process, evaluation time excluded
        train_s = round(time.time() - t_start - timing["eval"], 3)
        t_eval = time.time()
        sync_obs_norm(env, eval_env)
        report = evaluate(eval_env, agent.actor, counters["total_steps"], track_success=track_success)
        timing["eval"] += time.time() - t_eval
        run.log_jsonl("eval_episodes.jsonl", [{"total_steps": counters["total_steps"], "train_s": train_s, **e.to_dict()} for e in report.episodes])
        logger.log_scalar("eval/mean_return", report.mean_reward, step=counters["total_steps"])
        return report

    # --- training loop ----------------------------------------------------------------
    print(f"run directory: {run.path}  device: {device}  env: {cfg.env_id} x {cfg.num_envs}")
    bar = tqdm(total=cfg.total_steps, initial=counters["total_steps"], unit="step", dynamic_ncols=True)
    t_start, steps_at_start, recent = time.time(), counters["total_steps"], []
    timing = {"collect": 0.0, "advantage": 0.0, "update": 0.0, "eval": 0.0}
    t_mark = time.time()
    try:
        batches = iter(collector)
        while counters["total_steps"] < cfg.total_steps:
            batch = next(batches)
            timing["collect"] += time.time() - t_mark
            t0 = time.time()
            compute_gae(batch, agent, cfg.gamma, cfg.gae_lambda, scaler)
            t1 = time.time()
            stats = trainer.train_step(batch)
            t2 = time.time()
            timing["advantage"] += t1 - t0
            timing["update"] += t2 - t1

            episodes = finished_episodes(batch, counters["total_steps"])
            counters["total_steps"] += batch.numel()
            counters["total_episodes"] += len(episodes)
            run.log_jsonl("train_episodes.jsonl", episodes)
            recent = (recent + [e["total_reward"] for e in episodes])[-100:]
            for key, value in stats.to_dict().items():
                logger.log_scalar(f"train/{key}", float(value), step=counters["total_steps"])

            best = False
            if cfg.eval_every and trainer.updates_done % cfg.eval_every == 0:
                report = greedy_eval()
                best = report.mean_reward > counters["best_eval"]
                counters["best_eval"] = max(counters["best_eval"], report.mean_reward)
            snapshot = build_state(cfg, trainer, collector, env, eval_env, scaler, counters)
            if trainer.updates_done % cfg.checkpoint_every == 0 or best:
                save(best)
            bar.update(batch.numel())
            sps = (counters["total_steps"] - steps_at_start) / max(time.time() - t_start, 1e-9)
            bar.set_postfix(ret=f"{sum(recent) / max(len(recent), 1):.1f}", sps=f"{sps:.0f}", ent=f"{stats.entropy:.2f}", kl=f"{stats.approx_kl:.4f}")
            t_mark = time.time()
    except KeyboardInterrupt:
        bar.close()
        save(best=False)
        print(f"\ninterrupted: saved the last complete update ({snapshot['counters']['total_steps']} steps) to {run.path / 'latest.pt'}")
        collector.shutdown()
        raise SystemExit(130)
    except EntropyCollapseError as err:
        bar.close()
        print(f"\nstopped: {err}; checkpoint saved to {run.path / 'latest.pt'}")
        collector.shutdown()
        raise SystemExit(3)
    bar.close()
    wall = time.time() - t_start

    # --- final evaluation, checkpoint and plot -------------------------------------------
    report = greedy_eval()
    best = report.mean_reward > counters["best_eval"]
    counters["best_eval"] = max(counters["best_eval"], report.mean_reward)
    snapshot = build_state(cfg, trainer, collector, env, eval_env, scaler, counters)
    save(best)
    collector.shutdown()
    if cfg.plot:
        plot_learning_curve(run.read_jsonl("train_episodes.jsonl"), run.read_jsonl("eval_episodes.jsonl"), run.path / "learning_curve.png", title=f"recurrent PPO on {cfg.env_id}")
    sps = (counters["total_steps"] - steps_at_start) / max(wall, 1e-9)
    print(report.format())
    print(f"time: collection {timing['collect']:.1f}s, advantages {timing['advantage']:.1f}s, updates {timing['update']:.1f}s, evaluation {timing['eval']:.1f}s")
    print(f"greedy eval: mean {report.mean_reward:.2f} std {report.std_reward:.2f} | {sps:.0f} env steps/s | wall {wall:.1f}s | {run.path}")
    return {"eval": report.stats, "steps_per_s": sps, "wall_s": wall, "run_dir": str(run.path), "timing": timing}


if __name__ == "__main__":
    main()
