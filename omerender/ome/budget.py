"""Work budgets of one render that the input's bytes alone do not bound (docs/reference/limits.md).

Every InferenceService copies the runtime spec it renders from, so one large runtime named by many of them
multiplies within the byte limits. The copies are charged here *before* they are made:
:func:`charge_copy` raises :class:`BudgetError` instead of building what would pass the limit.
"""
from __future__ import annotations

import contextlib
import contextvars

from omerender.errors import OmeError
from omerender.yamlio import limits
from omerender.yamlio.data import count_values
from .load import Inputs


class BudgetError(OmeError):
    """A limit on the work of the whole render: the render stops at the InferenceService that passed it."""


COPIED = "runtime specs, policies and cluster settings"  # what InferenceServices copy from objects they share


class _Copies:
    def __init__(self, inputs: Inputs):
        self.inputs = inputs
        self.copied = 0
        self.limit = limits.COPIED_VALUES_FREE
        self.uncounted = None  # the input objects not counted yet, once the free allowance is spent
        self.in_input = 0

    def charge(self, values: int, source: str, fix: str, field: str | None) -> None:
        self.copied += values
        if self.copied > self.limit:
            self._raise_limit()
        if self.copied > self.limit:
            raise BudgetError(f"the InferenceServices rendered so far copy more than {self.limit:,} values of "
                              f"{COPIED} in all (this one {values:,}, from {source}); the limit is "
                              f"{limits.COPIES_PER_INPUT_VALUE} times the values of the input, at least "
                              f"{limits.COPIED_VALUES_FREE:,} and at most {limits.MAX_COPIED_VALUES:,}; render "
                              f"fewer InferenceServices at a time, or {fix}", field=field)

    def _raise_limit(self) -> None:
        """Count the input's values only as far as the copies so far need: the limit grows with each object
        counted, and is the whole input's once every object is (counting all of a large input cost a render 1%)."""
        if self.uncounted is None:
            self.uncounted = iter(self.inputs.objects)
        for obj in self.uncounted:
            self.in_input += count_values(obj.data)
            self.limit = min(limits.MAX_COPIED_VALUES,
                             max(limits.COPIED_VALUES_FREE, limits.COPIES_PER_INPUT_VALUE * self.in_input))
            if self.copied <= self.limit:
                return


_COPIES: contextvars.ContextVar[_Copies | None] = contextvars.ContextVar("omerender_copied_values", default=None)


@contextlib.contextmanager
def copy_budget(inputs: Inputs):
    """Charge every runtime spec copied inside against the copied-values limit of ``inputs``."""
    token = _COPIES.set(_Copies(inputs))
    try:
        yield
    finally:
        _COPIES.reset(token)


def charge_copy(values: int, source: str, fix: str = "make the runtime smaller",
                field: str | None = "spec.runtime") -> None:
    """Count ``values`` about to be copied from ``source`` (a runtime's ref, or the setting shared); raise
    BudgetError past the limit, with ``fix`` (what to make smaller) and the InferenceService's ``field``."""
    copies = _COPIES.get()
    if copies is not None:
        copies.charge(values, source, fix, field)


def text_values(text: str) -> int:
    """What one copied string is charged: a value, and one more for every 100 characters (a copied value is
    budgeted at about 100 bytes of output, so long strings copied many times count by their length)."""
    return 1 + len(text) // 100
