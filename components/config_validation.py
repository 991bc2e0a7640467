"""Range checks shared by the config dataclasses, and the user-error classes: one error format everywhere."""
from __future__ import annotations

import math


class UserError(ValueError):
    """A mistake in what the user asked for (not a bug): the pipelines print it as one line,
    ``error: <what> (<accepted>)``, and exit with status 2; ``--debug`` shows the traceback."""


class ConfigError(UserError):
    """A config field out of its accepted range; the message names field, value and range."""


def check(field: str, value, ok: bool, accepted: str) -> None:
    if not ok:
        raise ConfigError(f"config field {field!r} = {value!r} is out of range (accepted: {accepted})")


def check_int(field: str, value, low: int, high: int | None = None, low_from: str | None = None, high_from: str | None = None) -> None:
    """``value`` an integer in ``[low, high]``. A bound that is another field's value names it
    (``high_from="num_envs"``), so the message says where the range comes from."""
    is_int = isinstance(value, int) and not isinstance(value, bool)
    ok = is_int and value >= low and (high is None or value <= high)
    accepted = f"an integer in [{low}, {high}]" if high is not None else f"an integer >= {low}"
    named = [f"{'at least' if which == 'low' else 'at most'} {name} = {bound}"
             for which, name, bound in (("low", low_from, low), ("high", high_from, high)) if name is not None]
    check(field, value, ok, accepted + (f": {' and '.join(named)}" if named else ""))


def check_divisor(field: str, value, of_field: str, of_value: int) -> None:
    """``value`` an integer >= 1 that divides the field ``of_field`` (= ``of_value``)."""
    is_int = isinstance(value, int) and not isinstance(value, bool)
    check(field, value, is_int and value >= 1 and of_value % value == 0, f"a divisor of {of_field}={of_value}")


def check_float(field: str, value, low: float, high: float = math.inf, low_open: bool = False, high_open: bool = False) -> None:
    # non-finite values (nan, inf, 1e999) never pass: a field that means "off" takes None instead
    is_num = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    ok = is_num and (value > low if low_open else value >= low) and (value < high if high_open else value <= high)
    lb = "(" if low_open else "["
    hb = ")" if high_open or high == math.inf else "]"
    check(field, value, ok, f"a finite number in {lb}{low}, {high}{hb}")


def check_choice(field: str, value, choices) -> None:
    check(field, value, value in choices, f"one of {list(choices)}")
