"""The diff as a pull-request comment: a summary table first, then the details of each InferenceService folded.

Everything from the repository is escaped (code spans with a long enough fence, Markdown punctuation and HTML
in plain text), so an object's name cannot change how the comment renders.
"""
from __future__ import annotations

import html
import re

from .compare import Diff, IsvcDiff, ObjectChange
from .report import object_label, printable, summary, unified

HEADING = "### omerender diff"
_PUNCTUATION = re.compile(r"([\\`*_\[\]|~#])")


def as_markdown(result: Diff, context: int | None = None) -> str:
    blocks = [HEADING, _counts(result)]
    changed = [i for i in result.isvcs if i.status != "unchanged"]
    if changed:
        blocks.append(_table(("InferenceService", "Status", "Rollout", "Runtime", "Accelerator class", "Objects"),
                             [_row(i) for i in changed]))
    if result.gpus:
        blocks.append(_table(("Resource", "Accelerator class", "At minReplicas", "At maxReplicas"),
                             [(code(g["resource"]), text(g["class"] or "none"), _gpu(g, "min"), _gpu(g, "max"))
                              for g in result.gpus]))
    blocks += [_details(f"{i.namespace}/{i.name}: {i.status}" + (", pods roll out" if i.rollout else ""),
                        _isvc_items(i, context)) for i in changed]
    if result.objects:
        blocks.append(_details(f"Pass-through objects: {len(result.objects)} changed",
                               [item for o in result.objects for item in _object_items(o, context, True)]))
    return "\n\n".join(blocks) + "\n"


def _counts(result: Diff) -> str:
    counts = summary(result)
    isvcs = counts["inferenceServices"]
    table = _table(("InferenceServices added", "Removed", "Changed", "Unchanged", "Pods roll out in"),
                   [tuple(str(n) for n in (*isvcs.values(), counts["rollouts"]))])
    return table if result.changed else table + "\n\nNo changes."


def _row(isvc: IsvcDiff) -> tuple[str, ...]:
    runtime = isvc.runtime
    classes = "<br>".join(f"{text(c['component'])}: {_arrow(c['base'], c['head'])}" for c in isvc.accelerators)
    kinds = [f"{n} {change}" for change in ("added", "removed", "changed")
             if (n := sum(o.change == change for o in isvc.objects))]
    return (code(f"{isvc.namespace}/{isvc.name}"), isvc.status, "yes" if isvc.rollout else "no",
            _arrow(runtime["base"], runtime["head"]), classes or "-", ", ".join(kinds) or "-")


def _gpu(gpu: dict, bound: str) -> str:
    before, after = gpu["base"][bound], gpu["head"][bound]
    if before == after:
        return str(before)
    change = after - before
    return f"{before} → {after} (**{'+' if change > 0 else ''}{change}**)"


def _arrow(before, after) -> str:
    def shown(value) -> str:
        return "none" if value is None else code(str(value))
    return shown(after) if before == after else f"{shown(before)} → {shown(after)}"


def _isvc_items(isvc: IsvcDiff, context: int | None) -> list[str]:
    items = []
    runtime = isvc.runtime
    if runtime["base"] != runtime["head"] or runtime["reason"]:
        items.append(f"- runtime: {_arrow(runtime['base'], runtime['head'])}"
                     + (f" ({text(runtime['reason'])})" if runtime["reason"] else ""))
    items += [f"- accelerator class of {text(c['component'])}: {_arrow(c['base'], c['head'])}"
              for c in isvc.accelerators]
    for change in isvc.objects:
        items += _object_items(change, context)
    return items


def _object_items(change: ObjectChange, context: int | None, namespace: bool = False) -> list[str]:
    line = f"- {change.change} {code(object_label(change, namespace))}"
    if change.fields:
        line += ": " + ", ".join(code(path) for path in change.fields)
    items = [line]
    if context is not None:
        items.append(fenced("\n".join(unified(change, context)), "diff"))
    return items


def _details(summary_text: str, items: list[str]) -> str:
    body = "\n".join(items).strip("\n")
    return f"<details><summary>{html.escape(printable(summary_text))}</summary>\n\n{body}\n\n</details>"


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def text(value: str) -> str:
    """Plain text: HTML and Markdown punctuation escaped, one line."""
    return _PUNCTUATION.sub(r"\\\1", html.escape(printable(value).replace("\n", " "), quote=False))


def code(value: str) -> str:
    """A code span whose fence is longer than any run of backticks inside; ``|`` escaped for tables."""
    value = printable(value).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", value)), default=0) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def fenced(body: str, language: str) -> str:
    fence = "`" * max(3, max((len(run) for run in re.findall("`+", body)), default=0) + 1)
    return f"\n{fence}{language}\n{printable_block(body)}\n{fence}\n"


def printable_block(body: str) -> str:
    return "\n".join(printable(line) for line in body.split("\n"))
