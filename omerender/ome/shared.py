"""Work shared across InferenceServices (docs/explanation/performance.md, render.md §1).

What depends only on objects many InferenceServices name alike (a runtime, a model, an accelerator class, the
cluster's settings) is computed once per key and reused. The messages that computing it produces are recorded
without a place and replayed into each InferenceService's own report, so each gets them at its own
file:line, exactly as if it had computed the value itself. Errors are never shared: a computation that fails is
not kept, and each InferenceService that reaches it computes it again and gets its own error (located at it by
the caller, as every error of an InferenceService is).
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Callable, TypeVar

from omerender.errors import Message, OmeError, Report
from omerender.suggest import remaining
from omerender.yamlio.data import Memo, Recent

T = TypeVar("T")


@dataclass
class Recorder(Report):
    """A report that keeps what is said to it, each call as made, to say it again to other reports."""

    calls: list = field(default_factory=list)

    def _add(self, severity, text, ref, field, file, code) -> None:
        self.calls.append((severity, text, ref, field, file, code))

    def add(self, message: Message) -> None:
        self.calls.append(message)

    def replay(self, report: Report) -> None:
        """Say every recorded message to ``report``: one made without a place takes ``report``'s."""
        for call in self.calls:
            if isinstance(call, Message):
                report.add(call)
                continue
            severity, text, ref, where, file, code = call
            say = report.warn if severity == "warning" else report.info
            say(text, ref=ref, field=where, file=file, code=code)


def shared(table: dict, key, report: Report, compute: Callable[[Report], T], owner: object | None) -> T:
    """``compute(report)``, computed once per ``key`` in ``table`` (None: not shared; a :class:`Memo` or
    :class:`Recent` bounds what it keeps) and its messages replayed into each caller's ``report``. ``compute`` must
    depend on nothing but what ``key`` names, and return a value its callers only read. Work that spends
    ``owner``'s suggestion budget (:mod:`omerender.suggest`) is not shared, so that the budget runs out where it
    did before (None: work that suggests nothing)."""
    if key is None:
        return compute(report)
    found = table.get(key)
    if found is not None:
        value, recorder = found
        recorder.replay(report)
        return value
    recorder = Recorder()
    budget = None if owner is None else remaining(owner)
    try:
        value = compute(recorder)
    except OmeError:
        recorder.replay(report)  # what was said before the error, then the error itself: never shared
        raise
    if owner is None or remaining(owner) == budget:
        if isinstance(table, (Memo, Recent)):
            table.remember(key, (value, recorder))
        else:
            table[key] = (value, recorder)
    recorder.replay(report)
    return value


_TABLE: contextvars.ContextVar[dict | None] = contextvars.ContextVar("omerender_shared_work", default=None)


@contextlib.contextmanager
def shared_work():
    """One table of shared work for the render inside (render opens it): nothing outlives the render."""
    token = _TABLE.set({})
    try:
        yield
    finally:
        _TABLE.reset(token)


def render_table() -> dict:
    """The open render's table; outside a render, an empty one each time (nothing is shared)."""
    table = _TABLE.get()
    return {} if table is None else table


def per_object(name: str, obj: object, compute: Callable[[], T]) -> T:
    """``compute()``, once per ``obj`` (by identity) in the open render, in its table's entry ``name``: for what
    depends on that one object alone. The entry holds ``obj``, so that its id is not another's while it lives."""
    known = render_table().setdefault(name, {})
    found = known.get(id(obj))
    if found is None or found[0] is not obj:
        found = known[id(obj)] = (obj, compute())
    return found[1]


_ACROSS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("omerender_work_across_renders", default=None)


@contextlib.contextmanager
def across_renders():
    """The renders inside share their :func:`keyed_table` entries (``diff``'s two sides: a pod built for one side
    serves the other wherever everything its build reads is the same)."""
    token = _ACROSS.set({})
    try:
        yield
    finally:
        _ACROSS.reset(token)


def keyed_table(name: str, make: Callable[[], dict]) -> dict:
    """The table ``name`` of work keyed by everything it reads (its content, or an object its entries hold), never
    by what one render alone holds: the open render's, or inside :func:`across_renders` one for all its renders.
    ``make`` makes it on first use."""
    tables = _ACROSS.get()
    if tables is None:
        tables = render_table()
    found = tables.get(name)
    if found is None:
        found = tables[name] = make()
    return found
