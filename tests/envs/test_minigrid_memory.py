"""The tensor-native MiniGrid Memory env against minigrid's own, step by step."""
import numpy as np
import pytest
import torch

from torchrl_memory.config_validation import UserError
from torchrl_memory.envs.factory import check_eval_env, make_env, parse_env_id
from torchrl_memory.envs.minigrid_memory import MiniGridMemoryEnv, memory_tables, state_of
from torchrl_memory.keys import OBS

minigrid = pytest.importorskip("minigrid")
import gymnasium as gym  # noqa: E402

ID = "MiniGrid-MemoryS7-v0"
NAV = "torchrl_memory.envs.minigrid_wrappers:NavigationActions"


def _lockstep(gym_id: str, episodes: int, num_actions: int, seed: int = 0) -> dict:
    """Plays ``episodes`` episodes of a random, forward-biased policy on minigrid's env and on the
    native one from the same start state; asserts every observation, reward and done flag equal.
    Returns how the episodes ended, so the caller can check that each kind of end was covered."""
    real = gym.make(gym_id)
    native = MiniGridMemoryEnv(gym_id, num_actions, num_envs=1, seed=seed)
    rng = np.random.default_rng(seed)
    probs = np.full(num_actions, 0.4 / (num_actions - 1))
    probs[2] = 0.6  # forward: reaches the hallway's end often enough to see both outcomes
    ends = {"success": 0, "failure": 0, "truncated": 0}
    for episode in range(episodes):
        obs, _ = real.reset(seed=seed * 1000 + episode)
        td = native.reset()
        for k, v in state_of(real).items():
            td[k] = torch.tensor([[v]])
        first = native._observation({k: td[k] for k in native.state_keys})
        assert torch.equal(first["image"][0], torch.from_numpy(obs["image"])) and int(first["direction"]) == obs["direction"]
        while True:
            a = int(rng.choice(num_actions, p=probs))
            obs, reward, terminated, truncated, _ = real.step(a)
            td["action"] = torch.tensor([a])
            nxt = native.step(td)["next"]
            assert torch.equal(nxt["image"][0], torch.from_numpy(obs["image"])), f"episode {episode}: views differ"
            assert int(nxt["direction"]) == obs["direction"]
            assert float(nxt["reward"]) == np.float32(reward)
            assert bool(nxt["terminated"]) == terminated and bool(nxt["truncated"]) == truncated
            if terminated or truncated:
                ends["truncated" if not terminated else ("success" if reward > 0 else "failure")] += 1
                break
            td = nxt.clone()
    return ends


def test_native_memory_env_steps_as_minigrid_with_all_seven_actions():
    ends = _lockstep(ID, episodes=40, num_actions=7)
    assert all(ends.values()), ends  # success, failure and the step limit were each reached


def test_native_memory_env_steps_as_minigrid_with_navigation_actions():
    ends = _lockstep(ID, episodes=40, num_actions=3, seed=1)
    assert all(ends.values()), ends


def test_native_start_states_are_minigrids():
    """Same start support as minigrid's reset (4 layouts x agent x in [1, hallway end], facing east),
    each start drawn about as often."""
    starts_real = set()
    real = gym.make(ID)
    for s in range(200):
        real.reset(seed=s)
        st = state_of(real)
        starts_real.add((st["layout"], st["agent_cell"], st["agent_dir"]))
    td = MiniGridMemoryEnv(ID, num_envs=4000, seed=0).reset()
    native = list(zip(td["layout"].flatten().tolist(), td["agent_cell"].flatten().tolist(), td["agent_dir"].flatten().tolist()))
    assert set(native) == starts_real and len(starts_real) == 4 * 4
    counts = np.array([native.count(s) for s in sorted(starts_real)])
    assert counts.min() > 0.7 * 4000 / 16 and counts.max() < 1.3 * 4000 / 16


def test_random_length_tables_cover_every_hallway():
    tables = memory_tables("MiniGrid-MemoryS13Random-v0")  # hallway ends 4..10
    assert tables.hallway_ends == tuple(range(4, 11)) and len(tables.layout_keys) == 28
    assert tables.layout_hallway.tolist() == [h for h in range(7) for _ in range(4)]
    td = MiniGridMemoryEnv("MiniGrid-MemoryS13Random-v0", num_envs=2000, seed=0).reset()
    x = td["agent_cell"] % tables.width
    end = torch.tensor(tables.hallway_ends)[tables.layout_hallway[td["layout"]]]
    assert bool(((x >= 1) & (x <= end)).all()) and set(td["layout"].flatten().tolist()) == set(range(28))


def test_make_env_native_memory_encodes_as_the_gymnasium_env():
    native = make_env(f"native:{ID}", 2, wrappers=[NAV])
    real = make_env(ID, 2, wrappers=[NAV])
    assert native.action_spec.space.n == real.action_spec.space.n == 3
    assert native.observation_spec[OBS].shape == real.observation_spec[OBS].shape
    check_eval_env(native, real, f"native:{ID}", ID)
    assert "tensor-native" in native.observation_description
    assert make_env(f"native:{ID}", 1).action_spec.space.n == 7


def test_native_memory_refuses_what_it_cannot_mirror():
    with pytest.raises(UserError, match="NavigationActions only"):
        make_env(f"native:{ID}", 1, wrappers=["minigrid.wrappers:ImgObsWrapper"])
    with pytest.raises(UserError, match="no tensor-native version"):
        parse_env_id("native:MiniGrid-Empty-5x5-v0")
    with pytest.raises(UserError, match="no tensor-native version"):
        parse_env_id("native:MiniGrid-MemoryS9Random-v0")  # not one of minigrid's ids
    with pytest.raises(UserError, match="does not match env_id"):
        check_eval_env(make_env(f"native:{ID}", 1, wrappers=[NAV]), make_env(f"native:{ID}", 1), f"native:{ID}", "7 actions")


def test_pipeline_trains_on_the_native_env_and_evaluates_on_minigrids(tmp_path, monkeypatch):
    """``--eval-env-id``: the collector steps the native copies, the greedy evaluation minigrid's env."""
    import json

    from torchrl_memory.envs.lookup import native_base
    from torchrl_memory.pipelines import recurrent_ppo

    built = []
    real_make_env = recurrent_ppo.make_env

    def recording_make_env(env_id, num_envs, *args, **kwargs):
        env = real_make_env(env_id, num_envs, *args, **kwargs)
        built.append((env_id, num_envs, type(native_base(env)).__name__))
        return env

    monkeypatch.setattr(recurrent_ppo, "make_env", recording_make_env)
    recurrent_ppo.main([
        "--env", f"native:{ID}", "--eval-env-id", ID, "--env-wrappers", NAV, "--num-envs", "4", "--rollout-len", "16",
        "--envs-per-minibatch", "2", "--hidden-size", "16", "--total-steps", "128", "--eval-every", "0",
        "--eval-episodes", "2", "--plot", "false", "--run-root", str(tmp_path),
    ])
    assert built == [(f"native:{ID}", 4, "MiniGridMemoryEnv"), (ID, 2, "NoneType")]
    episodes = [json.loads(x) for x in (tmp_path.glob("*/v1/*/eval_episodes.jsonl").__next__()).read_text().splitlines()]
    assert len(episodes) == 2 and all(1 <= e["length"] <= 245 for e in episodes)
    assert json.loads(next(tmp_path.glob("*/v1/*/config.json")).read_text())["eval_env_id"] == ID


def test_small_memory_envs_show_the_cue_and_both_ends_in_one_view():
    """Why a memoryless policy can solve MemoryS7 (README): in S7 and S9, from the junction facing
    back west, minigrid's view holds the cue and both end objects at once (through the gap in the
    hallway's wall); from S11 on no single view does, so only there is memory required."""
    KEY, BALL = 5, 6  # minigrid's object indices

    def views_with_three_objects(gym_id):
        t = memory_tables(gym_id)
        kinds = t.image[..., 0]
        shown = ((kinds == KEY) | (kinds == BALL)).flatten(-2).sum(-1)  # [layout, cell, dir]
        return {(c % t.width, c // t.width, d) for _, c, d in (shown >= 3).nonzero().tolist()}, t

    for gym_id in ("MiniGrid-MemoryS7-v0", "MiniGrid-MemoryS9-v0"):
        views, t = views_with_three_objects(gym_id)
        junction = (t.hallway_ends[0] + 1, t.height // 2, 2)  # facing west (direction 2)
        assert junction in views, (gym_id, sorted(views))
    assert not views_with_three_objects("MiniGrid-MemoryS11-v0")[0]
