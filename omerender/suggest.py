"""The nearest existing names for a name that names nothing ("did you mean ...?").

Suggestions are a courtesy: a budget of comparisons per input keeps a hostile repository (thousands
of misspelt references against thousands of runtimes) from turning error messages into the cost of
a render. Once the budget is spent, messages still say what is missing, without the guess.
"""
from __future__ import annotations

import difflib
import weakref
from typing import Callable, Iterable

COMPARISONS_PER_INPUT = 50_000  # each can cost a full difflib ratio: ~2 s at worst
MAX_NAME = 253          # the longest Kubernetes object name; longer text is no mistyped name
LIMIT = 3

_BUDGETS: dict[int, tuple[weakref.ref, list[int]]] = {}


def nearest(name, candidates: Callable[[], Iterable[str]], cost: int, owner: object,
            limit: int = LIMIT) -> list[str]:
    """Up to ``limit`` names from ``candidates()`` closest to ``name``, closest first; [] when none is close.

    ``cost`` is how many objects producing the candidates walks; ``owner`` (the
    :class:`~omerender.ome.load.Inputs` the names come from) carries the budget it is charged to.
    """
    if not isinstance(name, str) or not name or len(name) > MAX_NAME:
        return []
    budget = _budget(owner)
    if budget[0] < cost:
        return []
    budget[0] -= cost
    pool = sorted({c for c in candidates() if isinstance(c, str) and c != name})
    return difflib.get_close_matches(name, pool, n=limit, cutoff=0.6)


def did_you_mean(name, candidates: Callable[[], Iterable[str]], cost: int, owner: object) -> str:
    """``; did you mean "a" or "b"?`` to append to a message, or "" when nothing is close."""
    found = nearest(name, candidates, cost, owner)
    if not found:
        return ""
    quoted = [f'"{c}"' for c in found]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f"; did you mean {listed}?"


def _budget(owner: object) -> list[int]:
    key = id(owner)
    cached = _BUDGETS.get(key)
    if cached is not None and cached[0]() is owner:
        return cached[1]
    budget = [COMPARISONS_PER_INPUT]
    _BUDGETS[key] = (weakref.ref(owner, lambda _ref: _BUDGETS.pop(key, None)), budget)
    return budget
