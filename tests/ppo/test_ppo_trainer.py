"""Trainer mechanics with stubbed losses: KL stop, grad clip, guards, LR schedule, config errors."""
import math

import pytest
import torch
from torchrl.collectors import Collector

from torchrl_memory import ConfigError, EntropyCollapseError, NonFiniteLossError, PPOConfig, RecurrentPPOTrainer, compute_gae, make_env
from torchrl_memory.envs import obs_dim_of
from torchrl_memory.ppo import make_lstm_actor_critic

N, T = 4, 16


def _setup(**overrides):
    kwargs = dict(num_envs=N, rollout_len=T, envs_per_minibatch=2, hidden_size=16, total_steps=N * T * 10)
    cfg = PPOConfig(**{**kwargs, **overrides})
    env = make_env("CartPole-v1", N, seed=0)
    agent = make_lstm_actor_critic(obs_dim_of(env), env.action_spec, 16)
    env = agent.prime(env)
    collector = Collector(env, agent.rollout_policy, frames_per_batch=N * T, total_frames=-1)
    batch = next(iter(collector))
    collector.shutdown()
    compute_gae(batch, agent, cfg.gamma, cfg.gae_lambda)
    return RecurrentPPOTrainer(agent, cfg), batch


def _stub_loss(trainer, kls=None, entropy=1.0, nan=False):
    """Replaces the loss with one whose KL / entropy / finiteness we dictate; still differentiable."""
    calls = {"n": 0}
    real = trainer.loss

    def fake(mb):
        out = real(mb)
        i = calls["n"]
        calls["n"] += 1
        kl = kls[i] if kls is not None and i < len(kls) else 0.0
        out.set("kl_approx", torch.tensor(kl))
        out.set("entropy", torch.tensor(entropy))
        if nan:
            out.set("loss_objective", out["loss_objective"] * float("nan"))
        return out

    trainer.loss = fake
    return calls


def _params(trainer):
    return [p.detach().clone() for p in trainer.params]


def test_kl_stop_update_mode_discards_tripping_minibatch_and_stops():
    trainer, batch = _setup(target_kl=0.01, kl_stop="update", n_epochs=3)
    # 2 minibatches per epoch; the 3rd minibatch (epoch 2, first) trips
    calls = _stub_loss(trainer, kls=[0.0, 0.0, 0.5, 0.0, 0.0, 0.0])
    stats = trainer.train_step(batch)
    assert stats.kl_stopped and stats.num_gradient_steps == 2 and stats.epochs_completed == 1
    assert calls["n"] == 3


def test_kl_stop_epoch_mode_applies_step_and_skips_rest_of_epoch():
    trainer, batch = _setup(target_kl=0.01, kl_stop="epoch", n_epochs=3)
    calls = _stub_loss(trainer, kls=[0.5, 0.0, 0.0, 0.0, 0.0])
    stats = trainer.train_step(batch)
    # epoch 1: first minibatch applied then the epoch ends; epochs 2 and 3 run fully
    assert stats.kl_stopped and stats.num_gradient_steps == 1 + 2 + 2 and stats.epochs_completed == 3
    assert calls["n"] == 5


def _delta_after_one_step(max_grad_norm):
    torch.manual_seed(0)
    trainer, batch = _setup(max_grad_norm=max_grad_norm, n_epochs=1)
    before = _params(trainer)
    trainer.train_step(batch)
    return torch.cat([(a - b).flatten() for a, b in zip(_params(trainer), before)])


def test_global_grad_clip_tiny_cap_shrinks_update_huge_cap_changes_nothing(monkeypatch):
    tiny = _delta_after_one_step(1e-6)
    huge = _delta_after_one_step(1e9)
    from torchrl_memory.ppo import trainer as ppo_trainer

    monkeypatch.setattr(ppo_trainer, "clip_flat_grad_norm_", lambda flat, max_norm: torch.linalg.vector_norm(flat.grad))  # no clipping
    unclipped = _delta_after_one_step(1e9)
    assert tiny.norm() < 0.5 * huge.norm()
    assert torch.equal(huge, unclipped)


def test_entropy_guard_raises_on_third_low_update_and_resets_after_healthy_one():
    saved = []
    trainer, batch = _setup(entropy_threshold=0.05, entropy_patience=3, entropy_guard="stop")
    trainer.on_entropy_collapse = lambda t: saved.append(t.updates_done)
    _stub_loss(trainer, entropy=0.01)
    trainer.train_step(batch)
    trainer.train_step(batch)
    _stub_loss(trainer, entropy=1.0)  # healthy: count resets
    trainer.train_step(batch)
    assert trainer.low_entropy_updates == 0
    _stub_loss(trainer, entropy=0.01)
    trainer.train_step(batch)
    trainer.train_step(batch)
    with pytest.raises(EntropyCollapseError, match="3 consecutive updates"):
        trainer.train_step(batch)
    assert saved == [trainer.updates_done]  # checkpoint hook ran before raising


def test_entropy_guard_warns_once_by_default_and_keeps_training(capsys):
    trainer, batch = _setup(entropy_threshold=0.05, entropy_patience=2)
    _stub_loss(trainer, entropy=0.01)
    for _ in range(4):
        trainer.train_step(batch)
    assert trainer.updates_done == 4
    assert capsys.readouterr().err.count("warning: policy entropy") == 1


def test_non_finite_steps_are_skipped_then_raise_after_three_in_a_row():
    trainer, batch = _setup(n_epochs=1)
    before = _params(trainer)
    _stub_loss(trainer, nan=True)
    stats = trainer.train_step(batch)  # 2 minibatches, both skipped
    assert stats.skipped_steps == 2 and stats.num_gradient_steps == 0
    assert all(torch.equal(a, b) for a, b in zip(before, _params(trainer)))
    with pytest.raises(NonFiniteLossError, match="3 gradient steps in a row"):
        trainer.train_step(batch)


def test_linear_lr_schedule_with_floor_and_override():
    trainer, batch = _setup(learning_rate=1e-3, n_epochs=1)
    assert trainer.scheduled_learning_rate() == pytest.approx(1e-3)
    trainer.updates_done = 5
    assert trainer.scheduled_learning_rate() == pytest.approx(5e-4)
    trainer.updates_done = 100
    assert trainer.scheduled_learning_rate() == pytest.approx(5e-5)  # 5% floor
    trainer.set_learning_rate(2e-4)
    stats = trainer.train_step(batch)
    assert stats.learning_rate == 2e-4 and trainer.optimizer.param_groups[0]["lr"] == 2e-4
    with pytest.raises(ValueError, match="learning rate"):
        trainer.set_learning_rate(-1.0)


@pytest.mark.parametrize(
    "field,value,accepted",
    [
        ("learning_rate", 0.0, r"\(0.0, inf\)"),
        ("n_epochs", 0, r"integer >= 1"),
        ("envs_per_minibatch", 65, r"\[1, 64\]"),
        ("chunk_len", 12, "divisor of rollout_len=16"),
        ("gamma", 1.5, r"\[0.0, 1.0\]"),
        ("kl_stop", "batch", "'update', 'epoch'"),
        ("clip_range_vf", -1.0, r"\(0.0, inf\)"),
        ("target_kl", 0.0, r"\(0.0, inf\)"),
        ("entropy_patience", 0, "integer >= 1"),
    ],
)
def test_config_validation_names_field_value_and_range(field, value, accepted):
    with pytest.raises(ConfigError, match=rf"'{field}' = {value!r}.*accepted.*{accepted}"):
        PPOConfig(**{field: value}).validate()


def test_clip_range_vf_none_turns_value_clipping_off_and_non_finite_is_rejected():
    assert PPOConfig(clip_range_vf=None).validate()
    for bad in (math.inf, -math.inf, math.nan):
        with pytest.raises(ConfigError, match="'clip_range_vf'"):
            PPOConfig(clip_range_vf=bad).validate()
