"""The nearest existing names for a name that names nothing ("did you mean ...?").

Suggestions are a courtesy: a budget of comparisons per input keeps a hostile repository (thousands
of misspelt references against thousands of runtimes) from turning error messages into the cost of
a render. Once the budget is spent, messages still say what is missing, without the guess.
"""
from __future__ import annotations

import difflib
import re
import weakref
from collections import Counter
from typing import Callable, Iterable

COMPARISONS_PER_INPUT = 50_000  # each can cost a full difflib ratio: ~2 s at worst
MAX_NAME = 253          # the longest Kubernetes object name; longer text is no mistyped name
LIMIT = 3
CUTOFF = 0.6            # a candidate is named when its characters (difflib's ratio) or its words are this alike
TYPO_PAIRS = 16         # pairs of unmatched words compared for a typo, at most, per candidate
WORDS = 0.75            # the weight of the shared words in the ranking; the characters' ratio has the rest
_TOKEN = re.compile(r"[a-z]+|[0-9]+|[^a-z0-9\-._/]+")

_BUDGETS: dict[int, tuple[weakref.ref, list[int]]] = {}


def nearest(name, candidates: Callable[[], Iterable[str]], cost: int, owner: object,
            limit: int = LIMIT) -> list[str]:
    """Up to ``limit`` names from ``candidates()`` closest to ``name``, closest first; [] when none is close.

    A candidate is close when difflib's character ratio or the share of words both names have (:func:`tokens`)
    reaches :data:`CUTOFF`; the close ones are ranked by the words mostly (:data:`WORDS`), so the whole name
    counts: ``llama-3-2-90b-fp8-dynamic`` finds ``llama-3-2-90b-vision-instruct-fp8`` before
    ``llama-3-1-70b-instruct-fp8-dynamic``, whose characters share a longer run; a typo in one word still
    scores on both.

    ``cost`` is how many objects producing the candidates walks; ``owner`` (the
    :class:`~omerender.ome.load.Inputs` the names come from) carries the budget it is charged to.
    """
    if not isinstance(name, str) or not name or len(name) > MAX_NAME:
        return []
    budget = _budget(owner)
    if budget[0] < cost:
        return []
    budget[0] -= cost
    pool = sorted({c for c in candidates() if isinstance(c, str) and c != name and len(c) <= MAX_NAME})
    words = tokens(name)
    scored = []
    for candidate in pool:
        shared = _shared(words, tokens(candidate))
        matcher = difflib.SequenceMatcher(None, name, candidate)
        if shared < CUTOFF and (matcher.real_quick_ratio() < CUTOFF or matcher.quick_ratio() < CUTOFF):
            continue   # the bounds on the characters' ratio, cheap, as difflib.get_close_matches checks them
        ratio = matcher.ratio()
        if max(ratio, shared) >= CUTOFF:
            scored.append((-(WORDS * shared + (1 - WORDS) * ratio), candidate))
    return [candidate for _, candidate in sorted(scored)[:limit]]


def tokens(name: str) -> list[str]:
    """The words of a name: split at ``-``, ``.``, ``_``, ``/`` and where digits meet letters
    (``llama3-2-90b`` is llama, 3, 2, 90, b), lower case."""
    return _TOKEN.findall(name.lower())


def _shared(words: list[str], other: list[str]) -> float:
    """How many words two names share over their average count (Dice's coefficient), so the whole name counts,
    not the longest common run of characters. A word matches an equal word, else (4 letters or more) one that is
    a typo away (``domian``, ``domain``); each word matches once."""
    if not words or not other:
        return 0.0
    left = Counter(words)
    rest = []
    common = 0
    for word in other:
        if left[word] > 0:
            left[word] -= 1
            common += 1
        else:
            rest.append(word)
    unmatched = sum(1 for n in left.values() if n > 0)
    if len(rest) * unmatched > TYPO_PAIRS:   # a typo is a word or two: past that, exact words only
        rest = []
    for word in rest:
        near = next((w for w, n in left.items() if n > 0 and _typo(word, w)), None)
        if near is not None:
            left[near] -= 1
            common += 1
    return 2 * common / (len(words) + len(other))


def _typo(word: str, other: str) -> bool:
    return min(len(word), len(other)) >= 4 and difflib.SequenceMatcher(None, word, other).ratio() >= 0.8


def did_you_mean(name, candidates: Callable[[], Iterable[str]], cost: int, owner: object) -> str:
    """``; did you mean "a" or "b"?`` to append to a message, or "" when nothing is close."""
    found = nearest(name, candidates, cost, owner)
    if not found:
        return ""
    quoted = [f'"{c}"' for c in found]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f"; did you mean {listed}?"


def _budget(owner: object) -> list[int]:
    return per_owner(_BUDGETS, owner, COMPARISONS_PER_INPUT)


def per_owner(table: dict, owner: object, initial: int) -> list[int]:
    """A budget of ``initial`` kept in ``table`` for as long as ``owner`` (one input) lives: ``[what is left]``."""
    key = id(owner)
    cached = table.get(key)
    if cached is not None and cached[0]() is owner:
        return cached[1]
    budget = [initial]
    table[key] = (weakref.ref(owner, lambda _ref: table.pop(key, None)), budget)
    return budget


def remaining(owner: object) -> int:
    """What is left of ``owner``'s budget of comparisons (work shared across InferenceServices compares it)."""
    return _budget(owner)[0]
