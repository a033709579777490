"""Work budgets of one render that the input's bytes alone do not bound (docs/security.md, "Limits").

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


class _Copies:
    def __init__(self, inputs: Inputs):
        self.inputs = inputs
        self.copied = 0
        self.limit = limits.COPIED_VALUES_FREE
        self.measured = False  # the input is counted once, and only when the free allowance is spent

    def charge(self, values: int, source: str) -> None:
        self.copied += values
        if self.copied > self.limit and not self.measured:
            self.measured = True
            in_input = sum(count_values(obj.data) for obj in self.inputs.objects)
            self.limit = min(limits.MAX_COPIED_VALUES,
                             max(limits.COPIED_VALUES_FREE, limits.COPIES_PER_INPUT_VALUE * in_input))
        if self.copied > self.limit:
            raise BudgetError(f"the InferenceServices rendered so far copy more than {self.limit:,} values of "
                              f"runtime specs in all (this one {values:,}, from {source}); the limit is "
                              f"{limits.COPIES_PER_INPUT_VALUE} times the values of the input, at least "
                              f"{limits.COPIED_VALUES_FREE:,} and at most {limits.MAX_COPIED_VALUES:,}; render "
                              "fewer InferenceServices at a time, or make the runtime smaller", field="spec.runtime")


_COPIES: contextvars.ContextVar[_Copies | None] = contextvars.ContextVar("omerender_copied_values", default=None)


@contextlib.contextmanager
def copy_budget(inputs: Inputs):
    """Charge every runtime spec copied inside against the copied-values limit of ``inputs``."""
    token = _COPIES.set(_Copies(inputs))
    try:
        yield
    finally:
        _COPIES.reset(token)


def charge_copy(values: int, source: str) -> None:
    """Count ``values`` about to be copied from ``source`` (a runtime's ref); raise BudgetError past the limit."""
    copies = _COPIES.get()
    if copies is not None:
        copies.charge(values, source)
