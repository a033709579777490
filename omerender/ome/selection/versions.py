"""Model format and framework versions: the grammar and comparison of selection.md §3.4."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_NUMBER = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True)
class Version:
    numbers: tuple[int, int, int]
    prefix: bool
    parts: int
    pre: tuple[str, ...]
    build: tuple[str, ...]
    dev: tuple[str, ...]

    @property
    def unofficial(self) -> bool:
        return bool(self.pre or self.build or self.dev)


@lru_cache(maxsize=4096)
def parse_version(text: str) -> Version | None:
    """§3.4's grammar; None when the text does not parse."""
    parts = text.split(".", 2)
    major = parts[0][1:] if parts[0].startswith("v") else parts[0]
    minor = parts[1] if len(parts) > 1 else "0"
    rest = parts[2] if len(parts) > 2 else "0"
    suffixes = {}
    for mark, name in (("+", "build"), ("-", "pre"), (".", "dev")):
        if mark in rest:
            rest, tail = rest.split(mark, 1)
            suffixes[name] = tuple(tail.split("."))
            if "" in suffixes[name]:
                return None
    if not all(_NUMBER.fullmatch(n) for n in (major, minor, rest)):
        return None
    return Version((int(major), int(minor), int(rest)), parts[0].startswith("v"), len(parts),
                   suffixes.get("pre", ()), suffixes.get("build", ()), suffixes.get("dev", ()))


def _compare(a: Version, b: Version) -> int:
    left = (a.numbers, a.pre, a.build, a.dev)
    right = (b.numbers, b.pre, b.build, b.dev)
    return (left > right) - (left < right)


@lru_cache(maxsize=8192)  # selection compares the same few versions for every runtime and model
def versions_match(entry_version: str, model_version: str, operator: str = "Equal") -> bool:
    """entry OP model (§3.4); the entry's version is the newest accepted for GreaterThan(OrEqual)."""
    entry, model = parse_version(entry_version), parse_version(model_version)
    if entry is None or model is None:
        return False
    if operator == "Equal" or entry.unofficial or model.unofficial:
        return _compare(entry, model) == 0
    if entry.parts != model.parts or entry.prefix != model.prefix:
        return False
    if operator == "GreaterThan":
        return _compare(entry, model) > 0
    if operator == "GreaterThanOrEqual":
        return _compare(entry, model) >= 0
    return _compare(entry, model) == 0
