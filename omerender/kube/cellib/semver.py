"""Kubernetes' semver library, version 1 (Kubernetes 1.33): ``semver(string[, normalize])``,
``isSemver(string[, normalize])`` and a Semver's ``major``, ``minor``, ``patch``, ``compareTo``, ``isGreaterThan``,
``isLessThan``, read and ordered as github.com/blang/semver/v4 reads and orders versions (build metadata is
ignored in comparisons)."""
from __future__ import annotations

import re

from . import CelError, expect, opaque

_NUMBER = re.compile(r"[0-9]+")
_IDENTIFIER = re.compile(r"[0-9A-Za-z-]+")
_PARTS = ("Major", "Minor", "Patch")


def parse(text: str) -> tuple:
    """(major, minor, patch, prerelease identifiers), or a CelError with blang/semver's text."""
    if not text:
        raise CelError("Version string empty")
    core, plus, build = text.partition("+")
    core, dash, pre = core.partition("-")
    parts = core.split(".")
    if len(parts) != 3:
        raise CelError("No Major.Minor.Patch elements found")
    numbers = []
    for name, part in zip(_PARTS, parts):
        if not _NUMBER.fullmatch(part):
            raise CelError(f"Invalid character(s) found in {name.lower()} number {_q(part)}")
        if len(part) > 1 and part.startswith("0"):
            raise CelError(f"{name} number must not contain leading zeroes {_q(part)}")
        numbers.append(int(part))
    identifiers = []
    for item in pre.split(".") if dash else ():
        if not item:
            raise CelError("Prerelease is empty")
        if not _IDENTIFIER.fullmatch(item):
            raise CelError(f"Invalid character(s) found in prerelease {_q(item)}")
        if _NUMBER.fullmatch(item) and len(item) > 1 and item.startswith("0"):
            raise CelError(f"Numeric PreRelease version must not contain leading zeroes {_q(item)}")
        identifiers.append(int(item) if _NUMBER.fullmatch(item) else item)
    for item in build.split(".") if plus else ():
        if not item:
            raise CelError(f"Build meta data can not be empty {_q(item)}")
        if not _IDENTIFIER.fullmatch(item):
            raise CelError(f"Invalid character(s) found in build meta data {_q(item)}")
    return (*numbers, tuple(identifiers))


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def normalized(text: str) -> str:
    """The API server's normalization: no leading ``v``, missing minor and patch as 0, no leading zeros."""
    text = text[1:] if text.startswith("v") else text
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or not part[0].isdigit():
                part = "0" + part
            parts[i] = part
    return ".".join(parts + ["0"] * (3 - len(parts)))


def _read(name: str, text, normalize) -> tuple:
    expect(name, text, "string")
    expect(name, normalize, "bool")
    return parse(normalized(text) if normalize else text)


def semver(text, normalize=False):
    major, minor, patch, pre = _read("semver", text, normalize)
    return opaque("Semver", f"{major}.{minor}.{patch}" + ("-" + ".".join(map(str, pre)) if pre else ""))


def is_semver(text, normalize=False):
    try:
        _read("isSemver", text, normalize)
    except CelError as err:
        if str(err).startswith("no such overload"):
            raise
        return False
    return True


def _version(name: str, value) -> tuple:
    return parse(expect(name, value, "Semver")["v"])


def compare_to(value, other):
    a, b = _version("compareTo", value), _version("compareTo", other)
    if a[:3] != b[:3]:
        return 1 if a[:3] > b[:3] else -1
    return _compare_pre(a[3], b[3])


def _compare_pre(a: tuple, b: tuple) -> int:
    if not a or not b:
        return (not a) - (not b)  # a version without a prerelease is the greater
    for x, y in zip(a, b):
        if x == y:
            continue
        if isinstance(x, int) != isinstance(y, int):
            return -1 if isinstance(x, int) else 1  # numeric identifiers are the lower
        return 1 if x > y else -1
    return (len(a) > len(b)) - (len(a) < len(b))


FUNCTIONS = {
    "semver": semver, "isSemver": is_semver,
    "major": lambda value: _version("major", value)[0], "minor": lambda value: _version("minor", value)[1],
    "patch": lambda value: _version("patch", value)[2], "compareTo": compare_to,
    "isGreaterThan": lambda value, other: compare_to(value, other) == 1,
    "isLessThan": lambda value, other: compare_to(value, other) == -1,
}
