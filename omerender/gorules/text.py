"""Go's ``strings.EqualFold``, ``strings.ToLower`` and ``strings.TrimSpace``, and the UTF-8 a Go program can hold.

* ``EqualFold`` compares rune by rune under Unicode simple case folding (CaseFolding.txt, statuses C and S): the
  long s (U+017F) is an s, the Kelvin sign (U+212A) a k, ẞ (U+1E9E) a ß, but ß is not "ss" (a full folding) and
  the dotless ı and dotted İ fold to nothing else. Python's ``lower()`` and ``casefold()`` differ on each of those.
* ``TrimSpace`` removes Unicode White_Space (``unicode.IsSpace``) at both ends; Python's ``str.strip()`` also
  removes the separators U+001C to U+001F, which Go keeps.
* A Go string holds bytes; where it is decoded (encoding/json, a conversion from a rune) an invalid sequence and a
  lone surrogate become U+FFFD. :func:`is_utf8` says whether Python text can be written as UTF-8 at all.
"""
from __future__ import annotations

import re

# unicode.IsSpace: '\t', '\n', '\v', '\f', '\r', ' ', U+0085, U+00A0, and the White_Space characters above Latin-1
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
           "\u2028\u2029\u202f\u205f\u3000"
_SURROGATE = re.compile("[\ud800-\udfff]")
_FOLDS: dict[str, str] = {}


def trim_space(text: str) -> str:
    """strings.TrimSpace."""
    return text.strip(GO_SPACE)


def _fold_char(char: str) -> str:
    """One representative of ``char``'s simple case folding class: its one-character full folding where the full
    folding is one character (status C), else its one-character lowercase (status S, as ẞ to ß), else itself."""
    folded = char.casefold()
    if len(folded) == 1:
        return folded
    lower = char.lower()
    return lower if len(lower) == 1 else char


def fold(text: str) -> str:
    """A key such that ``fold(a) == fold(b)`` exactly when ``strings.EqualFold(a, b)``."""
    if text.isascii():
        return text.lower()
    out = []
    for char in text:
        folded = _FOLDS.get(char)
        if folded is None:
            folded = _FOLDS[char] = _fold_char(char)
        out.append(folded)
    return "".join(out)


def to_lower(text: str) -> str:
    """strings.ToLower: each rune's simple lowercase (unicode.ToLower), with no context. Python's ``lower()`` writes
    İ (U+0130) as two characters and a final Σ as ς; Go writes i and σ."""
    if text.isascii():
        return text.lower()
    return "".join(_lower_char(char) for char in text)


def _lower_char(char: str) -> str:
    lower = char.lower()  # one character alone: no final-sigma context
    return lower if len(lower) == 1 else lower[0]  # U+0130's full mapping is i + U+0307, its simple one i


def equal_fold(a: str, b: str) -> bool:
    """strings.EqualFold."""
    return a == b or (len(a) == len(b) and fold(a) == fold(b))


def is_utf8(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8: it holds no lone surrogate (what Python keeps of bytes that were
    not UTF-8, or of a ``\\ud800`` escape)."""
    return text.isascii() or _SURROGATE.search(text) is None


def go_string(text: str) -> str:
    """``text`` as a Go string decoded from it holds it: every lone surrogate U+FFFD."""
    return text if is_utf8(text) else _SURROGATE.sub("\ufffd", text)
