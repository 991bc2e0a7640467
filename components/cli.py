"""``--key value`` overrides for any config dataclass, with every default in ``--help``."""
from __future__ import annotations

import argparse
import dataclasses
import types
import typing
import sys
from typing import Any, Callable

from .config_validation import ConfigError, UserError
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


def build_parser(config_cls, description: str) -> argparse.ArgumentParser:
    """One ``--field-name`` option per config field, with the field's help text, choices and default."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resume", default=None, help="run directory (or an ancestor: the newest run below it), or one checkpoint file, to continue exactly")
    parser.add_argument("--debug", action="store_true", help="show the full traceback of a user error")
    parser.add_argument("--eval", dest="eval_checkpoint", default=None, metavar="CHECKPOINT", help="evaluate a checkpoint (e.g. runs/.../best.pt) and exit: no training")
    parser.add_argument("--episodes", type=int, default=20, help="greedy episodes for --eval (seeds 1..N; default: 20)")
    hints = typing.get_type_hints(config_cls)
    for f in dataclasses.fields(config_cls):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        shown = "none" if default is None or default == [] else (",".join(map(str, default)) if isinstance(default, list) else default)
        flags = ["--env", "--env-id"] if f.name == "env_id" else [f"--{f.name.replace('_', '-')}"]
        parser.add_argument(
            *flags,
            dest=f.name,
            default=None,
            metavar=_metavar(hints[f.name], f.metadata.get("choices")),
            help=f"{f.metadata.get('help', '')} (default: {shown})",
        )
    return parser


#: fields renamed since earlier releases: a resumed run's config.json may still use the old name
def config_from_args(config_cls, args: argparse.Namespace, base: dict | None = None):
    """Config from ``base`` (e.g. a resumed run's config) plus the overrides given on the command line."""
    hints = typing.get_type_hints(config_cls)
    values = saved_values(base, config_cls) if base is not None else {}
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

    Precedence: dataclass defaults < the resumed run's saved config (that of the named
    checkpoint when ``--resume`` names a file) < command-line overrides.
    """
    from .runs.run_dir import TrainingRun

    args = build_parser(config_cls, description).parse_args(argv)
    if not args.resume:
        return config_from_args(config_cls, args).validate(), None, None
    run = TrainingRun.find(args.resume)
    # a named checkpoint file resumes from that file; a directory from its newest loadable checkpoint
    state = run.load(args.resume) if str(args.resume).endswith(".pt") else run.load_latest()
    if getattr(config_cls, "checkpoint_family", None) is not None:
        from .runs.run_dir import check_pipeline

        check_pipeline(state, config_cls.checkpoint_family, run.path)
    base = state.get("config") if str(args.resume).endswith(".pt") else run.config
    return config_from_args(config_cls, args, base=base).validate(), run, state


def run_main(main: Callable[[list[str] | None], Any], argv: list[str] | None = None) -> Any:
    """Runs a pipeline's ``main`` as a command: a ``UserError`` prints as one line and exits 2.

    Anything else is a bug and keeps its traceback; ``--debug`` shows user errors' too.
    """
    argv = sys.argv[1:] if argv is None else argv
    try:
        return main(argv)
    except UserError as err:
        if "--debug" in argv:
            raise
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
