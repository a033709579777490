"""Typed reads of spec fields, parameter counts (selection.md §1.4) and the type error a wrong type gets
(shared by selection's modules)."""
from __future__ import annotations

import re
from decimal import Decimal

from omerender.errors import OmeError, type_name

_SIZE = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)([MBT]?)")
_SUFFIX = {"": Decimal(1), "M": Decimal(10) ** 6, "B": Decimal(10) ** 9, "T": Decimal(10) ** 12}


def _mapping(spec: dict, key: str, path: str) -> dict | None:
    value = spec.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise OmeError(_type_error(path, value, "object"), field=path)
    return value


def _string(mapping: dict, key: str, path: str) -> str | None:
    value = mapping.get(key)
    if value is not None and not isinstance(value, str):
        raise OmeError(_type_error(path, value, "string"), field=path)
    return value


def _require_string(mapping: dict, key: str, path: str) -> None:
    value = mapping.get(key)
    if value is not None and not isinstance(value, str):
        raise OmeError(_type_error(path, value, "string"), field=path)


def _str(value) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _weight(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _type_error(path: str, value, expected: str) -> str:
    return f'{path}: Invalid value: "{type_name(value)}": must be of type {expected}'


def parse_size(text) -> Decimal | None:
    """§1.4: a parameter count; None when absent, 0 when it does not parse."""
    if text is None:
        return None
    return _size_or_none(text) or Decimal(0)


def _size_or_none(text) -> Decimal | None:
    """The value of a well-formed size string, None when it does not parse."""
    match = _SIZE.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    return Decimal(match.group(1)) * _SUFFIX[match.group(2)]
