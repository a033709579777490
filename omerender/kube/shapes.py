"""The types of the input fields omerender reads or copies into pods, checked before anything is
rendered, so that a wrong type or an unknown pod field is an error naming the field — where the API
server would refuse the object OME creates — and never a crash or an invalid output.

Pod and container fields are checked against the field table of the target cluster's Kubernetes
version (:mod:`.k8stypes`, generated from the Kubernetes OpenAPI schemas by ``scripts/gen_k8s_types.py``).
OME's own fields are described here in a small shape language: a Python type, a dict of field shapes (an
object), a one-element list (a list of that shape), :class:`MapOf`, or :class:`K8s` (a Kubernetes type by name).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache

from omerender.errors import OmeError, type_name
from omerender.yamlio.data import BoundedSet, fingerprint
from . import k8stypes
from .apirules import (check_annotations, check_dns_label, check_env_name, check_host_port, check_integer,
                       check_labels, check_port, check_resource_list)

REQUIRED = "!required"  # in an object shape: the fields that must be set


@dataclass(frozen=True)
class MapOf:
    values: object


@dataclass(frozen=True)
class K8s:
    """A Kubernetes type, e.g. ``K8s("Container")``; ``strict``: unknown fields are errors."""

    name: str
    strict: bool = True


@lru_cache(maxsize=None)
def _types_of(version: str) -> dict:
    """The types of ``version``'s field table, by full name and by the short names of core/v1 and apps/v1."""
    types = k8stypes.table(version)["types"]
    short = {name.rsplit(".", 1)[-1]: value for name, value in types.items()
             if name.startswith(("io.k8s.api.core.v1.", "io.k8s.api.apps.v1."))}
    return {**short, **types}


@dataclass(frozen=True)
class Int32:
    """A count OME's Go types hold in an int32; ``typed``: a non-integer is an error here, else where it is read."""

    typed: bool = False


INT32 = Int32()


STRING_MAP = MapOf(str)


@dataclass(frozen=True)
class Rule:
    """``shape``, then the API server's rule ``check(value, path)`` on the value."""

    shape: object
    check: object


LABELS = Rule(STRING_MAP, check_labels)
ANNOTATIONS = Rule(STRING_MAP, check_annotations)
CONTAINER = K8s("Container")
# Lists that merge by a key (merge.LIST_KEYS) need that key on every item, on either side of a merge.
MERGE_KEYS = {"env": "name", "volumes": "name", "containers": "name", "initContainers": "name",
              "imagePullSecrets": "name", "ports": "containerPort", "volumeMounts": "mountPath"}
# OME's fields of a component besides the pod's (api.md §3.4); replicas, budgets and the autoscaler
# have checks of their own with OME's texts (autoscaling.py).
EXTENSION = {
    "runner": CONTAINER, "labels": LABELS, "annotations": ANNOTATIONS,
    "deploymentStrategy": K8s("DeploymentStrategy"), "servicePortAppProtocols": STRING_MAP, "config": STRING_MAP,
    "acceleratorOverride": {"acceleratorClass": str, "policy": str, "constraints": dict},
    "minReplicas": INT32, "maxReplicas": INT32, "minAvailable": INT32, "maxUnavailable": INT32,
    "autoscaler": object, "autoscalerPolicyRef": {"name": str, "kind": str, REQUIRED: ("name",)},
    "timeoutSeconds": object, "lifecycle": object,
    "containerConcurrency": object, "canaryTrafficPercent": object, "kedaConfig": object, "scaleMetric": object,
    "scaleTarget": object, "topologyKey": object, "topologySpread": object, "topologySpreadKey": object,
    "scalingPolicy": object,
}


@dataclass(frozen=True)
class Component:
    """A component (or leader/worker): the pod's fields plus ``extension``; nothing else."""

    extension: dict


PART = Component({"runner": CONTAINER})
WORKER = Component({"runner": CONTAINER, "size": Int32(typed=True)})
COMPONENT = Component({**EXTENSION, "leader": PART, "worker": WORKER})
# Object shapes are closed: a field they do not list is an error, as for the API server with OME's CRDs
# (OME's CRDs, config/crd/ in OME's repository, list the fields). ``object``: any value, checked where it is read.
CONSTRAINTS = {key: object for key in ("architectureFamilies", "excludedClasses", "maxMemory",
                                        "minArchitectureVersion", "minComputePerformanceTFLOPS", "minMemory",
                                        "preferredPrecisions", "requiredFeatures")}
FORMAT = {"name": object, "operator": object, "version": object, "weight": object}
PIPELINE_PART = {"library": object, "type": object}
DIFFUSION_PIPELINE = {"className": object, "additionalComponents": object, "scheduler": PIPELINE_PART,
                      "textEncoder": PIPELINE_PART, "tokenizer": PIPELINE_PART, "transformer": PIPELINE_PART,
                      "vae": PIPELINE_PART}
ACCELERATOR_CONFIG = MapOf({"environmentOverride": object, "minMemoryPerBillionParams": object,
                            "runtimeArgsOverride": object,
                            "tensorParallelismOverride": {"dataParallelSize": object, "pipelineParallelSize": object,
                                                          "tensorParallelSize": object}})
ISVC_SPEC = {
    "model": {"name": str, "kind": str, "apiGroup": str, "fineTunedWeights": [str],
              "overlays": [{"name": str, "kind": str}]},
    "runtime": {"name": str, "kind": str, "apiGroup": str, "autoSync": bool, "revision": str},
    "engine": COMPONENT, "decoder": COMPONENT, "router": COMPONENT,
    "acceleratorSelector": {"acceleratorClass": str, "policy": str, "constraints": CONSTRAINTS},
    "deploymentMode": str, "scalingPolicy": {"mode": str},
    "predictor": object, "kedaConfig": object, "replicaRefs": object, "compartmentID": object,
    "traffic": object,  # v1.3: its intent replaces the default BackendTrafficPolicy (ome/ingress); not rendered
    "rollout": object, "placement": object, "routing": object,  # v1.3: accepted with a warning (ome/inert.py)
}
SUPPORTED_FORMAT = {
    "name": object, "version": object, "modelFormat": FORMAT, "modelFramework": FORMAT, "modelArchitecture": object,
    "modelType": object, "quantization": object, "autoSelect": object, "priority": object,
    "acceleratorConfig": ACCELERATOR_CONFIG, "diffusionPipeline": DIFFUSION_PIPELINE,
    "modelCacheProviders": [str],  # v1.3, for Sharded models; no provider exists yet, so OME does nothing with it
}
RUNTIME_SPEC = {
    "supportedModelFormats": [SUPPORTED_FORMAT], "modelSizeRange": {"min": object, "max": object}, "disabled": bool,
    "acceleratorRequirements": {"acceleratorClasses": [str], "minArchitectureVersion": object,
                                "minComputePerformanceTFLOPS": object, "minMemory": object,
                                "preferredPrecisions": object, "requiredFeatures": object},
    "engineConfig": COMPONENT, "decoderConfig": COMPONENT, "routerConfig": COMPONENT,
    "nodeSelector": LABELS, "schedulerName": str, "scalingPolicy": {"mode": str},
    # the pod fields before OME v1.3 (render.py warns that they are ignored)
    "protocolVersions": object, "workers": object, "affinity": object, "annotations": object, "containers": object,
    "dnsPolicy": object, "hostIPC": object, "hostNetwork": object, "imagePullSecrets": object, "labels": object,
    "tolerations": object, "volumes": object,
}
MODEL_SPEC = {
    "storage": {"storageUri": str, "path": str, "key": str, "downloadPolicy": object,
                "nodeAffinity": K8s("NodeAffinity"), "nodeSelector": object, "parameters": object,
                "schemaPath": object},
    "modelFormat": FORMAT, "modelFramework": FORMAT, "vendor": str, "disabled": bool, "distribution": str,
    "additionalMetadata": object, "apiCapabilities": object, "compartmentID": object,
    "diffusionPipeline": DIFFUSION_PIPELINE,
    "displayName": object, "maxTokens": object, "modelArchitecture": object, "modelCapabilities": object,
    "modelConfiguration": object, "modelParameterSize": object, "modelType": object, "quantization": object,
    "servingMode": object, "version": object,
}
PERFORMANCE = {"fp16Tflops": object, "fp32Tflops": object, "int4Tops": object, "int8Tops": object,
               "latency": {"averageMillis": object, "maximumMillis": object}}
CLASS_SPEC = {
    "family": object, "vendor": object, "model": object, "integration": {"kueueResourceFlavor": object,
                                                                         "volcanoGPUType": object},
    "capabilities": {"clockSpeedMHz": object, "computeCapability": object, "features": object,
                     "levelZeroVersion": object, "memoryBandwidthGBps": object, "memoryGB": object,
                     "performance": PERFORMANCE},
    "cost": {"perHour": object, "perMillionTokens": object, "spotPerHour": object, "tier": object},
    "discovery": {"affinity": K8s("Affinity"), "deviceIDs": object, "nodeSelector": object, "pciVendorID": object},
    "resources": [{"name": object, "quantity": object, "divisible": object}],
}
# AutoscalerPolicy (alpha since OME v1.3; pkg/apis/ome/v1beta1/autoscalerpolicy_types.go): hpa's metrics and
# behavior and keda's advanced are copied verbatim into the HPA or ScaledObject, whose schemas the tests validate.
POLICY_TRIGGER = {"type": str, "providerRef": {"name": str, REQUIRED: ("name",)}, "metricType": str,
                  "queryReturnsDesiredReplicas": bool, "metadata": MapOf(str)}
POLICY_SPEC = {
    "enforcement": str, "class": str, "hpa": {"metrics": [dict], "behavior": dict},
    "keda": {"triggers": [POLICY_TRIGGER], "advanced": dict, "pollingInterval": Int32(typed=True),
             "cooldownPeriod": Int32(typed=True), "idleReplicaCount": Int32(typed=True),
             "fallback": {"failureThreshold": Int32(typed=True),
                          "replicas": {"value": Int32(typed=True), "fromComponent": str}}},
}
# BenchmarkJob (pkg/apis/ome/v1beta1/benchmark_job.go; v1.3 API reference): its CRD's types and required fields;
# the enums and the URL pattern are checked with the webhook's checks (ome/benchmark/validation.py).
STORAGE_SPEC = {"storageUri": str, "path": str, "schemaPath": str, "parameters": STRING_MAP, "key": str,
                "nodeSelector": STRING_MAP, "nodeAffinity": K8s("NodeAffinity")}
BENCHMARK_SPEC = {
    "huggingFaceSecretReference": {"name": str, REQUIRED: ("name",)},
    "endpoint": {"inferenceService": {"name": str, "namespace": str, REQUIRED: ("name", "namespace")},
                 "endpoint": {"url": str, "apiFormat": str, "modelName": str, REQUIRED: ("url", "apiFormat")}},
    "serviceMetadata": {"engine": str, "version": str, "gpuType": str, "gpuCount": int,
                        REQUIRED: ("engine", "version", "gpuType", "gpuCount")},
    "task": str, "trafficScenarios": [str], "numConcurrency": [int], "maxTimePerIteration": int,
    "maxRequestsPerIteration": int, "additionalRequestParams": STRING_MAP, "dataset": STORAGE_SPEC,
    "outputLocation": STORAGE_SPEC, "resultFolderName": str,
    "podOverride": {"image": str, "env": [K8s("EnvVar")], "envFrom": [K8s("EnvFromSource")],
                    "volumeMounts": [K8s("VolumeMount")], "resources": K8s("ResourceRequirements"),
                    "tolerations": [K8s("Toleration")], "nodeSelector": LABELS, "affinity": K8s("Affinity"),
                    "volumes": [K8s("Volume")]},
    REQUIRED: ("endpoint", "task", "maxTimePerIteration", "maxRequestsPerIteration", "outputLocation"),
}
SPEC_SHAPES = {"InferenceService": ISVC_SPEC, "ServingRuntime": RUNTIME_SPEC, "ClusterServingRuntime": RUNTIME_SPEC,
               "BaseModel": MODEL_SPEC, "ClusterBaseModel": MODEL_SPEC, "AcceleratorClass": CLASS_SPEC,
               "AutoscalerPolicy": POLICY_SPEC, "BenchmarkJob": BENCHMARK_SPEC}


def check_spec(kind: str, spec: dict) -> bool:
    """Raise an :class:`OmeError` naming the first field of an input ``spec`` that is wrong; else whether a map in
    ``spec`` holds a null (False: :func:`without_nulls` has nothing to prune), found on the same pass."""
    shape = SPEC_SHAPES.get(kind)
    return _has_null(spec) if shape is None else check(spec, shape, "spec")


# Fields whose CRD schema keeps unknown fields (x-kubernetes-preserve-unknown-fields): the API server keeps their
# nulls, having no schema below them to call a null non-nullable.
KEEPS_NULLS = {"BaseModel": frozenset({"modelConfiguration"}), "ClusterBaseModel": frozenset({"modelConfiguration"})}


def without_nulls(kind: str, spec: dict) -> dict:
    """``spec`` as the API server stores it: every ``key: null`` of a map removed, at any depth (``spec`` itself
    when it holds none). OME's CRDs mark no field nullable, so the API server prunes each such null before it
    stores a custom resource (k8s.io/apiextensions-apiserver, schema/defaulting/prunenulls.go,
    PruneNonNullableNullsWithoutDefaults), and OME's controller never sees it: ``cpu: null`` in a runner's
    ``resources.limits`` is no limit at all, not Go's zero quantity ``"0"``. Null list items are kept (the
    API server keeps them too, and refuses them): :func:`check` names them."""
    keep = KEEPS_NULLS.get(kind, frozenset())
    if not (_has_null(spec) if not keep else any(v is None or (k not in keep and _has_null(v))
                                                 for k, v in spec.items())):
        return spec
    return {k: v if k in keep else _pruned(v) for k, v in spec.items() if v is not None}


def _has_null(value) -> bool:
    """Whether a map in ``value`` holds a null, at any depth (a null list item is no null of a map; parsed YAML:
    aliases expanded, no cycles)."""
    pending = [value]
    while pending:
        items = pending.pop()
        kind = type(items)
        if kind is dict:
            for item in items.values():
                if item is None:
                    return True
                kind = type(item)
                if kind is dict or kind is list:
                    pending.append(item)
        elif kind is list:
            for item in items:
                kind = type(item)
                if kind is dict or kind is list:
                    pending.append(item)
    return False


def _pruned(value):
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None} if _has_null(value) else value
    if isinstance(value, list):
        return [_pruned(v) for v in value] if _has_null(value) else value
    return value


def check_pod(pod: dict, path: str, named: bytes | None = None) -> None:
    """A rendered pod spec, required fields included (what the API server would refuse).

    A pod spec found valid is not checked again: InferenceServices that share a runtime, a model and a class
    render the same pod spec (4,852 distinct among 12,639 pods at 10,000 InferenceServices), and the check is a
    pure function of its content, its path and the Kubernetes version (an invalid one is checked each time, so
    each InferenceService gets its error). ``named``: a digest that names the content in place of its fingerprint
    (a pod build's key: one key, one content), which spares pickling the pod."""
    version = k8stypes.in_use()
    digest = fingerprint(pod) if named is None else named
    key = (version, path, digest) if named is None else (version, path, "named", named)
    if digest is not None and key in _VALID_PODS:
        return
    _checkers(version).k8s("PodSpec", True)(pod, path)
    if digest is not None:
        _VALID_PODS.add(key)


_VALID_PODS = BoundedSet()  # (Kubernetes version, path, fingerprint) of the pod specs found valid


def check(value, shape, path: str) -> bool:
    """Raise an :class:`OmeError` naming the first field of ``value`` (at ``path``) that does not fit ``shape``; else
    whether a map in ``value`` holds a null."""
    if value is None:  # null means unset everywhere omerender reads
        return False
    if shape is object:
        return _has_null(value)
    return bool(_checkers(k8stypes.in_use()).shape(shape)(value, path))


# Each shape, and each Kubernetes type of a version's field table, is turned into a checker made of closures, since a
# render checks every input spec and pod against the same few shapes: a function ``(value, path)`` that raises the
# first error, else returns whether a map in ``value`` holds a null (truthy), so the same pass tells whether there are
# nulls to prune. A map's checker makes the entry of a field the first time a value sets it (a pod uses few of the
# types its fields reach): ``(plain, checker)``, where a value of exactly type ``plain`` fits with no check that could
# fail and holds no null (a string where a string goes), and ``checker`` None lets any value through (``object``; only
# searched for nulls). Paths are built only where a value is checked further.
_NEVER = None  # as ``plain``: no value is of this type, the checker always runs


@lru_cache(maxsize=None)
def _checkers(version: str) -> _Checkers:
    return _Checkers(_types_of(version))


class _Checkers:
    """The checkers of one Kubernetes version's field table, made as they are first asked for."""

    def __init__(self, types: dict):
        self.types = types
        self.made_k8s: dict = {}
        self.made: dict = {}  # id(shape) -> (shape, checker); the shape kept, so its id is never reused

    def shape(self, shape):
        found = self.made.get(id(shape))
        if found is None:
            found = self.made[id(shape)] = (shape, self._shape(shape))
        return found[1]

    def k8s(self, name: str, required: bool):
        """The checker of the Kubernetes type ``name``; ``required``: its required fields too (pods rendered)."""
        found = self.made_k8s.get((name, required))
        if found is None:
            found = self.made_k8s[(name, required)] = self._k8s(name, required)
        return found

    def _entry(self, shape) -> tuple:
        if shape is object:
            return _NEVER, None
        plain = shape if shape in (str, bool, int) else _NEVER
        return plain, self.shape(shape)

    def _shape(self, shape):
        if isinstance(shape, Rule):
            return _with_rule(self.shape(shape.shape), shape.check)
        if isinstance(shape, Int32):
            return _int32(shape.typed)
        if isinstance(shape, Component):
            return self._component(shape)
        if isinstance(shape, K8s):
            return self.k8s(shape.name, False)
        if isinstance(shape, dict):
            known = [key for key in shape if key != REQUIRED]
            return _object(lambda key: self._entry(shape[key]) if key in shape and key != REQUIRED else None,
                           shape.get(REQUIRED, ()), known, None)
        if isinstance(shape, list):
            return _list(*self._entry(shape[0]), None)
        if isinstance(shape, MapOf):
            return _map(*self._entry(shape.values))
        if shape is object:
            return lambda value, path: _has_null(value)
        return lambda value, path: _expect(value, shape, path) or _has_null(value)

    def _component(self, shape: Component):
        pod_fields = self.types["PodSpec"]["fields"]
        rules = _rules_of("PodSpec")

        def entry(key: str):
            if key in shape.extension:
                return self._entry(shape.extension[key])
            return self._field(key, pod_fields[key], False, rules.get(key)) if key in pod_fields else None
        return _object(entry, (), [*shape.extension, *pod_fields], "PodSpec")

    def _k8s(self, name: str, required: bool):
        definition = self.types[name]
        fields = definition["fields"]
        short = name.rsplit(".", 1)[-1]
        rules = _rules_of(short)
        return _object(lambda key: self._field(key, fields[key], required, rules.get(key)) if key in fields else None,
                       definition.get("required", ()) if required else (), fields, short)

    def _field(self, key: str, ref, required: bool, rule) -> tuple:
        """One field of a Kubernetes type: its type, then the API server's rule for it, if any."""
        checker = self._ref(ref, key, required)
        plain = _PLAIN.get(ref) if isinstance(ref, str) else _NEVER
        if rule is None:
            return plain, checker
        return _NEVER, _with_rule(checker, rule, plain)

    def _ref(self, ref, key: str, required: bool):
        if isinstance(ref, dict) and "list" in ref:
            inner = ref["list"]
            plain = _PLAIN.get(inner) if isinstance(inner, str) else _NEVER
            return _list(plain, self._ref(inner, "", required), MERGE_KEYS.get(key))
        if isinstance(ref, dict):
            inner = ref["map"]
            return _map(_PLAIN.get(inner) if isinstance(inner, str) else _NEVER, self._ref(inner, "", required))
        if ref.startswith("#"):
            return self.k8s(ref[1:], required)
        return _scalar(ref)


# The scalar types whose every value of this Python type fits.
_PLAIN = {"string": str, "quantity": str, "int-or-string": str, "boolean": bool}


def _object(entry, required: tuple, known, k8s_type: str | None):
    """A map whose field ``key`` has the entry ``entry(key)`` (None: no such field); ``required``: the fields that
    must be set (not null); ``known`` and ``k8s_type``: what a message about an unknown field names."""
    table: dict = {}

    def check_object(value, path: str) -> None:
        if value is None:
            return
        if not isinstance(value, dict):
            _fail(value, "object", path)
        for key in required:
            if value.get(key) is None:
                _required(f"{path}.{key}")
        nulls = False
        for key, item in value.items():
            found = table.get(key)
            if found is None:
                found = entry(key)
                if found is None:
                    _unknown(f"{path}.{key}", known, k8s_type)
                table[key] = found
            kind = type(item)
            if item is None:
                nulls = True
            elif kind is not found[0]:
                if found[1] is not None:
                    nulls = found[1](item, f"{path}.{key}") or nulls
                elif (kind is dict or kind is list) and _has_null(item):
                    nulls = True
        return nulls
    return check_object


def _list(plain, checker, merge_key: str | None):
    """A list of ``checker``'s values, none null; ``merge_key``: the key each item needs (a list merged by it)."""
    def check_list(value, path: str) -> None:
        if not isinstance(value, list):
            _fail(value, "array", path)
        nulls = False
        for i, item in enumerate(value):
            if item is None:
                _fail(item, "an item", f"{path}[{i}]")
            if merge_key and isinstance(item, dict) and item.get(merge_key) is None:
                _required(f"{path}[{i}].{merge_key}")
            kind = type(item)
            if kind is not plain:
                if checker is not None:
                    nulls = checker(item, f"{path}[{i}]") or nulls
                elif (kind is dict or kind is list) and _has_null(item):
                    nulls = True
        return nulls
    return check_list


def _map(plain, checker):
    def check_map(value, path: str) -> None:
        if not isinstance(value, dict):
            _fail(value, "object", path)
        nulls = False
        for key, item in value.items():
            kind = type(item)
            if item is None:
                nulls = True
            elif kind is not plain:
                if checker is not None:
                    nulls = checker(item, f"{path}.{key}") or nulls
                elif (kind is dict or kind is list) and _has_null(item):
                    nulls = True
        return nulls
    return check_map


def _with_rule(checker, rule, plain=_NEVER):
    """``checker``, then the API server's ``rule`` on the value."""
    def check_with_rule(value, path: str):
        nulls = checker(value, path) if type(value) is not plain else False
        rule(value, path)
        return nulls
    return check_with_rule


def _int32(typed: bool):
    """A count OME's Go types hold in an int32 (``typed``: a non-integer is an error here)."""
    def check_int32(value, path: str) -> bool:
        if typed:
            _expect(value, int, path)
        if isinstance(value, int) and not isinstance(value, bool):
            check_integer(value, "int32", path)
        return (type(value) is dict or type(value) is list) and _has_null(value)  # untyped: read where it is used
    return check_int32


def _scalar(ref: str):
    allowed = _SCALARS[ref]
    size = {"integer": "int64", "int32": "int32", "int-or-string": "int32"}.get(ref)
    expected = ref.replace("-", " ")

    def check_scalar(value, path: str) -> bool:
        if isinstance(value, bool) and bool not in allowed or not isinstance(value, allowed):
            _fail(value, expected, path)
        if size and isinstance(value, int) and not isinstance(value, bool):
            check_integer(value, size, path)
        return (type(value) is dict or type(value) is list) and _has_null(value)  # "object", "array"
    return check_scalar


# Value rules of the API server beyond the type, by (Kubernetes type, field).
_FIELD_RULES = {("EnvVar", "name"): check_env_name, ("PodSpec", "nodeSelector"): check_labels,
                ("ContainerPort", "containerPort"): check_port, ("ContainerPort", "hostPort"): check_host_port,
                ("HTTPGetAction", "port"): check_port, ("TCPSocketAction", "port"): check_port,
                ("GRPCAction", "port"): check_port,
                ("Container", "name"): check_dns_label, ("Volume", "name"): check_dns_label,
                ("EnvFromSource", "prefix"): check_env_name,
                ("ResourceRequirements", "requests"): check_resource_list,
                ("ResourceRequirements", "limits"): check_resource_list}
_RULES_BY_TYPE = {kind: {field: rule for (of, field), rule in _FIELD_RULES.items() if of == kind}
                  for kind, _ in _FIELD_RULES}
_NO_RULES: dict = {}


def _rules_of(type_name_: str) -> dict:
    return _RULES_BY_TYPE.get(type_name_, _NO_RULES)


_SCALARS = {"string": (str,), "integer": (int,), "int32": (int,), "number": (int, float), "boolean": (bool,),
            "object": (dict,), "array": (list,), "quantity": (str, int, float), "int-or-string": (str, int)}


_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array"}


def _expect(value, python_type, path: str) -> None:
    if isinstance(value, bool) and python_type is not bool or not isinstance(value, python_type):
        _fail(value, _NAMES[python_type], path)


def _fail(value, expected: str, path: str) -> None:
    if value is None and expected == "an item":
        raise OmeError(f'{path}: Invalid value: "null": a list item cannot be null', field=path)
    raise OmeError(f'{path}: Invalid value: "{type_name(value)}": must be of type {expected}', field=path)


def _required(path: str) -> None:
    raise OmeError(f"{path}: Required value", field=path)


def _unknown(path: str, known, k8s_type: str | None = None) -> None:
    name = path.rsplit(".", 1)[-1]
    version = k8stypes.in_use()
    since = k8stypes.added_in(_full_name(k8s_type), name, version) if k8s_type else None
    if since is not None:
        raise OmeError(f'{path}: unknown field "{name}" in Kubernetes {version}: it is new in Kubernetes {since}; '
                       f'render for a cluster of {since} or newer (--kube-version)', field=path)
    near = difflib.get_close_matches(name, list(known), n=1, cutoff=0.8)
    hint = f'; did you mean "{near[0]}"?' if near else ""
    raise OmeError(f'{path}: unknown field "{name}"{hint}', field=path)


def _full_name(name: str) -> str:
    if "." in name:
        return name
    types = k8stypes.table(k8stypes.in_use())["types"]
    return next((prefix + name for prefix in ("io.k8s.api.core.v1.", "io.k8s.api.apps.v1.") if prefix + name in types),
                name)
