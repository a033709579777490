"""Typed reads of spec fields and the type error a wrong type gets (shared by selection's modules)."""
from __future__ import annotations

from ..errors import OmeError, type_name


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
