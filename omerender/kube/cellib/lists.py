"""Kubernetes' lists library (isSorted, sum, min, max, indexOf, lastIndexOf; includes, Kubernetes 1.37), cel-go's
lists extension version 3 (slice, flatten, distinct, reverse, sort, lists.range; Kubernetes 1.34) and its sets
extension (sets.contains, sets.equivalent, sets.intersects; Kubernetes 1.29)."""
from __future__ import annotations

import functools
from datetime import timedelta

from . import CelError, NoOverload, compare, equal, expect, kind_of

_COMPARABLE = ("int", "double", "bool", "string", "bytes", "timedelta", "datetime")
_SUMMABLE = {"int": 0, "double": 0.0, "timedelta": timedelta(0)}
INT64 = (-2 ** 63, 2 ** 63 - 1)
RANGE_LIMIT = 1_000_000  # lists.range(n) larger than this is refused before it is built


def _list(name: str, value) -> list:
    return expect(name, value, "list")


def is_sorted(items):
    _list("isSorted", items)
    return all(compare("isSorted", a, b) <= 0 for a, b in zip(items, items[1:]))


def sum_(items):
    _list("sum", items)
    kinds = {kind_of(item) for item in items}
    if len(kinds) > 1 or not kinds <= set(_SUMMABLE):
        raise NoOverload("sum")
    total = sum(items, _SUMMABLE[kinds.pop()] if kinds else 0)
    if isinstance(total, int) and not INT64[0] <= total <= INT64[1]:
        raise CelError("integer overflow")
    return total


def _extreme(name: str, prefer: int):
    def pick(items):
        _list(name, items)
        if not items:
            raise CelError(f"{name} called on empty list")
        best = items[0]
        for item in items[1:]:
            if kind_of(item) not in _COMPARABLE:
                raise NoOverload(name)
            if compare(name, best, item) == prefer:
                best = item
        return best
    return pick


def index_of(items, item):
    _list("indexOf", items)
    return next((i for i, each in enumerate(items) if equal(each, item)), -1)


def last_index_of(items, item):
    _list("lastIndexOf", items)
    return next((i for i in range(len(items) - 1, -1, -1) if equal(items[i], item)), -1)


def includes(items, item):
    return index_of(items, item) >= 0


def slice_(items, start, end):
    _list("slice", items)
    expect("slice", start, "int")
    expect("slice", end, "int")
    if start < 0 or end < 0:
        raise CelError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CelError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(items):
        raise CelError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return items[start:end]


def flatten(items, depth=1):
    _list("flatten", items)
    expect("flatten", depth, "int")
    if depth < 0:
        raise CelError("level must be non-negative")
    flat = []
    for item in items:
        flat.extend(flatten(item, depth - 1) if isinstance(item, list) and depth > 0 else [item])
    return flat


def distinct(items):
    _list("distinct", items)
    kept: list = []
    for item in items:
        if not any(equal(item, seen) for seen in kept):
            kept.append(item)
    return kept


def reverse(items):
    return list(reversed(_list("reverse", items)))


def sort(items):
    _list("sort", items)
    if any(kind_of(item) not in _COMPARABLE for item in items):
        raise CelError("list elements must be comparable")
    if len({kind_of(item) for item in items}) > 1:
        raise CelError("list elements must have the same type")
    return sorted(items, key=functools.cmp_to_key(lambda a, b: compare("sort", a, b)))


def lists_range(count):
    expect("lists.range", count, "int")
    if count > RANGE_LIMIT:
        raise CelError(f"lists.range({count}) would build more than {RANGE_LIMIT:,} items")
    return list(range(max(count, 0)))


def sets_contains(items, sub):
    _list("sets.contains", items)
    _list("sets.contains", sub)
    return all(any(equal(a, b) for b in items) for a in sub)


def sets_equivalent(first, second):
    return sets_contains(first, second) and sets_contains(second, first)


def sets_intersects(first, second):
    _list("sets.intersects", first)
    _list("sets.intersects", second)
    return any(equal(a, b) for a in first for b in second)


FUNCTIONS = {
    "isSorted": is_sorted, "sum": sum_, "min": _extreme("min", 1), "max": _extreme("max", -1),
    "indexOf": index_of, "lastIndexOf": last_index_of, "includes": includes, "slice": slice_, "flatten": flatten,
    "distinct": distinct, "reverse": reverse, "sort": sort, "lists.range": lists_range,
    "sets.contains": sets_contains, "sets.equivalent": sets_equivalent, "sets.intersects": sets_intersects,
}
