"""Where a field is written: the line and column a message names (``file:line:column``), found only when a
message is printed.

The render keeps no marks: parsing records the start of each document's root node (one mark per document,
:func:`omerender.yamlio.yamlread.load_all`), and each object keeps an :class:`Origin` (its text, document
and ``kind: List`` item). A message with a file tells its origin which field it will ask for (:meth:`Origin.want`)
when it is made; when a message is printed and asks for the mark of its field, that one document is composed
again (a node tree, with marks) and the fields of every message made so far about that document are placed in
one walk; the tree is then dropped and only their lines and columns kept. So the messages of a run cost one
composition per document that they name, in whatever order they are printed (two ``kind: List`` documents whose
messages alternate are composed once each, not once per message). A field asked for only after its document
was placed composes it again (the last trees are kept, up to :data:`CACHED_CHARS` of text).
A document in the plainest block style (keys and one-line scalars, as most InferenceServices are written) is not
composed: its keys are read from its lines (:func:`_plain_keys`), which places them where composing would.
A field the object does not have is shown at its nearest parent that it has; no field, at the object's start,
as is any field of a document too large to compose again (:data:`MAX_COMPOSED_CHARS`).
Lines and columns count from 1, as editors, kubectl and Go's YAML readers show them.
"""
from __future__ import annotations

import re

import yaml


class _Composer(getattr(yaml, "CBaseLoader", yaml.BaseLoader)):
    """A node tree with marks, no more: no tag is resolved (a third of the time), nothing is built."""

    def resolve(self, kind, value, implicit):
        return None

    def descend_resolver(self, current_node, current_index):
        pass

    def ascend_resolver(self):
        pass


# A node tree takes some 50 times its text in memory: documents are composed again up to this size (past it a
# message names the object's line), and the trees kept for the next messages hold at most CACHED_CHARS of text.
MAX_COMPOSED_CHARS = 4 * 1024 * 1024
CACHED_CHARS = 256 * 1024


class Source:
    """A text read as input, with the start mark of each document's root (see the module's doc)."""

    __slots__ = ("text", "roots", "_documents", "_cached", "_wanted", "_placed")

    def __init__(self, text: str, roots: list):
        self.text = text
        self.roots = roots
        self._documents: dict = {}  # index -> (tree, its first line, its characters, where in text), oldest first
        self._cached = 0
        self._wanted: dict = {}  # index -> {(item, field)} that messages made so far will ask for
        self._placed: dict = {}  # index -> {(item, field): (line, column) or None}

    def want(self, index: int, item: int | None, field: str | None) -> None:
        """Note that a message will ask for the mark of ``field`` of item ``item`` of document ``index``."""
        if (item, field) not in self._placed.get(index, ()):
            self._wanted.setdefault(index, set()).add((item, field))

    def place(self, index: int, item: int | None, field: str | None) -> tuple[int, int] | None:
        """The mark of ``field`` of item ``item`` of document ``index``: placed with every field wanted of that
        document in one composition (or one reading of its keys, :func:`_plain_keys`), the first time one of them
        is asked for."""
        placed = self._placed.setdefault(index, {})
        if (item, field) not in placed:
            wanted = self._wanted.pop(index, set()) | {(item, field)}
            composed = None
            if index not in self._documents and all(key[0] is None for key in wanted):
                composed = self._plain(index)
            if composed is None:
                composed = self.document(index)
            for key in wanted:
                placed[key] = _locate(self.roots[index], composed, *key)
        return placed[(item, field)]

    def _plain(self, index: int):
        """Document ``index`` as :meth:`document` gives it, its mappings read from its lines alone where it is
        written in the plainest block style (:func:`_plain_keys`); None where it is not."""
        root = self.roots[index]
        if root.column != 0:
            return None
        following = self.roots[index + 1] if index + 1 < len(self.roots) else None
        end = following.index - following.column if following is not None else len(self.text)
        if end - root.index > MAX_COMPOSED_CHARS:
            return None
        keys = _plain_keys(self.text, root.index, end)
        return None if keys is None else (keys, root.line)

    def keep(self, index: int, tree, first_line: int, chars: int) -> None:
        """Keep the node tree of document ``index`` composed already from the start of the text (its line
        ``first_line``, 0-based, ``chars`` characters), as :meth:`document` would."""
        while self._documents and self._cached + chars > CACHED_CHARS:
            self._cached -= self._documents.pop(next(iter(self._documents)))[2]
        self._documents[index] = (tree, first_line, chars, 0)
        self._cached += chars

    def document(self, index: int):
        """The node tree of document ``index`` and the line it starts on; None if it cannot be composed alone
        or is too large (then a message names the object's line, never a wrong one)."""
        if index not in self._documents:
            root = self.roots[index]
            start = root.index - root.column
            following = self.roots[index + 1] if index + 1 < len(self.roots) else None
            end = max(start, following.index - following.column if following is not None else len(self.text))
            if end - start > MAX_COMPOSED_CHARS:
                return None
            while self._documents and self._cached + end - start > CACHED_CHARS:
                self._cached -= self._documents.pop(next(iter(self._documents)))[2]
            self._documents[index] = (self._compose(root, start, end), root.line, end - start, start)
            self._cached += end - start
        tree, line, _, _ = self._documents[index]
        return None if tree is None else (tree, line)

    def start(self, index: int) -> int:
        """Where in the text the node tree of document ``index`` (:meth:`document`) was composed from."""
        return self._documents[index][3]

    def _compose(self, root, start: int, end: int):
        """Compose only the lines of one document: from the line its root starts on to the line the next
        document's root starts on (a ``---`` or comments there compose as nothing more)."""
        loader = _Composer(self.text[start:end])
        try:
            node = loader.get_node() if loader.check_node() else None
        except Exception:  # noqa: BLE001 - PyYAML's composer raises more than YAMLError on some texts, and a
            return None    # position only helps: it never stops the message it belongs to
        finally:
            loader.dispose()
        if node is None or node.start_mark.line != 0 or node.start_mark.column != root.column:
            return None  # not the document the render read: show no line
        return node


def compose(text: str):
    """The node tree (with marks) of the one document ``text``; None if it is not one composable document."""
    loader = _Composer(text)
    try:
        return loader.get_single_node()
    except Exception:  # noqa: BLE001 - as in Source._compose: a position only helps
        return None
    finally:
        loader.dispose()


def descend(node, path: str):
    """(the deepest node of ``path`` that ``node`` has, its mark, the rest of ``path`` not found)."""
    return _descend(node, path)


class Origin:
    """Where one object was read: document ``index`` of ``source``, or item ``item`` of that ``kind: List``.

    :class:`omerender.errors.Message` asks it for :meth:`mark`; ``index`` is what a KRM result's ``file.index``
    says."""

    __slots__ = ("source", "index", "item")

    def __init__(self, source: Source | None, index: int | None, item: int | None = None):
        self.source = source
        self.index = index
        self.item = item

    def want(self, field: str | None) -> None:
        """Note that a message about this object will ask for the mark of ``field`` (see the module's doc)."""
        if self.source is not None and self.index is not None and self.index < len(self.source.roots):
            self.source.want(self.index, self.item, field)

    def mark(self, field: str | None) -> tuple[int, int] | None:
        """The 1-based line and column of ``field`` (a path such as ``spec.engine.runner.args[2]``) in this
        object, of its nearest parent present, or of the object when ``field`` is None."""
        if self.source is None or self.index is None or self.index >= len(self.source.roots):
            return None
        if field is None and self.item is None:
            root = self.source.roots[self.index]
            return root.line + 1, root.column + 1
        return self.source.place(self.index, self.item, field)

    def scalar_mark(self, field: str, offset: int) -> tuple[int, int] | None:
        """The 1-based line and column of character ``offset`` of the string at ``field`` (see :class:`InScalar`);
        None when it cannot be told."""
        if self.source is None or self.index is None or self.item is not None or self.index >= len(self.source.roots):
            return None
        composed = self.source.document(self.index)
        if composed is None:
            return None
        node, first_line = composed
        value, mark, rest = _descend(node, field)
        if mark is None or rest or not isinstance(value, yaml.ScalarNode):
            return None
        start = self.source.start(self.index)
        lines = self.source.text[start:start + value.end_mark.index + 1].split("\n")
        found = _inside(value, lines, offset)
        return None if found is None else (first_line + found[0] + 1, found[1] + 1)


def _locate(root, composed, item: int | None, field: str | None) -> tuple[int, int] | None:
    """The mark of ``field`` of item ``item`` (None: the document itself) in the document whose root starts at
    ``root``, composed as ``composed`` (None: it could not be, then the object's own line, or none for an item)."""
    if composed is None:
        return (root.line + 1, root.column + 1) if item is None else None
    node, first_line = composed
    mark = node.start_mark
    if item is not None:
        items = _child(node, "items")[0]
        if not isinstance(items, yaml.SequenceNode) or item >= len(items.value):
            return None
        node = items.value[item]
        mark = node.start_mark
    if field:
        mark = walk(node, field) or mark
    return first_line + mark.line + 1, mark.column + 1


class InScalar:
    """Where a message points inside a string value: ``offset`` characters into the string at ``field`` of the
    object ``origin`` read (a JSON syntax error inside a ConfigMap's data value, say). The line and column are
    exact for a literal block scalar (``|``) and for a one-line plain or quoted scalar without escapes; for any
    other value they are those of ``field``."""

    __slots__ = ("origin", "field", "offset")

    def __init__(self, origin: Origin, field: str, offset: int):
        self.origin, self.field, self.offset = origin, field, offset

    @property
    def index(self):
        return self.origin.index

    @property
    def item(self):
        return self.origin.item

    def mark(self, field: str | None) -> tuple[int, int] | None:
        return self.origin.scalar_mark(self.field, self.offset) or self.origin.mark(self.field)

    def written(self, field: str | None, file: str | None):
        """The file a built object was written in (see :mod:`omerender.yamlio.provenance`), this place in it."""
        written = getattr(self.origin, "written", None)
        moved = written(self.field, file) if written is not None else None
        if moved is None or moved[1] is not self.origin:  # nothing to say, or a patch set the string
            return moved
        return moved[0], self, moved[2]


def _inside(value, lines: list[str], offset: int) -> tuple[int, int] | None:
    """The 0-based line and column, within the document's ``lines``, of character ``offset`` of the scalar
    node ``value``; None where the source does not map character for character."""
    string = value.value
    offset = min(offset, len(string))
    line = string.count("\n", 0, offset)
    column = offset - (string.rfind("\n", 0, offset) + 1)
    start = value.start_mark
    if value.style == "|":
        content = [text for text in lines[start.line + 1:start.line + 2 + string.count("\n")] if text.strip()]
        if not content:
            return None
        indent = len(content[0]) - len(content[0].lstrip(" "))
        return start.line + 1 + line, indent + column
    if value.style in ('"', "'", None) and start.line == value.end_mark.line and start.line < len(lines):
        quoted = value.style is not None
        raw = lines[start.line][start.column + quoted:value.end_mark.column - quoted]
        return (start.line, start.column + quoted + column) if raw == string else None
    return None


def walk(node, path: str):
    """The mark of the deepest node of ``path`` that ``node`` has: the key of a mapping entry, the start of a
    list item; None if not even the first step is there.

    Paths are written as messages write them: keys joined by ``.`` (a key may hold dots itself:
    ``metadata.annotations.ome.io/inject``: the longest key that fits is taken), list items as ``[2]``, a key
    in brackets as ``[name]`` or ``["a.b"]``."""
    return _descend(node, path)[1]


def _descend(node, path: str):
    """(the deepest node of ``path`` that ``node`` has, its mark, the rest of ``path`` not found)."""
    mark = None
    rest = path
    while rest:
        if rest.startswith("["):
            close = rest.find("]")
            if close < 0:
                break
            child, found = _child(node, rest[1:close].strip("\"'"))
            used = close + 1
        else:
            key = _longest_key(node, rest)
            if key is None:
                break
            child, found = _child(node, key)
            used = len(key)
        if found is None:
            break
        node, mark, rest = child, found, rest[used:]
        rest = rest[1:] if rest.startswith(".") else rest
    return node, mark, rest


def _child(node, token: str):
    """The child of ``node`` named ``token`` (a key, or a list index) and its mark; (None, None) if absent."""
    if type(node) is _PlainMapping:
        return node.get(token, (None, None))
    if isinstance(node, yaml.SequenceNode):
        if token.isdigit() and int(token) < len(node.value):
            item = node.value[int(token)]
            return item, item.start_mark
    elif isinstance(node, yaml.MappingNode):
        return _keys(node).get(token, (None, None))
    return None, None


def _keys(node) -> dict:
    """The scalar keys of the mapping ``node``, each to its (value, key mark), the first of a repeated key; built
    once per node and kept on it, so that N messages about one mapping of K keys cost O(N + K), not O(N x K)."""
    index = getattr(node, "_omerender_keys", None)
    if index is None:
        index = {}
        for key_node, value in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value not in index:
                index[key_node.value] = (value, key_node.start_mark)
        node._omerender_keys = index
    return index


def _longest_key(node, rest: str) -> str | None:
    """The longest key of the mapping ``node`` that ``rest`` starts with, followed by ``.``, ``[`` or nothing."""
    if type(node) is _PlainMapping:
        keys = node
    elif isinstance(node, yaml.MappingNode):
        keys = _keys(node)
    else:
        return None
    ends = [i for i, char in enumerate(rest) if char in ".["] + [len(rest)]
    for end in reversed(ends):  # the longest first
        if rest[:end] in keys:
            return rest[:end]
    return None


# ---------------------------------------------------------------- documents read from their lines

class _Mark:
    __slots__ = ("line", "column")

    def __init__(self, line: int, column: int):
        self.line, self.column = line, column


class _PlainMapping(dict):
    """A block mapping read by :func:`_plain_keys`: each key to (its value, a mapping or None, and its mark), the
    first of a repeated key, as :func:`_keys` indexes a composed one."""

    __slots__ = ("start_mark",)


# The plainest block style, line by line: a key (a plain scalar of letters, digits and ``_./-``) and, on its line, no
# value, a one-line plain scalar or a quoted string without escapes; blank and comment lines; the next document's
# ``---``. Nothing in it is a sequence, a flow collection, an anchor, alias, tag or multi-line scalar, so the
# indentation of its lines alone places every key where composing the document would (tests/test_lines.py compares
# both on every document of the tests).
_CHAR = r"[A-Za-z0-9_./+=~]"
_WORD = rf"(?:{_CHAR}|[-@:](?={_CHAR}))+"
_VALUE = rf"""(?:{_CHAR}(?:{_WORD})?(?:[ ]+{_WORD})*|'[^'\n]*'|"[^"\\\n]*")"""
_KEY = r"[A-Za-z0-9_][A-Za-z0-9_./-]*"
_OTHER_LINE = r"[ ]*(?:\#[^\n]*)?(?:\n|\Z)"
_PLAIN_DOCUMENT = re.compile(rf"(?:[ ]*{_KEY}:(?:[ ]+{_VALUE})?[ ]*(?:\n|\Z)|{_OTHER_LINE})*"
                             rf"(?:---[ ]*(?:\n|\Z)(?:{_OTHER_LINE})*)?")
_KEY_LINE = re.compile(rf"^([ ]*)({_KEY}):[ ]*(\S?)", re.MULTILINE)


def _plain_keys(text: str, start: int, end: int) -> _PlainMapping | None:
    """The keys of the document ``text[start:end]`` (its root a block mapping at the start), nested as it nests
    them, each with its line (from 0) and column; None unless it is all in the plainest block style above."""
    if _PLAIN_DOCUMENT.fullmatch(text, start, end) is None:
        return None
    root = _PlainMapping()
    root.start_mark = _Mark(0, 0)
    levels = [(0, root)]  # (the indentation of a mapping's keys, the mapping), outermost first
    last = None  # the key before: (its mapping, the key, its mark, whether a value follows it on its line)
    line, at = 0, start
    for found in _KEY_LINE.finditer(text, start, end):
        line += text.count("\n", at, found.start())
        at = found.start()
        indent, key = len(found.group(1)), found.group(2)
        while indent < levels[-1][0]:
            levels.pop()
        if indent > levels[-1][0]:  # the first key of the mapping that is the value of the key before
            if last is None or last[3] or last[0] is not levels[-1][1]:
                return None
            child = _PlainMapping()
            if last[0][last[1]][1] is last[2]:  # not a repeated key's, which composing would not index either
                last[0][last[1]] = (child, last[2])
            levels.append((indent, child))
        mapping = levels[-1][1]
        if indent != levels[-1][0] or (last is None and (line, indent) != (0, 0)):
            return None
        mark = _Mark(line, indent)
        mapping.setdefault(key, (None, mark))
        last = (mapping, key, mark, found.group(3) != "")
    return root if last is not None else None
