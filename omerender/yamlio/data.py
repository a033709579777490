"""Copying parsed YAML data.

``copy.deepcopy`` pays a memo lookup and a function call for every string and number; parsed YAML
is mostly those, and copying specs dominated the render after the dump (benchmarks/NOTES.md). This
copy returns immutable scalars as they are and copies dicts and lists itself. Like deepcopy, it
copies a dict or list that occurs several times (a YAML alias) once and keeps it shared, so an
aliased input never grows in the copy; any other type goes to deepcopy.
"""
from __future__ import annotations

import collections
import copy
import hashlib
import pickle
from typing import Any

_IMMUTABLE = frozenset((str, int, float, bool, type(None)))


def copy_data(value: Any) -> Any:
    """A deep copy of ``value``: what ``copy.deepcopy`` returns, faster for plain data."""
    if type(value) in _IMMUTABLE:
        return value
    return _copy(value, {})


def _copy(value: Any, memo: dict) -> Any:
    kind = type(value)
    if kind is dict:
        done = memo.get(id(value))
        if done is not None:
            return done
        result = memo[id(value)] = {}
        for key, item in value.items():
            result[key] = item if type(item) in _IMMUTABLE else _copy(item, memo)
        return result
    if kind is list:
        done = memo.get(id(value))
        if done is not None:
            return done
        result = memo[id(value)] = []
        for item in value:
            result.append(item if type(item) in _IMMUTABLE else _copy(item, memo))
        return result
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


def map_or_empty(value) -> dict:
    """``value`` if it is a dict, else ``{}``: an optional map, read."""
    return value if isinstance(value, dict) else {}


def list_or_empty(value) -> list:
    """``value`` if it is a list, else ``[]``: an optional list, read."""
    return value if isinstance(value, list) else []


def count_values(value: Any) -> int:
    """How many maps, lists and scalars ``value`` holds, itself included."""
    count, pending = 0, [value]
    while pending:
        item = pending.pop()
        count += 1
        kind = type(item)
        if kind is dict:
            pending.extend(item.values())
        elif kind is list:
            pending.extend(item)
    return count


def fingerprint(value: Any) -> bytes | None:
    """A digest of ``value``'s exact content (types, order and all: 1, 1.0, True and "1" differ), for caches of
    results that depend on the content alone; None for what pickle cannot serialize (then nothing is cached)."""
    data = pickled(value)
    return None if data is None else digest(data)


def pickled(value: Any) -> bytes | None:
    """``value``'s exact content as bytes (:func:`fingerprint` digests them); every string's UTF-8 is in them whole,
    so a text that no string holds is not in them either. None for what pickle cannot serialize."""
    try:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None


def digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class Memo(dict):
    """Results by key, emptied when it holds ``limit`` entries, so its memory is bounded across a whole input however
    many distinct keys come. Read it as a dict (``get`` on a hit runs no Python); :meth:`remember` stores."""

    __slots__ = ("limit",)

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def remember(self, key, value):
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


class BoundedSet(set):
    """What a check found valid, so it is not checked again; emptied when it holds ``limit`` entries, as
    :class:`Memo`."""

    __slots__ = ("limit",)

    def __init__(self, limit: int = 100_000):
        super().__init__()
        self.limit = limit

    def add(self, key) -> None:
        if len(self) >= self.limit:
            self.clear()
        super().add(key)

    def update(self, keys: list) -> None:
        """Add every one of ``keys`` (none of them if they are more than the limit)."""
        if len(keys) > self.limit:
            return
        if len(self) + len(keys) > self.limit:
            self.clear()
        super().update(keys)


class Recent(collections.OrderedDict):
    """Results by key, the least recently used let go past ``limit``: for results reused at a distance (the pods of
    InferenceServices alike, which a render meets far apart), where emptying all at once, as :class:`Memo` does,
    would lose most of them. :meth:`get` counts as a use; :meth:`remember` stores."""

    __slots__ = ("limit",)

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def get(self, key, default=None):
        found = super().get(key, self)
        if found is self:
            return default
        self.move_to_end(key)
        return found

    def remember(self, key, value):
        self[key] = value
        self.move_to_end(key)
        if len(self) > self.limit:
            self.popitem(last=False)
        return value
