"""The lean collection path returns what TorchRL's own returns, value for value: the native envs'
``step_and_maybe_reset`` (``envs/fused_step.py``) gives the collector's batches, its carried
tensordict and the env's transform state over batches with many partial resets, and the
pipeline's collector (``make_collector``, no trajectory ids) gives TorchRL's default batches
less ``("collector", "traj_ids")``."""
import pytest
import torch
from torchrl.collectors import Collector

from torchrl_memory import make_collector, make_env
from torchrl_memory.envs import obs_dim_of
from torchrl_memory.ppo import make_actor_critic
from torchrl_memory.envs import fused_step
from torchrl_memory.envs.fused_step import NativeTransformedEnv

N, T, BATCHES = 8, 24, 4


def _collect(env_id: str, model: str, fused: bool, pipeline_collector: bool = False, **env_kwargs):
    env = make_env(env_id, N, seed=3, **env_kwargs)
    torch.manual_seed(0)
    agent = make_actor_critic(model, obs_dim_of(env), env.action_spec, 16)
    env = agent.prime(env)
    assert isinstance(env, NativeTransformedEnv) and env.fused
    assert env.__dict__["_fused_cache"].plain_request  # the reset request is built directly on the lean path
    env.lean_step = fused  # False: the reference, TorchRL's own step_and_maybe_reset on the same env class
    torch.manual_seed(1)  # the policy samples its actions from the global generator
    if pipeline_collector:
        collector = make_collector(env, agent.rollout_policy, N * T, torch.device("cpu"))
    else:
        collector = Collector(env, agent.rollout_policy, frames_per_batch=N * T, total_frames=-1)
    batches = iter(collector)
    out = [next(batches) for _ in range(BATCHES)]
    carrier = collector._carrier.clone()
    collector.shutdown()
    return out, carrier, env.transform.state_dict()


def _assert_same(a, b, where: str) -> None:
    keys_a, keys_b = set(a.keys(True, True)), set(b.keys(True, True))
    assert keys_a == keys_b, f"{where}: keys differ: {keys_a ^ keys_b}"
    for key in keys_a:
        assert torch.equal(a.get(key), b.get(key)), f"{where}: {key} differs"


@pytest.mark.parametrize(
    "env_id, model, env_kwargs",
    [
        ("CartPoleNoVel", "lstm", {}),
        ("CartPole-v1", "mlp", {"normalize_obs": False}),
        ("FlickeringCartPole-0.3", "gru", {"flicker_mode": "markov"}),
        ("TMaze-4", "lstm", {"prev_action": True}),
    ],
)
def test_fused_step_gives_torchrl_s_batches_carrier_and_transform_state(env_id, model, env_kwargs, monkeypatch):
    used = {}

    def counting(kind, build):
        def counted(name, kernel):
            if kernel is None:
                return None

            def run(*args):
                used[name] = used.get(name, 0) + 1
                kernel(*args)
            return run

        def built(*args):
            step, reset = build(*args)
            return counted(f"{kind}.step", step), counted(f"{kind}.reset", reset)
        return built

    for kind, build in dict(fused_step.LEAN_KERNELS).items():
        monkeypatch.setitem(fused_step.LEAN_KERNELS, kind, counting(kind.__name__, build))
    fused, fused_carrier, fused_state = _collect(env_id, model, True, **env_kwargs)
    # the comparison below is about the lean kernels only if they ran in place of TorchRL's
    kinds = ["InitTracker", "StepCounter", "RewardSum"] + (["TensorDictPrimer"] if model != "mlp" else [])
    assert {f"{k}.{m}" for k in kinds for m in ("step", "reset")} <= used.keys(), used
    ref, ref_carrier, ref_state = _collect(env_id, model, False, **env_kwargs)
    resets = sum(int(b["next", "done"].sum()) for b in ref)
    assert resets >= 5, f"only {resets} episode ends: the partial-reset path was barely exercised"
    for i, (a, b) in enumerate(zip(fused, ref)):
        _assert_same(a, b, f"batch {i}")
    _assert_same(fused_carrier, ref_carrier, "carrier")
    assert fused_state.keys() == ref_state.keys()
    for key in ref_state:
        assert torch.equal(fused_state[key], ref_state[key]), f"transform state {key} differs"


def test_a_transform_outside_the_fused_set_takes_torchrl_s_path():
    from torchrl.envs import RewardScaling

    env = make_env("CartPoleNoVel", N, seed=0)
    assert env.fused
    env.append_transform(RewardScaling(0.0, 2.0))
    assert not env.fused  # the chain changed: checked again
    td = env.reset()
    td["action"] = torch.zeros(N, dtype=torch.int64)
    out, _ = env.step_and_maybe_reset(td)
    assert torch.equal(out["next", "reward"], torch.full((N, 1), 2.0))  # the appended transform did run


def test_the_pipeline_collector_gives_torchrl_s_default_batches_without_trajectory_ids():
    ours, ours_carrier, _ = _collect("CartPoleNoVel", "lstm", True, pipeline_collector=True)
    ref, ref_carrier, _ = _collect("CartPoleNoVel", "lstm", True)
    assert ("collector", "traj_ids") in ref[0].keys(True, True)
    for i, (a, b) in enumerate(zip(ours, ref)):
        _assert_same(a, b.exclude("collector"), f"batch {i}")
    _assert_same(ours_carrier, ref_carrier.exclude("collector"), "carrier")


def test_lean_step_false_takes_torchrl_s_path():
    env = make_env("CartPoleNoVel", N, seed=0)
    env.lean_step = False
    assert not env.fused


def test_merge_reset_matches_torchrl_s_update_during_reset():
    """The lean merge against TorchRL's on entries of several ranks and dtypes, an entry only the
    carried step has (padded with 0 on the reset rows, as TorchRL pads) and one only the reset has."""
    from tensordict import TensorDict
    from torchrl.envs.utils import _update_during_reset

    n = 6
    mask = torch.tensor([True, False, False, True, False, False]).unsqueeze(-1)

    def pair():
        g = torch.Generator().manual_seed(0)
        root = TensorDict({"_reset": mask.clone(), "obs": torch.randn(n, 3, generator=g), "state": torch.randn(n, 1, 4, generator=g),
                           "count": torch.arange(n).unsqueeze(-1), "action": torch.ones(n, dtype=torch.int64) + 4,
                           "flag": torch.ones(n, 1, dtype=torch.bool)}, [n])
        reset = TensorDict({"_reset": mask.clone(), "obs": torch.randn(n, 3, generator=g), "state": torch.zeros(n, 1, 4),
                            "count": torch.zeros(n, 1, dtype=torch.int64), "flag": torch.zeros(n, 1, dtype=torch.bool),
                            "extra": torch.randn(n, 2, generator=g) + 3}, [n])
        return reset, root

    expected = _update_during_reset(*pair(), ["_reset"])
    got = fused_step._merge_reset(*pair(), ["_reset"])
    _assert_same(got, expected, "merge")
    assert (got["action"][mask.squeeze(-1)] == 0).all() and (got["action"][~mask.squeeze(-1)] == 5).all()


def test_fill_missing_matches_tensordict_update_flat_and_nested():
    """The lean copy of the policy's "next" entries gives what ``update(exclude(...))`` gives:
    the env's own entries win, the missing ones come from the policy, nested ones included."""
    from tensordict import TensorDict

    n = 4

    def pair(nested: bool):
        g = torch.Generator().manual_seed(0)
        env_out = TensorDict({"observation": torch.randn(n, 2, generator=g), "done": torch.zeros(n, 1, dtype=torch.bool)}, [n])
        preset = TensorDict({"recurrent_state_h": torch.randn(n, 1, 3, generator=g), "observation": torch.ones(n, 2)}, [n])
        if nested:
            preset["agent"] = TensorDict({"h": torch.randn(n, 3, generator=g)}, [n])
        return env_out, preset

    for nested in (False, True):
        expected, preset = pair(nested)
        expected.update(preset.exclude(*expected.keys(True, True)))
        got, preset = pair(nested)
        fused_step._fill_missing(got, preset)
        _assert_same(got, expected, f"nested={nested}")
        assert not torch.equal(got["observation"], torch.ones(n, 2))  # the env's entry was kept
