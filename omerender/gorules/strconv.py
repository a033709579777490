"""Go's ``strconv.ParseUint``, ``ParseInt`` (64 bits) and ``ParseFloat``, for the texts Go's readers give them,
and ``strconv.Quote`` (``%q``), for the messages that quote a value as OME's do.

go-yaml resolves a plain scalar through them (:mod:`omerender.yamlio.goscalars`); each returns None where Go
returns an error (a syntax error or a value out of range).
"""
from __future__ import annotations

import math
import re

_INT64 = 1 << 63
_UINT64 = 1 << 64
_BASE_DIGITS = {2: re.compile(r"[01]*+\Z"), 8: re.compile(r"[0-7]*+\Z"), 10: re.compile(r"[0-9]*+\Z"),
                16: re.compile(r"[0-9a-fA-F]*+\Z")}
_MOST_DIGITS = {2: 64, 8: 22, 10: 20, 16: 16}  # more significant digits than these overflow 64 bits
_PREFIXES = {"b": 2, "B": 2, "o": 8, "O": 8, "x": 16, "X": 16}


def parse_uint(text: str, base: int = 0) -> int | None:
    """strconv.ParseUint(text, base, 64), None on any error. Base 0 reads 0b/0o/0x prefixes and a
    leading 0 as octal."""
    if not text:
        return None
    if base == 0:
        base = 10
        if text[0] == "0":
            if len(text) >= 3 and text[1] in _PREFIXES:
                base, text = _PREFIXES[text[1]], text[2:]
            else:
                base, text = 8, text[1:]
    if not _BASE_DIGITS[base].match(text):
        return None
    digits = text.lstrip("0")
    if len(digits) > _MOST_DIGITS[base]:
        return None
    value = int(digits, base) if digits else 0
    return value if value < _UINT64 else None


def parse_int(text: str, base: int = 0) -> int | None:
    """strconv.ParseInt(text, base, 64), None on any error."""
    if not text:
        return None
    negative = text[0] == "-"
    value = parse_uint(text[1:] if text[0] in "+-" else text, base)
    if value is None or value > _INT64 or (value == _INT64 and not negative):
        return None
    return -value if negative else value


def parse_float(text: str) -> float | None:
    """strconv.ParseFloat(text, 64) for the decimal syntax the callers let through; None when out of range."""
    value = float(text.replace("_", ""))
    return value if math.isfinite(value) else None


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def quote(text: str) -> str:
    """``text`` as Go's ``strconv.Quote`` (``%q``) writes it: in double quotes, ``"`` and ``\\`` escaped,
    printable characters as they are, the C escapes, other ASCII controls as ``\\xNN`` and other characters Go does
    not print as ``\\uXXXX`` or ``\\UXXXXXXXX`` (Python's ``isprintable`` is Go's ``unicode.IsPrint``: letters,
    marks, numbers, punctuation, symbols and the ASCII space)."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char.isprintable():
            out.append(char)
        elif char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'
