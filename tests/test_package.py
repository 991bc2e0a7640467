"""The package surface: every public name imports from ``torchrl_memory``; the tensordict patch is opt-out."""
import os
import subprocess
import sys
from pathlib import Path

import torchrl_memory

ROOT = Path(__file__).resolve().parents[1]


def test_every_public_name_is_importable_from_torchrl_memory():
    missing = [name for name in torchrl_memory.__all__ if not hasattr(torchrl_memory, name)]
    assert not missing
    # the earlier spellings stay aliases of the new names
    assert torchrl_memory.DqnConfig is torchrl_memory.DQNConfig and torchrl_memory.DqnTrainer is torchrl_memory.DQNTrainer
    assert torchrl_memory.LstmActorCritic is torchrl_memory.LSTMActorCritic


def _patched_in_fresh_process(**env) -> bool:
    code = "import torchrl_memory, importlib, tensordict.base as b; print(b.importlib is not importlib)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def test_tensordict_patch_is_installed_by_default_and_can_be_turned_off():
    assert _patched_in_fresh_process()
    assert not _patched_in_fresh_process(TORCHRL_MEMORY_NO_TD_PATCH="1")


def test_a_users_own_components_package_neither_shadows_nor_mixes_with_ours(tmp_path):
    (tmp_path / "components").mkdir()
    (tmp_path / "components" / "__init__.py").write_text("MINE = True\n")
    code = "import components, torchrl_memory; print(components.MINE, hasattr(components, 'make_env'), torchrl_memory.make_env.__module__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "torchrl_memory.envs.factory"]
