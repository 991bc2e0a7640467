"""``--env native:popgym-...`` through the env factory: the native env where popgym's gymnasium env
would be, with the same observation and action specs and the same normalisation decision."""
import pytest

from torchrl_memory import UserError
from torchrl_memory.envs import check_eval_env, make_env, parse_env_id
from torchrl_memory.envs.popgym import PopGymEnvBase
from torchrl_memory.envs.lookup import native_base
from torchrl_memory.envs.obs_norm import RunningObsNorm


def _has_norm(env) -> bool:
    return any(isinstance(t, RunningObsNorm) for t in env.transform)


@pytest.mark.parametrize("name", ["RepeatPreviousEasy", "CountRecallMedium", "PositionOnlyCartPoleHard", "MineSweeperEasy"])
def test_native_popgym_ids_build_the_native_env_with_popgyms_interface(name):
    native = make_env(f"native:popgym-{name}-v0", 2, seed=0)
    gym = make_env(f"popgym-{name}-v0", 2, seed=0)
    assert isinstance(native_base(native), PopGymEnvBase)
    check_eval_env(native, gym, f"native:popgym-{name}-v0", f"popgym-{name}-v0")  # raises on any mismatch
    assert native.max_episode_steps == gym.max_episode_steps or gym.max_episode_steps is None
    # one-hot card codes are not normalised on either path; CartPole's float positions are on both
    assert _has_norm(native) == _has_norm(gym) == ("CartPole" in name)


def test_a_native_popgym_id_with_no_native_version_names_the_ones_that_exist_and_the_gymnasium_id():
    with pytest.raises(UserError, match=r"no tensor-native version \(accepted: native:popgym-<Name><Easy\|Medium\|Hard>-v0 for .*RepeatPrevious.*; or 'popgym-LabyrinthEscapeEasy-v0' itself"):
        parse_env_id("native:popgym-LabyrinthEscapeEasy-v0")


def test_gymnasium_wrappers_are_refused_on_the_native_popgym_env():
    with pytest.raises(UserError, match="env wrappers apply to gymnasium envs only"):
        make_env("native:popgym-RepeatFirstEasy-v0", 2, wrappers=["gymnasium.wrappers:RecordEpisodeStatistics"])
