"""YAML out: one stream, keys sorted as kubectl prints them, no anchors.

The output is what ``yaml.dump(obj, sort_keys=True, default_flow_style=False)`` prints, except that
a string is quoted wherever any reader of the output would take it for something else: PyYAML's
YAML 1.1 resolver (which the dumper consults anyway), and the Go readers kustomize, kubectl and Argo
CD use (gopkg.in/yaml.v3's core schema and go-yaml v2, :mod:`.goscalars`), whose rules differ
(``1e-5``, ``0o22``, ``0X1F``, ``09``, ``y``, ``2001-1-2``, ``0b+1``). The dumper only takes
shortcuts for the plain types parsed YAML holds (dict with string keys, list, str, int, bool, None),
builds their nodes directly, and remembers how each scalar text resolves. A stream of objects is written without
PyYAML's node graph at all (the direct writer at the end), with every scalar's text still PyYAML's: dumping
dominated a large render's profile (benchmarks/README.md).
"""
from __future__ import annotations

import codecs
import contextlib
import io
import itertools
import re
import string
import zlib

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from omerender.errors import ObjRef, OmeError
from omerender.gorules.text import is_utf8
from .data import Memo, Recent
from .goscalars import HINTED, reads_as_itself

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_STR, _INT, _BOOL, _NULL = (f"tag:yaml.org,2002:{t}" for t in ("str", "int", "bool", "null"))
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


def _key(item):
    return item[0]


# Go's readers (kubectl's go-yaml v2 rules, kustomize's v3) take a plain text for the string it is only
# where :func:`reads_as_itself` says so: the rules input is read by. On top, every text with the syntax
# of a Go number or timestamp is quoted, even one that then fails the Go parse (out of range, no such
# date): that only costs two quote characters, and other readers (jq, Python's json) may differ there.
_GO_NUMBER_START = frozenset("+-.0123456789")
_GO_NUMBER = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+"
                        r"|(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)\Z")
# yaml.v3 reads "YYYY-M-D", optionally followed by a time after "T", "t" or " ", as a timestamp.
_GO_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ]|\Z)")


def _go_reads_as_non_string(text: str) -> bool:
    if text[:1] in _GO_NUMBER_START and text and (_GO_NUMBER.match(text.replace("_", ""))
                                                   or _GO_TIMESTAMP.match(text)):
        return True
    return not reads_as_itself(text)


# How a plain scalar text resolves does not depend on the document, so one table serves every dump.
_RESOLVED = Memo(1 << 18)
_RESOLVER = yaml.resolver.Resolver()


class _PlainDumper(_Dumper):
    def ignore_aliases(self, data):  # rendered objects share label maps; print each in full
        return True

    def represent_data(self, data):
        kind = type(data)
        if kind is str:
            return ScalarNode(_STR, data, style='"' if _commandlike(data) else None)
        if kind is dict and all(type(k) is str for k in data):
            items = sorted(data.items(), key=_key)  # keys are unique, so the same order as sorted(items)
            return MappingNode(_MAP, [(ScalarNode(_STR, k, style='"' if _commandlike(k, True) else None),
                                       self.represent_data(v)) for k, v in items], flow_style=False)
        if kind is list:
            return SequenceNode(_SEQ, [self.represent_data(item) for item in data], flow_style=False)
        if kind is bool:
            return ScalarNode(_BOOL, "true" if data else "false")
        if kind is int:
            return ScalarNode(_INT, str(data))
        if data is None:
            return ScalarNode(_NULL, "null")
        return super().represent_data(data)

    def resolve(self, kind, value, implicit):
        if kind is not ScalarNode:
            return super().resolve(kind, value, implicit)
        if not implicit[0]:
            return _STR  # the resolver's answer for a scalar that is not plain (no path resolvers here)
        return _plain_tag(value)


# A GitHub Actions runner reads a log line that starts with "::" after whitespace as a workflow command, and a
# rendered stream may be printed in a CI log. A string that would put "::" at the start of a line of the output
# (after a line break in it, at a fold of a long text, or a key at its line's start) is written double-quoted,
# where breaks are escapes and a fold starts its next line with "\": the same string, on no line of its own.
_BREAK_COMMAND = re.compile(r"[\n\r\x85\u2028\u2029][^\S\n\r]*::")
_FOLD_COMMAND = re.compile(r"\s::")
_FOLDS = 1 << 14   # a text this long may be folded at a space by PyYAML's emitter (width 1 << 16, less indentation)


def _commandlike(text: str, key: bool = False) -> bool:
    if "::" not in text:
        return False
    return bool(_BREAK_COMMAND.search(text) or (key and text.lstrip().startswith("::"))
                or (len(text) >= _FOLDS and _FOLD_COMMAND.search(text)))


def _plain_tag(text: str) -> str:
    """The tag a plain ``text`` resolves to; any tag but str makes the emitter quote the text (none is written).
    Every scalar the dumper writes passes here, so a text that cannot be written as UTF-8 is caught here, once."""
    tag = _RESOLVED.get(text)
    if tag is None:
        if not is_utf8(text):
            raise _NotUTF8
        tag = _RESOLVER.resolve(ScalarNode, text, (True, False))
        if tag == _STR and _go_reads_as_non_string(text):
            tag = _NULL
        _RESOLVED.remember(text, tag)
    return tag


_OPTIONS = dict(Dumper=_PlainDumper, sort_keys=True, default_flow_style=False, allow_unicode=True, width=1 << 16)


class _NotUTF8(Exception):
    """A string holds a lone surrogate: no UTF-8 writes it (:func:`not_utf8_error` says where)."""


def _dumped(obj) -> str:
    try:
        return yaml.dump(obj, **_OPTIONS)
    except UnicodeEncodeError:  # an emitter that encodes before the resolver saw the text
        raise _NotUTF8 from None


def dump(obj) -> str:
    """``obj`` as YAML; :class:`OmeError` naming the field of a string that cannot be written as UTF-8.
    Written directly (:func:`_direct`), by PyYAML where that declines: the same text, several times faster."""
    try:
        text = _direct(obj)
        return text if text is not None else _dumped(obj)
    except _NotUTF8:
        raise not_utf8_error(obj) from None


def not_utf8_error(obj) -> OmeError:
    """The error for the first string of ``obj`` (a key or a value) that cannot be written as UTF-8, naming the
    object (when ``obj`` is one) and the field. Kubernetes and every YAML reader take UTF-8 only; such a string
    comes from bytes that were not UTF-8 (a file name) or a lone ``\\ud800`` escape."""
    path, text = _first_not_utf8(obj)
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    ref = None
    if isinstance(meta, dict) and isinstance(obj.get("kind"), str) and isinstance(meta.get("name"), str):
        ref = ObjRef(obj["kind"], meta["name"], meta.get("namespace"))
    shown, where = (_escaped(t)[:80] for t in (text, path or "the value"))
    return OmeError(f'{where}: the string "{shown}" cannot be written as UTF-8: it holds half of a '
                    f"UTF-16 surrogate pair (U+D800 to U+DFFF), which no UTF-8 text can hold; write the character it "
                    f"stands for", ref=ref, field=path or None)


def _escaped(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _first_not_utf8(obj) -> tuple[str, str]:
    """(the field path, the string) of the first string in ``obj``, key or value, that is not UTF-8."""
    work = [("", obj)]
    while work:
        path, value = work.pop()
        if isinstance(value, str):
            if not is_utf8(value):
                return path, value
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                if isinstance(key, str) and not is_utf8(key):
                    return f"{path}.{key}" if path else key, key
                work.append((f"{path}.{key}" if path else str(key), item))
        elif isinstance(value, list):
            work.extend((f"{path}[{i}]", item) for i, item in reversed(list(enumerate(value))))
    return "", ""


def dump_in_order(mapping: dict) -> str:
    """``dump(mapping)`` with the top-level keys in the mapping's own order (below them, sorted as ever):
    for text inserted into a user's file, where the order is chosen, and every string still quoted
    wherever a reader would take it for something else."""
    return "".join(dump({key: value}) for key, value in mapping.items())


def dump_stream(objects: list) -> str:
    out = io.StringIO()
    write_stream(objects, out)
    return out.getvalue()


def dump_resource_list(resource_list: dict) -> str:
    """``dump(resource_list)``, item by item: the same text without building one node graph for
    the whole list, which for a large fleet holds gigabytes."""
    return "".join(_resource_list_pieces(resource_list))


def write_resource_list(resource_list: dict, out) -> None:
    """``out.write(dump_resource_list(resource_list))`` one item at a time."""
    batched = _Batched(out.write)
    for piece in _resource_list_pieces(resource_list):
        batched.write(piece)
    batched.flush()


def _resource_list_pieces(resource_list: dict):
    items = resource_list.get("items")
    if not items or not isinstance(items, list) or not all(isinstance(i, dict) and i for i in items):
        yield dump(resource_list)
        return
    head = dump({k: v for k, v in resource_list.items() if k != "items"} | {"items": []})
    marker = "items: []\n"
    if head.count(marker) != 1:
        yield dump(resource_list)
        return
    before, after = head.split(marker)
    yield before + "items:\n"
    for text in _each_dumped(items):
        yield _as_item(text)
    yield after


def _each_dumped(objects: list):
    """``dump(obj)`` for each object."""
    for obj in objects:
        yield dump(obj)


def _as_item(text: str) -> str:
    """A dumped mapping as a block sequence entry: ``- `` on its first line, two spaces on the others
    (PyYAML writes the blank lines of a folded scalar with no indentation)."""
    lines = text.splitlines(keepends=True)
    return "- " + lines[0] + "".join("  " + line if line != "\n" else line for line in lines[1:])


def write_stream(objects: list, out) -> None:
    """Each object as ``"---\n" + dump(obj)``, written as it is dumped, never holding the whole text."""
    batched = _Batched(out.write)
    for text in _each_dumped(objects):
        batched.write("---\n" + text)
    batched.flush()


class Spool:
    """A YAML stream dumped as its objects come (``"---\n" + dump(obj)`` each, :func:`write_stream`'s text), held
    (compressed once it is longer than :attr:`HOLD` characters) until it is written out whole: a large render's
    objects then need not stay in memory until the render is known to have succeeded (ome.render's sink). A string
    that cannot be written as UTF-8 is remembered (the first, as :attr:`error`) and raised when the stream is
    written, as :func:`write_stream` raises it."""

    PACK = 1 << 18   # characters dumped before they are joined, and compressed together past HOLD
    # Compressing costs about 3 % of a render (zlib's fastest level; YAML still packs about 10x), so a stream of at
    # most HOLD characters (a 1,000 InferenceService render's) is held as text; once a stream grows past it, all of
    # it is compressed, so a large render's peak memory is what it was.
    HOLD = 1 << 24

    def __init__(self):
        self.error: OmeError | None = None
        self._packer = zlib.compressobj(1)
        self._texts: list[str] = []   # the stream's start, as it is
        self._kept = 0
        self._packed: list[bytes] = []
        self._batched = _Batched(self._hold, self.PACK)

    def __call__(self, obj) -> None:
        if self.error is not None:
            return
        try:
            text = dump(obj)
        except OmeError as err:
            self.error = err
            return
        self._batched.write("---\n")
        self._batched.write(text)

    def put(self, text: str) -> None:
        """Add ``text`` to the stream as it is (:meth:`texts` gives it back in pieces of any length)."""
        self._batched.write(text)

    def _hold(self, text: str) -> None:
        """Keep PACK characters or so of the stream, joined: as text, or compressed past HOLD."""
        self._kept += len(text)
        self._texts.append(text)
        if self._kept > self.HOLD:
            for text in self._texts:
                self._packed.append(self._packer.compress(text.encode("utf-8")))
            self._texts = []

    def texts(self):
        """The stream's text, a piece at a time."""
        self._batched.flush()
        yield from self._texts   # held as text: the stream stayed under HOLD, nothing was packed
        self._texts, self._kept = [], 0
        self._packed.append(self._packer.flush())
        self._packer = zlib.compressobj(1)
        unpacker, decoder = zlib.decompressobj(), codecs.getincrementaldecoder("utf-8")()
        for packed in self._packed:
            yield decoder.decode(unpacker.decompress(packed))   # a piece may end inside a character
        yield decoder.decode(unpacker.flush(), final=True)
        self._packed = []


def write_spliced(head: list, spool: Spool, tail: list, out) -> None:
    """``write_stream(head + <the spool's objects> + tail, out)``, where the first object that cannot be written
    raises before anything is written: a failed stream leaves ``out`` empty."""
    first = ["---\n" + text for text in _each_dumped(head)]
    if spool.error is not None:
        raise spool.error
    last = ["---\n" + text for text in _each_dumped(tail)]
    batched = _Batched(out.write)
    for text in itertools.chain(first, spool.texts(), last):   # the spool's text never whole in memory
        batched.write(text)
    batched.flush()


class _Batched:
    """Passes text on to ``write`` about a MiB (``size`` characters) at a time, joined.

    Written as dumped, stdout got 8 KiB writes: into a pipe (kustomize reading a function, Argo CD a
    plugin, ``| omerender render -``), each wakes the reader, and at 200 InferenceServices that cost
    the function 4 % more CPU than writing to a file (benchmarks/RESULTS.md). A MiB at a time it is 1 %.
    """
    def __init__(self, write, size: int = 1 << 20):
        self._write, self._size, self._parts, self._held = write, size, [], 0

    def write(self, text: str) -> None:
        self._parts.append(text)
        self._held += len(text)
        if self._held >= self._size:
            self.flush()

    def flush(self) -> None:
        if self._parts:
            self._write("".join(self._parts))
            self._parts, self._held = [], 0


# ---------------------------------------------------------------- the same text, written directly
#
# A rendered stream is plain data whose strings are mostly names, labels and images: for those, PyYAML's emitter
# does nothing but indent and join, yet building its node graph cost most of the dump. The writer below prints
# the block layout PyYAML prints (keys sorted, a list under a key at the key's indentation, ``- `` items, ``{}`` and
# ``[]`` for empty ones) and takes every scalar's text from PyYAML itself, once per distinct string. An object
# holding a string whose text PyYAML would spread over lines (or a key it would not write as a simple key) is
# dumped by PyYAML whole, so the output is byte for byte ``dump_all``'s.

# A text PyYAML writes plain in block context when it resolves to a string: no space or line break, no indicator
# first, no ":" last (one before a space or the end is an indicator), not starting a document marker.
_SAFE_PLAIN = re.compile(r"(?!---|\.\.\.)(?:[A-Za-z0-9_./=+]|-(?=.))[A-Za-z0-9_./=+:@,%-]*(?<!:)\Z")
_VALUE_LINE = Memo(1 << 18)   # string -> its text as a block value and "\n", or None: PyYAML writes it over lines
_KEY_TEXT = Memo(1 << 18)     # string -> its text as a simple key, or None
_BREAK = re.compile("[\n\r\x85\u2028\u2029]")  # YAML's line breaks: a text holding one spans lines
_WIDTH_MARGIN = 1 << 15  # far below the dump's line width, whatever the indentation


class _Unwritable(Exception):
    """The object holds something the direct writer leaves to PyYAML."""


def _cached(cache: Memo, text: str, write) -> str:
    """``write(text)``, remembered in ``cache``; :class:`_Unwritable` where it gives None."""
    found = cache.get(text, cache)
    if found is cache:
        found = cache.remember(text, write(text))
    if found is None:
        raise _Unwritable
    return found


def _one_line(dumped: str) -> bool:
    """The dumped text is one line, far from the width where a deeper indentation could fold it."""
    return not _BREAK.search(dumped, 0, len(dumped) - 1) and len(dumped) < _WIDTH_MARGIN


# A text starting with a letter that neither PyYAML's resolver (which picks its rules by the first character) nor
# go-yaml's (:data:`HINTED`) looks at further resolves to a string for every reader: most names and images. Asking
# them costs some 4 µs per distinct string (the 10,000 fleet's output has 26,000, 24,000 of them names like these).
_STRING_START = frozenset(string.ascii_letters) - set(_RESOLVER.yaml_implicit_resolvers) - HINTED


def _safe_text(text: str) -> str | None:
    """PyYAML's text for a ``text`` the plain pattern matches: the text, plain, where every reader reads it as the
    string it is, else single-quoted (it holds no quote, space or break); None for any other ``text``."""
    if not _SAFE_PLAIN.match(text):
        return None
    return text if text[:1] in _STRING_START or _plain_tag(text) == _STR else f"'{text}'"


def _as_value_line(text: str) -> str | None:
    written = _safe_text(text)
    if written is not None:
        return written + "\n"
    dumped = _dumped({"k": text})
    return dumped[3:] if dumped.startswith("k: ") and _one_line(dumped) else None


def _as_key(text: str) -> str | None:
    written = _safe_text(text) if len(text) <= 128 else None
    if written is not None:
        return written
    dumped = _dumped({text: 0})
    return dumped[:-4] if dumped.endswith(": 0\n") and not dumped.startswith("?") and _one_line(dumped) else None


def _value_line(text: str) -> str:
    return _cached(_VALUE_LINE, text, _as_value_line)


def _value_text(text: str) -> str:
    return _value_line(text)[:-1]


def _key_text(text: str) -> str:
    return _cached(_KEY_TEXT, text, _as_key)


def _scalar_line(value) -> str:
    """The line's end for a value that is not a string (nor a map or list)."""
    kind = type(value)
    if kind is bool:
        return "true\n" if value else "false\n"
    if kind is int:
        return f"{value}\n"
    if value is None:
        return "null\n"
    raise _Unwritable


# The two functions below are the writer's inner loop (a quarter of a large render's time): one call per
# collection, the caches read inline (a cached text is never empty; a miss or an unwritable text goes to
# _key_text or _value_line, which raise for the latter). A line goes out as pieces the join puts together: its start
# and its value's text with the line break (both worked out once), never a string built per line. Rendered maps
# repeat a few key sets (a container's, a probe's, metadata's) thousands of times at a few indentations: each set's
# sorted order and its lines' starts (indentation, key text, ":") are worked out once per indentation (_SHAPES). A
# collection's first line starts with ``first`` (a ``- `` prefix, or the indentation), a piece of its own.
_SHAPES = Memo(1 << 14)   # (keys of a map in its order, indent) -> ((key, start and " ", start and "\n"), ...) sorted


def _shape(keys: tuple, indent: str) -> tuple:
    """``keys`` sorted, each with its line's start (the first without the indentation) followed by a space and by
    a line break; :class:`_Unwritable` for a key that is not a string."""
    if not all(type(key) is str for key in keys):
        raise _Unwritable
    ordered = sorted(keys)
    starts = [indent + _key_text(key) + ":" for key in ordered]
    starts[0] = starts[0][len(indent):]
    return _SHAPES.remember((keys, indent), tuple((key, start + " ", start + "\n")
                                                  for key, start in zip(ordered, starts)))


def _mapping(data: dict, indent: str, first: str, out: list) -> None:
    """A block mapping at ``indent``; its first key follows ``first`` (``indent``, or a ``- `` prefix)."""
    keys = tuple(data)
    shape = _SHAPES.get((keys, indent)) or _shape(keys, indent)
    inner = indent + "  "
    append = out.append
    append(first)
    line_of = _VALUE_LINE.get
    for key, start, opens in shape:
        value = data[key]
        kind = type(value)
        if kind is str:
            append(start)
            append(line_of(value) or _value_line(value))
        elif kind is dict:
            if value:
                append(opens)
                if _KEPT and id(value) in _KEPT:
                    _kept_text(value, inner, out)
                else:
                    _mapping(value, inner, inner, out)
            else:
                append(start)
                append("{}\n")
        elif kind is list:
            if value:
                append(opens)
                _sequence(value, indent, indent, out)  # a list under a key is not indented
            else:
                append(start)
                append("[]\n")
        else:
            append(start)
            append(_scalar_line(value))


def _sequence(data: list, indent: str, first: str, out: list) -> None:
    """A block sequence at ``indent``; its first ``- `` follows ``first`` (``indent``, or ``- `` prefixes)."""
    inner = indent + "  "
    append = out.append
    line_of = _VALUE_LINE.get
    head = first + "- "
    dash = indent + "- "
    for item in data:
        kind = type(item)
        if kind is str:
            append(head)
            append(line_of(item) or _value_line(item))
        elif kind is dict and item:
            _mapping(item, inner, head, out)
        elif kind is list and item:
            _sequence(item, inner, head, out)
        else:
            append(head)
            append("{}\n" if kind is dict else "[]\n" if kind is list else _scalar_line(item))
        head = dash


def _direct(obj) -> str | None:
    """``dump(obj)``, written directly; None where it is left to PyYAML (anything but a non-empty mapping too)."""
    if type(obj) is not dict or not obj:
        return None
    out: list = []
    try:
        _mapping(obj, "", "", out)
    except (_Unwritable, RecursionError, TypeError):  # TypeError: keys of mixed types do not sort
        return None
    return "".join(out)


# ---------------------------------------------------------------- the text of a map written before
#
# One map may be held by many objects (a pod spec shared by the Deployments of InferenceServices alike, ome's pod
# build): its text at an indentation is the same each time, so it is written once. Only maps a caller keeps
# (:func:`keep_text`, inside :func:`kept_texts`) are looked up, by identity, while the entry holds them alive.
_KEPT = Recent(1536)   # id of a kept map -> (the map, {indentation: its text there}), the last kept (or used)
_KEEPING = [0]          # kept_texts() open around this (a render)


@contextlib.contextmanager
def kept_texts():
    """Maps kept inside (:func:`keep_text`) have their text written once; all are let go at the end."""
    _KEEPING[0] += 1
    try:
        yield
    finally:
        _KEEPING[0] -= 1
        if not _KEEPING[0]:
            _KEPT.clear()


def keep_text(data: dict) -> None:
    """The writer may reuse ``data``'s text wherever it meets ``data`` again: its caller never changes it after
    this (the text written first would be written again). Nothing is kept outside :func:`kept_texts`."""
    if _KEEPING[0]:
        found = _KEPT.get(id(data))
        if found is None or found[0] is not data:
            _KEPT.remember(id(data), (data, {}))


def kept_within(maps: list[dict]) -> "_Within":
    """:func:`keep_text` for each of ``maps`` inside a ``with`` block, outside the count of the last kept (they are
    let go at its end): for the maps several objects of one write hold (a component's labels), which would otherwise
    push shared pod specs out. The caller changes none of them inside."""
    return _Within(maps)


class _Within:
    __slots__ = ("_added",)

    def __init__(self, maps: list[dict]):
        self._added = []
        if _KEEPING[0]:
            for data in maps:
                if id(data) not in _KEPT:
                    _KEPT[id(data)] = (data, {})
                    self._added.append(id(data))

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_) -> None:
        for key in self._added:
            _KEPT.pop(key, None)


def _kept_text(data: dict, indent: str, out: list) -> None:
    kept, texts = _KEPT[id(data)]
    text = texts.get(indent) if kept is data else None
    if text is None:
        part: list = []
        _mapping(data, indent, indent, part)   # raises before anything is kept where the map is unwritable
        text = "".join(part)
        if kept is data:
            texts[indent] = text
    out.append(text)
