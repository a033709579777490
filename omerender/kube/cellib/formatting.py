"""cel-go's ``<string>.format(<list>)`` (strings extension): the clauses ``%s``, ``%d``, ``%f`` (with a precision,
``%.2f``), ``%b``, ``%x``, ``%X``, ``%o`` and ``%%``, with cel-go's error texts. ``%e``, whose output cel-go writes
with locale-dependent Unicode, and ``%s`` of a map are errors naming them."""
from __future__ import annotations

import math
from datetime import datetime, timedelta
from decimal import Decimal

from . import CelError, expect, kind_of

MAX_PRECISION = 1_000


def format_(template, args):
    expect("format", template, "string")
    expect("format", args, "list")
    out, i, index = [], 0, 0
    while i < len(template):
        if template[i] != "%":
            out.append(template[i])
            i += 1
            continue
        if template[i + 1:i + 2] == "%":
            out.append("%")
            i += 2
            continue
        if index >= len(args):
            raise CelError(f"index {index} out of range")
        if i + 1 >= len(template):
            raise CelError("unexpected end of string")
        read, text = _clause(template, i + 1, args[index])
        out.append(text)
        i, index = read, index + 1
    return "".join(out)


def _clause(template: str, i: int, value) -> tuple[int, str]:
    precision = None
    if template[i] == ".":
        end = i + 1
        while end < len(template) and template[end].isascii() and template[end].isdigit():
            end += 1
        if end >= len(template):
            raise CelError("could not parse formatting clause: error while parsing precision: could not find end of "
                           "precision specifier")
        precision = int(template[i + 1:end] or "0")
        if precision > MAX_PRECISION:
            raise CelError(f"could not parse formatting clause: error while parsing precision: precision {precision} "
                           f"exceeds maximum allowed precision {MAX_PRECISION}")
        i = end
    verb = template[i]
    formatter = {"s": _string, "d": _decimal, "f": lambda v: _fixed(v, 6 if precision is None else precision),
                 "b": _binary, "x": _hex, "X": lambda v: _hex(v).upper(), "o": _octal}.get(verb)
    if formatter is None:
        if verb == "e":
            raise CelError("omerender does not implement format's %e clause (cel-go writes it with locale-dependent "
                           "Unicode)")
        raise CelError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')
    return i + 1, formatter(value)


def _string(value) -> str:
    kind = kind_of(value)
    if kind == "string":
        return value
    if kind == "bool":
        return "true" if value else "false"
    if kind == "null_type":
        return "null"
    if kind == "int":
        return str(value)
    if kind == "double":
        return _double(value)
    if kind == "bytes":
        return value.decode("utf-8", "replace")
    if kind == "list":
        return "[" + ", ".join(_string(item) for item in value) + "]"
    if isinstance(value, timedelta):
        return _double(value.total_seconds()).removesuffix(".0") + "s"
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    raise CelError(f"error during formatting: omerender does not format a {kind} with %s")


def _double(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return format(Decimal(repr(value)), "f")


def _integer(verb: str, value) -> int:
    kind = kind_of(value)
    if kind == "int":
        return value
    if kind == "bool" and verb == "binary":
        return int(value)
    raise CelError(f"error during formatting: only integers{', bools' if verb == 'binary' else ''} "
                   f"{'and strings ' if verb == 'hex' else ''}can be formatted as {verb}, was given {kind}")


def _decimal(value) -> str:
    return str(_integer("decimal", value))


def _fixed(value, precision: int) -> str:
    kind = kind_of(value)
    if kind not in ("int", "double"):
        raise CelError(f"error during formatting: fixed-point clause can only be used on doubles, was given {kind}")
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return _double(value)
    return f"{value:.{precision}f}"


def _binary(value) -> str:
    return format(_integer("binary", value), "b")


def _octal(value) -> str:
    return format(_integer("octal", value), "o")


def _hex(value) -> str:
    if kind_of(value) == "string":
        return value.encode().hex()
    if kind_of(value) == "bytes":
        return value.hex()
    return format(_integer("hex", value), "x")


FUNCTIONS = {"format": format_}
