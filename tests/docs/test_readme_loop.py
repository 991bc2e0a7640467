"""The README's minimal TorchRL loop, run as printed (at a smaller budget), learns CartPoleNoVel."""
import re
from pathlib import Path

import torch

from torchrl_memory import make_env
from torchrl_memory.runs import evaluate, sync_obs_norm

README = Path(__file__).resolve().parents[2] / "README.md"
BUDGET = 50_000


def _readme_loop() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    loop = next(b for b in blocks if "RecurrentPPOTrainer" in b and "Collector(" in b)
    assert "total_steps=100_000" in loop  # the budget this test shrinks
    return loop.replace("total_steps=100_000", f"total_steps={BUDGET}")


def test_readme_loop_learns_at_a_small_budget():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the pipeline: a fixed reduction order
    try:
        torch.manual_seed(0)
        scope: dict = {}
        exec(compile(_readme_loop(), str(README), "exec"), scope)
    finally:
        torch.set_num_threads(threads)
    agent, env = scope["agent"], scope["env"]
    eval_env = agent.prime(make_env("CartPoleNoVel", 16, seed=1_000_003))
    sync_obs_norm(env, eval_env)
    report = evaluate(eval_env, agent.actor, BUDGET)
    print(report.format())
    assert report.mean_reward >= 150, report.format()
