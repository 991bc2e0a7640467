"""``--encoder dense`` (POPGym's pre-encoder): inside the trunk, ratio 1, trained, checkpointed."""
import pytest
import torch
from torchrl.collectors import Collector
from torchrl.modules import set_recurrent_mode

from torchrl_memory import PPOConfig, build_agent, load_policy, make_env
from torchrl_memory.config_validation import UserError
from torchrl_memory.keys import LOG_PROB
from torchrl_memory.ppo.dense_encoder import DenseEncoder
from torchrl_memory.pipelines import recurrent_ppo


def test_dense_encoder_is_popgyms_linear_layernorm_leakyrelu():
    enc = DenseEncoder(5, 7)
    x = torch.randn(3, 4, 5)
    expected = torch.nn.functional.leaky_relu(torch.nn.functional.layer_norm(x @ enc.net[0].weight.T + enc.net[0].bias, (7,), enc.net[1].weight, enc.net[1].bias))
    assert torch.allclose(enc(x), expected, atol=1e-6)
    assert enc(x).shape == (3, 4, 7)


@pytest.mark.parametrize("model", ["lstm", "gru", "mlp"])
def test_fresh_rollout_reevaluates_to_ratio_one_through_the_dense_encoder(model):
    env = make_env("CartPoleNoVel", 4, seed=0)
    agent = build_agent(PPOConfig(model=model, hidden_size=16, encoder="dense", encoder_size=8), env)
    assert isinstance(agent.input_encoder, DenseEncoder) and agent.input_encoder.out_dim == 8
    assert any(p is agent.input_encoder.net[0].weight for p in agent.parameters())  # trained with the rest
    env = agent.prime(env)
    collector = Collector(env, agent.rollout_policy, frames_per_batch=4 * 12, total_frames=-1)
    batches = iter(collector)
    next(batches)
    batch = next(batches)  # a window that starts from a carried state
    collector.shutdown()
    with set_recurrent_mode(True):
        td = batch.select(*agent.in_keys, "action").clone()
        log_prob = agent.actor.get_dist(td).log_prob(td["action"])
    assert (log_prob - batch[LOG_PROB]).abs().max().item() < 1e-5
    log_prob.sum().backward()
    assert agent.input_encoder.net[0].weight.grad.abs().sum() > 0  # the loss reaches the encoder


def test_encoder_size_is_validated_and_fixes_the_checkpoint_shape(tmp_path):
    with pytest.raises(UserError, match="encoder_size.*0"):
        PPOConfig(encoder="dense", encoder_size=0).validate()
    tiny = ["--num-envs", "4", "--rollout-len", "8", "--envs-per-minibatch", "2", "--hidden-size", "16", "--eval-episodes", "1",
            "--plot", "false", "--eval-every", "0", "--run-root", str(tmp_path), "--total-steps", "32", "--encoder", "dense", "--encoder-size", "8"]
    out = recurrent_ppo.main(tiny)
    policy = load_policy(f"{out['run_dir']}/latest.pt")
    assert isinstance(policy.agent.input_encoder, DenseEncoder) and policy.agent.input_encoder.out_dim == 8
    with pytest.raises(ValueError, match="encoder_size: checkpoint 8 vs requested 16"):
        recurrent_ppo.main(["--resume", str(tmp_path), "--encoder-size", "16"])
