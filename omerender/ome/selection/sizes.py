"""Size ranges (selection.md §3.5): check 5, distance and gap. A parameter count (§1.4) is read by
:func:`.fields.parse_size`."""
from __future__ import annotations

import functools
from decimal import Decimal

from .facts import ModelFacts, RuntimeFacts
from .fields import _size_or_none


def _read_size(text: str, field_name: str, owner, warnings: list) -> Decimal:
    """``owner`` (a model's facts or a runtime object) has ``ref`` and ``file``, read only for the warning."""
    value = _parsed_size(text)
    if value is None:
        warning = (f'{field_name} "{text}" is not a valid parameter count; OME reads it as 0', owner.ref, owner.file)
        if warning not in warnings:
            warnings.append(warning)
        return Decimal(0)
    return value


@functools.lru_cache(maxsize=4096)
def _parsed_size(text: str) -> Decimal | None:
    """A selection judges many runtimes against many models: each distinct size text is parsed once."""
    return _size_or_none(text)


def _bounds(rt: "RuntimeFacts", model: ModelFacts, warnings: list):
    """(size, min, max) when the size check applies (model sized, runtime with a range), else None."""
    if model.size_text is None or rt.size_range is None:
        return None
    size = _read_size(model.size_text, "spec.modelParameterSize", model, warnings)
    low, high = (None if text is None else _read_size(text, f"spec.modelSizeRange.{name}", rt.obj, warnings)
                 for name, text in (("min", rt.size_range[0]), ("max", rt.size_range[1])))
    return size, low, high


def _size_reason(rt: "RuntimeFacts", model: ModelFacts, warnings: list) -> str | None:
    bounds = _bounds(rt, model, warnings)
    if bounds is None:
        return None
    size, low, high = bounds
    if (low is None or size >= low) and (high is None or size <= high):
        return None
    low_text = "(-inf" if rt.size_range[0] is None else f"[{rt.size_range[0]}"
    high_text = "inf)" if rt.size_range[1] is None else f"{rt.size_range[1]}]"
    return f"model size {model.size_text} is outside supported range {low_text}, {high_text}"


def _size_gap(rt: "RuntimeFacts", model: ModelFacts, warnings: list) -> Decimal:
    """How far the model size lies outside the runtime's range (0 inside it)."""
    size, low, high = _bounds(rt, model, warnings)
    if low is not None and size < low:
        return low - size
    return size - high if high is not None and size > high else Decimal(0)


def _distance(rt: "RuntimeFacts", model: ModelFacts, warnings: list) -> Decimal:
    bounds = _bounds(rt, model, warnings)
    if bounds is None:
        return Decimal(0)
    size, low, high = bounds
    return sum((abs(b - size) for b in (low, high) if b is not None), Decimal(0))


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")
