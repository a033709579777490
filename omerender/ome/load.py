"""The objects of the input: validate what every object must have, and index them by role.

:func:`index` sorts the :class:`~omerender.yamlio.reading.Doc` records that :func:`omerender.yamlio.reading.read_paths`
returns into :class:`Inputs`. Nothing here reads files or renders anything.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from omerender.errors import Message, ObjRef, OmeError, OmeErrors, type_name
from omerender.kube import apirules
from omerender.kube.shapes import STRING_MAP, check, check_spec, without_nulls
from omerender.yamlio import limits
from omerender.yamlio.reading import Doc, too_many_objects
from .cluster import benchmark as benchmarkconfig, configmap as clusterconfig
from .cluster.settings import ClusterConfig

OME_GROUP = "ome.io"
OME_API_VERSION = "ome.io/v1beta1"
OME_KINDS = ("ServingRuntime", "ClusterServingRuntime", "InferenceService", "BaseModel",
             "ClusterBaseModel", "AcceleratorClass", "AutoscalerPolicy", "BenchmarkJob")
# The other kinds of OME v1.3's API group (docs: reference/api/ome.v1beta1.md; benchmarks.md §5). omerender renders
# none of them: each is an error, or passes through with --keep-inputs (output.unrendered_errors), as does any kind
# of a group under ome.io (``<x>.ome.io``).
OME_OTHER_KINDS = ("AcceleratorQuota", "FineTunedWeight", "InferenceReplica", "RolloutPolicy", "TrafficMap",
                   "WorkloadCluster")
CLUSTER_SCOPED = ("ClusterServingRuntime", "ClusterBaseModel", "AcceleratorClass")
DEFAULT_NAMESPACE = "default"


class _kept:
    """A property worked out on first use and kept in the instance: functools.cached_property as of Python 3.12
    (3.11's takes a lock at each first use, which cost about as much as the properties it kept)."""

    def __init__(self, compute):
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)
        return value


@dataclass
class Obj:
    """A validated Kubernetes object of the input. Its identity (kind, name, namespace...) is worked out once, when
    first asked: the render asks it hundreds of thousands of times, and an input object is never changed."""

    data: dict
    file: str
    position: int
    origin: object = None  # omerender.yamlio.marks.Origin: where in ``file`` (messages name the line)

    @_kept
    def kind(self) -> str:
        return self.data["kind"]

    @_kept
    def api_version(self) -> str:
        return self.data["apiVersion"]

    @_kept
    def name(self) -> str:
        return self.data["metadata"]["name"]

    @_kept
    def namespace(self) -> str | None:
        if self.is_ome:
            if self.kind in CLUSTER_SCOPED:
                return None  # kustomize's namespace: sets it on kinds whose scope it doesn't know
            return self.data["metadata"].get("namespace") or DEFAULT_NAMESPACE
        return self.data["metadata"].get("namespace") or None

    @_kept
    def is_ome(self) -> bool:
        return self.api_version.split("/")[0] == OME_GROUP and self.kind in OME_KINDS

    @property
    def in_ome_groups(self) -> bool:
        """Of OME's API group or a group under it: rendered, consumed, kept on request, or an error."""
        return is_ome_group(self.api_version.rpartition("/")[0])

    @_kept
    def ref(self) -> ObjRef:
        return ObjRef(self.kind, self.name, self.namespace, self.api_version, self.origin)

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
    autoscaler_policies: dict[tuple[str, str], Obj] = field(default_factory=dict)  # alpha since OME v1.3
    isvcs: list[Obj] = field(default_factory=list)
    benchmarks: list[Obj] = field(default_factory=list)   # BenchmarkJobs, each rendered to a Job (ome/benchmark)
    unrendered: list[Obj] = field(default_factory=list)   # kinds of OME's groups omerender cannot render
    others: list[Obj] = field(default_factory=list)
    isvc_keys: set[tuple[str, str]] = field(default_factory=set)
    benchmark_keys: set[tuple[str, str]] = field(default_factory=set)
    messages: list[Message] = field(default_factory=list)  # warnings found while indexing
    # OME's ConfigMap inferenceservice-config, parsed once (the Helm chart's defaults without one); the
    # ConfigMap itself is in no list above: it is an input only, never passed through (cluster/configmap.py)
    cluster_config: ClusterConfig = clusterconfig.CHART_DEFAULTS
    # OME's ConfigMap benchmarkjob-config, the same way: an input only (cluster/benchmark.py)
    benchmark_config: benchmarkconfig.BenchmarkJobConfig = benchmarkconfig.CHART_DEFAULT


def index(docs: list[Doc]) -> Inputs:
    """Validate every document as a Kubernetes object and sort the OME ones by role."""
    if len(docs) > limits.MAX_OBJECTS:
        raise too_many_objects(None)
    inputs = Inputs()
    errors: list[OmeError] = []
    candidates: list[clusterconfig.Candidate] = []
    benchmark_candidates: list[clusterconfig.Candidate] = []
    for doc in docs:
        try:
            obj = _as_object(doc)
            if clusterconfig.is_cluster_config(obj.data):
                candidates.append(clusterconfig.Candidate(obj.data, obj.file, obj.origin))
                continue
            if benchmarkconfig.is_benchmark_config(obj.data):
                benchmark_candidates.append(clusterconfig.Candidate(obj.data, obj.file, obj.origin))
                continue
            _file(inputs, obj)
            inputs.messages.extend(_group_warnings(obj) + _near_miss_warnings(obj))
        except OmeError as err:
            errors.append(err)
    try:
        selection = clusterconfig.select(candidates)
        inputs.cluster_config = selection.config
        inputs.messages.extend(selection.messages)
    except OmeError as err:
        errors.append(err)
    try:
        inputs.benchmark_config, messages = benchmarkconfig.select(benchmark_candidates)
        inputs.messages.extend(messages)
    except OmeError as err:
        errors.append(err)
    if errors:
        raise OmeErrors(errors)
    return inputs


def _near_miss_warnings(obj: Obj) -> list[Message]:
    text = (clusterconfig.near_miss(obj.data) or benchmarkconfig.near_miss(obj.data)) if obj.kind == "ConfigMap" \
        else None
    return [Message("warning", text, obj.ref, obj.file, "metadata.name",
                    code="configmap-name-near-miss")] if text else []


def _as_object(doc: Doc) -> Obj:
    data = doc.data
    if not isinstance(data, dict):
        raise OmeError(f"expected a Kubernetes object (a mapping), got {type_name(data)}", file=doc.file,
                       origin=doc.origin)
    for key in ("apiVersion", "kind"):
        if not isinstance(data.get(key), str) or not data.get(key):
            raise OmeError(f"{key}: Required value: every object needs apiVersion and kind", file=doc.file,
                           field=key, origin=doc.origin)
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        raise OmeError(f"{data['kind']}: metadata: Required value", file=doc.file, field="metadata",
                       origin=doc.origin)
    if not isinstance(meta.get("name"), str) or not meta.get("name"):
        raise OmeError(f"{data['kind']}: metadata.name: Required value", file=doc.file, field="metadata.name",
                       origin=doc.origin)
    if "namespace" in meta and meta["namespace"] is not None and not isinstance(meta["namespace"], str):
        obj = Obj(dict(data, metadata={"name": meta["name"]}), doc.file, doc.position, doc.origin)
        raise obj.error("metadata.namespace: Invalid value: must be a string", "metadata.namespace")
    obj = Obj(data, doc.file, doc.position, doc.origin)
    api_version = data["apiVersion"]
    if api_version.split("/")[0] == OME_GROUP:
        _check_ome_kind(obj)
        if api_version != OME_API_VERSION:
            raise obj.error(f'apiVersion: Unsupported value: "{api_version}": supported values: '
                            f'"{OME_API_VERSION}"', "apiVersion")
        if data["kind"] in OME_KINDS:
            obj = _ome_object(obj, doc, meta)
    own_name_rule = obj.is_ome and obj.kind == "InferenceService"  # OME's stricter one (render.check_isvc)
    try:
        if obj.is_ome:
            apirules.check_metadata(meta, obj.api_version, obj.kind, name=not own_name_rule)
        else:  # passed through as it is: the checks of every object omerender writes
            apirules.check_object(data)
    except OmeError as err:
        raise err.located(obj.ref, obj.file) from None
    return obj


def _ome_object(obj: Obj, doc: Doc, meta: dict) -> Obj:
    """An object of one of OME's kinds, its labels, annotations and spec checked; nulls pruned from its spec."""
    data = obj.data
    for key in ("labels", "annotations"):
        if meta.get(key) is not None:
            _check_string_map(obj, meta[key], f"metadata.{key}")
    spec = data.get("spec")
    if spec is not None and not isinstance(spec, dict):
        raise obj.error(f"spec: Invalid value: \"{type_name(spec)}\": must be of type object", "spec")
    try:
        nulls = check_spec(obj.kind, spec or {})
    except OmeError as err:
        raise err.located(obj.ref, obj.file) from None
    if nulls:  # after the check, which names an unknown field even when it is null
        pruned = without_nulls(obj.kind, spec)
        if pruned is not spec:
            return Obj(dict(data, spec=pruned), doc.file, doc.position)
    return obj


def _check_ome_kind(obj: Obj) -> None:
    problem = unknown_ome_kind(obj.api_version, obj.kind)
    if problem:
        raise obj.error(problem, "kind")


def is_ome_group(group: str) -> bool:
    return group == OME_GROUP or group.endswith("." + OME_GROUP)


def unknown_ome_kind(api_version: str, kind: str) -> str | None:
    """A kind of OME's API group that OME does not have is a typo, never an object to pass through."""
    if api_version.split("/")[0] != OME_GROUP or kind in OME_KINDS + OME_OTHER_KINDS:
        return None
    known = {k.lower(): k for k in OME_KINDS + OME_OTHER_KINDS}
    near = difflib.get_close_matches(kind.lower(), list(known), n=1, cutoff=0.6)
    fix = (f'did you mean "{known[near[0]]}"?' if near
           else f"the kinds of {OME_GROUP} are {', '.join(sorted(OME_KINDS + OME_OTHER_KINDS))}")
    return f'kind: Unsupported value: "{kind}": not a kind of the {OME_GROUP} API group; {fix}'


def _group_warnings(obj: Obj) -> list[Message]:
    """An OME kind under a look-alike group passes through with a warning; under a group below ome.io it is an
    error instead (output.unrendered_errors), or passes through silently with --keep-inputs, as its other kinds."""
    problem = None if obj.in_ome_groups else foreign_ome_group(obj.api_version, obj.kind)
    if not problem:
        return []
    return [Message("warning", f"{problem} is passed through unrendered; to render it, use apiVersion: "
                    f"{OME_API_VERSION}", obj.ref, obj.file, "apiVersion", code="foreign-api-group")]


def foreign_ome_group(api_version: str, kind: str) -> str | None:
    """An OME kind under a group that looks like OME's but is not (``ome.oracle.com``): "apiVersion ... is not
    OME's API group, so this <kind>", which the caller ends."""
    group = api_version.rpartition("/")[0]
    if kind not in OME_KINDS or group == OME_GROUP or "ome" not in group.split("."):
        return None
    return f"apiVersion {api_version} is not OME's API group, so this {kind}"


def _check_string_map(obj: Obj, value, path: str) -> None:
    try:
        check(value, STRING_MAP, path)
    except OmeError as err:
        raise err.located(obj.ref, obj.file) from None


# Where each OME kind is filed: kept in input order (the keys find a duplicate), or in a table by name.
_LISTED = {"InferenceService": ("isvcs", "isvc_keys"), "BenchmarkJob": ("benchmarks", "benchmark_keys")}
_TABLES = {"ClusterServingRuntime": ("cluster_runtimes", False), "ServingRuntime": ("runtimes", True),
           "ClusterBaseModel": ("cluster_models", False), "BaseModel": ("models", True),
           "AcceleratorClass": ("classes", False), "AutoscalerPolicy": ("autoscaler_policies", True)}


def _file(inputs: Inputs, obj: Obj) -> None:
    inputs.objects.append(obj)
    if not obj.is_ome:
        (inputs.unrendered if obj.in_ome_groups else inputs.others).append(obj)
        return
    kind, name, ns = obj.kind, obj.name, obj.namespace
    listed = _LISTED.get(kind)
    if listed is not None:
        items, keys = getattr(inputs, listed[0]), getattr(inputs, listed[1])
        if (ns, name) in keys:
            raise obj.error(f"duplicate {kind} {name} in the inputs")
        keys.add((ns, name))
        items.append(obj)
        return
    field_name, namespaced = _TABLES[kind]
    table, key = getattr(inputs, field_name), (ns, name) if namespaced else name
    if key in table:
        first = table[key]
        raise obj.error(f"duplicate {kind} {name} in the inputs (first in {first.file})")
    table[key] = obj


ISVC_LABEL = "ome.io/inferenceservice"  # on every object rendered for an InferenceService


def source_of(inputs: Inputs | None):
    """For messages about rendered objects: a function giving the (file, origin) of the input an object came from
    (itself, passed through, or the InferenceService its ``ome.io/inferenceservice`` label names), else None;
    None without inputs."""
    if inputs is None:
        return None
    by_id = {id(obj.data): obj for obj in inputs.objects}
    isvcs = {(isvc.namespace, isvc.name): isvc for isvc in inputs.isvcs}

    def place(data: dict):
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
        found = by_id.get(id(data)) or isvcs.get((meta.get("namespace") or DEFAULT_NAMESPACE,
                                                  labels.get(ISVC_LABEL)))
        return (found.file, found.origin) if found is not None and found.file else None
    return place
