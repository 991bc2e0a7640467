"""SequenceReplay: windows are consecutive steps of one env's stream, never across envs or over the
ring's write position; every such window is drawn; state_dict round trip."""
import pytest
import torch
from tensordict import TensorDict

from torchrl_memory.dqn import SequenceReplay


def _fill(replay: SequenceReplay, steps: int, num_envs: int) -> None:
    """Step t of env e stores the value 1000 * e + t."""
    for t in range(steps):
        value = torch.tensor([1000.0 * e + t for e in range(num_envs)])
        replay.extend(TensorDict({"observation": value[:, None], "is_init": torch.zeros(num_envs, 1, dtype=torch.bool)}, [num_envs]))


@pytest.mark.parametrize("steps", [7, 10, 23])  # not full, exactly full, wrapped twice
def test_every_window_is_consecutive_steps_of_one_env_among_those_still_held(steps):
    replay = SequenceReplay(capacity=20, num_envs=2)  # 10 steps per env
    _fill(replay, steps, 2)
    assert len(replay) == 2 * min(steps, 10)
    windows = replay.sample(500, 4).get("observation").squeeze(-1)
    env, t = windows // 1000, windows % 1000
    assert bool((env == env[:, :1]).all())  # one env per window
    assert bool((t[:, 1:] - t[:, :-1] == 1).all())  # consecutive, in order: never over the write position
    assert int(t.min()) >= steps - min(steps, 10) and int(t.max()) <= steps - 1  # only steps still held


def test_all_windows_are_drawn_about_uniformly():
    replay = SequenceReplay(capacity=20, num_envs=2)
    _fill(replay, 15, 2)  # wrapped: steps 5..14 held, 7 windows of 4 per env
    starts = replay.sample(14_000, 4).get("observation")[:, 0, 0]
    values, counts = starts.unique(return_counts=True)
    assert sorted(values.tolist()) == sorted(1000.0 * e + t for e in range(2) for t in range(5, 12))
    assert int(counts.min()) > 700 and int(counts.max()) < 1300  # 1000 each in expectation


def test_a_window_longer_than_what_is_held_is_refused_and_can_sample_says_so():
    replay = SequenceReplay(capacity=20, num_envs=2)
    _fill(replay, 3, 2)
    assert not replay.can_sample(4) and replay.can_sample(3)
    with pytest.raises(ValueError, match="needs 4 stored steps per env; 3 are"):
        replay.sample(1, 4)
    with pytest.raises(ValueError, match="one step of each of the 2 envs"):
        replay.extend(TensorDict({"observation": torch.zeros(3, 1)}, [3]))


def test_state_dict_round_trip_gives_the_same_draws():
    replay = SequenceReplay(capacity=20, num_envs=2)
    _fill(replay, 13, 2)
    copy = SequenceReplay(capacity=20, num_envs=2)
    copy.load_state_dict(replay.state_dict())
    torch.manual_seed(3)
    a = replay.sample(50, 5)
    torch.manual_seed(3)
    b = copy.sample(50, 5)
    assert (a == b).all() and copy.written == 13
