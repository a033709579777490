"""What resolution hands back: the :class:`Resolution`, and the warnings it replays into a report."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from omerender.errors import Report
from ..load import Obj


@dataclass
class Resolution:
    model: Obj | None          # the BaseModel/ClusterBaseModel, None for runtime-only
    runtime: Obj               # the runtime object (named or chosen)
    auto_selected: bool
    entry: dict | None         # §3.11: the entry whose acceleratorConfig applies


def _replay(report: Report, warnings: Iterable) -> None:
    for text, ref, file in warnings:
        report.warn(text, ref=ref, file=file, code="invalid-parameter-count")
