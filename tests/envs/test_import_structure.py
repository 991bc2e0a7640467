"""The env modules form no import circle and do not reach up into the run machinery."""
import ast
from pathlib import Path

ENVS = Path(__file__).resolve().parents[2] / "components" / "envs"


def _imports(path: Path) -> set[str]:
    """Every module a file imports (relative ones as written: '.gym_backend', '..runs.interrupts'), at any depth."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_the_gym_backend_does_not_import_env_workers():
    assert not any("env_workers" in m for m in _imports(ENVS / "gym_backend.py"))


def test_no_env_module_imports_the_runs_package():
    offenders = {p.name: sorted(m for m in _imports(p) if m.startswith("..runs") or "torchrl_memory.runs" in m) for p in ENVS.glob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_worker_signal_policy_is_one_function_reachable_from_both_sides():
    from torchrl_memory.envs import env_workers
    from torchrl_memory.runs import collectors, interrupts
    from torchrl_memory.worker_signals import leave_interrupts_to_the_main_process

    assert env_workers.leave_interrupts_to_the_main_process is leave_interrupts_to_the_main_process
    assert collectors.leave_interrupts_to_the_main_process is leave_interrupts_to_the_main_process
    assert interrupts.leave_interrupts_to_the_main_process is leave_interrupts_to_the_main_process
