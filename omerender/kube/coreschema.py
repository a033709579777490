"""An object of a built-in kind checked against the field table of a Kubernetes version (:mod:`.k8stypes`) as the API
server checks a create under strict field validation (``kubectl apply --validate=strict``): an unknown field, a value
of the wrong type, a required field missing, an int32 out of range. Each problem is a (field path, text) pair."""
from __future__ import annotations

from omerender.errors import type_name
from . import k8stypes

MAX_DEPTH = 100
_SCALARS = {"string": (str,), "integer": (int,), "int32": (int,), "number": (int, float), "boolean": (bool,),
            "object": (dict,), "array": (list,), "quantity": (str, int, float), "int-or-string": (str, int)}
_INT32 = (-2**31, 2**31 - 1)


def type_of(api_version: str, kind: str, version: str) -> str | None:
    """The table's type of a built-in kind, None when ``version`` has no such kind."""
    return k8stypes.table(version)["kinds"].get(f"{api_version}/{kind}")


def check(value, type_name_: str, version: str, path: str = "") -> list[tuple[str, str]]:
    problems: list = []
    _check_type(value, type_name_, k8stypes.table(version)["types"], version, path, problems, 0)
    return problems


def _check_type(value, name: str, types: dict, version: str, path: str, problems: list, depth: int) -> None:
    if depth > MAX_DEPTH:
        problems.append((path, f"Invalid value: nested deeper than {MAX_DEPTH} levels"))
        return
    if not isinstance(value, dict):
        problems.append((path, f'Invalid value: "{type_name(value)}": must be of type object'))
        return
    definition = types[name]
    fields = definition["fields"]
    for key in definition.get("required", ()):
        if value.get(key) is None:
            problems.append((_join(path, key), "Required value"))
    for key, item in value.items():
        ref = fields.get(key)
        where = _join(path, key)
        if ref is None:
            since = k8stypes.added_in(name, key, version)
            later = f" (new in Kubernetes {since})" if since else ""
            problems.append((where, f'unknown field "{key}" in Kubernetes {version}{later}'))
        elif item is not None:
            _check_ref(item, ref, types, version, where, problems, depth + 1)


def _check_ref(value, ref, types: dict, version: str, path: str, problems: list, depth: int) -> None:
    if isinstance(ref, dict) and "list" in ref:
        if not isinstance(value, list):
            problems.append((path, f'Invalid value: "{type_name(value)}": must be of type array'))
            return
        for i, item in enumerate(value):
            if item is None:
                problems.append((f"{path}[{i}]", 'Invalid value: "null": a list item cannot be null'))
            else:
                _check_ref(item, ref["list"], types, version, f"{path}[{i}]", problems, depth + 1)
    elif isinstance(ref, dict):
        if not isinstance(value, dict):
            problems.append((path, f'Invalid value: "{type_name(value)}": must be of type object'))
            return
        for key, item in value.items():
            if item is not None:
                _check_ref(item, ref["map"], types, version, f"{path}.{key}", problems, depth + 1)
    elif ref.startswith("#"):
        _check_type(value, ref[1:], types, version, path, problems, depth)
    else:
        _check_scalar(value, ref, path, problems)


def _check_scalar(value, ref: str, path: str, problems: list) -> None:
    allowed = _SCALARS.get(ref, (object,))
    if (isinstance(value, bool) and bool not in allowed) or not isinstance(value, allowed):
        problems.append((path, f'Invalid value: "{type_name(value)}": must be of type {ref.replace("-", " ")}'))
    elif ref in ("int32", "int-or-string") and isinstance(value, int) and not isinstance(value, bool) and \
            not _INT32[0] <= value <= _INT32[1]:
        problems.append((path, f"Invalid value: {value}: must fit in int32"))


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
