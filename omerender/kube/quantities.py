"""Kubernetes resource quantities (``resource.Quantity``): ``80Gi``, ``500m``, ``1e3``."""
from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction

from omerender.errors import OmeError
from omerender.yamlio.data import Memo

# ASCII digits only, as resource.ParseQuantity reads them ('0' <= c <= '9'): Python's \d would take any Unicode digit
# (a full-width "１６Gi"), which Decimal() and int() then read as 16, and the API server refuses.
_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}  # powers of 2
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}  # powers of 10

# Kubernetes documents 2^63-1 as the largest magnitude a quantity may represent; a larger one is capped or, with
# an exponent such as 1e999999999, makes the API server expand a billion digits. omerender refuses it, and so
# never computes a power it cannot afford. A non-zero magnitude below 1n is rounded up to 1n, as Kubernetes does.
MAX_QUANTITY = 2 ** 63 - 1
NANO = Fraction(1, 10 ** 9)


def parse_quantity(value, path: str, owner=None) -> Fraction:
    """A Kubernetes quantity (string or number) as an exact fraction; ``80Gi`` -> 85899345920. An invalid one is
    an error located at ``owner`` (an input object, as its ``error`` places it) when one is given."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _invalid(value, path, owner)
    if isinstance(value, int) and abs(value) > MAX_QUANTITY:  # before str(): a huge int has too many digits
        raise _too_large(value, path, owner)
    match = _QUANTITY.fullmatch(str(value).strip())
    if not match:
        raise _invalid(value, path, owner)
    number, suffix = Decimal(match.group(1)), match.group(2) or ""
    if not number:
        return Fraction(0)
    if suffix in _BINARY:
        return _bounded(Fraction(number) * 2 ** _BINARY[suffix], value, path, owner)
    power = _DECIMAL.get(suffix, 0) if not suffix or suffix in _DECIMAL else _exponent(suffix, value, path, owner)
    order = number.adjusted() + power  # |value| lies in [10^order, 10^(order+1))
    if order > 18:  # 10^19 > 2^63-1
        raise _too_large(value, path, owner)
    if order < -9:  # below 1n
        return NANO if number > 0 else -NANO
    scaled = Fraction(number) * (Fraction(10) ** power)
    return _bounded(scaled, value, path, owner)


_KNOWN = Memo(100_000)   # (type, value) -> its amount: a fleet's pods ask for the same few quantities thousands of times


def known_quantity(value, path: str) -> Fraction:
    """:func:`parse_quantity` (its error without an owner), each valid value's amount remembered; an invalid one
    raises each time."""
    try:
        key = (type(value), value)
        found = _KNOWN.get(key)
    except TypeError:   # a list or a map: not a quantity, and no key
        return parse_quantity(value, path)
    if found is not None:
        return found
    return _KNOWN.remember(key, parse_quantity(value, path))


def _exponent(suffix: str, value, path: str, owner) -> int:
    """The power of ten of ``e<N>``, read without converting an arbitrarily long N."""
    exponent = suffix[1:]
    if len(exponent.lstrip("+-").lstrip("0")) <= 10:
        return int(exponent)
    if exponent.startswith("-"):
        return -(10 ** 10)  # far below 1n
    raise _too_large(value, path, owner)


def _bounded(amount: Fraction, value, path: str, owner) -> Fraction:
    if abs(amount) > MAX_QUANTITY:
        raise _too_large(value, path, owner)
    return amount


def _invalid(value, path: str, owner, why: str = "") -> OmeError:
    text = f'{path}: Invalid value: "{_shown(value)}": must be a Kubernetes quantity{why}'
    return owner.error(text, path) if owner is not None else OmeError(text, field=path)


def _shown(value) -> str:
    """The value as the message quotes it: at most 64 characters (a huge int is never turned into digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<an integer of {value.bit_length()} bits>"
    text = str(value)
    return text if len(text) <= 64 else f"{text[:60]}... ({len(text):,} characters)"


def _too_large(value, path: str, owner) -> OmeError:
    return _invalid(value, path, owner, f" of at most {MAX_QUANTITY} (2^63-1) in magnitude")
