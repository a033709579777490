"""cel-go's strings extension, version 2 (what the API server loads since Kubernetes 1.29): indices count code
points; ``trim`` removes what Go's ``unicode.IsSpace`` calls space."""
from __future__ import annotations

from . import CelError, NoOverload, expect, kind_of

# Go's unicode.IsSpace: Latin-1's spaces and the White_Space property (Python's str.strip also takes \x1c-\x1f).
_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029" \
         "\u202f\u205f\u3000"
_QUOTED = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v", "\\": "\\\\",
           '"': '\\"'}


def _int(name: str, value) -> int:
    return expect(name, value, "int")


def char_at(text, index):
    expect("charAt", text, "string")
    index = _int("charAt", index)
    if index < 0 or index > len(text):
        raise CelError(f"index out of range: {index}")
    return text[index] if index < len(text) else ""


def index_of(text, sub, offset=0):
    expect("indexOf", text, "string")
    expect("indexOf", sub, "string")
    offset = _int("indexOf", offset)
    if offset < 0:
        raise CelError(f"index out of range: {offset}")
    if sub == "":
        return min(offset, len(text))
    if offset >= len(text):
        return -1
    return text.find(sub, offset)


def last_index_of(text, sub, offset=None):
    expect("lastIndexOf", text, "string")
    expect("lastIndexOf", sub, "string")
    if offset is None:
        if sub == "":
            return len(text)
        if len(text.encode()) < len(sub.encode()):
            return -1
        offset = len(text) - 1
    offset = _int("lastIndexOf", offset)
    if offset < 0:
        raise CelError(f"index out of range: {offset}")
    if sub == "":
        return min(offset, len(text))
    if offset >= len(text):
        return -1
    return text.rfind(sub, 0, min(offset, len(text) - len(sub)) + len(sub))


def lower_ascii(text):
    expect("lowerAscii", text, "string")
    return "".join(c.lower() if c.isascii() else c for c in text)


def upper_ascii(text):
    expect("upperAscii", text, "string")
    return "".join(c.upper() if c.isascii() else c for c in text)


def replace(text, old, new, limit=-1):
    for value in (text, old, new):
        expect("replace", value, "string")
    return text.replace(old, new, _int("replace", limit))


def split(text, separator, limit=-1):
    expect("split", text, "string")
    expect("split", separator, "string")
    limit = _int("split", limit)
    if limit == 0:
        return []
    if separator == "":  # Go splits into code points, the last piece holding the rest
        pieces = list(text)
        return pieces if limit < 0 or limit >= len(pieces) else pieces[:limit - 1] + ["".join(pieces[limit - 1:])]
    return text.split(separator, limit - 1 if limit > 0 else -1)


def substring(text, start, end=None):
    expect("substring", text, "string")
    start = _int("substring", start)
    if end is None:
        if start < 0 or start > len(text):
            raise CelError(f"index out of range: {start}")
        return text[start:]
    end = _int("substring", end)
    if start > end:
        raise CelError(f"invalid substring range. start: {start}, end: {end}")
    for index in (start, end):
        if index < 0 or index > len(text):
            raise CelError(f"index out of range: {index}")
    return text[start:end]


def trim(text):
    expect("trim", text, "string")
    return text.strip(_SPACE)


def join(items, separator=""):
    expect("join", items, "list")
    expect("join", separator, "string")
    if any(kind_of(item) != "string" for item in items):
        raise NoOverload("join")
    return separator.join(items)


def quote(text):
    expect("strings.quote", text, "string")
    return '"' + "".join(_QUOTED.get(c, c) for c in text) + '"'


def code_point_size(value):
    """CEL's ``size``: a string's code points (cel-rust's native ``size`` counts its UTF-8 bytes)."""
    if kind_of(value) not in ("string", "bytes", "list", "map"):
        raise NoOverload("size")
    return len(value)


def to_bool(value):
    """cel-go's ``bool()`` of a string (cel-rust has none)."""
    if kind_of(value) == "bool":
        return value
    expect("bool", value, "string")
    if value in ("1", "t", "true", "TRUE", "True"):
        return True
    if value in ("0", "f", "false", "FALSE", "False"):
        return False
    raise CelError("type conversion error from 'string' to 'bool'")


FUNCTIONS = {
    "bool": to_bool,
    "charAt": char_at, "indexOf": index_of, "lastIndexOf": last_index_of, "lowerAscii": lower_ascii,
    "upperAscii": upper_ascii, "replace": replace, "split": split, "substring": substring, "trim": trim,
    "join": join, "strings.quote": quote,
}
