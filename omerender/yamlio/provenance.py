"""Where a built object was written: an object of kustomize's output (or of a KRM function's ResourceList) mapped
back to the document of the repository file it came from, so that its messages name that file's lines.

kustomize's output has no lines of the user's: its origin annotation (``buildMetadata: [originAnnotations]``)
names the file, and a file holds many documents. :class:`Sources` reads such a file only when a message about one
of its objects is made, splits it at its ``---`` lines, finds the document of the object's kind and original name
(an index of the ``name:`` values narrows which documents are parsed) and hands the message to that document's
:class:`~omerender.yamlio.marks.Origin`. Files are judged where they resolve: one outside the boundary (a symbolic
link out, an origin annotation the repository wrote itself naming ``../../etc/passwd``) is never read.

Where the built value of the message's field differs from the file's (a patch, a name prefix), the message says so
and, where the caller can tell which patch set it (``patches``), points at that patch instead.
"""
from __future__ import annotations

import os
import re
from typing import Callable

import yaml

from omerender.errors import OmeError
from . import limits
from .marks import Origin, Source
from .paths import within
from .reading import list_items, read_file
from .yamlread import Budget, load_all

MISSING = object()
_DOCUMENT_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.M)
_CONTENT = re.compile(r"^(?!---(?:[ \t\r\n]|$))[ \t]*[^ \t\r\n#]", re.M)
_NAME = re.compile(r"^[ \t]*(?:-[ \t]+)?name:[ \t]*[\"']?([^\"'\s#,{}\[\]]+)", re.M)
# The annotations kustomize adds that the file never had: not what makes a value "changed by the overlay".
THROUGH = "the value comes through the overlay"


class Sources:
    """The repository files a build's objects came from, each read once, when a message first needs it."""

    def __init__(self, boundary: str, show: Callable[[str], str] = lambda path: path,
                 patches: Callable | None = None):
        self.boundary = os.path.realpath(boundary)
        self.show = show
        self.patches = patches  # (kind, name, field) -> (file shown, (line, column), file it patches) | None
        self._files: dict = {}

    def file(self, path: str) -> "_File | None":
        """The file at ``path`` (absolute), or None when it resolves outside the boundary or can't be read."""
        if path not in self._files:
            real = os.path.realpath(path)
            found = None
            if within(real, self.boundary) and real != self.boundary and os.path.isfile(real):
                try:
                    found = _File(read_file(real, limits.MAX_FILE_BYTES))
                except OmeError:
                    found = None
            self._files[path] = found
        return self._files[path]

    def origin(self, paths, kind, name: str, data) -> "BuiltOrigin":
        """Where the built object ``data`` (kind ``kind``, named ``name`` in its file) was written: in one of
        ``paths`` (absolute; a callable giving them, asked only when a message needs them)."""
        return BuiltOrigin(self, paths, kind, name, data)


class _File:
    """A file's text split into its documents; each parsed only when an object is looked up in it."""

    __slots__ = ("text", "starts", "lines", "_names", "_parsed")

    def __init__(self, text: str):
        self.text = text
        self.starts = [0] + [m.start() for m in _DOCUMENT_START.finditer(text) if m.start() > 0]
        self.lines = []
        line = 0
        for i, start in enumerate(self.starts):
            if i:
                line += text.count("\n", self.starts[i - 1], start)
            self.lines.append(line)
        self._names: dict | None = None
        self._parsed: dict = {}

    def find(self, kind, name: str):
        """(origin, data, its document's number in the file) of the object of ``kind`` named ``name``."""
        if self._names is None:
            self._names = {}
            for i, start in enumerate(self.starts):
                end = self.starts[i + 1] if i + 1 < len(self.starts) else len(self.text)
                for match in _NAME.finditer(self.text, start, end):
                    self._names.setdefault(match.group(1), []).append(i)
        candidates = self._names.get(name)
        for chunk in dict.fromkeys(candidates) if candidates else range(len(self.starts)):
            for number, (origin, data) in enumerate(self._documents(chunk)):
                if isinstance(data, dict) and data.get("kind") == kind and _name(data) == name:
                    return origin, data, self.number(chunk)
        return None

    def number(self, chunk: int) -> int:
        """The number of the first document of ``chunk`` in the file, as kpt's index annotation counts them."""
        return sum(1 for i in range(chunk) if _CONTENT.search(self.text, self.starts[i], self._end(i)))

    def _end(self, chunk: int) -> int:
        return self.starts[chunk + 1] if chunk + 1 < len(self.starts) else len(self.text)

    def _documents(self, chunk: int) -> list:
        if chunk not in self._parsed:
            start = self.starts[chunk]
            end = self.starts[chunk + 1] if chunk + 1 < len(self.starts) else len(self.text)
            text, roots = self.text[start:end], []
            try:
                loaded = load_all(text, Budget(), roots)
            except (yaml.YAMLError, OmeError, RecursionError):
                loaded = []
            found = []
            if len(roots) == len(loaded):
                shifted = [yaml.Mark(m.name, m.index, m.line + self.lines[chunk], m.column, None, None) for m in roots]
                source = Source(text, shifted)
                for index, data in enumerate(loaded):
                    items = list_items(data)
                    if items is None:
                        found.append((Origin(source, index), data))
                    found.extend((Origin(source, index, item), value) for item, value in enumerate(items or ()))
            self._parsed[chunk] = found
        return self._parsed[chunk]


def _name(data: dict):
    meta = data.get("metadata")
    return meta.get("name") if isinstance(meta, dict) else None


class BuiltOrigin:
    """Where an object of a build was written, found when a message about it is first made (see the module)."""

    __slots__ = ("sources", "paths", "kind", "name", "data", "_found")
    item = None

    def __init__(self, sources: Sources, paths, kind, name: str, data):
        self.sources, self.paths, self.kind, self.name, self.data = sources, paths, kind, name, data
        self._found = MISSING

    def found(self):
        """(file path, Origin, the file's data of the object, document number) or None."""
        if self._found is MISSING:
            self._found = None
            paths = self.paths() if callable(self.paths) else self.paths
            for path in paths:
                source = self.sources.file(path)
                hit = source.find(self.kind, self.name) if source is not None else None
                if hit is not None:
                    self._found = (path, *hit)
                    break
        return self._found

    @property
    def index(self):
        found = self.found()
        return None if found is None else found[3]

    def want(self, field: str | None) -> None:
        found = self.found()
        if found is not None:
            found[1].want(field)

    def mark(self, field: str | None):
        found = self.found()
        return None if found is None else found[1].mark(field)

    def scalar_mark(self, field: str, offset: int):
        found = self.found()
        if found is None or value_at(found[2], field) != value_at(self.data, field):
            return None
        return found[1].scalar_mark(field, offset)

    def written(self, field: str | None, file: str | None):
        """What a message about ``field`` names instead of ``file``: (file, origin, note); the note says that
        the value came through the overlay, the origin is the patch that set it where one did. None: as is."""
        found = self.found()
        if found is None:
            return None
        path, _, data, _ = found
        shown = self.sources.show(path)
        note = None
        if field and value_at(data, field) != value_at(self.data, field):
            patch = self.sources.patches(self.kind, self.name, field) if self.sources.patches else None
            if patch is not None:
                patch_file, (line, column) = patch
                return patch_file, _Fixed(line, column, None), f"{THROUGH}: this patch sets it on {self.kind} " \
                                                                f"{self.name} of {shown}"
            note = f"{THROUGH}: kustomize changed what this file says here" \
                if value_at(data, field) is not MISSING else f"{THROUGH}: kustomize added it to this object"
        return (None if shown == file else shown), self, note


class _Fixed:
    """A place in a patch: its line and column, whatever field is asked for."""

    __slots__ = ("line", "column", "index")
    item = None

    def __init__(self, line: int, column: int, index):
        self.line, self.column, self.index = line, column, index

    def mark(self, field):
        return self.line, self.column


def value_at(data, path: str):
    """The value at ``path`` (as messages write fields: ``spec.a.b[2]``, ``metadata.annotations.ome.io/x``,
    ``data["a.b"]``) in ``data``; :data:`MISSING` where it has none."""
    rest = path
    while rest:
        if rest.startswith("["):
            close = rest.find("]")
            if close < 0:
                return MISSING
            token, used = rest[1:close].strip("\"'"), close + 1
            if isinstance(data, list):
                if not token.isdigit() or int(token) >= len(data):
                    return MISSING
                data = data[int(token)]
            elif isinstance(data, dict) and token in data:
                data = data[token]
            else:
                return MISSING
        else:
            if not isinstance(data, dict):
                return MISSING
            ends = [i for i, char in enumerate(rest) if char in ".["] + [len(rest)]
            key = next((rest[:end] for end in reversed(ends) if rest[:end] in data), None)
            if key is None:
                return MISSING
            data, used = data[key], len(key)
        rest = rest[used:]
        rest = rest[1:] if rest.startswith(".") else rest
    return data
