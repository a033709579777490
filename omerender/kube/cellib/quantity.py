"""Kubernetes' quantity library (Kubernetes 1.28): ``quantity``, ``isQuantity`` and a Quantity's ``isInteger``,
``asInteger``, ``asApproximateFloat``, ``sign``, ``add``, ``sub``, ``compareTo``, ``isGreaterThan``,
``isLessThan``. A quantity is read as ``resource.ParseQuantity`` reads it, kept as an exact fraction."""
from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction

from . import CelError, NoOverload, expect, kind_of, opaque

_FORMAT = ("quantities must match the regular expression "
           "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
_SHAPE = re.compile(r"([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")
_SUFFIX = re.compile(r"Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+|")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
MAX_EXPONENT = 1_000  # a larger power of ten is refused before it is computed (the API server keeps it)
INT64 = (-2 ** 63, 2 ** 63 - 1)
NANO = Fraction(1, 10 ** 9)


def parse(text: str) -> Fraction:
    """The quantity's exact value, or a CelError with resource.ParseQuantity's text."""
    shape = _SHAPE.fullmatch(text)
    if not text or not shape:
        raise CelError(_FORMAT)
    number, suffix = shape.groups()
    if not _NUMBER.fullmatch(number):
        raise CelError("unable to parse numeric part of quantity")
    if not _SUFFIX.fullmatch(suffix):
        raise CelError("unable to parse quantity's suffix")
    value = Fraction(Decimal(number))
    if suffix in _BINARY:
        value *= 2 ** _BINARY[suffix]
    else:
        power = _DECIMAL[suffix] if suffix in _DECIMAL else int(suffix[1:])
        if abs(power) > MAX_EXPONENT:
            raise CelError(f"omerender does not evaluate a quantity of 10^{power}")
        value *= Fraction(10) ** power
    nanos = value / NANO
    if nanos.denominator != 1:  # below 1n: rounded up, away from zero
        rounded = -(-abs(nanos.numerator) // nanos.denominator)
        value = Fraction(rounded if value > 0 else -rounded) * NANO
    return value


def _wrap(value: Fraction) -> dict:
    return opaque("Quantity", f"{value.numerator}/{value.denominator}")


def value_of(name: str, quantity) -> Fraction:
    return Fraction(expect(name, quantity, "Quantity")["v"])


def quantity(text):
    return _wrap(parse(expect("quantity", text, "string")))


def is_quantity(text):
    try:
        parse(expect("isQuantity", text, "string"))
    except NoOverload:
        raise
    except CelError:
        return False
    return True


def is_integer(q):
    value = value_of("isInteger", q)
    return value.denominator == 1 and INT64[0] <= value <= INT64[1]


def as_integer(q):
    if not is_integer(q):
        raise CelError("cannot convert value to integer")
    return int(value_of("asInteger", q))


def as_approximate_float(q):
    value = value_of("asApproximateFloat", q)
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def sign(q):
    value = value_of("sign", q)
    return (value > 0) - (value < 0)


def _operand(name: str, other) -> Fraction:
    if kind_of(other) == "int":
        return Fraction(other)
    return value_of(name, other)


def add(q, other):
    return _wrap(value_of("add", q) + _operand("add", other))


def sub(q, other):
    return _wrap(value_of("sub", q) - _operand("sub", other))


def compare_to(q, other):
    a, b = value_of("compareTo", q), value_of("compareTo", other)
    return (a > b) - (a < b)


def is_greater_than(q, other):
    return compare_to(q, other) == 1


def is_less_than(q, other):
    return compare_to(q, other) == -1


FUNCTIONS = {
    "quantity": quantity, "isQuantity": is_quantity, "isInteger": is_integer, "asInteger": as_integer,
    "asApproximateFloat": as_approximate_float, "sign": sign, "add": add, "sub": sub, "compareTo": compare_to,
    "isGreaterThan": is_greater_than, "isLessThan": is_less_than,
}
