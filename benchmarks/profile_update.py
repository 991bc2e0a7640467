"""Where the time of one PPO minibatch update goes, next to the bare-PyTorch floor of the same maths.

    python benchmarks/profile_update.py [--repeats 200]

Default rollout shape (64 envs x 16 steps, 16 trajectories per minibatch = 256 steps), LSTM 64,
CartPoleNoVel. Phases, each timed on its own (median microseconds over --repeats): the
sampler's minibatch, the actor's recurrent forward alone, the whole RecurrentPPOLoss forward
(ClipPPOLoss), backward, the flat clip + fused Adam step. The floor is the same LSTM, heads and
clipped-surrogate/value/entropy loss on plain tensors with a plain Adam step.
JSON in benchmarks/results/profile_update.json.
"""
from __future__ import annotations

import argparse

import torch

from bench_common import median_us, ppo_default_setup, ppo_first_minibatch, save


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args()
    torch.set_num_threads(1)
    from torchrl.modules import set_recurrent_mode

    from torchrl_memory import obs_dim_of
    from torchrl_memory.flat_params import clip_flat_grad_norm_

    cfg, env, agent = ppo_default_setup()
    batch, trainer, mb = ppo_first_minibatch(cfg, env, agent)
    n_steps = mb.numel()

    def actor_forward():
        with set_recurrent_mode(True):
            agent.actor(mb.clone(False))

    def loss_forward():
        return trainer.loss(mb)

    def full_step():
        out = trainer.loss(mb)
        total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
        trainer.flat_params.grad.zero_()
        total.backward()
        clip_flat_grad_norm_(trainer.flat_params, cfg.max_grad_norm)
        trainer.optimizer.step()

    def forward_backward():
        out = trainer.loss(mb)
        trainer.flat_params.grad.zero_()
        (out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]).backward()

    def clip_and_step():
        clip_flat_grad_norm_(trainer.flat_params, cfg.max_grad_norm)
        trainer.optimizer.step()

    phases = {
        # the sampler gathers once per epoch and slices: its cost per minibatch is an epoch's share
        "sampler, per minibatch": median_us(lambda: list(trainer.sampler.epoch(batch)), args.repeats, warmup=5)
        / trainer.sampler.num_minibatches(),
        "actor recurrent forward": median_us(actor_forward, args.repeats, warmup=5),
        "loss forward (RecurrentPPOLoss)": median_us(loss_forward, args.repeats, warmup=5),
        "loss forward + backward": median_us(forward_backward, args.repeats, warmup=5),
        "clip + fused Adam step": median_us(clip_and_step, args.repeats, warmup=5),
        "whole minibatch step": median_us(full_step, args.repeats, warmup=5),
    }

    # floor: the same computation on plain tensors
    B, T, H = mb.batch_size[0], mb.batch_size[1], cfg.hidden_size
    lstm = torch.nn.LSTM(obs_dim_of(env), H, batch_first=True)
    pi, v = torch.nn.Linear(H, 2), torch.nn.Linear(H, 1)
    params = [*lstm.parameters(), *pi.parameters(), *v.parameters()]
    opt = torch.optim.Adam(params, lr=1e-3)
    x = mb["observation"].detach().clone()
    h0 = (mb["recurrent_state_h"][:, 0].transpose(0, 1).contiguous(), mb["recurrent_state_c"][:, 0].transpose(0, 1).contiguous())
    act, old_lp, adv, ret = mb["action"], mb["action_log_prob"], mb["advantage"].squeeze(-1), mb["value_target"].squeeze(-1)

    def floor_step():
        y, _ = lstm(x, h0)
        dist = torch.distributions.Categorical(logits=pi(y))
        ratio = (dist.log_prob(act) - old_lp).exp()
        a = (adv - adv.mean()) / (adv.std() + 1e-8)
        loss = -torch.min(ratio * a, ratio.clamp(0.8, 1.2) * a).mean() + 0.5 * ((v(y).squeeze(-1) - ret) ** 2).mean() - 0.01 * dist.entropy().mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 0.5)
        opt.step()

    floor = median_us(floor_step, args.repeats, warmup=5)
    print(f"one PPO minibatch update, {B} x {T} = {n_steps} steps, LSTM {H}, 1 thread (median us over {args.repeats})")
    for name, us in phases.items():
        print(f"  {name:<28} {us:9.0f} us")
    print(f"  {'bare-PyTorch floor (same maths)':<28} {floor:9.0f} us")
    ratio = phases["whole minibatch step"] / floor
    print(f"  ours / floor: {ratio:.2f}x (issue target <= 2x)")
    save("profile_update", {"repeats": args.repeats, "minibatch_steps": n_steps, "phases_us": phases, "floor_us": floor, "ratio": ratio})


if __name__ == "__main__":
    main()
