"""CEL's ``duration(string)`` as cel-go reads it: Go's ``time.ParseDuration`` (signed sequences of decimal numbers
with a unit, ``1h30m``, ``-1.5s``, ``300ms``, ``2µs``; no sign inside, no overflow past 2^63-1 ns). cel-rust's own
takes ``1h-5m`` and wraps past the range, so omerender calls this one instead."""
from __future__ import annotations

import re
from datetime import timedelta
from fractions import Fraction

from . import CelError, expect

_UNITS = {"ns": 1, "us": 10 ** 3, "µs": 10 ** 3, "μs": 10 ** 3, "ms": 10 ** 6, "s": 10 ** 9, "m": 60 * 10 ** 9,
          "h": 3600 * 10 ** 9}
_PART = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]*)")
MAX_NANOS = 2 ** 63 - 1
ERROR = "type conversion error from 'string' to 'google.protobuf.Duration'"


def nanoseconds(text: str) -> int:
    """The duration in nanoseconds, or a CelError with cel-go's text."""
    rest, negative = text, False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise CelError(ERROR)
    total = 0
    while rest:
        found = _PART.match(rest)
        whole, fraction, unit = found.groups()
        if not whole and not fraction or unit not in _UNITS or found.end() == 0:
            raise CelError(ERROR)
        value = Fraction(int(whole or "0")) + (Fraction(int(fraction), 10 ** len(fraction)) if fraction else 0)
        total += int(value * _UNITS[unit])  # Go truncates the fraction's nanoseconds
        if total > MAX_NANOS + negative:
            raise CelError(ERROR)
        rest = rest[found.end():]
    return -total if negative else total


def duration(text):
    if isinstance(text, timedelta):
        return text
    return timedelta(microseconds=nanoseconds(expect("duration", text, "string")) // 1000)


FUNCTIONS = {"goDuration": duration}
