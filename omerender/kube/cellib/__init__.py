"""Kubernetes' CEL libraries (k8s.io/apiserver/pkg/cel/library and the cel-go extensions the API server loads:
strings v2, sets, lists), as Python functions the CEL evaluator of ``common-expression-language`` calls.

CEL makes ``x.f(a)`` a call of ``f(x, a)``, so one Python function serves a name and dispatches on its arguments'
types, as cel-go's overloads do (``indexOf`` of a string and of a list). Kubernetes' own types (Quantity, URL, IP,
CIDR, Semver, Format) are CEL maps holding one key, ``@k8s``, and a canonical value, so that ``==`` compares them
as the API server's ``Equal`` does (``quantity('1') == quantity('1000m')``). Errors are cel-go's texts.
"""
from __future__ import annotations

import contextlib
import contextvars
import importlib.machinery
import importlib.util
import logging
import os
import sys
from functools import lru_cache

KEY = "@k8s"


@lru_cache(maxsize=None)
def engine():
    """The evaluator: ``common-expression-language``'s compiled module, loaded without its package, whose
    ``__init__`` imports the REPL's libraries (prompt_toolkit, rich, typer: a fifth of a second) for nothing here.
    Its logger is silenced: it logs every error a Python function raises, which the rule's message reports."""
    logger = logging.getLogger("cel")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    if "cel.cel" in sys.modules:
        return sys.modules["cel.cel"]
    spec = importlib.util.find_spec("cel")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES if spec and spec.submodule_search_locations else ():
        path = os.path.join(spec.submodule_search_locations[0], "cel" + suffix)
        if os.path.isfile(path):
            found = importlib.util.spec_from_file_location("cel.cel", path)
            module = importlib.util.module_from_spec(found)
            found.loader.exec_module(module)
            sys.modules["cel.cel"] = module
            return module
    import cel  # another layout of the package: its public names are the same
    return cel


class CelError(ValueError):
    """An evaluation error with cel-go's text (``index out of range: 4``)."""


class NoOverload(CelError):
    def __init__(self, name: str):
        super().__init__(f"no such overload: {name}")


def opaque(kind: str, value) -> dict:
    return {KEY: kind, "v": value}


def kind_of(value) -> str:
    """CEL's name for the value's type, Kubernetes' opaque ones included."""
    if isinstance(value, dict) and KEY in value and len(value) == 2:
        return value[KEY]
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    return {str: "string", bytes: "bytes", list: "list", dict: "map", type(None): "null_type"}.get(
        type(value), type(value).__name__)


def expect(name: str, value, *kinds: str):
    if kind_of(value) not in kinds:
        raise NoOverload(name)
    return value


def equal(a, b) -> bool:
    """CEL's ``==`` (heterogeneous: numbers compare by value, never with bools)."""
    ka, kb = kind_of(a), kind_of(b)
    if ka in ("int", "double") and kb in ("int", "double"):
        return a == b
    if ka != kb:
        return False
    if ka == "list":
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if ka == "map":
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return a == b


def compare(name: str, a, b) -> int:
    """cel-go's ``Compare`` of two comparable values (numbers across int and double)."""
    ka, kb = kind_of(a), kind_of(b)
    numbers = ("int", "double")
    if not (ka == kb or (ka in numbers and kb in numbers)) or ka in ("list", "map", "null_type"):
        raise NoOverload(name)
    return (a > b) - (a < b)


CODE_POINT_SIZE = "codePointSize"  # what celrules calls for ``size`` where a string may not be ASCII
GO_DURATION = "goDuration"  # and for ``duration``, always


@lru_cache(maxsize=None)
def functions() -> dict:
    """Every library function by the name CEL calls it (``indexOf``, ``sets.contains``), imported on first use
    (their modules cost ~20 ms to import, which a run with no CEL rule never spends)."""
    from . import (durations, formats, formatting, lists, net, quantity, regex, semver, strings,  # they import
                   urls)  # this module
    table: dict = {CODE_POINT_SIZE: strings.code_point_size}
    for module in (strings, formatting, lists, regex, urls, quantity, net, formats, semver, durations):
        for name, function in module.FUNCTIONS.items():
            if name in table:
                table[name] = _either(table[name], function)
            else:
                table[name] = function
    return {name: _charged(function) for name, function in table.items()}


class Meter:
    """What one expression's run may still spend on library calls, as cel-go's cost tracker would count it: each
    call its arguments' and result's sizes, and the longest list or string a call made widens the values the
    expression's comprehensions may visit (``base``, the estimate's count, to the power of their nesting). Past
    the limit the call fails as cel-go fails it."""

    def __init__(self, limit: int, base: int, depth: int):
        self.limit, self.base, self.depth = limit, base, depth
        self.spent = self.widest = 0

    def charge(self, args: tuple, result) -> None:
        self.spent += 1 + sum(len(arg) for arg in args if isinstance(arg, (str, list, dict)))
        if isinstance(result, (str, list, dict)):
            self.spent += len(result)
            self.widest = max(self.widest, len(result))
        values = self.base + self.widest
        if self.spent + (values ** self.depth if self.depth else values) > self.limit:
            raise CostExceeded()


class CostExceeded(CelError):
    def __init__(self):
        super().__init__(COST_EXCEEDED)


COST_EXCEEDED = "operation cancelled: actual cost limit exceeded"
_meter: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("cel_meter", default=None)


@contextlib.contextmanager
def metered(limit: int, base: int, depth: int):
    """Library calls inside charge one :class:`Meter`."""
    token = _meter.set(Meter(limit, base, depth))
    try:
        yield
    finally:
        _meter.reset(token)


def _charged(function):
    def call(*args):
        result = function(*args)
        meter = _meter.get()
        if meter is not None:
            meter.charge(args, result)
        return result
    return call


def _either(first, second):
    """One name of two libraries (``indexOf`` of strings and of lists): the first whose types fit."""
    def call(*args):
        try:
            return first(*args)
        except NoOverload:
            return second(*args)
    return call



# What the evaluator (cel-rust) defines itself, as its programs name them: the core functions, conversions, the
# timestamp and duration accessors, optional values (``optional.of`` is ``of``).
BUILTINS = frozenset({
    "size", "contains", "startsWith", "endsWith", "matches", "int", "uint", "double", "string", "bytes", "dyn",
    "type", "duration", "timestamp", "getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate",
    "getDayOfWeek", "getHours", "getMinutes", "getSeconds", "getMilliseconds", "of", "none", "ofNonZeroValue",
    "hasValue", "value", "or", "orValue",
})


def unimplemented(names) -> list[str]:
    """The functions an expression calls that neither the evaluator nor this package defines."""
    return sorted(name for name in names
                  if name[:1] not in "_@!" and name not in BUILTINS and name not in functions())
