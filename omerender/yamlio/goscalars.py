"""What a plain YAML scalar means to Kubernetes' Go readers, and the one value omerender reads it as.

kubectl reads YAML with sigs.k8s.io/yaml (go-yaml v2's resolver: YAML 1.1's ``yes``/``no``/``on``/``off``
booleans, timestamps kept as their text); kustomize with go-yaml v3 (``true``/``false`` only, timestamps
as times). Both then write JSON, which the API server reads as int64 where an integer fits and float64
otherwise. A plain scalar means one value when both readers give the same JSON; where they do not, or
where neither can write it (``.inf``, ``.nan``), it is refused, and quoting it is the fix.

The rules follow go-yaml's ``resolve`` and Go's ``strconv.ParseInt``/``ParseFloat`` and ``time.Parse``
step by step, in their order; tests/test_go_yaml.py checks them against the real kubectl and kustomize.
Sexagesimal numbers (``1:20``) and YAML 1.1's ``=`` are strings to both.
"""
from __future__ import annotations

import json
import re
from decimal import Decimal

from omerender.gorules.strconv import parse_float, parse_int, parse_uint
from .data import Memo

STR, INT, FLOAT, BOOL, NULL = (f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null"))
MERGE = "tag:yaml.org,2002:merge"
REFUSED = "tag:omerender.io,2026:refused"  # a plain scalar the two readers read differently

_INT64 = 1 << 63

# go-yaml's resolveTable: the first character decides which rules apply; any other is a string at once.
_SIGN, _DIGIT, _WORD, _DOT = "S", "D", "M", "."
_HINTS = {"+": _SIGN, "-": _SIGN, ".": _DOT} | dict.fromkeys("0123456789", _DIGIT) | dict.fromkeys("yYnNtTfFoO~", _WORD)
HINTED = frozenset(_HINTS)   # the first characters go-yaml looks further at; a text starting otherwise is a string

_NONFINITE = frozenset((".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
                        "-.INF"))
_BOTH_WORDS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False,
               "~": None, "null": None, "Null": None, "NULL": None}
_V2_ONLY_WORDS = dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "on", "On", "ON"), True) | dict.fromkeys(
    ("n", "N", "no", "No", "NO", "off", "Off", "OFF"), False)

# Possessive (never backtracking): a megabyte of digits is matched once.
_YAML_FLOAT = re.compile(r"[-+]?(?:\.[0-9]++|[0-9]++(?:\.[0-9]*+)?)(?:[eE][-+]?[0-9]++)?\Z")
# strconv.ParseFloat on a text that starts with ".": Go's float syntax, "_" only between digits.
_DOT_FLOAT = re.compile(r"\.[0-9]++(?:_[0-9]++)*+(?:[eE][-+]?[0-9]++(?:_[0-9]++)*+)?\Z")


class _Unwritable:
    """A Go value encoding/json refuses (NaN, infinities, a time it cannot write), or an explicit tag
    go-yaml refuses; ``both`` says what is wrong when neither reader takes it."""

    def __init__(self, why: str, both: str = "", fix: str = ""):
        self.why = why
        self.both = both or f"is {why}, which neither kubectl nor kustomize can convert to JSON"
        self.fix = fix


# ---------------------------------------------------------------- time


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _number(text: str, at: int) -> tuple[int | None, int]:
    """time's getnum: one or two digits at ``at``."""
    if at >= len(text) or text[at] not in "0123456789":
        return None, at
    if at + 1 < len(text) and text[at + 1] in "0123456789":
        return int(text[at:at + 2]), at + 2
    return int(text[at]), at + 1


_TIMESTAMP_START = re.compile(r"[0-9]{4}-")
_OFFSET = re.compile(r"([-+])([0-9]{2}):([0-9]{2})")
_DIGIT_RUN = re.compile(r"[0-9]*+")


def _timestamp(text: str) -> str | _Unwritable | None:
    """The JSON text (RFC 3339, as Go's time.Time writes it) of the timestamp go-yaml reads ``text`` as,
    or None if it is not one: the layouts "2006-1-2T15:4:5.999999999Z07:00", the same with "t",
    "2006-1-2 15:4:5.999999999" (UTC) and "2006-1-2", tried in that order by time.Parse."""
    if not _TIMESTAMP_START.match(text):
        return None
    year = int(text[:4])
    month, at = _number(text, 5)
    if month is None or not 1 <= month <= 12 or text[at:at + 1] != "-":
        return None
    day, at = _number(text, at + 1)
    if day is None or not 1 <= day <= _days_in(month, year):
        return None
    date = f"{year:04}-{month:02}-{day:02}"
    if at == len(text):
        return date + "T00:00:00Z"
    separator = text[at]
    if separator == " ":
        while at < len(text) and text[at] == " ":
            at += 1
    elif separator in "Tt":
        at += 1
    else:
        return None
    clock = _clock(text, at)
    if clock is None:
        return None
    time, at = clock
    if separator == " ":
        return f"{date}T{time}Z" if at == len(text) else None
    return _zoned(f"{date}T{time}", text[at:])


def _clock(text: str, at: int) -> tuple[str, int] | None:
    """"15:4:5" and an optional fraction (up to nine digits count) at ``at``: the clock as RFC 3339 writes it."""
    fields = []
    for most, before in ((24, ""), (60, ":"), (60, ":")):
        if before:
            if text[at:at + 1] != before:
                return None
            at += 1
        value, at = _number(text, at)
        if value is None or value >= most:
            return None
        fields.append(f"{value:02}")
    clock = ":".join(fields)
    after = text[at + 1:at + 2]
    if text[at:at + 1] in (".", ",") and after and after in "0123456789":
        end = _DIGIT_RUN.match(text, at + 1).end()
        fraction = text[at + 1:end][:9].ljust(9, "0").rstrip("0")
        clock += "." + fraction if fraction else ""
        at = end
    return clock, at


def _zoned(local: str, zone: str) -> str | _Unwritable | None:
    if zone == "Z":
        return local + "Z"
    match = _OFFSET.fullmatch(zone)
    if not match:
        return None
    sign, hours, minutes = match[1], int(match[2]), int(match[3])
    if hours > 24 or minutes > 60:
        return None
    total = hours * 60 + minutes
    if total == 0:
        return local + "Z"
    if total // 60 >= 24:
        return _Unwritable("a time zone offset of 24 hours or more")
    return f"{local}{sign}{total // 60:02}:{total % 60:02}"


# ---------------------------------------------------------------- go-yaml's resolve


def _number_value(plain: str, v3: bool):
    """go-yaml's integer and float rules for a text starting with a sign or digit, "_" removed: an int,
    a float, or None (a string)."""
    value = parse_int(plain)
    if value is None:
        value = parse_uint(plain)
    if value is not None:
        return value
    if _YAML_FLOAT.match(plain):
        number = parse_float(plain)
        if number is not None:
            return number
    prefixes = ("0b", "-0b", "0o", "-0o") if v3 else ("0b", "-0b")
    for prefix in prefixes:
        if plain.startswith(prefix):
            digits, base = plain[len(prefix):], 2 if prefix[-1] == "b" else 8
            if prefix[0] == "-":
                return parse_int("-" + digits, base)
            value = parse_int(digits, base)
            return value if value is not None else parse_uint(digits, base)
    return None


def go_value(text: str, v3: bool, timestamps: bool = True):
    """The Go value go-yaml v3 (kustomize) or v2 (kubectl) resolves a plain scalar to: str, bool, None,
    int, float, or :class:`_Unwritable`; a v3 timestamp is the string JSON writes for it. ``timestamps``
    is False for a scalar with an explicit tag, which go-yaml never reads as a time."""
    hint = _HINTS.get(text[:1], "N" if not text else None)
    if hint is None:
        return text
    if text == "":
        return None
    if text in _BOTH_WORDS:
        return _BOTH_WORDS[text]
    if not v3 and text in _V2_ONLY_WORDS:
        return _V2_ONLY_WORDS[text]
    if text in _NONFINITE:
        return _Unwritable("infinity" if "i" in text.lower() else "not a number")
    if hint == _DOT:
        return parse_float(text) if _DOT_FLOAT.match(text) else text
    if hint == _WORD:
        return text
    if timestamps:
        time = _timestamp(text)
        if time is not None:
            return time if v3 else text
    value = _number_value(text.replace("_", ""), v3)
    return text if value is None else value


def as_json(value):
    """``value`` as the API server reads the JSON Go writes for it: a number written without a fraction or
    exponent is an int64 where it fits, any other a float64. Go writes a float below 1e21 in full from its
    shortest digits (2**62 as 4611686018427388000), as Python's repr has them."""
    if value.__class__ is float and value.is_integer() and abs(value) < 1e21:
        whole = int(value) if abs(value) < 2 ** 53 else int(Decimal(repr(value)))
        return whole if -_INT64 <= whole < _INT64 else value
    if value.__class__ is int and not -_INT64 <= value < _INT64:
        return float(value)
    return value


# ---------------------------------------------------------------- one reading

_TAGS = {str: STR, int: INT, float: FLOAT, bool: BOOL, type(None): NULL}
_READINGS = Memo(1 << 18)  # plain scalar text -> (tag, value or refusal message)
SNIPPET_CHARS = 60


def read_plain(text: str) -> tuple[str, object]:
    """The tag and value omerender reads a plain scalar as, or (:data:`REFUSED`, the message)."""
    reading = _READINGS.get(text)
    if reading is None:
        reading = _READINGS.remember(text, _read(text))
    return reading


def _read(text: str) -> tuple[str, object]:
    if text == "<<":
        return MERGE, text  # a merge as a key, the string "<<" anywhere else, to both readers
    kubectl, kustomize = go_value(text, v3=False), go_value(text, v3=True)
    agreed = _agreed(kubectl, kustomize)
    if agreed is not _DISAGREE:
        return _TAGS[kustomize.__class__], agreed  # Go's type: 1.0 is a float, whose JSON is 1
    return REFUSED, _refusal(f"the plain value {_shown(text)}", text, kubectl, kustomize)


_DISAGREE = object()


def _agreed(kubectl, kustomize):
    if isinstance(kubectl, _Unwritable) or isinstance(kustomize, _Unwritable):
        return _DISAGREE
    kubectl, kustomize = as_json(kubectl), as_json(kustomize)
    return kubectl if kubectl.__class__ is kustomize.__class__ and kubectl == kustomize else _DISAGREE


def read_tagged(tag: str, text: str):
    """The value of a scalar with an explicit ``!!int``, ``!!float``, ``!!bool`` or ``!!null`` tag, as both
    readers take it (the tag must fit what the text resolves to; an integer fits ``!!float``). Raises
    ValueError with the message otherwise."""
    kubectl, kustomize = (_tagged(tag, go_value(text, v3, timestamps=False)) for v3 in (False, True))
    agreed = _agreed(kubectl, kustomize)
    if agreed is _DISAGREE:
        raise ValueError(_refusal(f"!!{tag.rsplit(':', 1)[1]} {_shown(text)}", text, kubectl, kustomize))
    return agreed


def read_nonspecific(text: str) -> str:
    """The value of a plain scalar with the non-specific tag ``!`` (``! 12``), as both readers take it: kubectl's
    go-yaml v2 reads the text as a string whatever it says, kustomize's v3 resolves it as if untagged. The string
    where kustomize reads the same string; raises ValueError with the message otherwise. (A quoted scalar with
    ``!`` is the string to both.)"""
    kustomize = go_value(text, v3=True)
    if kustomize.__class__ is str and kustomize == text:
        return text
    described = _described(kustomize)
    advice = f"quote it{f' ({json.dumps(text)})' if len(text) <= SNIPPET_CHARS else ''} if you mean the string"
    if not isinstance(kustomize, _Unwritable):
        advice += f", or remove the ! if you mean {described}"
    raise ValueError(f"! {_shown(text) or '(nothing)'} is the string {json.dumps(_cut(text))} to kubectl but "
                     f"{described} to kustomize; {advice}")


def _tagged(tag: str, value):
    kind = _TAGS.get(value.__class__)
    if kind == tag:
        return value
    if tag == FLOAT and kind == INT and -_INT64 <= value < _INT64:
        return float(value)
    if isinstance(value, _Unwritable):
        return value
    name = f"!!{tag.rsplit(':', 1)[1]}"
    return _Unwritable(f"not a {name}", f"is not a {name} to kubectl or kustomize",
                       "remove the tag or change the value")


def _refusal(what: str, text: str, kubectl, kustomize) -> str:
    advice = f"quote it{f' ({json.dumps(text)})' if len(text) <= SNIPPET_CHARS else ''} if you mean the string"
    if isinstance(kubectl, _Unwritable) and isinstance(kustomize, _Unwritable) and kubectl.why == kustomize.why:
        return f"{what} {kubectl.both}; {kubectl.fix or advice}"
    if kubectl.__class__ is bool:
        advice += f", or write {json.dumps(kubectl)}"
    return f"{what} is {_described(kubectl)} to kubectl but {_described(kustomize)} to kustomize; {advice}"


def _described(value) -> str:
    if isinstance(value, _Unwritable):
        return f"an error ({value.why})"
    value = as_json(value)
    if value.__class__ is str:
        return f"the string {json.dumps(_cut(value))}"
    return json.dumps(value)


def _cut(text: str) -> str:
    return text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS] + "..."


def _shown(text: str) -> str:
    return json.dumps(_cut(text), ensure_ascii=False)[1:-1]


def reads_as_itself(text: str) -> bool:
    """Whether both Go readers read the plain scalar ``text`` as the string ``text``."""
    tag, value = read_plain(text)
    return tag == STR and value == text
