"""``--key value`` overrides for any config dataclass, with every default in ``--help``."""
from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from typing import Any


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
        raise SystemExit(f"error: --{field.replace('_', '-')}: cannot parse {text!r} as {getattr(annotation, '__name__', annotation)}")


def _metavar(annotation: Any, choices) -> str:
    if choices:
        return "{" + ",".join(map(str, choices)) + "}"
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    base = args[0] if typing.get_origin(annotation) in (typing.Union, types.UnionType) else annotation
    if typing.get_origin(base) is list:
        return "INT,INT,..."
    return {bool: "BOOL", int: "INT", float: "FLOAT", str: "STR"}.get(base, "VALUE")


def build_parser(config_cls, description: str) -> argparse.ArgumentParser:
    """One ``--field-name`` option per config field, with the field's help text, choices and default."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resume", default=None, help="run directory (or an ancestor: the newest run below it) to continue exactly")
    hints = typing.get_type_hints(config_cls)
    for f in dataclasses.fields(config_cls):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        shown = "none" if default is None else (",".join(map(str, default)) if isinstance(default, list) else default)
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
RENAMED_FIELDS = {"checkpoint_freq": "checkpoint_every"}


def config_from_args(config_cls, args: argparse.Namespace, base: dict | None = None):
    """Config from ``base`` (e.g. a resumed run's config) plus the overrides given on the command line."""
    hints = typing.get_type_hints(config_cls)
    values = {RENAMED_FIELDS.get(k, k): v for k, v in (base or {}).items()}
    for f in dataclasses.fields(config_cls):
        raw = getattr(args, f.name, None)
        if raw is not None:
            values[f.name] = _parse_value(raw, hints[f.name], f.name) if isinstance(raw, str) and f.name != "env_id" else raw
    known = {f.name for f in dataclasses.fields(config_cls)}
    unknown = set(values) - known
    if unknown:
        raise SystemExit(f"error: unknown config fields {sorted(unknown)}")
    return config_cls(**values)


def resolve_run_config(config_cls, description: str, argv: list[str] | None = None):
    """Parses the command line: (validated config, the resumed ``TrainingRun`` or None, its latest checkpoint or None).

    Precedence: dataclass defaults < the resumed run's saved config < command-line overrides.
    """
    from components.runs.run_dir import TrainingRun

    args = build_parser(config_cls, description).parse_args(argv)
    run = TrainingRun.find(args.resume) if args.resume else None
    config = config_from_args(config_cls, args, base=run.config if run else None).validate()
    return config, run, (run.load_latest() if run else None)
