"""The diff as a pull-request comment: a summary table first, then the details of each InferenceService folded.

Everything from the repository is escaped (code spans with a long enough fence, Markdown punctuation and HTML
in plain text), so an object's name cannot change how the comment renders.
"""
from __future__ import annotations

import html
import re

from .compare import Diff, IsvcDiff, ObjectChange
from .values import inline, printable
from .report import (change_counts, isvc_label, object_label, setting_text, shown_groups, summary, unified,
                     warning_counts, warning_groups)
from .why import cause_text

HEADING = "### omerender diff"
COMMENT_LIMIT = 65_536  # characters in a GitHub pull-request comment
LEFT_OUT_ROOM = 300  # for the line saying what was left out
# The GPU table may take half the room left, and at least this much: a PATH's share of a comment of several is
# small, and a table of a few rows must still show (the comment leaves out a whole PATH that doesn't fit)
GPU_FLOOR = 2_000
_PUNCTUATION = re.compile(r"([\\`*_\[\]|~#])")


def as_markdown(result: Diff, context: int | None = None, limit: int = COMMENT_LIMIT, heading: bool = True) -> str:
    """The comment, within ``limit`` characters: the summary table always, then as many rows of the GPU table
    as fit in half of what is left (:data:`GPU_FLOOR` at least), as many rows of the InferenceService table and as many folded details as fit,
    saying how many were left out. ``heading``: start with ``### omerender diff`` (not for one PATH's section of
    :mod:`.bypath`)."""
    groups = shown_groups(result, context)
    budget = limit - _size([HEADING, _counts(result)]) - LEFT_OUT_ROOM
    gpus = [_gpu_table(result.gpus, max(budget // 2, GPU_FLOOR))] if result.gpus else []
    budget -= _size(gpus)
    rows = [_row_line(_row(first, len(alike))) for first, *alike in groups]
    shown_rows, budget = _fit(rows, budget - _size([ISVC_TABLE_HEAD]), 1)
    details = [_isvc_details(first, context, alike) for first, *alike in groups]
    if result.generated:
        details.append(_details(f"Generated objects: {change_counts(result.generated)}",
                                [item for o in result.generated for item in _object_items(o, context, True)]))
    if result.objects:
        details.append(_details(f"Pass-through objects: {len(result.objects)} changed",
                                [item for o in result.objects for item in _object_items(o, context, True)]))
    if result.cluster:
        details.append(_details(f"Cluster configuration (inferenceservice-config): {len(result.cluster)} settings "
                                f"differ", [f"- {code(c['setting'])}: "
                                            f"{_arrow(setting_text(c['base']), setting_text(c['head']))}"
                                            for c in result.cluster]))
    if warning_counts(result):
        details.append(_details(warning_counts(result), [f"- {key}: {text(m.line())}"
                                                         for key, _, messages in warning_groups(result)
                                                         for m in messages]))
    shown_details, _ = _fit(details, budget, 2)
    blocks = [HEADING, _counts(result)] if heading else [_counts(result)]
    if rows:
        left = len(rows) - len(shown_rows)
        blocks.append("\n".join([ISVC_TABLE_HEAD, *shown_rows] + ([f"| {left} more |" + " |" * 5] if left else [])))
    blocks += gpus + shown_details
    if len(shown_details) < len(details) or len(shown_rows) < len(rows):
        blocks.append(f"_{len(details) - len(shown_details)} more details left out: a comment holds at most "
                      f"{limit:,} characters. `omerender diff` prints them all._")
    return "\n\n".join(blocks) + "\n"


def _fit(items: list[str], budget: int, separator: int) -> tuple[list[str], int]:
    """The longest prefix of ``items`` that fits in ``budget`` characters, and what is left of it."""
    kept = []
    for item in items:
        if len(item) + separator > budget:
            break
        kept.append(item)
        budget -= len(item) + separator
    return kept, budget


def _size(blocks: list[str]) -> int:
    return sum(len(b) + 2 for b in blocks)


def _gpu_table(gpus: list[dict], budget: int) -> str:
    """The rows that fit in ``budget`` characters, then one row counting the rest: a runtime may name thousands
    of extended resources, and the comment must still fit."""
    head = _table_head(GPU_HEADERS)
    rows = [_row_line((code(g["resource"]), text(g["class"] or "none"), _gpu(g, "min"), _gpu(g, "max")))
            for g in gpus]
    shown, _ = _fit(rows, budget - len(head) - len(MORE_ROW), 1)
    left = len(rows) - len(shown)
    return "\n".join([head, *shown] + ([MORE_ROW.format(left=left)] if left else []))


def _isvc_details(isvc: IsvcDiff, context: int | None, alike: list[IsvcDiff]) -> str:
    more = f" and {len(alike)} more" if alike else ""
    items = [f"- the same changes in: {', '.join(code(isvc_label(i)) for i in alike)}"] if alike else []
    return _details(f"{isvc_label(isvc)}{more}: {isvc.status}" + (", pods roll out" if isvc.rollout else ""),
                    items + _isvc_items(isvc, context))


def _counts(result: Diff) -> str:
    counts = summary(result)
    isvcs = counts["inferenceServices"]
    table = _table(("InferenceServices added", "Removed", "Changed", "Unchanged", "Pods roll out in"),
                   [tuple(str(n) for n in (*isvcs.values(), counts["rollouts"]))])
    return table if result.changed else table + "\n\nNo changes."


def _row(isvc: IsvcDiff, more: int) -> tuple[str, ...]:
    runtime = isvc.runtime
    classes = "<br>".join(f"{text(c['component'])}: {_arrow(c['base'], c['head'])}" for c in isvc.accelerators)
    kinds = [f"{n} {change}" for change in ("added", "removed", "changed")
             if (n := sum(o.change == change for o in isvc.objects))]
    return (code(isvc_label(isvc)) + (f" and {more} more" if more else ""), isvc.status,
            "yes" if isvc.rollout else "no",
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
    if isvc.causes:
        items.append("- edited: " + "; ".join(text(cause_text(c)) for c in isvc.causes))
    for change in isvc.objects:
        items += _object_items(change, context)
    return items


def _object_items(change: ObjectChange, context: int | None, namespace: bool = False) -> list[str]:
    line = f"- {change.change} {code(object_label(change, namespace))}"
    if change.changes:
        line += ": " + ", ".join(_field(*c) for c in change.changes)
    items = [line]
    if context is not None:
        items.append(fenced("\n".join(unified(change, context)), "diff"))
    return items


def _field(path: str, before, after) -> str:
    values = inline(before, after)
    return code(path) if values is None else f"{code(path)} {code(values[0])} → {code(values[1])}"


def _details(summary_text: str, items: list[str]) -> str:
    body = "\n".join(items).strip("\n")
    return f"<details><summary>{html.escape(printable(summary_text))}</summary>\n\n{body}\n\n</details>"


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    return "\n".join([_table_head(headers)] + [_row_line(row) for row in rows])


def _table_head(headers: tuple[str, ...]) -> str:
    return _row_line(headers) + "\n|" + " --- |" * len(headers)


def _row_line(row: tuple[str, ...]) -> str:
    return "| " + " | ".join(row) + " |"


GPU_HEADERS = ("Resource", "Accelerator class", "At minReplicas", "At maxReplicas")
MORE_ROW = "| {left} more rows left out | | | |"  # room for a count of up to 9 digits
ISVC_TABLE_HEAD = _table_head(("InferenceService", "Status", "Rollout", "Runtime", "Accelerator class", "Objects"))


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
