"""Observation encoding for any gymnasium space, and the POPGym / MiniGrid suites through both pipelines."""
import pytest
import torch
from tensordict import TensorDict
from torchrl.data import Bounded, Categorical, Composite, Unbounded

from torchrl_memory import make_env
from torchrl_memory.envs.observation_encoding import EncodeObservation
from torchrl_memory.pipelines import dqn, recurrent_ppo

B = 3


def _composite():
    return Composite(
        direction=Categorical(4, shape=(B,), dtype=torch.int64),
        counts=Bounded(low=0, high=2, shape=(B, 2), dtype=torch.int64),  # MultiDiscrete([3, 3])
        image=Bounded(low=0, high=255, shape=(B, 7, 7, 3), dtype=torch.uint8),
        pos=Unbounded(shape=(B, 2, 2), dtype=torch.float32),
        shape=(B,),
    )


def test_every_space_kind_is_encoded_and_concatenated_in_key_order():
    spec = _composite()
    enc = EncodeObservation(spec, ["direction", "counts", "image", "pos"], batch_dims=1)
    assert enc.obs_dim == 4 + 6 + 147 + 4
    td = TensorDict(
        {"direction": torch.tensor([0, 3, 1]), "counts": torch.tensor([[0, 2], [1, 1], [2, 0]]),
         "image": torch.full((B, 7, 7, 3), 51, dtype=torch.uint8), "pos": torch.arange(12.0).reshape(B, 2, 2)},
        batch_size=[B],
    )
    out = enc._call(td.clone())["observation"]
    assert out.shape == (B, 161) and out.dtype == torch.float32
    assert out[1, :4].tolist() == [0, 0, 0, 1]  # one-hot direction
    assert out[0, 4:10].tolist() == [1, 0, 0, 0, 0, 1]  # one one-hot per MultiDiscrete component
    assert torch.allclose(out[:, 10:157], torch.full((B, 147), 0.2))  # 51 / 255
    assert out[2, 157:].tolist() == [8, 9, 10, 11]
    new_spec = enc.transform_observation_spec(spec.clone())
    assert set(new_spec.keys()) == {"observation"} and new_spec["observation"].shape == (B, 161)
    assert "one-hot" in enc.describe() and "flat / 255" in enc.describe()


popgym = pytest.importorskip("popgym")
minigrid = pytest.importorskip("minigrid")


@pytest.mark.parametrize(
    "env_id,says",
    [
        ("popgym-RepeatPreviousEasy-v0", "Discrete(4) -> one-hot"),
        ("popgym-AutoencodeEasy-v0", "Tuple(Discrete(2), Discrete(4))"),
        ("popgym-CountRecallEasy-v0", "MultiDiscrete([2, 2]) -> one-hots"),
        ("MiniGrid-MemoryS7-v0", "image: Box(7, 7, 3) uint8 -> flat / 255"),
        ("popgym-StatelessCartPoleEasy-v0", "Box(2,) float32"),
    ],
)
def test_suite_envs_are_encoded_as_specified(env_id, says):
    env = make_env(env_id, 2, seed=0)
    assert says in env.observation_description
    td = env.rollout(20, break_when_any_done=False)
    assert td["observation"].dtype == torch.float32 and td["observation"].shape[-1] == env.observation_spec["observation"].shape[-1]


SMOKE = ["--num-envs", "8", "--rollout-len", "16", "--envs-per-minibatch", "4", "--hidden-size", "16", "--total-steps", "384",
         "--eval-every", "0", "--eval-episodes", "2", "--plot", "false"]


@pytest.mark.parametrize(
    "env_id,model",
    [("popgym-RepeatPreviousEasy-v0", "lstm"), ("popgym-MineSweeperEasy-v0", "gru"), ("popgym-HigherLowerEasy-v0", "lstm"),
     ("MiniGrid-MemoryS7-v0", "lstm")],
)
def test_ppo_runs_a_few_hundred_steps_on_each_suite(tmp_path, env_id, model):
    out = recurrent_ppo.main([*SMOKE, "--env", env_id, "--model", model, "--run-root", str(tmp_path)])
    assert out["eval"]["episodes"] == 2


def test_dqn_runs_on_popgym_and_refuses_multidiscrete_actions_by_name(tmp_path):
    out = dqn.main(["--env", "popgym-RepeatPreviousEasy-v0", "--total-steps", "300", "--min-replay-size", "64", "--batch-size", "16",
                    "--eval-every", "0", "--eval-episodes", "2", "--plot", "false", "--run-root", str(tmp_path)])
    assert out["eval"]["episodes"] == 2
    with pytest.raises(ValueError, match="DQN needs a discrete action space .* got BoundedDiscrete"):
        dqn.main(["--env", "popgym-MineSweeperEasy-v0", "--run-root", str(tmp_path / "x")])
    assert not (tmp_path / "x").exists()


def test_env_wrappers_from_the_command_line(tmp_path):
    env = make_env("MiniGrid-MemoryS7-v0", 2, wrappers=["minigrid.wrappers:ImgObsWrapper"])
    assert env.observation_description.startswith("obs: Box(7, 7, 3) uint8")


def _text_observations(env):
    import gymnasium as gym

    class Text(gym.ObservationWrapper):
        def __init__(self, env):
            super().__init__(env)
            self.observation_space = gym.spaces.Text(8)

        def observation(self, obs):
            return "x"

    return Text(env)


def test_an_unsupported_observation_space_is_one_error_naming_it():
    with pytest.raises(ValueError, match=r"observation space Text \(accepted: Box, Discrete, MultiDiscrete, or a Dict/Tuple of them\)"):
        make_env("gym:CartPole-v1", 2, wrappers=[_text_observations])
