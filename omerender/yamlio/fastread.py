"""The fast read path: a text's documents read with rapidyaml (C++), where it reads them exactly as the limited
loader (:mod:`omerender.yamlio.yamlread`) does, and that loader everywhere else, decided per document.

rapidyaml parses a document into its tree and writes it as JSON in C++; :func:`json.loads` builds the Python values.
It reads YAML by its own rules, not Go's, so each document is guarded before and after:

- the whole text goes to the loader for a tab, carriage return, byte order mark, control or non-character, a
  line or paragraph separator (U+2028, U+2029: line breaks in the loader's marks), a
  directive (``%``), a document end (``...``) or content on a ``---`` line;
- a document goes to the loader for an anchor, alias, tag, explicit key or reserved indicator where a token may
  start (``&*!?@``` after a space, a newline, ``[``, ``{`` or ``,``), a backslash (escapes), a line over
  :data:`_LONG_LINE` characters or more than :data:`_MOST_BRACKETS` flow brackets (which bound what rapidyaml
  parses), a block scalar as the whole document, anything rapidyaml refuses to parse or write (it writes no
  nesting past 64 levels, under :data:`.limits.MAX_DEPTH`), a number whose text :func:`.goscalars.read_plain`
  reads as no int or float (the value is always read_plain's), a key twice (the mappings hold fewer keys than
  the JSON names), an empty or merge (``<<``) key, and a string that a plain scalar of its text would not be to
  the loader (``True``, ``~``, ``0o22``, ``1_000``, ``yes``, ``2001-12-14``...) unless rapidyaml reads no plain
  scalar of that text as that string (``8080``: then it was quoted) or the document holds that text nowhere
  where a plain scalar could stand (it was quoted).

A document the loader reads is read alone, and its root mark placed in the whole text; any error there, any limit
passed, and the whole text is read by the loader again, so every message, and which comes first, is the loader's.
Positions are the loader's: each document's root mark is found in the text (its first character past blank and
comment lines; an empty document's where the next starts), and marks of fields are composed again from the text
when a message asks (:mod:`.marks`).

``OMERENDER_YAML_FAST`` (:data:`ENV`): ``on`` (the default), ``off`` (the loader only), ``verify`` (both, and a
difference is an error: the test suite runs so). Without rapidyaml (a platform it has no wheel for) every text
takes the loader, with the same output.
"""
from __future__ import annotations

import json
import os
import re
from functools import lru_cache

import yaml

from omerender.errors import OmeError
from . import limits
from .data import Memo
from .goscalars import FLOAT, INT, STR, read_plain

try:  # rapidyaml has wheels for CPython 3.8-3.14 on manylinux, macOS and Windows; elsewhere the loader reads all
    import ryml
except ImportError:  # pragma: no cover - tested by OMERENDER_YAML_FAST=off
    ryml = None

ENV = "OMERENDER_YAML_FAST"
AVAILABLE = ryml is not None

# The whole text to the loader: what changes how documents split, or how a character reads anywhere.
# tab, CR, BOM, controls, and U+2028/U+2029, which the loader counts as line breaks in its marks
_CHARS = "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
_PRINTABLE_ASCII = b"\n" + bytes(range(0x20, 0x7f))  # of an ASCII text, the characters none of _CHARS
_LINES = re.compile(r"\n(?:%|\.\.\.|---(?! *(?:\n|\Z)))")  # a directive, a document end, content after ---
_SEPARATOR = re.compile(r"^--- *$", re.M)
# One document to the loader: anchors, aliases, tags, explicit keys, escapes, very long lines; a value that
# starts with "]", "}" or ",", and a block scalar that starts a line (a root one), which rapidyaml reads and the
# loader refuses.
_LONG_LINE = 2000
_MOST_BRACKETS = 5000
_LONG = re.compile(r"^[^\n]{%d}" % _LONG_LINE, re.M)
_CONTENT = re.compile(r"^ *[^ \n#]", re.M)


# Documents each path read in this process (tests look at them): "fast" by rapidyaml, "slow" by the loader.
READ = {"fast": 0, "slow": 0}


class FastPathDifference(AssertionError):
    """``OMERENDER_YAML_FAST=verify``: the two paths read a text differently (a bug in the guards)."""


class _Slow(Exception):
    """This document goes to the loader."""


_MODES = ("on", "off", "verify")


def setting(environ=os.environ) -> str:
    """``OMERENDER_YAML_FAST``: on (default), off or verify; anything else is an error (:func:`.reading.read_paths`
    asks, so every command that reads input refuses it before reading)."""
    value = environ.get(ENV, "on")
    if value not in _MODES:
        shown = value.encode("unicode_escape").decode("ascii")
        raise OmeError(f'{ENV} must be on, off or verify, got "{shown}"')
    return value


def _mode() -> str:
    value = os.environ.get(ENV, "on")
    return value if value in _MODES else "off"  # refused where input is read (setting); the loader meanwhile


def load_all(text, budget, roots: list | None, slow) -> list:
    """Every document of ``text``, as ``slow(text, budget, roots)`` (the loader's ``load_all``) reads it."""
    mode = _mode()
    if mode == "off" or not AVAILABLE:
        return slow(text, budget, roots)
    if mode == "on":
        found = _read(text, budget, slow)
        if found is None:
            return slow(text, budget, roots)
        if roots is not None:
            roots.extend(found[1])
        return found[0]
    return _verified(text, budget, roots, slow)


def load_one(text, budget, slow_all, slow_one):
    """The single document of ``text`` (None if empty), as ``slow_one(text, budget)`` reads it."""
    mode = _mode()
    if mode == "off" or not AVAILABLE:
        return slow_one(text, budget)
    before = (budget.alias_nodes, budget.documents)
    found = _read(text, budget, slow_all)
    if found is not None and len(found[0]) > 1:
        found = None  # the loader says there is more than one
    if mode == "on" and found is not None:
        return found[0][0] if found[0] else None
    after = (budget.alias_nodes, budget.documents)
    budget.alias_nodes, budget.documents = before
    if found is None:
        return slow_one(text, budget)
    try:
        theirs = slow_one(text, budget)
    except yaml.YAMLError as err:
        raise FastPathDifference(f"the fast path read a text the loader refuses ({err}): {text[:300]!r}") from None
    ours = found[0][0] if found[0] else None
    if not same(ours, theirs) or after != (budget.alias_nodes, budget.documents):
        raise FastPathDifference(f"the fast path read a text differently: {ours!r:.300} against {theirs!r:.300}: "
                                 f"{text[:300]!r}")
    return theirs


def _verified(text, budget, roots, slow) -> list:
    before = (budget.alias_nodes, budget.documents)
    found = _read(text, budget, slow)
    after = (budget.alias_nodes, budget.documents)
    budget.alias_nodes, budget.documents = before
    theirs: list = []
    try:
        documents = slow(text, budget, theirs)
    except yaml.YAMLError as err:
        if found is not None:
            raise FastPathDifference(f"the fast path read a text the loader refuses ({err}): {text[:300]!r}") from None
        raise
    if found is not None:
        if not same(found[0], documents) or _places(found[1]) != _places(theirs) or after != (
                budget.alias_nodes, budget.documents):
            raise FastPathDifference(f"the fast path read a text differently: {found[0]!r:.300} against "
                                     f"{documents!r:.300}, roots {_places(found[1])} against {_places(theirs)}: "
                                     f"{text[:300]!r}")
    if roots is not None:
        roots.extend(theirs)
    return documents


def _places(marks) -> list:
    return [(mark.index, mark.line, mark.column) for mark in marks]


def same(a, b) -> bool:
    """Equal, and of the same types throughout (``1``, ``1.0`` and ``True`` differ), keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(value, b[key]) for key, value in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def _read(text, budget, slow) -> tuple[list, list] | None:
    """(documents, root marks) of ``text``, or None where the loader must read the whole text. ``budget`` is
    charged as the loader would; on None it is as it was."""
    if not isinstance(text, str) or len(text) > limits.MAX_TOTAL_BYTES or _hazard(text):
        return None
    before = (budget.alias_nodes, budget.documents)
    try:
        with _quiet_stderr():
            return _documents(text, budget, slow)
    except (_Slow, yaml.YAMLError, RecursionError, OSError):
        budget.alias_nodes, budget.documents = before
        return None


def _hazard(text: str) -> bool:
    """Whether the whole text goes to the loader."""
    if text.isascii():  # deleting the printable characters in C is several times faster than a regex's search
        chars = bool(text.encode("ascii").translate(None, _PRINTABLE_ASCII))
    else:
        chars = _non_ascii_chars().search(text) is not None
    return (chars or _LINES.search(text) is not None
            or text.startswith(("%", "...")) or text.startswith("---") and _SEPARATOR.match(text) is None)


@lru_cache(maxsize=None)
def _non_ascii_chars() -> re.Pattern:
    return re.compile(_CHARS)  # compiled when first needed: a few milliseconds, and most inputs are ASCII


def _separators(text: str) -> list:
    """The matches of :data:`_SEPARATOR` in ``text``, tried only where a line starts with ``---``: a
    multi-line ``^`` makes the regex's own search try every character."""
    found = []
    at = 0 if text.startswith("---") else text.find("\n---") + 1
    if at == 0 and not text.startswith("---"):
        return found
    while True:
        match = _SEPARATOR.match(text, at)
        if match is not None:
            found.append(match)
        at = text.find("\n---", at + 3) + 1
        if at == 0:
            return found


def _documents(text: str, budget, slow) -> tuple[list, list]:
    documents: list = []
    roots: list = []
    tree = ryml.Tree()
    line = start = 0
    chunks = []  # (start, end, line, explicit: after a --- line)
    explicit = False
    for match in _separators(text):
        chunks.append((start, match.start(), line, explicit))
        line += text.count("\n", start, match.end()) + 1
        start, explicit = min(match.end() + 1, len(text)), True
    chunks.append((start, len(text), line, explicit))
    guarded = len(chunks) > 1 and not _suspect(text)  # then no document is, and each is not asked again
    for index, (start, end, line, explicit) in enumerate(chunks):
        content = _CONTENT.search(text, start, end)
        if content is None:
            if explicit:  # an empty document: null, its root where the next one starts
                _count(budget)
                documents.append(None)
                roots.append(_next_root(text, chunks, index))
            continue
        at = content.end() - 1
        first_line = line + text.count("\n", start, at)
        root = yaml.Mark(None, at, first_line, at - content.start(), None, None)
        chunk = text[start:end]
        try:
            if text[at] in "|>":  # a block scalar as the document: rapidyaml reads some the loader refuses
                raise _Slow
            value = _fast(chunk, tree, guarded)
        except _Slow:
            value, root = _slow_one(chunk, start, line, budget, slow)
            READ["slow"] += 1
        else:
            _count(budget)
            READ["fast"] += 1
        documents.append(value)
        roots.append(root)
    return documents, roots


def _count(budget) -> None:
    budget.documents += 1
    if budget.documents > limits.MAX_OBJECTS:
        raise _Slow  # the loader says so, with its mark


def _next_root(text: str, chunks: list, index: int):
    """Where the loader puts the root of an empty document: the start of the next ``---`` line, or the end."""
    if index + 1 < len(chunks):
        _, end, line, _ = chunks[index]
        return yaml.Mark(None, end, line + text.count("\n", chunks[index][0], end), 0, None, None)
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    return yaml.Mark(None, len(text), lines, 0, None, None)


def _slow_one(chunk: str, start: int, line: int, budget, slow):
    """One document read by the loader alone; its root mark placed in the whole text (its errors are not: the
    caller reads the whole text again)."""
    marks: list = []
    found = slow(chunk, budget, marks)
    if len(found) != 1 or len(marks) != 1:
        raise _Slow
    mark = marks[0]
    return found[0], yaml.Mark(None, mark.index + start, mark.line + line, mark.column, None, None)


def _suspect(text: str) -> bool:
    """Whether ``text`` (a document, or a text of documents: then any of them may be) holds a backslash or a token
    indicator, which send a document to the loader."""
    return "\\" in text or _at_token_start(text)


def _fast(chunk: str, tree, guarded: bool = False):
    """One document read by rapidyaml, or :class:`_Slow`; ``guarded``: :func:`_suspect` is known false of it."""
    if (not guarded and _suspect(chunk) or chunk.count("[") + chunk.count("{") > _MOST_BRACKETS
            or len(chunk) >= _LONG_LINE and _LONG.search(chunk)):
        raise _Slow
    tree.clear()
    tree.clear_arena()
    try:
        ryml.parse_in_arena(chunk.encode("utf-8"), tree)
        # rapidyaml's emitter refuses nesting past 64 levels (tests/test_yaml_fast.py), under limits.MAX_DEPTH:
        # a deeper document goes to the loader, which reads it or says it is too deep
        emitted = ryml.emit_json(tree, tree.root_id())
    except Exception:  # noqa: BLE001 - rapidyaml's own errors (ExceptionParse, ExceptionVisit): the loader says
        raise _Slow from None
    try:
        value = _DECODER.decode(emitted)
    except ValueError:
        raise _Slow from None
    # a key twice: json.loads keeps the last, so the mappings hold fewer keys than the JSON names (a key is
    # written '"key": ', a '"' inside a string as '\\"')
    if _check(value, chunk) != emitted.count('": ') - emitted.count('\\": '):
        raise _Slow
    return value


def _at_token_start(chunk: str) -> bool:
    """Whether an anchor, alias, tag, explicit key or reserved indicator (``&*!?@` ``) may start a token."""
    for char in "&*!?@`":
        at = chunk.find(char)
        while at >= 0:
            if at == 0 or chunk[at - 1] in " \n[{,":
                return True
            at = chunk.find(char, at + 1)
    return False


_NUMBERS = Memo(1 << 16)  # number text -> value, as read_plain reads it


def _number(text: str):
    value = _NUMBERS.get(text)
    if value is None:
        tag, value = read_plain(text)
        if tag != INT and tag != FLOAT:
            raise _Slow
        _NUMBERS.remember(text, value)
    return value


def _refuse(text: str):
    raise _Slow


# json.loads with hooks builds a new decoder at every call, a sixth of reading a small document
_DECODER = json.JSONDecoder(parse_int=_number, parse_float=_number, parse_constant=_refuse)


# What a string of the JSON asks, by its text (see _value_class, _key_class): nothing, that the document
# holds it nowhere plain, or the loader.
_FINE, _NOT_PLAIN, _SLOW = 0, 1, 2
_VALUES = Memo(1 << 16)
_KEYS = Memo(1 << 16)
# Strings whose first character is none of these are fine as values: a plain scalar of that text is that string
# (goscalars' hints), and rapidyaml reads no plain scalar it would refuse as one.
_FIRSTS = frozenset("+-.0123456789yYnNtTfFoO~]},")


def _check(root, chunk: str) -> int:
    """:class:`_Slow` for a string the loader might read otherwise, and an empty or merge key; else how many keys
    the mappings hold."""
    values, keys, firsts = _VALUES, _KEYS, _FIRSTS
    suspects: list = []
    stack = [root] if root.__class__ is dict or root.__class__ is list else []
    if root.__class__ is str and root and root[0] in firsts:
        suspects.append((root, False))
    held = 0
    while stack:
        node = stack.pop()
        if node.__class__ is dict:
            held += len(node)
            for key in node:
                if not key or key[0] in firsts or key == "<<":
                    suspects.append((key, True))
            node = node.values()
        for value in node:
            kind = value.__class__
            if kind is str:
                if value and value[0] in firsts:
                    suspects.append((value, False))
            elif kind is dict or kind is list:
                stack.append(value)
    plain = set()
    for text, is_key in suspects:
        known = (keys if is_key else values).get(text)
        if known is None:
            known = (keys if is_key else values).remember(text, _key_class(text) if is_key else _value_class(text))
        if known == _SLOW:
            raise _Slow
        if known == _NOT_PLAIN:
            plain.add(text)
    if plain and any(_plain_counts("\n" + chunk, plain).values()):
        raise _Slow
    return held


def _value_class(text: str) -> int:
    """A string value rapidyaml gave: fine where a plain scalar of its text is that string to the loader, or where
    rapidyaml reads no plain scalar of its text as that string (``8080``, ``true``: then it was quoted); else it
    must stand nowhere plain in the document (``True``, ``~``, ``0o22``, ``yes`` written quoted are fine). A
    string rapidyaml may have written from other text (``nan`` as ``.nan``) or that starts as no plain scalar
    may (``]``, ``}``, ``,``, which rapidyaml reads and the loader refuses) goes to the loader."""
    if text[0] in "]},":
        return _SLOW
    tag = read_plain(text)[0]
    if tag == STR:
        return _FINE
    if text.lstrip("+-")[:1] == "." and tag != INT and tag != FLOAT:
        return _SLOW
    return _FINE if _ryml_reads_plain_as_other(text) else _NOT_PLAIN


def _key_class(text: str) -> int:
    """A key: fine where a plain key of its text is a string to the loader; else it must stand nowhere plain in the
    document (a plain ``1:`` or ``true:`` is a key the loader refuses); an empty key or ``<<`` goes to the loader."""
    if not text or text == "<<" or text[0] in "]},":
        return _SLOW
    return _FINE if read_plain(text)[0] == STR else _NOT_PLAIN


def _ryml_reads_plain_as_other(text: str) -> bool:
    """Whether rapidyaml reads the plain scalar ``text`` as something other than the string ``text``."""
    if any(char in text for char in " \n\t:#,[]{}\"'\\"):
        return False
    tree = ryml.Tree()
    try:
        ryml.parse_in_arena(("- " + text + "\n").encode("utf-8"), tree)
        emitted = ryml.emit_json(tree, tree.root_id())
        read = json.loads(emitted)
    except Exception:  # noqa: BLE001 - anything unexpected: treat it as read as that string (the careful answer)
        return False
    return not (isinstance(read, list) and len(read) == 1 and read[0] == text)


def _plain_counts(lined: str, texts: set) -> dict:
    """How many times each of ``texts`` may stand in the document ``lined`` (its text after a newline) as a whole
    plain scalar: where a token may start (after a newline, a space, ``[``, ``{`` or ``,``) and end (a space,
    ``,``, ``]``, ``}``, ``:``, ``#``, the line's end). A quoted one starts after its quote; counting too many only
    sends the document to the loader."""
    counts = {}
    for text in texts:
        pattern = _PATTERNS.get(text)
        if pattern is None:
            pattern = _PATTERNS.remember(text, re.compile(r"[\n \[{,]" + re.escape(text) + r"(?=[ ,\]}:#\n]|\Z)"))
        counts[text] = len(pattern.findall(lined))
    return counts


_PATTERNS = Memo(1 << 10)


class _quiet_stderr:
    """rapidyaml prints its parse errors to file descriptor 2 before it raises; the loader reports them instead."""

    def __enter__(self):
        self._saved = os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 2)
        finally:
            os.close(null)
        return self

    def __exit__(self, *exc):
        os.dup2(self._saved, 2)
        os.close(self._saved)
        return False
