"""Named recipes (``--preset NAME``): small JSON files beside this module, one per recipe.

A preset is a set of config values that a task family trains well with, kept in one place
so the pipelines, the benchmarks and the docs use the same numbers. Precedence: the config's
defaults < the preset < flags on the command line. ``"rollout_len": "episode"`` stands for the
env's declared episode limit (POPGym's ``max_episode_length``, a ``TimeLimit``, the T-maze's
corridor + 1), so a whole episode fits one backprop-through-time window.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..config_validation import UserError

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Preset:
    """One recipe: the pipeline it is for, a one-line summary, the env-id prefixes it suits and its values."""

    name: str
    pipeline: str
    summary: str
    suites: tuple[str, ...]
    values: dict

    def flags(self) -> str:
        """The values as the command-line flags they stand for (printed at start)."""
        def shown(v):
            return "none" if v is None else ",".join(map(str, v)) if isinstance(v, list) else str(v).lower() if isinstance(v, bool) else str(v)
        return " ".join(f"--{k.replace('_', '-')} {shown(v)}" for k, v in self.values.items())


def available(pipeline: str | None = None) -> dict[str, Preset]:
    """Every preset (for ``pipeline`` only, when given), by name."""
    out = {}
    for path in sorted(HERE.glob("*.json")):
        raw = json.loads(path.read_text())
        preset = Preset(path.stem, raw["pipeline"], raw["summary"], tuple(raw.get("suites", ())), raw["values"])
        if pipeline is None or preset.pipeline == pipeline:
            out[preset.name] = preset
    return out


def get(name: str, pipeline: str) -> Preset:
    """The preset ``name`` for ``pipeline``, or a one-line error listing those that exist."""
    presets = available(pipeline)
    if name not in presets:
        other = available().get(name)
        where = f" ({name!r} is for pipelines/{other.pipeline}.py)" if other is not None else ""
        raise UserError(f"--preset {name!r} does not exist for this pipeline{where} (accepted: {', '.join(presets) or 'none'}, or 'list')")
    return presets[name]


def listing(pipeline: str) -> str:
    """``--preset list``: one line per preset of ``pipeline``."""
    presets = available(pipeline)
    width = max((len(n) for n in presets), default=0)
    return "\n".join(f"{n:<{width}}  {p.summary}" for n, p in presets.items())


def suggestion(env_id: str, pipeline: str) -> str | None:
    """A one-line hint when ``env_id`` belongs to a suite that has a preset and none was given."""
    for preset in available(pipeline).values():
        if any(env_id.startswith(prefix) for prefix in preset.suites):
            return f"hint: {env_id} belongs to a suite with a tuned recipe: --preset {preset.name} ({preset.summary})"
    return None
