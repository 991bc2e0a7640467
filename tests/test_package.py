"""The package surface: every public name imports from ``components``; the tensordict patch is opt-out."""
import os
import subprocess
import sys
from pathlib import Path

import components

ROOT = Path(__file__).resolve().parents[1]


def test_every_public_name_is_importable_from_components():
    missing = [name for name in components.__all__ if not hasattr(components, name)]
    assert not missing
    # the earlier spellings stay aliases of the new names
    assert components.DqnConfig is components.DQNConfig and components.DqnTrainer is components.DQNTrainer
    assert components.LstmActorCritic is components.LSTMActorCritic


def _patched_in_fresh_process(**env) -> bool:
    code = "import components, importlib, tensordict.base as b; print(b.importlib is not importlib)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def test_tensordict_patch_is_installed_by_default_and_can_be_turned_off():
    assert _patched_in_fresh_process()
    assert not _patched_in_fresh_process(TORCHRL_MEMORY_NO_TD_PATCH="1")
