"""Changed InferenceServices whose changes are the same, so that a fleet-wide edit reads as one change.

Two changed InferenceServices are alike when everything the report says of them is, but for their own names:
the rollout, the runtime on each side and why it changed, each component's accelerator class, and object by
object, in order, the kind, the change, the name (where it is the InferenceService's name plus a suffix, the
suffix) and each changed field with its value on each side. A value that holds the InferenceService's name
(a label, say) differs between them, so they stay apart: only changes that are the same are grouped.
"""
from __future__ import annotations

from .compare import IsvcDiff, ObjectChange


def group_changed(isvcs: list[IsvcDiff]) -> list[list[IsvcDiff]]:
    """The changed, added and removed InferenceServices, in order, each with those after it that are alike
    (changed ones only); each group in the order of its first."""
    groups: dict[object, list[IsvcDiff]] = {}
    for isvc in isvcs:
        if isvc.status == "unchanged":
            continue
        key = _alike(isvc) if isvc.status == "changed" else id(isvc)
        groups.setdefault(key, []).append(isvc)
    return list(groups.values())


def _alike(isvc: IsvcDiff) -> tuple:
    runtime = (isvc.runtime["base"], isvc.runtime["head"], isvc.runtime["reason"])
    classes = tuple((c["component"], c["base"], c["head"]) for c in isvc.accelerators)
    return (isvc.rollout, runtime, classes, tuple(_object_alike(o, isvc.name) for o in isvc.objects))


def _object_alike(change: ObjectChange, owner: str) -> tuple:
    name = ("suffix", change.name[len(owner):]) if change.name.startswith(owner) else ("name", change.name)
    # repr: the values are parsed YAML (maps, lists, scalars), and equal values print alike
    values = tuple((path, repr(before), repr(after)) for path, before, after in change.changes) \
        if change.change == "changed" else (id(change),)
    return change.api_version, change.kind, name, change.change, values
