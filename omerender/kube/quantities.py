"""Kubernetes resource quantities (``resource.Quantity``): ``80Gi``, ``500m``, ``1e3``."""
from __future__ import annotations

import re
from fractions import Fraction

from omerender.errors import OmeError

_QUANTITY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")
_BINARY = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}
_DECIMAL = {"n": Fraction(1, 10 ** 9), "u": Fraction(1, 10 ** 6), "m": Fraction(1, 1000), "k": 10 ** 3,
            "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18}


def parse_quantity(value, path: str, owner=None) -> Fraction:
    """A Kubernetes quantity (string or number) as an exact fraction; ``80Gi`` -> 85899345920. An invalid one is
    an error located at ``owner`` (an input object, as its ``error`` places it) when one is given."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _invalid(value, path, owner)
    match = _QUANTITY.match(str(value).strip())
    if not match:
        raise _invalid(value, path, owner)
    number, suffix = Fraction(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    if suffix:
        return number * Fraction(10) ** int(suffix[1:])
    return number


def _invalid(value, path: str, owner) -> OmeError:
    text = f'{path}: Invalid value: "{value}": must be a Kubernetes quantity'
    return owner.error(text, path) if owner is not None else OmeError(text, field=path)
