"""Read YAML, index the objects, validate what every object must have.

The entry points are :func:`read_paths` (files, directories, ``-``), which
returns :class:`Doc` records, and :func:`index`, which sorts them into
:class:`Inputs`. Nothing here renders anything.
"""
from __future__ import annotations

import difflib
import json
import os
import stat
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable

import yaml
from yaml.constructor import ConstructorError
from yaml.events import (AliasEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent, ScalarEvent,
                         SequenceEndEvent, SequenceStartEvent)

from . import apirules, limits
from .errors import Message, ObjRef, OmeError, OmeErrors, type_name
from .shapes import STRING_MAP, check, check_spec

OME_GROUP = "ome.io"
OME_API_VERSION = "ome.io/v1beta1"
OME_KINDS = ("ServingRuntime", "ClusterServingRuntime", "InferenceService", "BaseModel",
             "ClusterBaseModel", "AcceleratorClass")
# The other kinds of OME's API group (its CRDs); they are passed through, never rendered.
OME_OTHER_KINDS = ("BenchmarkJob", "FineTunedWeight")
CLUSTER_SCOPED = ("ClusterServingRuntime", "ClusterBaseModel", "AcceleratorClass")
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
STDIN = "<stdin>"
# The record `render -o` keeps in the directory it writes; a directory holding one is output, not input.
RENDERED_MARKER = ".omerender-rendered.yaml"
DEFAULT_NAMESPACE = "default"
SNIPPET_CHARS = 60


@dataclass
class Doc:
    """One parsed YAML object and where it came from."""

    data: Any
    file: str
    position: int  # order in the whole input, for stable output

    @property
    def kind(self) -> str:
        return self.data.get("kind", "") if isinstance(self.data, dict) else ""


@dataclass
class Obj:
    """A validated Kubernetes object of the input."""

    data: dict
    file: str
    position: int

    @property
    def kind(self) -> str:
        return self.data["kind"]

    @property
    def api_version(self) -> str:
        return self.data["apiVersion"]

    @property
    def name(self) -> str:
        return self.data["metadata"]["name"]

    @property
    def namespace(self) -> str | None:
        if self.is_ome:
            if self.kind in CLUSTER_SCOPED:
                return None  # kustomize's namespace: sets it on kinds whose scope it doesn't know
            return self.data["metadata"].get("namespace") or DEFAULT_NAMESPACE
        return self.data["metadata"].get("namespace") or None

    @property
    def is_ome(self) -> bool:
        return self.api_version.split("/")[0] == OME_GROUP and self.kind in OME_KINDS

    @property
    def ref(self) -> ObjRef:
        return ObjRef(self.kind, self.name, self.namespace, self.api_version)

    @property
    def spec(self) -> dict:
        return self.data.get("spec") or {}

    @property
    def metadata(self) -> dict:
        return self.data["metadata"]

    def error(self, text: str, field: str | None = None) -> OmeError:
        return OmeError(text, self.ref, self.file, field)


@dataclass
class Inputs:
    """Every object of the input, sorted by role."""

    objects: list[Obj] = field(default_factory=list)
    cluster_runtimes: dict[str, Obj] = field(default_factory=dict)
    runtimes: dict[tuple[str, str], Obj] = field(default_factory=dict)
    cluster_models: dict[str, Obj] = field(default_factory=dict)
    models: dict[tuple[str, str], Obj] = field(default_factory=dict)
    classes: dict[str, Obj] = field(default_factory=dict)
    isvcs: list[Obj] = field(default_factory=list)
    others: list[Obj] = field(default_factory=list)
    isvc_keys: set[tuple[str, str]] = field(default_factory=set)
    messages: list[Message] = field(default_factory=list)  # warnings found while indexing


# ---------------------------------------------------------------- safe YAML

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
# Tags that SafeLoader turns into types Kubernetes YAML does not have (bytes, sets, tuples, datetimes).
_UNSUPPORTED_TAGS = ("tag:yaml.org,2002:binary", "tag:yaml.org,2002:set", "tag:yaml.org,2002:omap",
                     "tag:yaml.org,2002:pairs", _TIMESTAMP_TAG)
_OPENS = (MappingStartEvent, SequenceStartEvent)
_CLOSES = (MappingEndEvent, SequenceEndEvent)


class YAMLLimitError(yaml.MarkedYAMLError):
    """Input over one of :mod:`omerender.limits`; a YAMLError so every YAML caller reports it."""

    def __init__(self, problem: str, mark=None):
        super().__init__(problem=problem, problem_mark=mark)


@dataclass
class Budget:
    """What one input has used of the limits that span it: every file of a render, every item of a
    ResourceList. Parsing the pieces one by one must not multiply the limits by the number of pieces."""

    alias_nodes: int = 0
    documents: int = 0


class SafeLoader(_BaseLoader):
    """The libyaml safe loader, with the limits of :mod:`omerender.limits` checked before anything is built.

    Timestamps stay strings (as Kubernetes reads them); explicit tags for bytes, sets, ordered maps and
    timestamps, mapping keys that are not strings, and a key twice in one mapping, are errors. Aliases are
    expanded into plain trees, so callers never see shared or cyclic data. ``yaml.load``/``yaml.load_all`` with
    this loader are safe on any text; :func:`load_all` and :func:`load_one` share a :class:`Budget` across texts.
    """

    yaml_implicit_resolvers = {first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
                               for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()}

    def __init__(self, stream, budget: Budget | None = None):
        if hasattr(stream, "read"):
            stream = stream.read(limits.MAX_TOTAL_BYTES + 1)
        self._text = stream
        self._budget = budget if budget is not None else Budget()
        self._aliased: bool | None = None
        super().__init__(stream)

    def _checked(self) -> bool:
        if self._aliased is None:
            self._aliased = check_structure(self._text, self._budget)
        return self._aliased

    def check_data(self):
        self._checked()
        return super().check_data()

    def get_data(self):
        return _unshare(super().get_data()) if self._checked() else super().get_data()

    def get_single_data(self):
        return _unshare(super().get_single_data()) if self._checked() else super().get_single_data()

    def construct_mapping(self, node, deep=False):
        merges = _check_keys(node.value)
        if merges:
            self.flatten_mapping(node)  # resolves merge keys (<<); the base class does it again harmlessly
            _check_keys(node.value, unique=False)  # merged keys may repeat: the mapping's own ones win
        return super().construct_mapping(node, deep)

    def construct_unsupported(self, node):
        raise ConstructorError(None, None, f"unsupported YAML tag {node.tag.replace('tag:yaml.org,2002:', '!!')}; "
                               "use plain maps, lists, strings, numbers, booleans and null", node.start_mark)


for _tag in _UNSUPPORTED_TAGS:
    SafeLoader.add_constructor(_tag, SafeLoader.construct_unsupported)


def _check_keys(pairs, unique: bool = True) -> bool:
    """Refuse keys that are not strings and (``unique``) a key twice, as Go's YAML readers (kustomize,
    kubectl) do where PyYAML would keep the last silently. Returns whether there are merge keys (``<<``)."""
    seen: dict[str, yaml.Node] = {}
    merges = False
    for key_node, _ in pairs:
        if key_node.tag == _MERGE_TAG:
            merges = True
            continue
        if not (isinstance(key_node, yaml.ScalarNode) and key_node.tag == _STR_TAG):
            raise ConstructorError(None, None, f"mapping key {_node_text(key_node)} is not a string; "
                                   "quote it", key_node.start_mark)
        if unique and seen.setdefault(key_node.value, key_node) is not key_node:
            raise ConstructorError(None, None, f"mapping key {_quoted(key_node.value)} already defined at line "
                                   f"{seen[key_node.value].start_mark.line + 1}; remove one of them",
                                   key_node.start_mark)
    return merges


def _quoted(text: str) -> str:
    """A key as messages show it: quoted, control characters escaped, long ones cut."""
    cut = text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS] + "..."
    return json.dumps(cut, ensure_ascii=False)


def _node_text(node) -> str:
    if isinstance(node, yaml.ScalarNode):
        return repr(node.value) if node.value == "" else node.value
    return "of a map or list"


def check_structure(text, budget: Budget | None = None) -> bool:
    """Check a YAML stream against the limits from its parse events; return whether it uses aliases.

    Runs before anything is composed: libyaml's composer recurses in C per nesting level and an expanded
    alias bomb never fits in memory, so both must be caught on the flat event stream. ``budget`` carries the
    alias nodes and documents of the texts read before this one in the same input.
    """
    if len(text) > limits.MAX_TOTAL_BYTES:
        raise YAMLLimitError(f"input is larger than {limits.MAX_TOTAL_BYTES // limits.MIB} MiB")
    parser = _BaseLoader(text)
    try:
        return _scan(parser.get_event, budget if budget is not None else Budget())
    except yaml.MarkedYAMLError as err:
        if _LIBYAML_DEPTH in str(getattr(err, "problem", "")):
            raise _too_deep(err.problem_mark) from None
        raise
    finally:
        parser.dispose()


# libyaml 0.2.6 (PyYAML 6.0.4's wheels) stops nesting at 1,000 levels, and scans flow collections ahead of
# the events we count: whichever layer refuses, the user reads one message.
_LIBYAML_DEPTH = "maximum nesting depth"


def _too_deep(mark) -> YAMLLimitError:
    return YAMLLimitError(f"nesting deeper than {limits.MAX_DEPTH} levels", mark)


def _scan(next_event, budget: Budget) -> bool:
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


def load_all(text: str, budget: Budget) -> list:
    """Every document of ``text`` (see :class:`SafeLoader`), counted against ``budget``."""
    loader = SafeLoader(text, budget)
    try:
        return [loader.get_data() for _ in iter(loader.check_data, False)]
    finally:
        loader.dispose()


def load_one(text: str, budget: Budget):
    """The single document of ``text`` (None if empty), counted against ``budget``."""
    loader = SafeLoader(text, budget)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _unshare(value):
    """A copy where every alias is its own tree (depth and size are bounded by :func:`check_structure`)."""
    if isinstance(value, dict):
        return {key: _unshare(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unshare(item) for item in value]
    return value


# ---------------------------------------------------------------- reading

def read_paths(paths: Iterable[str], stdin=None, notes: list[Message] | None = None) -> list[Doc]:
    """Parse every path (file, directory or ``-``) into documents, in a stable order.

    Reads only the given paths: symbolic links that lead out of their directory are refused, and the
    limits of :mod:`omerender.limits` (file and total size, file count, object count) apply. Directories
    that ``render -o`` wrote are skipped, each with an info message appended to ``notes``.
    """
    skipped: list[str] = []
    docs: list[Doc] = []
    errors: list[OmeError] = []
    total_bytes = file_count = 0
    budget = Budget()
    for path in paths:
        try:
            files = _files(path, skipped)
        except OmeError as err:  # the path itself: missing, a link leading out, too many files
            errors.append(err)
            continue
        file_count += len(files)
        if file_count > limits.MAX_FILES:
            raise OmeErrors(errors + [_too_many_files(path)])
        for file in files:
            try:
                text = _read_stdin(stdin) if path == "-" else read_file(file)
            except OmeError as err:
                errors.append(err)
                continue
            total_bytes += len(text) if text.isascii() else len(text.encode("utf-8"))
            if total_bytes > limits.MAX_TOTAL_BYTES:
                raise OmeErrors(errors + [OmeError(f"the inputs are larger than {_mib(limits.MAX_TOTAL_BYTES)} "
                                                   "in total; render fewer files at a time", file=file)])
            try:
                docs.extend(parse_text(text, file, start=len(docs), budget=budget))
            except OmeError as err:
                errors.append(err)
            if len(docs) > limits.MAX_OBJECTS:
                raise OmeErrors(errors + [too_many_objects(file)])
    if notes is not None:
        notes.extend(Message("info", f"skipped: `omerender render -o` wrote this directory (it holds "
                                     f"{RENDERED_MARKER}); its objects are output, not input", file=folder)
                     for folder in skipped)
    if errors:
        raise OmeErrors(errors)
    return docs


def _too_many_files(path: str) -> OmeError:
    return OmeError(f"more than {limits.MAX_FILES:,} YAML files in the inputs; render fewer files at a time",
                    file=path)


def too_many_objects(file: str | None) -> OmeError:
    return OmeError(f"more than {limits.MAX_OBJECTS:,} objects in the inputs; render fewer files at a time",
                    file=file)


def _mib(size: int) -> str:
    return f"{size // limits.MIB} MiB"


def _files(path: str, skipped: list[str]) -> list[str]:
    """The files ``path`` names: itself, or the YAML files of a directory."""
    if path == "-":
        return [STDIN]
    if not os.path.lexists(path):
        raise OmeError(f"no such file or directory: {path}")
    _refuse_escape(path, os.path.dirname(os.path.abspath(path)), path)
    return _yaml_files(path, skipped) if os.path.isdir(path) else [path]


def _read_stdin(stdin) -> str:
    # stdin often carries a whole input (`kustomize build . | omerender render -`): the total limit applies.
    return read_stream(stdin if stdin is not None else sys.stdin, limits.MAX_TOTAL_BYTES, STDIN,
                       "render fewer objects at a time")


def read_stream(stream, limit: int, name: str, fix: str = "split it into several files") -> str:
    """The text of ``stream`` (stdin), read as bytes and refused once it passes ``limit`` bytes: never
    more than ``limit`` + 1 bytes are held."""
    source = getattr(stream, "buffer", stream)
    data = source.read(limit + 1)
    if isinstance(data, str):  # a text stream without bytes underneath (tests pass StringIO)
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > limit:
        raise OmeError(f"larger than {_mib(limit)}; {fix}", file=name)
    return decode(data, name)


def decode(data: bytes, name: str) -> str:
    """UTF-8 text, or an error giving the offset of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise OmeError(f"not UTF-8 text: byte 0x{data[err.start]:02x} at offset {err.start} is not valid "
                       "UTF-8; save it as UTF-8 (Kubernetes YAML is UTF-8)", file=name) from None


def read_named_file(path: str) -> str:
    """A file named by the user or found beside an input (the lock): read as :func:`read_file` reads
    inputs, and a symbolic link must stay inside its own directory."""
    _refuse_escape(path, os.path.dirname(os.path.abspath(path)), path)
    return read_file(path)


def _refuse_escape(path: str, directory: str, shown: str) -> None:
    """Refuse a symbolic link whose target is outside ``directory`` (both resolved)."""
    if not os.path.islink(path):
        return
    target, root = os.path.realpath(path), os.path.realpath(directory)
    if os.path.commonpath([target, root]) != root:
        raise OmeError(f"symbolic link to {target}, outside {directory}; omerender reads only the files it is "
                       "given", file=shown)


def _yaml_files(directory: str, skipped: list[str]) -> list[str]:
    """YAML files under ``directory``. Symbolic links are not followed: one leading outside is an error, and
    the target of one inside is read under its own name (reading it twice would duplicate its objects).
    A directory holding the record of ``render -o`` is appended to ``skipped``, not read."""
    found = []
    for root, dirs, files in os.walk(directory):
        if RENDERED_MARKER in files:
            skipped.append(root)
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in dirs + files:
            _refuse_escape(os.path.join(root, name), directory, os.path.join(root, name))
        for name in files:
            if name in KUSTOMIZATION_FILES or name.startswith(".") or os.path.islink(os.path.join(root, name)):
                continue
            if name.endswith((".yaml", ".yml")):
                found.append(os.path.join(root, name))
        if len(found) > limits.MAX_FILES:  # stop walking: read_paths counts across every path
            raise _too_many_files(directory)
    return sorted(found)


def read_file(file: str, limit: int | None = None) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes (default: the file limit); anything else
    is an error naming it."""
    limit = limits.MAX_FILE_BYTES if limit is None else limit
    try:
        _check_regular(os.stat(file), file, limit)  # before open: opening a FIFO would block
        with open(file, "rb") as handle:
            _check_regular(os.fstat(handle.fileno()), file, limit)
            data = handle.read(limit + 1)  # the file may have grown since
    except OSError as err:
        raise OmeError(f"cannot read file: {err.strerror}", file=file) from None
    if len(data) > limit:
        raise OmeError(f"larger than {_mib(limit)}; split it into several files", file=file)
    return decode(data, file)


def _check_regular(info: os.stat_result, file: str, limit: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise OmeError("not a regular file; omerender reads only files, directories and -", file=file)
    if info.st_size > limit:
        raise OmeError(f"larger than {_mib(limit)}; split it into several files", file=file)


def parse_text(text: str, file: str, start: int = 0, budget: Budget | None = None) -> list[Doc]:
    """Parse a multi-document YAML text; ``kind: List`` is flattened.

    Only plain YAML is read (see :class:`SafeLoader`); input over a limit is an error naming ``file``.
    ``budget`` is shared by every text of one input.
    """
    try:
        raw = [d for d in load_all(text, budget if budget is not None else Budget()) if d is not None]
    except yaml.YAMLError as err:
        raise OmeError(yaml_error_text(err), file=file) from None
    docs = []
    for data in raw:
        items = data.get("items") if isinstance(data, dict) and data.get("kind") == "List" else None
        for item in (items if isinstance(items, list) else [data]):
            docs.append(Doc(item, file, start + len(docs)))
            if len(docs) > limits.MAX_OBJECTS:
                raise too_many_objects(file)
    return docs


def yaml_error_text(err: yaml.YAMLError) -> str:
    """What a message says about YAML that could not be read: over a limit, or malformed."""
    prefix = "" if isinstance(err, YAMLLimitError) else "malformed YAML: "
    return prefix + yaml_problem(err)


def yaml_problem(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    if mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return problem


# ---------------------------------------------------------------- indexing

def index(docs: list[Doc]) -> Inputs:
    """Validate every document as a Kubernetes object and sort the OME ones by role."""
    if len(docs) > limits.MAX_OBJECTS:
        raise too_many_objects(None)
    inputs = Inputs()
    errors: list[OmeError] = []
    for doc in docs:
        try:
            obj = _as_object(doc)
            _file(inputs, obj)
            inputs.messages.extend(_group_warnings(obj))
        except OmeError as err:
            errors.append(err)
    if errors:
        raise OmeErrors(errors)
    return inputs


def _as_object(doc: Doc) -> Obj:
    data = doc.data
    if not isinstance(data, dict):
        raise OmeError(f"expected a Kubernetes object (a mapping), got {type_name(data)}", file=doc.file)
    for key in ("apiVersion", "kind"):
        if not isinstance(data.get(key), str) or not data.get(key):
            raise OmeError(f"{key}: Required value: every object needs apiVersion and kind", file=doc.file,
                           field=key)
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        raise OmeError(f"{data['kind']}: metadata: Required value", file=doc.file, field="metadata")
    if not isinstance(meta.get("name"), str) or not meta.get("name"):
        raise OmeError(f"{data['kind']}: metadata.name: Required value", file=doc.file, field="metadata.name")
    if "namespace" in meta and meta["namespace"] is not None and not isinstance(meta["namespace"], str):
        obj = Obj(dict(data, metadata={"name": meta["name"]}), doc.file, doc.position)
        raise obj.error("metadata.namespace: Invalid value: must be a string", "metadata.namespace")
    obj = Obj(data, doc.file, doc.position)
    _check_ome_kind(obj)
    if data["apiVersion"].split("/")[0] == OME_GROUP and data["kind"] in OME_KINDS:
        if data["apiVersion"] != OME_API_VERSION:
            raise obj.error(f'apiVersion: Unsupported value: "{data["apiVersion"]}": supported values: '
                            f'"{OME_API_VERSION}"', "apiVersion")
        for key in ("labels", "annotations"):
            _check_string_map(obj, meta.get(key), f"metadata.{key}")
        spec = data.get("spec")
        if spec is not None and not isinstance(spec, dict):
            raise obj.error(f"spec: Invalid value: \"{type_name(spec)}\": must be of type object", "spec")
        try:
            check_spec(obj.kind, spec or {})
        except OmeError as err:
            raise err.located(obj.ref, obj.file) from None
    own_name_rule = obj.is_ome and obj.kind == "InferenceService"  # OME's stricter one (render.check_isvc)
    try:
        if obj.is_ome:
            apirules.check_metadata(meta, obj.api_version, obj.kind, name=not own_name_rule)
        else:  # passed through as it is: the checks of every object omerender writes
            apirules.check_object(data)
    except OmeError as err:
        raise err.located(obj.ref, obj.file) from None
    return obj


def _check_ome_kind(obj: Obj) -> None:
    """A kind of OME's API group that OME does not have is a typo, never an object to pass through."""
    if obj.api_version.split("/")[0] != OME_GROUP or obj.kind in OME_KINDS + OME_OTHER_KINDS:
        return
    known = {k.lower(): k for k in OME_KINDS + OME_OTHER_KINDS}
    near = difflib.get_close_matches(obj.kind.lower(), list(known), n=1, cutoff=0.6)
    fix = f'did you mean "{known[near[0]]}"?' if near else f"the kinds of {OME_GROUP} are {', '.join(OME_KINDS)}"
    raise obj.error(f'kind: Unsupported value: "{obj.kind}": not a kind of the {OME_GROUP} API group; {fix}', "kind")


def _group_warnings(obj: Obj) -> list[Message]:
    """An OME kind under a group that looks like OME's but is not (``ome.oracle.com``) is passed through."""
    group = obj.api_version.rpartition("/")[0]
    if obj.kind not in OME_KINDS or group == OME_GROUP or "ome" not in group.split("."):
        return []
    return [Message("warning", f"apiVersion {obj.api_version} is not OME's API group, so this {obj.kind} is passed "
                    f"through unrendered; to render it, use apiVersion: {OME_API_VERSION}", obj.ref, obj.file,
                    "apiVersion")]


def _check_string_map(obj: Obj, value, path: str) -> None:
    try:
        check(value, STRING_MAP, path)
    except OmeError as err:
        raise err.located(obj.ref, obj.file) from None


def _file(inputs: Inputs, obj: Obj) -> None:
    inputs.objects.append(obj)
    if not obj.is_ome:
        inputs.others.append(obj)
        return
    kind, name, ns = obj.kind, obj.name, obj.namespace
    table, key = {
        "ClusterServingRuntime": (inputs.cluster_runtimes, name),
        "ServingRuntime": (inputs.runtimes, (ns, name)),
        "ClusterBaseModel": (inputs.cluster_models, name),
        "BaseModel": (inputs.models, (ns, name)),
        "AcceleratorClass": (inputs.classes, name),
        "InferenceService": (None, (ns, name)),
    }[kind]
    if table is None:
        if key in inputs.isvc_keys:
            raise obj.error(f"duplicate {kind} {name} in the inputs")
        inputs.isvc_keys.add(key)
        inputs.isvcs.append(obj)
        return
    if key in table:
        first = table[key]
        raise obj.error(f"duplicate {kind} {name} in the inputs (first in {first.file})")
    table[key] = obj
