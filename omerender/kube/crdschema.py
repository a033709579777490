"""An object checked against a CRD's structural schema (``openAPIV3Schema``) as the API server checks a create under
strict field validation (``kubectl apply --validate=strict``):

- defaults are filled in first (the API server defaults before it validates, and CEL rules see the defaults);
- a field the schema does not declare is an error unless ``x-kubernetes-preserve-unknown-fields``;
- ``x-kubernetes-int-or-string`` takes an integer or a string; null is an error unless ``nullable``;
- type, enum, pattern (a Go RE2 expression: ``$`` is the end of the text), lengths, bounds, item and property counts,
  formats int32, int64 and byte (standard base64), ``x-kubernetes-list-type`` set and map (no duplicates),
  allOf/anyOf/oneOf/not;
- ``x-kubernetes-validations`` (:mod:`.celrules`) on every node whose value passed its schema.

Each problem is a (field path, text) pair; the texts are the API server's (``Unsupported value``, ``Required value``,
``Invalid value``). ``metadata`` is checked by the caller against the core ObjectMeta.
"""
from __future__ import annotations

import binascii
import copy
import re
from base64 import b64decode
from functools import lru_cache

from omerender.errors import type_name
from . import celrules

MAX_DEPTH = 100  # deeper values are refused (the API server's decoder refuses them too: 10,000 is its limit)
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int, "number": (int, float)}
_RANGES = {"int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1)}


def with_defaults(value, schema: dict):
    """``value`` with the schema's defaults filled in where a field is missing (a copy where anything changes)."""
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        filled = None
        for name, child in schema["properties"].items():
            if name not in value and isinstance(child, dict) and "default" in child:
                filled = filled if filled is not None else dict(value)
                filled[name] = copy.deepcopy(child["default"])
        value = filled if filled is not None else value
        changed = {name: with_defaults(item, schema["properties"][name]) for name, item in value.items()
                   if isinstance(schema["properties"].get(name), dict) and isinstance(item, (dict, list))}
        changed = {name: item for name, item in changed.items() if item is not value[name]}
        return {**value, **changed} if changed else value
    if isinstance(value, dict) and isinstance(schema.get("additionalProperties"), dict):
        changed = {k: with_defaults(v, schema["additionalProperties"]) for k, v in value.items()}
        return changed if any(changed[k] is not value[k] for k in value) else value
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        changed = [with_defaults(item, schema["items"]) for item in value]
        return changed if any(a is not b for a, b in zip(changed, value)) else value
    return value


def check(value, schema: dict, path: str, problems: list, depth: int = 0) -> None:
    """Append the problems of ``value`` at ``path`` to ``problems``."""
    if depth > MAX_DEPTH:
        problems.append((path, f"Invalid value: nested deeper than {MAX_DEPTH} levels"))
        return
    if value is None:
        if not schema.get("nullable"):
            problems.append((path, 'Invalid value: "null": must not be null'))
        return
    before = len(problems)
    if not _type_ok(value, schema, path, problems):
        return
    _value_rules(value, schema, path, problems)
    if isinstance(value, dict):
        _object(value, schema, path, problems, depth)
    elif isinstance(value, list):
        _array(value, schema, path, problems, depth)
    for junctor in ("allOf", "anyOf", "oneOf", "not"):
        if junctor in schema:
            _junction(junctor, value, schema[junctor], path, problems, depth)
    rules = schema.get("x-kubernetes-validations")
    if rules and len(problems) == before:
        problems.extend((failure.field, failure.line(type_name(value)))
                        for failure in celrules.evaluate(rules, value, path, schema))


def _type_ok(value, schema: dict, path: str, problems: list) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        ok = isinstance(value, (int, str)) and not isinstance(value, bool)
        expected = "integer or string"
    else:
        kind = schema.get("type")
        if kind is None:
            return True
        expected = kind
        python = _TYPES.get(kind, object)
        ok = isinstance(value, python) and (kind == "boolean" or not isinstance(value, bool))
        if kind == "integer" and isinstance(value, float) and value.is_integer():
            ok = True
    if not ok:
        problems.append((path, f'Invalid value: "{type_name(value)}": must be of type {expected}'))
    return ok


def _value_rules(value, schema: dict, path: str, problems: list) -> None:
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(f'"{v}"' for v in schema["enum"])
        problems.append((path, f'Unsupported value: "{_shown(value)}": supported values: {allowed}'))
    if isinstance(value, str):
        _string(value, schema, path, problems)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _number(value, schema, path, problems)
    count = len(value) if isinstance(value, (list, dict)) else None
    if count is not None:
        word = "items" if isinstance(value, list) else "properties"
        low, high = schema.get(f"min{word.capitalize()}"), schema.get(f"max{word.capitalize()}")
        if low is not None and count < low:
            problems.append((path, f"Invalid value: {count}: should have at least {low} {word}"))
        if high is not None and count > high:
            problems.append((path, f"Too many: {count}: must have at most {high} {word}"))


def _string(value: str, schema: dict, path: str, problems: list) -> None:
    low, high = schema.get("minLength"), schema.get("maxLength")
    if low is not None and len(value) < low:
        problems.append((path, f'Invalid value: "{_shown(value)}": should be at least {low} chars long'))
    if high is not None and len(value) > high:
        problems.append((path, f"Too long: may not be more than {high} bytes"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and _regex(pattern) is not None and not _regex(pattern).search(value):
        problems.append((path, f'Invalid value: "{_shown(value)}": should match \'{pattern}\''))
    if schema.get("format") == "byte" and not _is_base64(value):
        problems.append((path, f'Invalid value: "{_shown(value)}": must be of type byte (base64)'))


def _is_base64(value: str) -> bool:
    try:
        b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _number(value, schema: dict, path: str, problems: list) -> None:
    bounds = _RANGES.get(schema.get("format"))
    if bounds and isinstance(value, int) and not bounds[0] <= value <= bounds[1]:
        problems.append((path, f"Invalid value: {value}: must fit in {schema['format']}"))
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and (value <= low if schema.get("exclusiveMinimum") is True else value < low):
        problems.append((path, f"Invalid value: {value}: should be greater than or equal to {low}"))
    if high is not None and (value >= high if schema.get("exclusiveMaximum") is True else value > high):
        problems.append((path, f"Invalid value: {value}: should be less than or equal to {high}"))


def _object(value: dict, schema: dict, path: str, problems: list, depth: int) -> None:
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    for name in schema.get("required", ()):
        if value.get(name) is None and "default" not in properties.get(name, {}):
            problems.append((_join(path, name), "Required value"))
    extra = schema.get("additionalProperties")
    keep = schema.get("x-kubernetes-preserve-unknown-fields") or extra is True
    for name, item in value.items():
        if path == "" and name in ("apiVersion", "kind", "metadata"):
            continue  # every object's; the caller checks metadata against the core ObjectMeta
        if path == "" and name == "status" and name not in properties:
            continue  # a pinned CRD's status, removed when vendored: the API server ignores it on create
        child = properties.get(name)
        if child is None and isinstance(extra, dict):
            child = extra
        if child is None:
            if not keep and "type" in schema:
                problems.append((_join(path, name), f'unknown field "{name}"'))
            continue
        check(item, child, _join(path, name), problems, depth + 1)


def _array(value: list, schema: dict, path: str, problems: list, depth: int) -> None:
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            check(item, items, f"{path}[{i}]", problems, depth + 1)
    kind = schema.get("x-kubernetes-list-type")
    if kind == "set":
        seen = []
        for i, item in enumerate(value):
            if item in seen:
                problems.append((f"{path}[{i}]", f'Duplicate value: "{_shown(item)}"'))
            seen.append(item)
    elif kind == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen_keys = set()
        for i, item in enumerate(value):
            if isinstance(item, dict):
                key = tuple(repr(item.get(k)) for k in keys)
                if key in seen_keys:
                    problems.append((f"{path}[{i}]", "Duplicate value: " + ", ".join(
                        f'"{k}": {_shown(item.get(k))!r}' for k in keys)))
                seen_keys.add(key)


def _junction(junctor: str, value, branches, path: str, problems: list, depth: int) -> None:
    branches = [branches] if junctor == "not" else branches
    passing = []
    for branch in branches:
        found: list = []
        check(value, {**branch, "x-kubernetes-preserve-unknown-fields": True}, path, found, depth + 1)
        passing.append(not found)
        if junctor == "allOf":
            problems.extend(found)
    if junctor == "anyOf" and not any(passing):
        problems.append((path, "Invalid value: must validate at least one schema (anyOf)"))
    elif junctor == "oneOf" and passing.count(True) != 1:
        problems.append((path, "Invalid value: must validate one and only one schema (oneOf)"))
    elif junctor == "not" and passing[0]:
        problems.append((path, "Invalid value: must not validate the schema (not)"))


@lru_cache(maxsize=1024)
def _regex(pattern: str):
    """A Go RE2 pattern as Python reads it: ``$`` is the end of the text (Python's would match before a final
    newline); None where Python cannot read it (the check is then left to the API server)."""
    try:
        return re.compile(re.sub(r"(?<!\\)\$", r"\\Z", pattern))
    except re.error:
        return None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _shown(value) -> str:
    text = str(value).encode("unicode_escape").decode("ascii")
    return text if len(text) <= 80 else text[:77] + "..."
