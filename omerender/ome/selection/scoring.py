"""Auto-select scores (selection.md §3.8) and the entry whose acceleratorConfig applies (§3.11)."""
from __future__ import annotations

from .entries import _version_pieces
from .facts import Entry, ModelFacts, RuntimeFacts


def _entry_score(entry: Entry, model: ModelFacts, priority: int, honour_auto: bool = True) -> int | None:
    """None when the entry does not score: autoSelect false, or format/framework (versions included) differ."""
    if (honour_auto and entry.auto is False) or not model.has_fw or not entry.has_fw:
        return None
    if entry.fmt_name != model.fmt_name or entry.fw_name != model.fw_name:
        return None
    if _version_pieces("format", model.fmt_version, entry.fmt_version, entry.fmt_op):
        return None
    if _version_pieces("framework", model.fw_version, entry.fw_version, entry.fw_op):
        return None
    fmt_weight = 10 if entry.fmt_weight == 0 else entry.fmt_weight
    fw_weight = 5 if entry.fw_weight == 0 else entry.fw_weight
    return (fmt_weight + fw_weight) * priority


def _runtime_score(rt: "RuntimeFacts", model: ModelFacts) -> int:
    scores = [s for e in rt.entries if (s := _entry_score(e, model, e.priority)) is not None]
    return max([0] + scores)


def _accelerator_entry(rt: "RuntimeFacts", model: ModelFacts, auto_only: bool) -> dict | None:
    """§3.11: the first entry with the highest score (priority 1) above 0; a named runtime offers every entry."""
    best, best_score = None, 0
    for entry in rt.entries:
        if auto_only and entry.auto is not True:
            continue
        score = _entry_score(entry, model, 1, honour_auto=False)
        if score is not None and score > best_score:
            best, best_score = entry, score
    return best.raw if best is not None else None
