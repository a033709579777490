"""Which patch of a kustomization tree set a field: the place a message about a value that came through an overlay
points at (:mod:`omerender.yamlio.provenance`).

A patch is found by what kustomize would apply: ``patches:`` (inline ``patch:`` or ``path:``, with or without a
``target:``), ``patchesStrategicMerge:`` and ``patchesJson6902:`` of every kustomization the build reaches, the
top kustomization first and the later entries of one kustomization first (the patch applied last wins). A strategic
merge patch sets a field it holds; a JSON 6902 operation one at or below its ``path``. Patch files are read as
every file of the build is: inside the boundary, where they resolve.
"""
from __future__ import annotations

import os
import re

from omerender.errors import OmeError
from omerender.yamlio.marks import compose, descend
from omerender.yamlio.paths import within
from omerender.yamlio.reading import parse_text, read_file
from . import kbuild


def finder(tree: kbuild.Tree, show=kbuild.shown):
    """``find(kind, name, field)`` -> (the patch's file as ``show`` shows it, (line, column)) or None."""
    cache: dict = {}

    def find(kind, name, field):
        for kfile, data in tree.kustomizations.items():
            for place in _entries(tree, kfile, data, cache, show):
                found = _sets(place, kind, name, field)
                if found is not None:
                    return found
        return None
    return find


class _Patch:
    """One patch: its text, and how a character of it maps to a line and column of the file holding it."""

    def __init__(self, text: str, file: str, target, position):
        self.text, self.file, self.target, self.position = text, file, target, position


def _entries(tree, kfile: str, data: dict, cache: dict, show) -> list[_Patch]:
    if kfile not in cache:
        cache[kfile] = list(reversed(_read(tree, kfile, data, show)))
    return cache[kfile]


def _read(tree, kfile: str, data: dict, show) -> list[_Patch]:
    found = []
    folder = os.path.dirname(kfile)
    kustomization = _LazyOrigin(tree, kfile)
    for key in ("patchesStrategicMerge", "patchesJson6902", "patches"):
        entries = data.get(key)
        for i, entry in enumerate(entries if isinstance(entries, list) else ()):
            target = entry.get("target") if isinstance(entry, dict) else None
            inline = entry.get("patch") if isinstance(entry, dict) else entry
            path = entry.get("path") if isinstance(entry, dict) else None
            if key == "patchesStrategicMerge" and isinstance(entry, str) and "\n" not in entry.strip():
                inline, path = None, entry
            if isinstance(inline, str) and "\n" in inline.strip() or isinstance(inline, str) and path is None:
                field = f"{key}[{i}].patch" if isinstance(entry, dict) else f"{key}[{i}]"
                found.append(_Patch(inline, show(kfile), target,
                                    lambda offset, field=field: kustomization.at(field, offset)))
            elif isinstance(path, str):
                patch = _patch_file(tree, folder, path, target, show)
                if patch is not None:
                    found.append(patch)
    return found


class _LazyOrigin:
    """The kustomization file's own document, parsed with marks only when a patch in it is pointed at."""

    def __init__(self, tree, kfile: str):
        self.tree, self.kfile, self.origin = tree, kfile, None

    def at(self, field: str, offset: int):
        if self.origin is None:
            docs = parse_text(read_file(self.kfile), self.kfile)
            self.origin = docs[0].origin if docs else False
        return (self.origin.scalar_mark(field, offset) or self.origin.mark(field)) if self.origin else None


def _patch_file(tree, folder: str, path: str, target, show) -> _Patch | None:
    real = os.path.realpath(os.path.join(folder, path))
    if not within(real, tree.boundary) or not os.path.isfile(real):
        return None  # kustomize said what is wrong with it, or refused it; the boundary is never crossed
    try:
        text = read_file(real)
    except OmeError:
        return None
    lines = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]

    def position(offset: int):
        line = next(n for n in range(len(lines) - 1, -1, -1) if lines[n] <= offset)
        return line + 1, offset - lines[line] + 1
    return _Patch(text, show(real), target, position)


def _sets(patch: _Patch, kind, name, field: str):
    """Where ``patch`` sets ``field`` of the object ``kind`` ``name``; None where it doesn't."""
    starts = [0] + [m.end() for m in re.finditer(r"^---[^\n]*\n", patch.text, re.M)]
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(patch.text)
        node = compose(patch.text[start:end])
        if node is None:
            continue
        mark = _json6902(node, field) if node.id == "sequence" else _merge(node, kind, name, field, patch.target)
        if mark is not None and (node.id != "sequence" or _targets(patch.target, kind, name)):
            found = patch.position(start + mark.index)
            if found is not None:
                return patch.file, found
    return None


def _merge(node, kind, name, field: str, target):
    spelled = _scalar(node, "kind"), _scalar(node, "metadata.name")
    if target is not None:
        if not _targets(target, kind, name):
            return None
    elif spelled != (kind, name):
        return None
    _, mark, rest = descend(node, field)
    return mark if not rest else None


def _json6902(node, field: str):
    for i, op in enumerate(node.value):
        path = _scalar(op, "path")
        if not isinstance(path, str) or not path.startswith("/"):
            continue
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]
        spelled = "".join(f"[{t}]" if t.isdigit() else f".{t}" for t in tokens).lstrip(".")
        if field == spelled or field.startswith(spelled + ".") or field.startswith(spelled + "["):
            _, mark, rest = descend(op, "value" + field[len(spelled):] if field != spelled else "value")
            return mark if mark is not None else descend(op, "path")[1]
    return None


def _scalar(node, path: str):
    value, mark, rest = descend(node, path)
    return value.value if mark is not None and not rest and value.id == "scalar" else None


def _targets(target, kind, name) -> bool:
    if not isinstance(target, dict):
        return False
    for key, value in (("kind", kind), ("name", name)):
        wanted = target.get(key)
        if wanted is not None and not (isinstance(wanted, str) and _matches(wanted, value)):
            return False
    return True


_REGEX_SPECIAL = set(".^$*+?{}[]\\|()")


def _matches(pattern: str, value) -> bool:
    """Whether a target's ``name``/``kind`` (a regular expression to kustomize) matches ``value``: told only for a
    literal and for literals joined by ``.*``; Python's backtracking engine never runs a pattern the repository
    wrote (RE2, kustomize's, is linear; ``(a+)+$`` here would not be)."""
    value = str(value)
    parts = pattern.split(".*")
    if any(set(part) & _REGEX_SPECIAL for part in parts):
        return False  # another pattern: no position from this patch, rather than a guess
    if len(parts) == 1:
        return pattern == value
    if not (value.startswith(parts[0]) and value.endswith(parts[-1])) or len(parts[0]) + len(parts[-1]) > len(value):
        return False
    at, end = len(parts[0]), len(value) - len(parts[-1])
    for part in parts[1:-1]:
        found = value.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True
