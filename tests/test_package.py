"""The package surface: a small top level, one face per subpackage, a docstring on every public
name, former top-level names still resolving; the tensordict patch is opt-out."""
import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

import torchrl_memory

SUBPACKAGES = ["envs", "ppo", "dqn", "runs", "serve", "memory"]

ROOT = Path(__file__).resolve().parents[1]


def _faces():
    return [torchrl_memory] + [importlib.import_module(f"torchrl_memory.{sub}") for sub in SUBPACKAGES]


def test_every_public_name_is_importable_from_its_face_and_the_top_level_stays_small():
    for face in _faces():
        missing = [name for name in face.__all__ if not hasattr(face, name)]
        assert not missing, face.__name__
    assert len(torchrl_memory.__all__) <= 30
    from torchrl_memory.ppo import RecurrentPPOTrainer  # a subpackage's face, not only its modules

    assert RecurrentPPOTrainer is torchrl_memory.RecurrentPPOTrainer


def test_former_top_level_names_still_resolve_with_a_warning_naming_their_home():
    for name, home in torchrl_memory.MOVED.items():
        with pytest.warns(DeprecationWarning, match=f"import it from {home}"):
            obj = getattr(torchrl_memory, name)
        assert obj is getattr(importlib.import_module(home), name)
    # the earlier spellings stay aliases of the new names
    with pytest.warns(DeprecationWarning):
        assert torchrl_memory.DqnConfig is torchrl_memory.DQNConfig and torchrl_memory.LSTMActorCritic is torchrl_memory.ActorCritic
    with pytest.raises(AttributeError):
        torchrl_memory.no_such_name


def test_every_public_class_and_function_has_a_docstring_of_its_own():
    undocumented = []
    for face in _faces():
        for name in face.__all__:
            obj = getattr(face, name)
            own = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__ if inspect.isfunction(obj) else "n/a"
            if not (own or "").strip():
                undocumented.append(f"{face.__name__}.{name}")
    assert not undocumented


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
