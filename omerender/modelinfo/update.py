"""Adding fields to BaseModels in a YAML file, leaving every other byte as it was.

ruamel.yaml composes the file (YAML 1.2, with positions); the new fields are inserted as text after the last
line of each model's ``spec`` block, at its indentation. Nothing else is re-serialised, so comments, key
order, quoting and the other documents stay byte for byte; the result is parsed again and checked. The new
fields are printed by omerender's one emitter (:mod:`omerender.yamlio.emit`), so a value such as a
``transformers_version`` of ``1e5`` or ``y`` is quoted wherever kubectl or kustomize would read it as a
number, a bool or a date.
"""
from __future__ import annotations

import io

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

from omerender.errors import ObjRef, OmeError, Report
from omerender.ome.load import OME_API_VERSION, foreign_ome_group, unknown_ome_kind
from omerender.yamlio.data import map_or_empty
from omerender.yamlio.emit import dump_in_order
from omerender.yamlio.reading import list_items
from omerender.yamlio.yamlread import SafeLoader, yaml_problem
from .metadata import FIELDS

MODEL_KINDS = ("BaseModel", "ClusterBaseModel")
SKIP_ANNOTATION = "ome.oracle.com/skip-config-parsing"


class Target:
    """One model in a file: its reference, spec node and current values."""

    def __init__(self, ref: ObjRef, obj: dict, spec_node: MappingNode | None, meta_node=None):
        self.ref, self.obj, self.spec_node, self.meta_node = ref, obj, spec_node, meta_node

    @property
    def annotations(self) -> dict:
        return map_or_empty(map_or_empty(self.obj.get("metadata")).get("annotations"))

    def annotation_edit(self, key: str, value: str) -> tuple | None:
        """(mapping node, fields, field path) that adds annotation ``key``, or None when it is set already
        (never overwritten) or the model has no metadata to hold it."""
        if key in self.annotations or self.meta_node is None:
            return None
        node = _value(self.meta_node, "annotations")
        if node is None:
            return self.meta_node, {"annotations": {key: value}}, "metadata"
        return node, {key: value}, "metadata.annotations"

    @property
    def skipped(self) -> bool:
        annotations = map_or_empty(map_or_empty(self.obj.get("metadata")).get("annotations"))
        return str(annotations.get(SKIP_ANNOTATION, "")).lower() == "true"

    @property
    def storage_uri(self):
        return map_or_empty(map_or_empty(self.obj.get("spec")).get("storage")).get("storageUri")


def load_objects(text: str, file: str) -> list:
    """Every document of ``text`` (None for an empty one), through omerender's guarded loader."""
    try:
        return list(yaml.load_all(text, Loader=SafeLoader))
    except yaml.YAMLError as err:
        raise OmeError(f"malformed YAML: {yaml_problem(err)}", file=file) from None


def models_in(text: str, file: str, report: Report) -> list[Target]:
    """The BaseModels and ClusterBaseModels of a file, with their spec nodes. A kind of OME's API group that
    OME does not have is an error, as in the render; a model under a group that only looks like OME's is
    named in a warning, and left as it is."""
    objs = load_objects(text, file)  # first: it enforces the depth and alias limits
    try:
        nodes = list(YAML(typ="rt").compose_all(io.StringIO(text)))
    except YAMLError as err:
        raise OmeError(f"malformed YAML: {str(err).splitlines()[0]}", file=file) from None
    if len(nodes) != len(objs):
        raise OmeError("the documents of this file cannot be located for editing; add the fields by hand", file=file)
    targets = []
    for obj, node in (pair for doc, doc_node in zip(objs, nodes) for pair in each_object(doc, doc_node)):
        if not isinstance(obj, dict):
            continue
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        meta = map_or_empty(obj.get("metadata"))
        namespace = (meta.get("namespace") or "default") if kind == "BaseModel" else None
        ref = ObjRef(kind, str(meta.get("name", "")), namespace)
        if problem := unknown_ome_kind(api_version, kind):
            raise OmeError(problem, ref=ref, file=file, field="kind")
        if kind in MODEL_KINDS and (foreign := foreign_ome_group(api_version, kind)):
            report.warn(f"{foreign} is left as it is; to fill it, use apiVersion: {OME_API_VERSION}", ref=ref,
                        file=file, field="apiVersion", code="foreign-api-group")
        if kind in MODEL_KINDS and api_version.startswith("ome.io/"):
            targets.append(Target(ref, obj, _value(node, "spec"), _value(node, "metadata")))
    return targets


def each_object(doc, node=None) -> list[tuple]:
    """The objects of one document with their nodes: a ``kind: List``'s items, as the render reads them, or
    the document itself."""
    items = list_items(doc)
    if items is None:
        return [(doc, node)]
    sequence = _value(node, "items")
    nodes = sequence.value if isinstance(sequence, SequenceNode) and len(sequence.value) == len(items) else ()
    return list(zip(items, nodes or [None] * len(items)))


def _value(node, key: str):
    if not isinstance(node, MappingNode):
        return None
    return next((v for k, v in node.value if isinstance(k, ScalarNode) and k.value == key), None)


def missing_fields(spec: dict, fields: dict) -> dict:
    """The fields the agent would set: those not already set (updateModelSpec never overwrites)."""
    spec = spec if isinstance(spec, dict) else {}
    out = {}
    for key in FIELDS:
        if key not in fields:
            continue
        current = spec.get(key)
        unset = not (current or {}).get("name") if key == "modelFormat" and isinstance(current, dict) else (
            current is None or current == [] if key == "modelCapabilities" else current is None)
        if unset:
            out[key] = fields[key]
    return out


def insert(text: str, edits: list[tuple], file: str, ref_of) -> str:
    """``text`` with each mapping's new fields appended after its last line (bottom-up, so positions hold).
    An edit is (mapping node, fields) for ``spec``, or (mapping node, fields, field path) for another mapping."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    for node, fields, *named in sorted(edits, key=lambda e: e[0].start_mark.line, reverse=True):
        field = named[0] if named else "spec"
        why = _not_extendable(node)
        if why is not None:
            raise OmeError(f"{field} {why}; add them by hand", ref=ref_of(node), file=file, field=field)
        indent = node.value[0][0].start_mark.column
        after = _last_line(node)
        if after < len(lines) and not lines[after].endswith(("\n", "\r")):
            lines[after] += newline
        block = dump_in_order(fields)
        lines[after + 1:after + 1] = [" " * indent + line + newline for line in block.splitlines()]
    return "".join(lines)


def extendable(node) -> bool:
    """Whether :func:`insert` can add keys to ``node``: a non-empty block mapping with no anchor or alias."""
    return _not_extendable(node) is None


def _not_extendable(node) -> str | None:
    """Why :func:`insert` cannot add keys to ``node`` (following its field's name), None when it can."""
    if not isinstance(node, MappingNode) or node.flow_style or not node.value:
        return "must be a non-empty block mapping for --update to add fields"
    if node.anchor or _holds_alias(node):
        return "is or holds a YAML anchor or alias, so the fields cannot be added at one place in the text"
    return None


def _holds_alias(node) -> bool:
    """Whether an alias (``*name``) is inside ``node``: its node is the anchored one, written earlier in the
    file than the place that names it. Stops at the first, so shared nodes are never walked twice."""
    pending = [node]
    while pending:
        parent = pending.pop()
        if isinstance(parent, MappingNode):
            pairs = [(k, v) for k, v in parent.value]
        elif isinstance(parent, SequenceNode):
            pairs = [(parent, v) for v in parent.value]
        else:
            continue
        for before, child in pairs:
            if child.start_mark.index < before.start_mark.index:
                return True
            pending.append(child)
    return False


def _last_line(node) -> int:
    """The last line holding content of ``node`` (0-based)."""
    if isinstance(node, ScalarNode):
        end = node.end_mark
        if node.style in ("|", ">"):
            return end.line - 1 if end.column == 0 else end.line
        return end.line
    children = [c for pair in node.value for c in pair] if isinstance(node, MappingNode) else list(node.value)
    if isinstance(node, (MappingNode, SequenceNode)) and node.flow_style:
        return node.end_mark.line
    return max((_last_line(c) for c in children), default=node.start_mark.line)
