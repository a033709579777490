"""The limited YAML loader: plain YAML only, duplicate keys refused, the limits of :mod:`omerender.yamlio.limits`
checked on the event stream before anything is built, and shared by every text of one input (:class:`Budget`).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

import yaml
from yaml.constructor import ConstructorError
from yaml.events import (AliasEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent, ScalarEvent,
                         SequenceEndEvent, SequenceStartEvent)

from . import fastread, limits
from .data import Memo
from .goscalars import BOOL, FLOAT, INT, MERGE, NULL, REFUSED, STR, read_nonspecific, read_plain, read_tagged

SNIPPET_CHARS = 60


_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
# Tags that SafeLoader turns into types Kubernetes YAML does not have (bytes, sets, tuples, datetimes).
_UNSUPPORTED_TAGS = ("tag:yaml.org,2002:binary", "tag:yaml.org,2002:set", "tag:yaml.org,2002:omap",
                     "tag:yaml.org,2002:pairs", _TIMESTAMP_TAG)
# The non-specific tag "!" alone before a value: PyYAML resolves the value as if plain, even a quoted one; a text
# that may hold one is scanned (:func:`_scan` notes where each is) and read as Go's readers read it.
_NONSPECIFIC = re.compile(r"(?:^|[\s\[{,])!(?=[\s,\]}]|\Z)", re.M)
_OPENS = (MappingStartEvent, SequenceStartEvent)
_CLOSES = (MappingEndEvent, SequenceEndEvent)


class YAMLLimitError(yaml.MarkedYAMLError):
    """Input over one of :mod:`omerender.yamlio.limits`; a YAMLError so every YAML caller reports it."""

    def __init__(self, problem: str, mark=None):
        super().__init__(problem=problem, problem_mark=mark)


class YAMLMeaningError(ConstructorError):
    """Well-formed YAML that kubectl and kustomize read differently (:mod:`.goscalars`), so it has no one meaning."""

    def __init__(self, problem: str, mark=None):
        super().__init__(None, None, problem, mark)


@dataclass
class Budget:
    """What one input has used of the limits that span it: every file of a render, every item of a
    ResourceList. Parsing the pieces one by one must not multiply the limits by the number of pieces."""

    alias_nodes: int = 0
    documents: int = 0


_PLAIN_TAGS = Memo(1 << 18)  # plain scalar text -> tag, for SafeLoader.resolve


class SafeLoader(_BaseLoader):
    """The libyaml safe loader, with the limits of :mod:`omerender.yamlio.limits` checked before anything is built.

    Plain scalars mean what both of Kubernetes' Go readers make of them (:mod:`.goscalars`), and one they
    read differently is an error, as are merges (``<<``) they resolve differently; explicit tags for bytes,
    sets, ordered maps and timestamps, mapping keys that are not strings, and a key twice in one mapping,
    are errors. Aliases are expanded into plain trees, so callers never see shared or cyclic data.
    ``yaml.load``/``yaml.load_all`` with this loader are safe on any text; :func:`load_all` and
    :func:`load_one` share a :class:`Budget` across texts.
    """

    yaml_implicit_resolvers: dict = {}  # PyYAML's YAML 1.1 rules: none apply (see resolve)

    def __init__(self, stream, budget: Budget | None = None):
        if hasattr(stream, "read"):
            stream = stream.read(limits.MAX_TOTAL_BYTES + 1)
        self._text = stream
        self._budget = budget if budget is not None else Budget()
        self._aliased: bool | None = None
        self._nonspecific: dict = {}  # (line, column) of each scalar tagged "!" -> its style
        self.roots: list = []  # each document's root node start mark, for messages (omerender.yamlio.marks)
        super().__init__(stream)

    def _checked(self) -> bool:
        if self._aliased is None:
            self._aliased = check_structure(self._text, self._budget, self._nonspecific)
        return self._aliased

    def check_data(self):
        self._checked()
        return super().check_data()

    def get_data(self):
        return _unshare(super().get_data()) if self._checked() else super().get_data()

    def get_single_data(self):
        return _unshare(super().get_single_data()) if self._checked() else super().get_single_data()

    def construct_document(self, node):
        self.roots.append(node.start_mark)  # kept, not found again: marks.Source slices one document by it
        if self._nonspecific:
            _read_nonspecific(node, self._nonspecific)
        return super().construct_document(node)

    def construct_mapping(self, node, deep=False):
        merges = _check_keys(node.value)
        if merges:
            self._merged_keys(node)
            self.flatten_mapping(node)  # resolves merge keys (<<); the base class does it again harmlessly
            _check_keys(node.value, unique=False)  # merged keys may repeat: the mapping's own ones win
        return super().construct_mapping(node, deep)

    def _merged_keys(self, node) -> set:
        """The keys of ``node`` with its merges, refusing what kubectl and kustomize merge differently: a
        second ``<<`` (kubectl takes the last, kustomize refuses it) and a key set before a ``<<`` that sets
        it too (kubectl takes the merged value, kustomize the key's). Each node is walked once per load."""
        known = self.__dict__.setdefault("_merged", {})  # id -> (node, keys): the node kept, so its id is not reused
        seen = known.get(id(node))
        if seen is not None and seen[0] is node:
            return seen[1]
        own: dict = {}
        merged: set = set()
        merge = None
        for key, value in node.value:
            if key.tag == MERGE:
                if merge is not None:
                    raise YAMLMeaningError(f"a second merge key (<<) in one mapping (the first is on line "
                                           f"{merge.start_mark.line + 1}): kubectl takes the last one's values, "
                                           "kustomize refuses it; merge a list instead: <<: [*a, *b]", key.start_mark)
                merge = key
                for source in value.value if isinstance(value, yaml.SequenceNode) else [value]:
                    if isinstance(source, yaml.MappingNode):
                        merged |= self._merged_keys(source)
                clash = next((name for name in own if name in merged), None)
                if clash is not None:
                    raise YAMLMeaningError(f"mapping key {_quoted(clash)} is set before the merge (<<) on "
                                           f"line {key.start_mark.line + 1} that sets it too: kubectl takes the "
                                           "merged value, kustomize this one; move the key below the << line",
                                           own[clash].start_mark)
            elif isinstance(key, yaml.ScalarNode):
                own.setdefault(key.value, key)
        keys = merged | own.keys()
        known[id(node)] = (node, keys)
        return keys

    # No path resolvers here: the composer's two calls per node can return at once.
    def descend_resolver(self, current_node, current_index):
        pass

    def ascend_resolver(self):
        pass

    def resolve(self, kind, value, implicit):
        """A plain scalar's tag as Go's readers resolve it (:func:`.goscalars.read_plain`), remembered: it
        depends on the text alone."""
        if kind is not yaml.ScalarNode or not implicit[0]:
            return super().resolve(kind, value, implicit)
        tag = _PLAIN_TAGS.get(value)
        if tag is None:
            tag = _PLAIN_TAGS.remember(value, read_plain(value)[0])
        return tag

    def construct_typed(self, node):
        """A null, bool, int or float: the value Go's readers agree on, for a plain scalar or an explicit tag."""
        text = self.construct_scalar(node)
        tag, value = read_plain(text)
        if tag == node.tag:
            return value
        try:
            return read_tagged(node.tag, text)
        except ValueError as err:
            raise YAMLMeaningError(str(err), node.start_mark) from None

    def construct_merge_text(self, node):
        return self.construct_scalar(node)  # "<<" anywhere but as a key is a string to Go's readers

    def construct_refused(self, node):
        tag, message = read_plain(self.construct_scalar(node))
        if tag != REFUSED:
            self.construct_unsupported(node)
        raise YAMLMeaningError(message, node.start_mark)

    def construct_unsupported(self, node):
        raise ConstructorError(None, None, f"unsupported YAML tag {node.tag.replace('tag:yaml.org,2002:', '!!')}; "
                               "use plain maps, lists, strings, numbers, booleans and null", node.start_mark)


for _tag in _UNSUPPORTED_TAGS:
    SafeLoader.add_constructor(_tag, SafeLoader.construct_unsupported)
for _tag in (NULL, BOOL, INT, FLOAT):
    SafeLoader.add_constructor(_tag, SafeLoader.construct_typed)
SafeLoader.add_constructor(MERGE, SafeLoader.construct_merge_text)
SafeLoader.add_constructor(REFUSED, SafeLoader.construct_refused)


def _check_keys(pairs, unique: bool = True) -> bool:
    """Refuse keys that are not strings and (``unique``) a key twice, as Go's YAML readers (kustomize,
    kubectl) do where PyYAML would keep the last silently. Returns whether there are merge keys (``<<``)."""
    seen: dict[str, yaml.Node] = {}
    merges = False
    for key_node, value_node in pairs:
        if key_node.tag == MERGE:
            merges = True
            continue
        if not (isinstance(key_node, yaml.ScalarNode) and key_node.tag == STR):
            raise _not_a_string(key_node)
        first = seen.get(key_node.value)
        if first is None:
            seen[key_node.value] = key_node
        elif unique:
            # an alias of a key anchored in the same mapping (&k a: 1 ... *k : 2) is the very same node: a key
            # twice all the same, which kustomize refuses (kubectl takes the last); the alias's place is its value's
            where = value_node.start_mark if first is key_node else key_node.start_mark
            raise ConstructorError(None, None, f"mapping key {_quoted(key_node.value)} already defined at line "
                                   f"{first.start_mark.line + 1}; remove one of them", where)
    if "<<" in seen:
        raise YAMLMeaningError('mapping key "<<" in quotes is a merge to kustomize but an ordinary key '
                               "to kubectl; rename it, or write << without quotes to merge", seen["<<"].start_mark)
    return merges


def _not_a_string(key_node) -> ConstructorError:
    if key_node.tag == REFUSED:
        return YAMLMeaningError("mapping key: " + read_plain(key_node.value)[1], key_node.start_mark)
    return ConstructorError(None, None, f"mapping key {_node_text(key_node)} is not a string; quote it",
                            key_node.start_mark)


def _quoted(text: str) -> str:
    """A key as messages show it: quoted, control characters escaped, long ones cut."""
    cut = text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS] + "..."
    return json.dumps(cut, ensure_ascii=False)


def _node_text(node) -> str:
    if isinstance(node, yaml.ScalarNode):
        return repr(node.value) if node.value == "" else node.value
    return "of a map or list"


def _read_nonspecific(root, places: dict) -> None:
    """Give each scalar tagged ``!`` under ``root`` the tag Go's readers agree on: a quoted one is a string to both;
    a plain one is a string to kubectl and resolved as untagged by kustomize, refused where they differ."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.__class__ is yaml.ScalarNode:
            if (node.start_mark.line, node.start_mark.column) in places:
                if node.style in ("'", '"', "|", ">"):
                    node.tag = STR
                    continue
                try:
                    read_nonspecific(node.value)
                except ValueError as err:
                    raise YAMLMeaningError(str(err), node.start_mark) from None
                node.tag = STR
        elif node.__class__ is yaml.MappingNode:
            stack.extend(part for pair in node.value for part in pair)
        elif node.__class__ is yaml.SequenceNode:
            stack.extend(node.value)


def check_structure(text, budget: Budget | None = None, nonspecific: dict | None = None) -> bool:
    """Check a YAML stream against the limits from its parse events; return whether it uses aliases.

    Runs before anything is composed: libyaml's composer recurses in C per nesting level and an expanded
    alias bomb never fits in memory, so both must be caught on the flat event stream. ``budget`` carries the
    alias nodes and documents of the texts read before this one in the same input; ``nonspecific`` gets the
    place of each scalar tagged ``!``.
    """
    if len(text) > limits.MAX_TOTAL_BYTES:
        raise YAMLLimitError(f"input is larger than {limits.MAX_TOTAL_BYTES // limits.MIB} MiB")
    parser = _BaseLoader(text)
    try:
        return _scan(parser.get_event, budget if budget is not None else Budget(), nonspecific)
    except yaml.MarkedYAMLError as err:
        if _LIBYAML_DEPTH in str(getattr(err, "problem", "")):
            raise _too_deep(err.problem_mark) from None
        raise
    finally:
        parser.dispose()


def _libyaml_version() -> tuple:
    try:
        from yaml import _yaml
        return tuple(_yaml.get_version())
    except (ImportError, AttributeError):
        return ()


# libyaml 0.2.6 (PyYAML 6.0.4's wheels) stops nesting at 1,000 levels, and scans flow collections ahead of
# the events we count: whichever layer refuses, the user reads one message.
_LIBYAML_DEPTH = "maximum nesting depth"


def _too_deep(mark) -> YAMLLimitError:
    return YAMLLimitError(f"nesting deeper than {limits.MAX_DEPTH} levels", mark)


def _scan(next_event, budget: Budget, nonspecific: dict | None = None) -> bool:
    open_anchors: list[str | None] = []
    sizes: dict[str, int] = {}  # anchor -> nodes in its expanded value
    starts: list[int] = []
    nodes = stream_aliases = 0
    alias_nodes, documents = budget.alias_nodes, budget.documents
    try:
        while (event := next_event()) is not None:
            kind = event.__class__
            if kind is ScalarEvent:
                nodes += 1
                if event.anchor:
                    sizes[event.anchor] = 1
                if event.tag == "!" and nonspecific is not None:
                    nonspecific[(event.start_mark.line, event.start_mark.column)] = event.style
            elif kind in _OPENS:
                nodes += 1
                starts.append(nodes)
                open_anchors.append(event.anchor)
                if len(starts) > limits.MAX_DEPTH:
                    raise _too_deep(event.start_mark)
            elif kind in _CLOSES:
                anchor = open_anchors.pop()
                start = starts.pop()
                if anchor:
                    sizes[anchor] = nodes - start + 1
            elif kind is AliasEvent:
                if event.anchor in open_anchors:
                    raise YAMLLimitError(f"alias *{event.anchor} refers to a value that contains it "
                                         "(recursive alias)", event.start_mark)
                size = sizes.get(event.anchor, 0)  # 0: undefined, the composer reports it
                nodes += size
                stream_aliases += size
                alias_nodes += size
                if alias_nodes > limits.MAX_ALIAS_NODES:
                    raise YAMLLimitError(f"aliases expand to more than {limits.MAX_ALIAS_NODES:,} nodes "
                                         "(a YAML alias bomb?)", event.start_mark)
            elif kind is DocumentStartEvent:
                sizes = {}
                documents += 1
                if documents > limits.MAX_OBJECTS:
                    raise YAMLLimitError(f"more than {limits.MAX_OBJECTS:,} YAML documents in the inputs",
                                         event.start_mark)
    finally:
        budget.alias_nodes, budget.documents = alias_nodes, documents
    return stream_aliases > 0


def load_all(text: str, budget: Budget, roots: list | None = None) -> list:
    """Every document of ``text`` (see :class:`SafeLoader`), counted against ``budget``; ``roots`` gets the
    start mark of each document's root node (empty documents too), in order. Read by rapidyaml where it reads
    a document as this loader does (:mod:`.fastread`)."""
    return fastread.load_all(text, budget, roots, _load_all)


def load_one(text: str, budget: Budget):
    """The single document of ``text`` (None if empty), counted against ``budget``."""
    return fastread.load_one(text, budget, _load_all, _load_one)


def _load_all(text: str, budget: Budget, roots: list | None = None) -> list:
    fast = _load_unscanned(text, budget, single=False, roots=roots)
    if fast is not None:
        return fast
    loader = SafeLoader(text, budget)
    try:
        documents = [loader.get_data() for _ in iter(loader.check_data, False)]
        if roots is not None:
            roots.extend(loader.roots)
        return documents
    finally:
        loader.dispose()


def _load_one(text: str, budget: Budget):
    fast = _load_unscanned(text, budget, single=True)
    if fast is not None:
        return fast[0] if fast else None
    loader = SafeLoader(text, budget)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


# libyaml 0.2.6 stops nesting at 1,000 levels itself (yaml/libyaml#287), which bounds the C recursion of PyYAML's
# composer. With it, a text without "*" (so without aliases: nothing to expand) can be composed first and its
# depth and document count checked on the nodes, at a tenth of the cost of the event scan; the limits are the
# same. Anything over them, or any error, goes through the scan again, so every message is the scan's.
_COMPOSER_BOUNDED = _BaseLoader is not yaml.SafeLoader and _libyaml_version() >= (0, 2, 6)


class _Rescan(Exception):
    pass


def _load_unscanned(text, budget: Budget, single: bool, roots: list | None = None) -> list | None:
    """The documents of ``text`` without the event scan, or None where the scan must decide."""
    if not (_COMPOSER_BOUNDED and isinstance(text, str) and "*" not in text and len(text) <= limits.MAX_TOTAL_BYTES):
        return None
    if "!" in text and _NONSPECIFIC.search(text):
        return None
    before = budget.documents
    loader = SafeLoader(text, budget)
    loader._aliased = False  # no alias in the text: nothing to count or unshare
    try:
        documents = []
        while loader.check_node():
            node = loader.get_node()
            budget.documents += 1
            if single and documents:
                raise _Rescan  # more than one: the scan's loader says so
            if budget.documents > limits.MAX_OBJECTS or _deeper_than(node, limits.MAX_DEPTH):
                raise _Rescan
            documents.append(loader.construct_document(node))
        if roots is not None:
            roots.extend(loader.roots)
        return documents
    except (_Rescan, yaml.YAMLError, RecursionError):
        budget.documents = before
        return None
    finally:
        loader.dispose()


def _deeper_than(root, most: int) -> bool:
    """Whether collections nest more than ``most`` levels in the node tree ``root``."""
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > most:
            return True
        if node.__class__ is yaml.MappingNode:
            stack.extend((value, depth + 1) for _, value in node.value if value.__class__ is not yaml.ScalarNode)
            stack.extend((key, depth + 1) for key, _ in node.value if key.__class__ is not yaml.ScalarNode)
        elif node.__class__ is yaml.SequenceNode:
            stack.extend((item, depth + 1) for item in node.value if item.__class__ is not yaml.ScalarNode)
    return False


def _unshare(value):
    """A copy where every alias is its own tree (depth and size are bounded by :func:`check_structure`)."""
    if isinstance(value, dict):
        return {key: _unshare(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unshare(item) for item in value]
    return value


def yaml_error_text(err: yaml.YAMLError) -> str:
    """What a message says about YAML that could not be read: over a limit, or malformed."""
    prefix = "" if isinstance(err, (YAMLLimitError, YAMLMeaningError)) else "malformed YAML: "
    return prefix + yaml_problem(err)


def tab_problem(err: yaml.YAMLError, text: str) -> tuple[str, int, int] | None:
    """For YAML refused at a tab (PyYAML's "found character '\\t' that cannot start any token", libyaml's
    "found a tab character that violates indentation"): the message naming the tab, and its 1-based line and
    column; else None."""
    mark = getattr(err, "problem_mark", None)
    if mark is None or isinstance(err, (YAMLLimitError, YAMLMeaningError)):
        return None
    start = 0
    for _ in range(mark.line):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    at = start + mark.column
    if at >= len(text) or text[at] != "\t":
        return None
    return (f"malformed YAML: a tab at line {mark.line + 1}, column {mark.column + 1}: YAML does not allow tabs "
            f"for indentation; indent with spaces", mark.line + 1, mark.column + 1)


def yaml_problem(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    if mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return problem
