"""InferenceServices whose changes are the same, so that a fleet-wide edit, or a batch of services added or
removed alike, reads as one change.

Two InferenceServices are alike when everything the report says of them is, but for their own names: the
status and the rollout, the runtime on each side and why it changed, each component's accelerator class, the
other edited inputs it renders from (its model, its classes, the cluster settings), and
object by object, in order, the kind, the change, the name (where it is the InferenceService's name plus a
suffix, the suffix) and each changed field with its value on each side. A value that holds the
InferenceService's name (a label, say) differs between them, so they stay apart: only changes that are the same
are grouped. Of an added or removed object the report names only the kind and the name, so that is all that
must match.
"""
from __future__ import annotations

from .compare import IsvcDiff, ObjectChange


def group_alike(isvcs: list[IsvcDiff]) -> list[list[IsvcDiff]]:
    """The added, removed and changed InferenceServices, in order, each with those after it that are alike;
    each group in the order of its first."""
    groups: dict[tuple, list[IsvcDiff]] = {}
    for isvc in isvcs:
        if isvc.status != "unchanged":
            groups.setdefault(_alike(isvc), []).append(isvc)
    return list(groups.values())


def _alike(isvc: IsvcDiff) -> tuple:
    runtime = (isvc.runtime["base"], isvc.runtime["head"], isvc.runtime["reason"])
    classes = tuple((c["component"], c["base"], c["head"]) for c in isvc.accelerators)
    objects = tuple(_object_alike(o, isvc.name) for o in isvc.objects)
    causes = tuple(repr(c) for c in isvc.causes)
    return isvc.status, isvc.rollout, runtime, classes, causes, objects


def _object_alike(change: ObjectChange, owner: str) -> tuple:
    name = ("suffix", change.name[len(owner):]) if change.name.startswith(owner) else ("name", change.name)
    # repr: the values are parsed YAML (maps, lists, scalars), and equal values print alike
    values = tuple((path, repr(before), repr(after)) for path, before, after in change.changes)
    return change.api_version, change.kind, name, change.change, values
