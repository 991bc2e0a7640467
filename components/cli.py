"""``--key value`` overrides for any config dataclass, with every default in ``--help``."""
from __future__ import annotations

import argparse
import dataclasses
import difflib
import types
import typing
import sys
from typing import Any, Callable

from . import presets
from .config_validation import ConfigError, UserError
from .device import allocation_error
from .envs.factory import make_env
from .runs.run_dir import TrainingRun, check_pipeline
from .run_config import saved_values


def _parse_value(text: str, annotation: Any, field: str):
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    optional = (origin is typing.Union or origin is types.UnionType) and type(None) in args
    if optional:
        if text.lower() in ("none", "null", "off"):
            return None
        annotation = next(a for a in args if a is not type(None))
    try:
        if annotation is bool:
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if annotation is int:
            return int(text)
        if annotation is float:
            return float(text)
        if typing.get_origin(annotation) is list:
            inner = typing.get_args(annotation)[0]
            return [inner(x) for x in text.split(",") if x]
        return text
    except ValueError:
        raise ConfigError(f"--{field.replace('_', '-')} {text!r}: cannot parse it (accepted: {_metavar(annotation, None).lower()})") from None


def _metavar(annotation: Any, choices) -> str:
    if choices:
        return "{" + ",".join(map(str, choices)) + "}"
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    base = args[0] if typing.get_origin(annotation) in (typing.Union, types.UnionType) else annotation
    if typing.get_origin(base) is list:
        inner = {int: "INT", str: "STR", float: "FLOAT"}.get(typing.get_args(base)[0], "VALUE")
        return f"{inner},{inner},..."
    return {bool: "BOOL", int: "INT", float: "FLOAT", str: "STR"}.get(base, "VALUE")


#: ``--help`` sections by owner, as TorchRL's configs group by owner; fields not named here are
#: the algorithm's own (the "PPO" or "DQN" section)
GROUPS = {
    "run": ("total_steps", "seed", "device", "num_threads", "eval_every", "eval_episodes", "eval_env_id",
            "checkpoint_every", "keep_checkpoints", "save_replay_buffer", "run_root", "run_name"),
    "env": ("env_id", "num_envs", "env_workers", "collector_workers", "worker_steps", "backend", "ray_address",
            "env_wrappers", "normalize_obs", "prev_action", "reward_scaling", "flicker_mode", "flicker_burst"),
    "model": ("model", "hidden_size", "hidden_sizes", "encoder", "encoder_size"),
    "logging": ("logger", "wandb_project", "wandb_group", "plot"),
}
ALGORITHM_TITLES = {"recurrent_ppo": "PPO", "dqn": "DQN"}


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors: a mistyped or malformed flag raises ``ConfigError`` (printed
    as one line by ``run_main``) naming the closest option, instead of printing the whole usage.
    Abbreviated flags are refused (a truncated name would silently pick a field), and a value
    that starts with ``-`` (``--clip-range-vf -inf``) is read as the value it is."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, allow_abbrev=False, **kwargs)

    def error(self, message: str):
        raise ConfigError(f"{message} (see --help)")

    def parse_args(self, args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        parsed, extra = self.parse_known_args(self._join_dash_values(args), namespace)
        if extra:
            flag = next((a for a in extra if a.startswith("-")), extra[0])
            name = flag.split("=")[0]
            close = difflib.get_close_matches(name, self._option_string_actions, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}? " if close else ""
            raise ConfigError(f"unknown option {name!r} ({hint}see --help)" if flag.startswith("-") else f"unexpected argument {flag!r} (options take the form --key value; see --help)")
        return parsed

    def _join_dash_values(self, args: list[str]) -> list[str]:
        """``--key -x`` -> ``--key=-x`` when ``--key`` takes a value and ``-x`` is not an option."""
        out, i = [], 0
        while i < len(args):
            action = self._option_string_actions.get(args[i])
            if action is not None and action.nargs is None and action.const is None and i + 1 < len(args) \
                    and args[i + 1].startswith("-") and args[i + 1] not in self._option_string_actions:
                out.append(f"{args[i]}={args[i + 1]}")
                i += 2
                continue
            out.append(args[i])
            i += 1
        return out


def build_parser(config_cls, description: str) -> ArgumentParser:
    """One ``--field-name`` option per config field, with the field's help text, choices and
    default, in sections by owner (run, env, model, the algorithm, logging)."""
    parser = ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    algorithm = ALGORITHM_TITLES.get(getattr(config_cls, "checkpoint_family", None), "algorithm")
    sections = {name: parser.add_argument_group(name if name != "algorithm" else algorithm)
                for name in ("run", "env", "model", "algorithm", "logging")}
    run = sections["run"]
    run.add_argument("--preset", default=None, metavar="NAME", help="a named recipe (list: print them); flags given here override its values")
    run.add_argument("--resume", default=None, help="run directory (or an ancestor: the newest run below it), or one checkpoint file, to continue exactly")
    run.add_argument("--eval", dest="eval_checkpoint", default=None, metavar="CHECKPOINT", help="evaluate a checkpoint (e.g. runs/.../best.pt) and exit: no training")
    run.add_argument("--episodes", type=int, default=20, help="greedy episodes for --eval (seeds 1..N; default: 20)")
    run.add_argument("--debug", action="store_true", help="show the full traceback of a user error")
    owner = {name: group for group, names in GROUPS.items() for name in names}
    hints = typing.get_type_hints(config_cls)
    for f in dataclasses.fields(config_cls):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        shown = "none" if default is None or default == [] else (",".join(map(str, default)) if isinstance(default, list) else default)
        flags = ["--env", "--env-id"] if f.name == "env_id" else [f"--{f.name.replace('_', '-')}"]
        sections[owner.get(f.name, "algorithm")].add_argument(
            *flags,
            dest=f.name,
            default=None,
            metavar=_metavar(hints[f.name], f.metadata.get("choices")),
            help=f"{f.metadata.get('help', '')} (default: {shown})",
        )
    return parser


def config_from_args(config_cls, args: argparse.Namespace, base: dict | None = None, preset: dict | None = None):
    """Config from ``base`` (a resumed run's saved config) or ``preset`` (a recipe's values),
    plus the overrides given on the command line, which win."""
    hints = typing.get_type_hints(config_cls)
    values = saved_values(base, config_cls) if base is not None else dict(preset or {})
    for f in dataclasses.fields(config_cls):
        raw = getattr(args, f.name, None)
        if raw is not None:
            values[f.name] = _parse_value(raw, hints[f.name], f.name) if isinstance(raw, str) and f.name != "env_id" else raw
    known = {f.name for f in dataclasses.fields(config_cls)}
    unknown = set(values) - known
    if unknown:
        raise ConfigError(f"unknown config fields {sorted(unknown)} (accepted: {sorted(known)})")
    return config_cls(**values)


def eval_request(config_cls, argv: list[str] | None) -> tuple[str, int] | None:
    """``(checkpoint, episodes)`` when the command line asks for ``--eval``, else None."""
    args = build_parser(config_cls, "").parse_args(argv)
    return (args.eval_checkpoint, args.episodes) if args.eval_checkpoint else None


def resolve_run_config(config_cls, description: str, argv: list[str] | None = None):
    """Parses the command line: (validated config, the resumed ``TrainingRun`` or None, the checkpoint to resume or None).

    Precedence: dataclass defaults < ``--preset`` (a fresh run) or the resumed run's saved
    config (that of the named checkpoint when ``--resume`` names a file) < command-line
    overrides. ``--preset list`` prints the presets and exits.
    """
    args = build_parser(config_cls, description).parse_args(argv)
    family = getattr(config_cls, "checkpoint_family", None)
    if args.preset == "list":
        print(presets.listing(family))
        raise SystemExit(0)
    if not args.resume:
        preset = presets.get(args.preset, family) if args.preset else None
        cfg = config_from_args(config_cls, args, preset=_fixed_values(preset))
        if preset is not None:
            _apply_episode_values(cfg, preset, args)
            print(f"preset {preset.name}: {preset.flags()}" + (f" (= {cfg.rollout_len})" if preset.values.get("rollout_len") == "episode" else ""))
        elif (hint := presets.suggestion(cfg.env_id, family)) is not None:
            print(hint)
        return cfg.validate(), None, None
    if args.preset:
        raise ConfigError(f"--preset {args.preset} with --resume (accepted: one of them; a resumed run keeps its saved config, flags change it)")
    run = TrainingRun.find(args.resume)
    # a named checkpoint file resumes from that file; a directory from its newest loadable checkpoint
    state = run.load(args.resume) if str(args.resume).endswith(".pt") else run.load_latest()
    if family is not None:
        check_pipeline(state, family, run.path)
    base = state.get("config") if str(args.resume).endswith(".pt") else run.resume_config(state)
    return config_from_args(config_cls, args, base=base).validate(), run, state


def _fixed_values(preset: presets.Preset | None) -> dict:
    """A preset's values that need no env: everything but ``"episode"`` placeholders."""
    return {} if preset is None else {k: v for k, v in preset.values.items() if v != "episode"}


def _apply_episode_values(cfg, preset: presets.Preset, args: argparse.Namespace) -> None:
    """Sets the fields a preset gives as ``"episode"`` (and the command line does not) to the
    env's declared episode limit, read from one copy of the env."""
    fields = [k for k, v in preset.values.items() if v == "episode" and getattr(args, k, None) is None]
    if not fields:
        return
    env = make_env(cfg.env_id, 1, "cpu", 0, normalize_obs=False, wrappers=cfg.env_wrappers)
    limit = env.max_episode_steps
    env.close()
    if limit is None:
        raise ConfigError(f"--preset {preset.name} sets {', '.join(fields)} to the episode length, but {cfg.env_id} declares no episode limit (accepted: give --{fields[0].replace('_', '-')} N)")
    for name in fields:
        setattr(cfg, name, int(limit))


def run_main(main: Callable[[list[str] | None], Any], argv: list[str] | None = None) -> Any:
    """Runs a pipeline's ``main`` as a command: a ``UserError`` prints as one line and exits 2.

    A Ctrl-C the pipeline has not handled itself exits 130 without a traceback. Anything else is
    a bug and keeps its traceback; ``--debug`` shows user errors' too.
    """
    argv = sys.argv[1:] if argv is None else argv
    try:
        return main(argv)
    except KeyboardInterrupt:  # where no run state exists yet (the pipelines save and exit themselves once it does)
        print("\ninterrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except UserError as err:
        if "--debug" in argv:
            raise
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    except (RuntimeError, MemoryError) as err:  # an absurd size: one line too, not an allocator traceback
        user = allocation_error(err)
        if user is None or "--debug" in argv:
            raise
        print(f"error: {user}", file=sys.stderr)
        raise SystemExit(2) from None
