"""Kubernetes' regex library: ``find`` and ``findAll``, with RE2's syntax (Go's ``regexp``).

Python's ``re`` backtracks where RE2 never does, so a pattern of a repeated group that itself repeats or
alternates (``(a+)+``, ``(a|aa)*``), which can take exponential time there, is refused rather than run; so is the
Perl syntax RE2 refuses (lookaround, backreferences), with RE2's error."""
from __future__ import annotations

import re
from functools import lru_cache

from . import CelError, expect

MAX_PATTERN = 1_000
_PERL_ONLY = re.compile(r"\(\?<?[=!]|\\[1-9]")
_REPEATED_GROUP = re.compile(r"\)(?:[*+]|\{\d*,\d*\}|\{\d+\})")


def _risky(pattern: str) -> bool:
    """A group that repeats and holds a repetition or an alternation."""
    for found in _REPEATED_GROUP.finditer(pattern):
        depth, i = 0, found.start()
        while i >= 0:
            depth += {")": 1, "(": -1}.get(pattern[i], 0) if (i == 0 or pattern[i - 1] != "\\") else 0
            if depth == 0:
                break
            i -= 1
        body = pattern[i + 1:found.start()]
        if re.search(r"(?<!\\)[*+|]|(?<!\\)\{\d", body):
            return True
    return False


@lru_cache(maxsize=256)
def compiled(pattern: str):
    perl = _PERL_ONLY.search(pattern)
    if perl:
        raise CelError(f"Illegal regex: error parsing regexp: invalid or unsupported Perl syntax: `{perl.group()}`")
    if len(pattern) > MAX_PATTERN or _risky(pattern):
        raise CelError(f"omerender does not run the pattern {pattern[:80]!r} in find or findAll: a repeated group "
                       f"holding a repetition or an alternation can take Python's regular expressions exponential "
                       f"time (the API server's RE2 takes linear time); validate this object on a cluster")
    try:
        return re.compile(re.sub(r"(?<!\\)\$", r"\\Z", pattern).replace("\\z", "\\Z"))
    except re.error as err:
        raise CelError(f"Illegal regex: error parsing regexp: {err}") from None


def find(text, pattern):
    expect("find", text, "string")
    expect("find", pattern, "string")
    found = compiled(pattern).search(text)
    return found.group() if found else ""


def find_all(text, pattern, limit=-1):
    expect("findAll", text, "string")
    expect("findAll", pattern, "string")
    expect("findAll", limit, "int")
    if limit == 0:
        return []
    results = []
    for found in compiled(pattern).finditer(text):
        results.append(found.group())
        if len(results) == limit:
            break
    return results


FUNCTIONS = {"find": find, "findAll": find_all}
