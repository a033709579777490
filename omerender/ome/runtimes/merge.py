"""Laying one spec over another: the runtime config under the InferenceService component
(render.md §3), and a child runtime over its parent (inheritance-and-pinning.md §4).

Both use the same rules: objects and maps merge key by key, the upper side winning;
lists with a Kubernetes merge key merge item by item in strategic-merge order; other
lists and scalars are replaced; empty values (``""``, ``[]``, ``{}``, ``null``) count
as unset, and ``false``/``0`` count as set.
"""
from __future__ import annotations

from typing import Any

from omerender.errors import OmeError
from omerender.yamlio.data import copy_data

# List field name -> the key its items merge by (render.md §3.4).
LIST_KEYS = {
    "env": "name",
    "volumes": "name",
    "containers": "name",
    "initContainers": "name",
    "imagePullSecrets": "name",
    "schedulingGates": "name",
    "resourceClaims": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
}

# Fields whose 0 means "unset" (render.md §3.2).
ZERO_IS_UNSET = frozenset({"maxReplicas"})

# Lists that are atomic although their name is in LIST_KEYS elsewhere: resources.claims
# is a list of {name} but Kubernetes replaces it whole.
ATOMIC_UNDER = {"resources": frozenset({"claims"})}


def is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and len(value) == 0)


def overlay(base: Any, top: Any, path: str = "", keep_new_empty: bool = True, share: bool = False) -> Any:
    """Return ``top`` laid over ``base`` (neither is modified).

    ``keep_new_empty``: where ``base`` has no value, an empty ``top`` value is kept as
    written (render.md §3.2); the inheritance merge drops it instead. ``share``: the result
    holds the values of ``base`` and ``top`` it keeps whole instead of copies (only the maps
    and lists the merge builds are new), for a reader that copies what it keeps.
    """
    return _overlay(base, top, path, keep_new_empty, _same if share else copy_data)


def _overlay(base: Any, top: Any, path: str, keep_new_empty: bool, copy) -> Any:
    """:func:`overlay`, ``copy`` being what it does to the values it keeps whole."""
    if isinstance(base, dict) and isinstance(top, dict):
        return _overlay_maps(base, top, path, keep_new_empty, copy)
    if is_empty(top):
        return copy(base)
    return copy(top)


def _same(value: Any) -> Any:
    return value


def _overlay_maps(base: dict, top: dict, path: str, keep_new_empty: bool, copy=copy_data) -> dict:
    # base's values are copied at the end, those ``top`` does not replace: a nested map was copied once per level
    merged = dict(base)
    for key, value in top.items():
        field = f"{path}.{key}" if path else str(key)
        if _unset(key, value):
            if key not in merged and value is not None and keep_new_empty:
                merged[key] = copy(value)
            continue
        current = merged.get(key)
        if _unset(key, current):
            merged[key] = _strip_unset(value) if not keep_new_empty else copy(value)
        elif isinstance(current, dict) and isinstance(value, dict):
            merged[key] = _overlay_maps(current, value, field, keep_new_empty, copy)
        elif isinstance(current, list) and isinstance(value, list) and _merge_key(path, key):
            merged[key] = merge_keyed_lists(current, value, _merge_key(path, key), field, keep_new_empty, copy)
        else:
            merged[key] = copy(value)
    if copy is not _same:
        for key, value in base.items():
            if merged[key] is value:
                merged[key] = copy(value)
    return merged


def _unset(key: str, value: Any) -> bool:
    return is_empty(value) or (key in ZERO_IS_UNSET and value == 0 and not isinstance(value, bool))


def _strip_unset(value: Any) -> Any:
    """A copy of ``value`` without the empty values nested in it (inheritance merge)."""
    if isinstance(value, dict):
        return {k: _strip_unset(v) for k, v in value.items() if not is_empty(v)}
    return copy_data(value)


def _merge_key(path: str, key: str) -> str | None:
    parent = path.rsplit(".", 1)[-1] if path else ""
    parent = parent.split("[", 1)[0]
    if key in ATOMIC_UNDER.get(parent, ()):
        return None
    return LIST_KEYS.get(key)


def merge_keyed_lists(base: list, top: list, key: str, path: str, keep_new_empty: bool = True,
                      copy=copy_data) -> list:
    """Merge two lists item by item on ``key``, in Kubernetes strategic-merge order (render.md §3.6)."""
    base_keys = [_item_key(item, key, path, i) for i, item in enumerate(base)]
    base_pos = {k: i for i, k in reversed(list(enumerate(base_keys)))}
    merged: dict[Any, Any] = {}
    top_order: list = []
    for i, item in enumerate(top):
        k = _item_key(item, key, path, i)
        if k in merged:
            merged[k] = _overlay(merged[k], item, f"{path}[{i}]", keep_new_empty, copy)
            continue
        start = base[base_pos[k]] if k in base_pos else {}
        merged[k] = _overlay(start, item, f"{path}[{i}]", keep_new_empty, copy)
        top_order.append(k)
    base_only = [(k, base[i]) for i, k in enumerate(base_keys) if k not in merged]
    top_items = [(k, merged[k]) for k in top_order]
    return _interleave(base_only, top_items, base_pos, copy)


def _interleave(base_only: list, top_items: list, base_pos: dict, copy=copy_data) -> list:
    result = []
    b = t = 0
    while b < len(base_only) and t < len(top_items):
        b_key, b_item = base_only[b]
        t_key, t_item = top_items[t]
        if t_key in base_pos and base_pos[b_key] < base_pos[t_key]:
            result.append(copy(b_item))
            b += 1
        else:
            result.append(t_item)
            t += 1
    result.extend(copy(item) for _, item in base_only[b:])
    result.extend(item for _, item in top_items[t:])
    return result


def _item_key(item: Any, key: str, path: str, index: int):
    if not isinstance(item, dict) or item.get(key) is None:
        raise OmeError(f"{path}[{index}].{key}: Required value: items of {path} merge by {key}",
                       field=f"{path}[{index}].{key}")
    value = item[key]
    return value if isinstance(value, (str, int)) else repr(value)
