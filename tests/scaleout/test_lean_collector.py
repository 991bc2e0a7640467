"""The pipeline's in-process collector (``LeanCollector``) yields TorchRL's ``Collector`` batches
from its shorter loop, each batch its own memory, and falls back to TorchRL's loop when an option
it leaves out is on."""
import torch
from torchrl.collectors import Collector

from torchrl_memory import make_collector, make_env
from torchrl_memory.envs import obs_dim_of
from torchrl_memory.ppo import make_actor_critic
from torchrl_memory.runs.lean_collector import LeanCollector

N, T = 8, 24


def _setup(seed: int = 3):
    env = make_env("CartPoleNoVel", N, seed=seed)
    torch.manual_seed(0)
    agent = make_actor_critic("lstm", obs_dim_of(env), env.action_spec, 16)
    return agent.prime(env), agent


def _batches(collector, k: int) -> tuple[list, object]:
    torch.manual_seed(1)  # the policy samples from the global generator
    it = iter(collector)
    out = [next(it) for _ in range(k)]
    carrier = collector._carrier.clone()
    collector.shutdown()
    return out, carrier


def _assert_same(a, b, where: str) -> None:
    assert set(a.keys(True, True)) == set(b.keys(True, True)), where
    for key in a.keys(True, True):
        assert torch.equal(a.get(key), b.get(key)), f"{where}: {key} differs"
    assert a.names == b.names, where


def test_lean_loop_gives_torchrl_s_batches_and_carrier():
    env, agent = _setup()
    lean = make_collector(env, agent.collect_policy, N * T, torch.device("cpu"))
    assert isinstance(lean, LeanCollector) and lean.lean_applies
    ours, ours_carrier = _batches(lean, 4)
    env, agent = _setup()
    ref = Collector(env, agent.collect_policy, frames_per_batch=N * T, total_frames=-1, device=torch.device("cpu"), track_traj_ids=False)
    theirs, theirs_carrier = _batches(ref, 4)
    assert sum(int(b["next", "done"].sum()) for b in theirs) >= 5  # partial resets were exercised
    for i, (a, b) in enumerate(zip(ours, theirs)):
        _assert_same(a, b, f"batch {i}")
    _assert_same(ours_carrier, theirs_carrier, "carrier")


def test_each_lean_batch_is_its_own_memory():
    env, agent = _setup()
    it = iter(make_collector(env, agent.collect_policy, N * T, torch.device("cpu")))
    first = next(it)
    kept = first.clone()
    next(it)
    _assert_same(first, kept, "first batch after the second was collected")


def test_an_option_the_lean_loop_leaves_out_takes_torchrl_s_loop():
    env, agent = _setup()
    collector = LeanCollector(env, agent.collect_policy, frames_per_batch=N * T, total_frames=-1, device=torch.device("cpu"))
    assert collector.track_traj_ids and not collector.lean_applies
    batch = next(iter(collector))
    assert ("collector", "traj_ids") in batch.keys(True, True)  # TorchRL's rollout ran
