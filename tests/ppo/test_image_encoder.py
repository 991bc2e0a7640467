"""The CNN ahead of the trunk: reads the image where the encoder put it, keeps ratio 1, loads back."""
import numpy as np
import pytest
import torch
from torch import nn
from torchrl.collectors import Collector
from torchrl.modules import set_recurrent_mode

from torchrl_memory import PPOConfig, build_agent, load_policy, make_env
from torchrl_memory.ppo import ImageEncoder
from torchrl_memory.config_validation import UserError
from torchrl_memory.keys import LOG_PROB
from torchrl_memory.run_config import saved_values

pytest.importorskip("minigrid")
MEMORY = "MiniGrid-MemoryS7-v0"


def test_the_cnn_sees_the_image_in_its_own_layout_and_the_rest_beside_it():
    h, w, c, rest = 3, 4, 2, 5
    image = torch.arange(h * w * c, dtype=torch.float32).reshape(h, w, c)
    before, after = torch.tensor([-1.0, -2.0]), torch.tensor([7.0, 8.0, 9.0])
    x = torch.cat([before, image.reshape(-1), after])[None]
    enc = ImageEncoder(x.shape[-1], offset=2, shape=(h, w, c))
    enc.cnn = nn.Flatten()  # identity on [B, C, H, W]: shows what the CNN is fed
    enc.out_dim = h * w * c + rest
    out = enc(x)[0]
    assert torch.equal(out[: h * w * c], image.permute(2, 0, 1).reshape(-1))  # channels first, as Conv2d reads
    assert torch.equal(out[h * w * c :], torch.cat([before, after]))


@pytest.mark.parametrize("model", ["lstm", "gru"])
def test_fresh_minigrid_rollout_reevaluates_to_ratio_one_through_the_cnn(model):
    env = make_env(MEMORY, 4, seed=0)
    agent = build_agent(PPOConfig(env_id=MEMORY, model=model, hidden_size=16, encoder="auto"), env)
    assert isinstance(agent.input_encoder, ImageEncoder)
    env = agent.prime(env)
    collector = Collector(env, agent.rollout_policy, frames_per_batch=4 * 12, total_frames=-1)
    batches = iter(collector)
    next(batches)
    batch = next(batches)  # a window that starts from a carried state
    collector.shutdown()
    with torch.no_grad(), set_recurrent_mode(True):
        td = batch.select(*agent.in_keys, "action").clone()
        log_prob = agent.actor.get_dist(td).log_prob(td["action"])
    assert (log_prob - batch[LOG_PROB]).abs().max() < 1e-5


def test_encoder_choices_on_flat_and_image_envs():
    flat = make_env("CartPoleNoVel", 2)
    assert build_agent(PPOConfig(encoder="auto"), flat).input_encoder is None
    with pytest.raises(UserError, match="--encoder cnn needs an image observation.*Box\\(4,\\)"):
        build_agent(PPOConfig(encoder="cnn"), flat)
    image = make_env(MEMORY, 2)
    assert build_agent(PPOConfig(env_id=MEMORY, encoder="flat"), image).input_encoder is None
    # a run saved before the field existed was trained on the flat vector
    assert saved_values({"env_id": MEMORY}, PPOConfig)["encoder"] == "flat"


def test_a_cnn_checkpoint_loads_and_predicts_from_raw_minigrid_observations(tmp_path):
    import gymnasium as gym

    from torchrl_memory.pipelines import recurrent_ppo

    out = recurrent_ppo.main(["--env", MEMORY, "--num-envs", "4", "--rollout-len", "8", "--envs-per-minibatch", "2", "--hidden-size", "16",
                              "--total-steps", "64", "--eval-episodes", "1", "--plot", "false", "--run-root", str(tmp_path)])
    policy = load_policy(f"{out['run_dir']}/latest.pt")
    assert isinstance(policy.agent.input_encoder, ImageEncoder)
    raw = gym.make(MEMORY)
    obs, _ = raw.reset(seed=0)
    action, state = policy.predict(obs)
    assert 0 <= int(action) < raw.action_space.n and state is not None
    action2, _ = policy.predict(obs, state, episode_start=np.array([False]))
    assert np.asarray(action2).shape == np.asarray(action).shape


@pytest.mark.parametrize("side", list(range(1, 41)))
def test_the_cnn_takes_images_of_every_side(side):
    # 17-35 px used to fall to the Nature-DQN stack, which needs 36; 5 px to the 2x2 stack, which needs 6
    for h, w in ((side, side), (side, 3 * side + 1)):
        enc = ImageEncoder(h * w * 3 + 2, 1, (h, w, 3))
        out = enc(torch.rand(2, h * w * 3 + 2))
        assert out.shape == (2, enc.out_dim) and torch.isfinite(out).all()
