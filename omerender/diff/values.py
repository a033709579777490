"""A changed field's value on each side, as the text and markdown reports show it inline (``old -> new``).

Shown inline: scalars (strings, numbers, booleans, null), a key one side lacks ("absent"), and lists of scalars
(container ``args`` and ``command``) in JSON flow form. A map, or a list holding maps or lists, is not shown
inline: ``-U`` shows whole objects. A shown value longer than :data:`LIMIT` characters keeps its first and last
characters around one "…", so an image's registry and tag both stay in sight.
"""
from __future__ import annotations

import json

from .compare import MISSING

LIMIT = 60  # characters of one shown value, the ellipsis included
ELLIPSIS = "…"


def inline(before, after) -> tuple[str, str] | None:
    """The two sides' values as shown, or None when either cannot be shown on one line."""
    shown = _shown(before), _shown(after)
    return None if None in shown else shown


def _shown(value) -> str | None:
    if value is MISSING:
        return "absent"
    if isinstance(value, str):
        return shorten(printable(value) if value else '""')
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    if isinstance(value, list) and all(v is None or isinstance(v, (str, bool, int, float)) for v in value):
        return shorten(printable(json.dumps(value, ensure_ascii=False)))
    return None


def printable(text: str) -> str:
    """``text`` with control characters (a newline too) escaped: names and values come from repositories we do
    not trust, and a terminal or a pull-request comment must show them on their line, not act on them."""
    return text if text.isprintable() else "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def shorten(text: str, limit: int = LIMIT) -> str:
    """``text``, or when longer than ``limit`` its start and end around one ellipsis, ``limit`` characters in
    all (the end gets the extra character: a tag or a version is at the end)."""
    if len(text) <= limit:
        return text
    keep = limit - len(ELLIPSIS)
    return text[:keep // 2] + ELLIPSIS + text[len(text) - (keep - keep // 2):]


def json_change(path: str, before, after) -> dict:
    """A changed field for the JSON report: its path and each side's whole value, a side that lacks the key
    left out."""
    found = {"field": path}
    if before is not MISSING:
        found["base"] = before
    if after is not MISSING:
        found["head"] = after
    return found
