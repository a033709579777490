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

import bisect
import os
import re
from typing import Callable

import yaml

from omerender.errors import OmeError
from . import limits
from .marks import MAX_COMPOSED_CHARS, Origin, Source, compose, descend
from .paths import within
from .reading import read_file

MISSING = object()
_DOCUMENT_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.M)
_CONTENT = re.compile(r"^(?!---(?:[ \t\r\n]|$))[ \t]*[^ \t\r\n#]", re.M)
_METADATA_NAME = re.compile(r"^  name:[ \t]*[\"']?([^\"'\s#,{}\[\]]+)", re.M)  # block style, kustomize's layout
_NAME = re.compile(r"^[ \t]*(?:-[ \t]+)?name:[ \t]*[\"']?([^\"'\s#,{}\[\]]+)", re.M)
THROUGH = "the value comes through the overlay"


class Sources:
    """The repository files a build's objects came from, each read once, when a message first needs it."""

    def __init__(self, boundary: str, show: Callable[[str], str] = lambda path: path,
                 patches: Callable | None = None):
        self.boundary = os.path.realpath(boundary)
        self.show = show
        self.patches = patches  # (kind, name, field) -> (the patch's file as shown, (line, column)) | None
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

    def origin(self, paths, kind, name: str, data, named: str) -> "BuiltOrigin":
        """Where the built object ``data`` (kind ``kind``, named ``name`` in its file) was written: in one of
        ``paths`` (absolute; a callable giving them, asked only when a message needs them). ``named``: the file
        its messages name until one is made (a message whose file a caller renamed keeps that name)."""
        return BuiltOrigin(self, paths, kind, name, data, named)


class _File:
    """A file's text split into its documents; each parsed only when an object is looked up in it."""

    __slots__ = ("text", "starts", "lines", "_names", "_parsed", "_numbers")

    def __init__(self, text: str):
        self.text = text
        self.starts = [0] + [m.start() for m in _DOCUMENT_START.finditer(text) if m.start() > 0]
        self.lines = []
        line = 0
        for i, start in enumerate(self.starts):
            if i:
                line += text.count("\n", self.starts[i - 1], start)
            self.lines.append(line)
        self._names: dict = {}
        self._parsed: dict = {}
        self._numbers: list | None = None

    def find(self, kind, name: str, namespace=None):
        """(origin, node, its document's number in the file) of the object of ``kind`` named ``name`` (in
        ``namespace`` where the file says one and another object of that name is there too): looked for in the
        documents whose ``metadata:`` block names it, else in those that hold ``name:`` it at any depth (flow
        style, list items), else in every document."""
        tried: set = set()
        other = None
        for pattern in (_METADATA_NAME, _NAME, None):
            chunks = self._candidates(pattern, name) if pattern is not None else range(len(self.starts))
            for chunk in chunks:
                if chunk in tried:
                    continue
                tried.add(chunk)
                for origin, node in self._documents(chunk):
                    if _scalar(node, "kind") != kind or _scalar(node, "metadata.name") != name:
                        continue
                    if _scalar(node, "metadata.namespace") in (None, namespace):
                        return origin, node, self.number(chunk)
                    other = other or (origin, node, self.number(chunk))
            if other is not None:
                return other
        return None

    def _candidates(self, pattern, name: str) -> list[int]:
        """The documents in which ``pattern`` finds ``name`` (an index of the file by it, built once)."""
        if pattern not in self._names:
            index: dict = {}
            for match in pattern.finditer(self.text):
                index.setdefault(match.group(1), set()).add(bisect.bisect_right(self.starts, match.start()) - 1)
            self._names[pattern] = index
        return sorted(self._names[pattern].get(name, ()))

    def number(self, chunk: int) -> int:
        """The number of the first document of ``chunk`` in the file, as kpt's index annotation counts them."""
        if self._numbers is None:
            self._numbers = [0]
            for i in range(len(self.starts) - 1):
                self._numbers.append(self._numbers[-1] + bool(_CONTENT.search(self.text, self.starts[i],
                                                                                   self.starts[i + 1])))
        return self._numbers[chunk]

    def _documents(self, chunk: int) -> list:
        """(origin, node) of each object of ``chunk``: its node tree composed (marks, no values built), in C."""
        if chunk not in self._parsed:
            start = self.starts[chunk]
            end = self.starts[chunk + 1] if chunk + 1 < len(self.starts) else len(self.text)
            text = self.text[start:end]
            node = compose(text) if end - start <= MAX_COMPOSED_CHARS else None
            found = []
            if isinstance(node, yaml.MappingNode):
                m = node.start_mark
                source = Source(text, [yaml.Mark(m.name, m.index, m.line + self.lines[chunk], m.column, None, None)])
                source.keep(0, node, self.lines[chunk], len(text))  # composed once, for the lookup and the marks
                items = descend(node, "items")[0] if _scalar(node, "kind") == "List" else None
                if isinstance(items, yaml.SequenceNode):
                    found.extend((Origin(source, 0, item), value) for item, value in enumerate(items.value))
                else:
                    found.append((Origin(source, 0), node))
            self._parsed[chunk] = found
        return self._parsed[chunk]


def _namespace(data):
    meta = data.get("metadata") if isinstance(data, dict) else None
    return meta.get("namespace") if isinstance(meta, dict) else None


def _scalar(node, path: str):
    value, mark, rest = descend(node, path)
    return value.value if mark is not None and not rest and isinstance(value, yaml.ScalarNode) else None


class BuiltOrigin:
    """Where an object of a build was written, found when a message about it is first made (see the module)."""

    __slots__ = ("sources", "paths", "kind", "name", "data", "named", "_found")
    item = None

    def __init__(self, sources: Sources, paths, kind, name: str, data, named: str):
        self.sources, self.paths, self.kind, self.name, self.data = sources, paths, kind, name, data
        self.named = named
        self._found = MISSING

    def found(self):
        """(file path, Origin, the file's data of the object, document number) or None."""
        if self._found is MISSING:
            self._found = None
            paths = self.paths() if callable(self.paths) else self.paths
            for path in paths:
                source = self.sources.file(path)
                hit = source.find(self.kind, self.name, _namespace(self.data)) if source is not None else None
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
        if found is None or _differs(found[2], self.data, field):
            return None
        return found[1].scalar_mark(field, offset)

    def written(self, field: str | None, file: str | None):
        """What a message about ``field`` names instead of ``file``: (file, origin, note); the note says that
        the value came through the overlay, the origin is the patch that set it where one did. None: as is."""
        found = self.found()
        if found is None:
            return None
        path, _, node, _ = found
        shown = self.sources.show(path)
        note = None
        if field and _differs(node, self.data, field):
            patch = self.sources.patches(self.kind, self.name, field) if self.sources.patches else None
            if patch is not None:
                patch_file, (line, column) = patch
                return patch_file, _Fixed(line, column, None), f"{THROUGH}: this patch sets it on {self.kind} " \
                                                                f"{self.name} of {shown}"
            written = descend(node, field)[2] == ""
            note = f"{THROUGH}: kustomize changed what this file says here" if written \
                else f"{THROUGH}: kustomize added it to this object"
        return (shown if file == self.named else None), self, note


class _Fixed:
    """A place in a patch: its line and column, whatever field is asked for."""

    __slots__ = ("line", "column", "index")
    item = None

    def __init__(self, line: int, column: int, index):
        self.line, self.column, self.index = line, column, index

    def mark(self, field):
        return self.line, self.column


def _differs(node, data, field: str) -> bool:
    """Whether the built object ``data`` holds at ``field`` another value than the file's ``node`` does."""
    written, _, rest = descend(node, field)
    built = value_at(data, field)
    if rest:
        return built is not MISSING
    return built is MISSING or not _same(written, built, set())


def _same(node, value, seen: set) -> bool:
    """Whether ``node`` (composed, not constructed) writes ``value``; an alias met twice counts as different (its
    expansion is not walked: a billion laughs stays one walk of the text)."""
    if id(node) in seen:
        return False
    seen.add(id(node))
    if isinstance(node, yaml.ScalarNode):
        if isinstance(value, bool):
            return node.value in (("true", "True", "TRUE") if value else ("false", "False", "FALSE"))
        if value is None:
            return node.value in ("", "~", "null", "Null", "NULL")
        return node.value == (value if isinstance(value, str) else str(value))
    if isinstance(node, yaml.SequenceNode):
        return isinstance(value, list) and len(value) == len(node.value) \
            and all(_same(item, v, seen) for item, v in zip(node.value, value))
    if isinstance(node, yaml.MappingNode):
        if not isinstance(value, dict) or len(value) != len(node.value):
            return False
        for key, child in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.value not in value \
                    or not _same(child, value[key.value], seen):
                return False
        return True
    return False


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
