"""Read YAML, index the objects, validate what every object must have.

The entry points are :func:`read_paths` (files, directories, ``-``), which
returns :class:`Doc` records, and :func:`index`, which sorts them into
:class:`Inputs`. Nothing here renders anything.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable

import yaml

from .errors import ObjRef, OmeError, OmeErrors

SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

OME_GROUP = "ome.io"
OME_API_VERSION = "ome.io/v1beta1"
OME_KINDS = ("ServingRuntime", "ClusterServingRuntime", "InferenceService", "BaseModel",
             "ClusterBaseModel", "AcceleratorClass")
CLUSTER_SCOPED = ("ClusterServingRuntime", "ClusterBaseModel", "AcceleratorClass")
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
STDIN = "<stdin>"
DEFAULT_NAMESPACE = "default"


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


# ---------------------------------------------------------------- reading

def read_paths(paths: Iterable[str], stdin=None) -> list[Doc]:
    """Parse every path (file, directory or ``-``) into documents, in a stable order."""
    docs: list[Doc] = []
    errors: list[OmeError] = []
    for path in paths:
        for file, text in _sources(path, stdin):
            try:
                docs.extend(parse_text(text, file, start=len(docs)))
            except OmeError as err:
                errors.append(err)
    if errors:
        raise OmeErrors(errors)
    return docs


def _sources(path: str, stdin) -> Iterable[tuple[str, str]]:
    if path == "-":
        stream = stdin if stdin is not None else sys.stdin
        yield STDIN, stream.read()
        return
    if os.path.isdir(path):
        for file in _yaml_files(path):
            yield file, _read_file(file)
        return
    if not os.path.exists(path):
        raise OmeError(f"no such file or directory: {path}")
    yield path, _read_file(path)


def _yaml_files(directory: str) -> list[str]:
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if name in KUSTOMIZATION_FILES or name.startswith("."):
                continue
            if name.endswith((".yaml", ".yml")):
                found.append(os.path.join(root, name))
    return sorted(found)


def _read_file(file: str) -> str:
    try:
        with open(file, encoding="utf-8") as handle:
            return handle.read()
    except UnicodeDecodeError:
        raise OmeError("not a UTF-8 text file", file=file) from None
    except OSError as err:
        raise OmeError(f"cannot read file: {err.strerror}", file=file) from None


def parse_text(text: str, file: str, start: int = 0) -> list[Doc]:
    """Parse a multi-document YAML text; ``kind: List`` is flattened."""
    try:
        raw = [d for d in yaml.load_all(text, Loader=SafeLoader) if d is not None]
    except yaml.YAMLError as err:
        raise OmeError(f"malformed YAML: {_yaml_problem(err)}", file=file) from None
    docs = []
    for data in raw:
        items = data.get("items") if isinstance(data, dict) and data.get("kind") == "List" else None
        for item in (items if isinstance(items, list) else [data]):
            docs.append(Doc(item, file, start + len(docs)))
    return docs


def _yaml_problem(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    if mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return problem


# ---------------------------------------------------------------- indexing

def index(docs: list[Doc]) -> Inputs:
    """Validate every document as a Kubernetes object and sort the OME ones by role."""
    inputs = Inputs()
    errors: list[OmeError] = []
    for doc in docs:
        try:
            obj = _as_object(doc)
            _file(inputs, obj)
        except OmeError as err:
            errors.append(err)
    if errors:
        raise OmeErrors(errors)
    return inputs


def _as_object(doc: Doc) -> Obj:
    data = doc.data
    if not isinstance(data, dict):
        raise OmeError(f"expected a Kubernetes object (a mapping), got {_type_name(data)}", file=doc.file)
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
    if data["apiVersion"].split("/")[0] == OME_GROUP and data["kind"] in OME_KINDS:
        if data["apiVersion"] != OME_API_VERSION:
            raise obj.error(f'apiVersion: Unsupported value: "{data["apiVersion"]}": supported values: '
                            f'"{OME_API_VERSION}"', "apiVersion")
        for key in ("labels", "annotations"):
            _check_string_map(obj, meta.get(key), f"metadata.{key}")
        spec = data.get("spec")
        if spec is not None and not isinstance(spec, dict):
            raise obj.error(f"spec: Invalid value: \"{_type_name(spec)}\": must be of type object", "spec")
    return obj


def _check_string_map(obj: Obj, value, path: str) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise obj.error(f'{path}: Invalid value: "{_type_name(value)}": must be of type object', path)
    for key, val in value.items():
        if not isinstance(val, str):
            raise obj.error(f'{path}.{key}: Invalid value: "{_type_name(val)}": must be of type string',
                            f"{path}.{key}")


def _type_name(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


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
