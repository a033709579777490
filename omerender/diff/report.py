"""The diff as JSON (for tools) and as text (for terminals); markdown is in :mod:`.markdown`."""
from __future__ import annotations

import difflib
import json

from omerender.errors import Message
from omerender.yamlio.emit import dump
from .compare import Diff, IsvcDiff, ObjectChange
from .groups import group_alike
from .values import inline, json_change, printable
from .why import cause_text

SIGNS = {"added": "+", "removed": "-", "changed": "~"}


# ---------------------------------------------------------------- json

def as_json(result: Diff, context: int | None = None) -> str:
    """``context``: add each changed object's unified diff, as ``-U`` does to the text (``unified``, its lines).
    ``clusterConfig`` is there only when the sides' cluster configurations differ."""
    found = {"summary": summary(result),
             "inferenceServices": [_isvc_json(i, context) for i in result.isvcs],
             "gpus": result.gpus,
             "objects": [_object_json(o, context, namespace=True) for o in result.objects],
             "generated": [_object_json(o, context, namespace=True) for o in result.generated],
             "warnings": {"new": [_warning_json(m) for m in result.new_warnings],
                          "gone": [_warning_json(m) for m in result.gone_warnings]}}
    if result.cluster:
        found["clusterConfig"] = result.cluster
    return json.dumps(found, indent=2, ensure_ascii=False) + "\n"


def _warning_json(message: Message) -> dict:
    return {"file": message.file, "object": str(message.ref) if message.ref else None, "text": message.text,
            "code": message.code}


def summary(result: Diff) -> dict:
    counts = {status: 0 for status in ("added", "removed", "changed", "unchanged")}
    for isvc in result.isvcs:
        counts[isvc.status] += 1
    return {"inferenceServices": counts, "rollouts": sum(i.rollout for i in result.isvcs)}


def _isvc_json(isvc: IsvcDiff, context: int | None) -> dict:
    return {"namespace": isvc.namespace, "name": isvc.name, "status": isvc.status, "rollout": isvc.rollout,
            "runtime": isvc.runtime, "accelerators": isvc.accelerators, "edited": isvc.causes,
            "objects": [_object_json(o, context) for o in isvc.objects]}


def _object_json(change: ObjectChange, context: int | None, namespace: bool = False) -> dict:
    found = {"apiVersion": change.api_version, "kind": change.kind, "name": change.name}
    if namespace:
        found["namespace"] = change.namespace
    if change.origin is not None:
        found["origin"] = change.origin
    found |= {"change": change.change, "fields": change.fields,
              "changes": [json_change(*c) for c in change.changes]}
    if context is not None:
        found["unified"] = unified(change, context)
    return found


# ---------------------------------------------------------------- text

def as_text(result: Diff, context: int | None = None) -> str:
    """InferenceServices with the same changes are one section (:mod:`.groups`), except with ``context``:
    unified diffs show each object's own YAML."""
    lines = summary_lines(result)
    for first, *alike in shown_groups(result, context):
        lines += [""] + isvc_lines(first, context, alike)
    if result.generated:
        lines += ["", "Generated objects:"]
        for change in result.generated:
            lines += _object_lines(change, context, namespace=True)
    if result.objects:
        lines += ["", "Pass-through objects:"]
        for change in result.objects:
            lines += _object_lines(change, context, namespace=True)
    if result.cluster:
        lines += ["", "Cluster configuration (inferenceservice-config):"] + cluster_lines(result)
    for _, title, messages in warning_groups(result):
        lines += ["", f"{title}:"] + [f"  {m.line()}" for m in messages]
    return "".join(printable(line) + "\n" for line in lines)


def cluster_lines(result: Diff) -> list[str]:
    """Each cluster setting that differs, base to head (the ConfigMap inferenceservice-config of each side)."""
    return [f"  {c['setting']}: {transition(setting_text(c['base']), setting_text(c['head']))}" for c in result.cluster]


def setting_text(value) -> str | None:
    return None if value is None else value if isinstance(value, str) and value else json.dumps(value)


def warning_groups(result: Diff) -> list[tuple[str, str, list[Message]]]:
    """The warnings only head's render gives, then those only base's gives: (key, title, warnings) each."""
    groups = [("new", "Warnings new in head", result.new_warnings),
              ("gone", "Warnings gone from base", result.gone_warnings)]
    return [group for group in groups if group[2]]


def warning_counts(result: Diff) -> str | None:
    """The summary's line on warnings, None when neither side has a warning of its own."""
    if not (result.new_warnings or result.gone_warnings):
        return None
    return f"Warnings: {len(result.new_warnings)} new, {len(result.gone_warnings)} gone"


def summary_lines(result: Diff) -> list[str]:
    counts = summary(result)
    isvcs = counts["inferenceServices"]
    lines = [f"InferenceServices: {isvcs['added']} added, {isvcs['removed']} removed, {isvcs['changed']} changed, "
             f"{isvcs['unchanged']} unchanged; {counts['rollouts']} roll out"]
    if result.generated:
        lines.append("Generated objects: " + change_counts(result.generated))
    if result.objects:
        lines.append("Pass-through objects: " + change_counts(result.objects))
    if result.gpus:
        lines.append("GPUs at min / max replicas:")
        lines += [f"  {gpu_label(g)}: {gpu_text(g, 'min')} at min, {gpu_text(g, 'max')} at max" for g in result.gpus]
    if warning_counts(result):
        lines.append(warning_counts(result))
    if not result.changed:
        lines.append("No changes.")
    return lines


def change_counts(changes: list[ObjectChange]) -> str:
    """``1 added, 2 changed``."""
    return ", ".join(f"{n} {change}" for change in ("added", "removed", "changed")
                     if (n := sum(o.change == change for o in changes)))


def gpu_label(gpu: dict) -> str:
    return f"{gpu['resource']} ({gpu['class'] or 'no accelerator class'})"


def gpu_text(gpu: dict, bound: str) -> str:
    before, after = gpu["base"][bound], gpu["head"][bound]
    return f"{before}" if before == after else f"{before} -> {after} ({signed(after - before)})"


def signed(number) -> str:
    return f"+{number}" if number > 0 else f"{number}"


def shown_groups(result: Diff, context: int | None) -> list[list[IsvcDiff]]:
    if context is None:
        return group_alike(result.isvcs)
    return [[isvc] for isvc in result.isvcs if isvc.status != "unchanged"]


def isvc_label(isvc: IsvcDiff) -> str:
    return f"{isvc.namespace}/{isvc.name}"


def isvc_lines(isvc: IsvcDiff, context: int | None, alike: list[IsvcDiff] = ()) -> list[str]:
    head = f"InferenceService {isvc_label(isvc)}: {isvc.status}"
    lines = [head + (", pods roll out" if isvc.rollout else "")]
    if alike:
        lines.append(f"  the same changes in {len(alike)} more: " + ", ".join(isvc_label(i) for i in alike))
    runtime = isvc.runtime
    if runtime["base"] != runtime["head"] or runtime["reason"]:
        lines.append(f"  runtime: {transition(runtime['base'], runtime['head'])}"
                     + (f" ({runtime['reason']})" if runtime["reason"] else ""))
    for cls in isvc.accelerators:
        lines.append(f"  accelerator class of {cls['component']}: {transition(cls['base'], cls['head'])}")
    if isvc.causes:
        lines.append("  edited: " + "; ".join(cause_text(c) for c in isvc.causes))
    for change in isvc.objects:
        lines += _object_lines(change, context)
    return lines


def transition(before, after) -> str:
    def shown(value) -> str:
        return "none" if value is None else str(value)
    return shown(after) if before == after else f"{shown(before)} -> {shown(after)}"


def object_label(change: ObjectChange, namespace: bool = False) -> str:
    """``v1 PersistentVolumeClaim llm/x``; a generated object's with what it is and for which input."""
    where = f"{change.namespace}/{change.name}" if namespace and change.namespace else change.name
    label = f"{change.api_version} {change.kind} {where}"
    return label if change.origin is None else f"{label} ({change.origin})"


def _object_lines(change: ObjectChange, context: int | None, namespace: bool = False) -> list[str]:
    lines = [f"  {SIGNS[change.change]} {object_label(change, namespace)}"]
    lines += [f"      {field_text(*c)}" for c in change.changes]
    if context is not None:
        lines += ["    " + line for line in unified(change, context)]
    return lines


def field_text(path: str, before, after) -> str:
    """A changed field's path, with ``old -> new`` when both values fit on a line (:mod:`.values`)."""
    values = inline(before, after)
    return path if values is None else f"{path}: {values[0]} -> {values[1]}"


def unified(change: ObjectChange, context: int) -> list[str]:
    """The unified diff of the object's YAML, as ``render`` prints it."""
    name = "/".join(p for p in (change.kind, change.namespace, change.name) if p)
    before = dump(change.base).splitlines() if change.base is not None else []
    after = dump(change.head).splitlines() if change.head is not None else []
    return list(difflib.unified_diff(before, after, f"base/{name}", f"head/{name}", n=context, lineterm=""))
