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


def k8s_types() -> dict:
    """The types of the Kubernetes version in use, by full name and by the short names of core/v1 and apps/v1."""
    return _types_of(k8stypes.in_use())


@lru_cache(maxsize=None)
def _types_of(version: str) -> dict:
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


def check_spec(kind: str, spec: dict) -> None:
    """Raise an :class:`OmeError` naming the first field of an input ``spec`` that is wrong."""
    shape = SPEC_SHAPES.get(kind)
    if shape is not None:
        check(spec, shape, "spec")


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
    if not any(v is None or (k not in keep and _has_null(v)) for k, v in spec.items()):
        return spec
    return {k: v if k in keep else _pruned(v) for k, v in spec.items() if v is not None}


def _has_null(value) -> bool:
    if isinstance(value, dict):
        return any(v is None or _has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return False


def _pruned(value):
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None} if _has_null(value) else value
    if isinstance(value, list):
        return [_pruned(v) for v in value] if _has_null(value) else value
    return value


def check_pod(pod: dict, path: str) -> None:
    """A rendered pod spec, required fields included (what the API server would refuse).

    A pod spec found valid is not checked again: InferenceServices that share a runtime, a model and a class
    render the same pod spec (4,852 distinct among 12,639 pods at 10,000 InferenceServices), and the check is a
    pure function of its content, its path and the Kubernetes version (an invalid one is checked each time, so
    each InferenceService gets its error)."""
    digest = fingerprint(pod)
    key = (k8stypes.in_use(), path, digest)
    if digest is not None and key in _VALID_PODS:
        return
    _check_k8s(pod, "PodSpec", path, required=True)
    if digest is not None:
        _VALID_PODS.add(key)


_VALID_PODS = BoundedSet()  # (Kubernetes version, path, fingerprint) of the pod specs found valid


def check(value, shape, path: str) -> None:
    if value is None or shape is object:
        return  # null means unset everywhere omerender reads
    if isinstance(shape, Rule):
        check(value, shape.shape, path)
        shape.check(value, path)
    elif isinstance(shape, Int32):
        if shape.typed:
            _expect(value, int, path)
        if isinstance(value, int) and not isinstance(value, bool):
            check_integer(value, "int32", path)
    elif isinstance(shape, Component):
        _check_component(value, shape, path)
    elif isinstance(shape, K8s):
        _check_k8s(value, shape.name, path, required=False)
    elif isinstance(shape, dict):
        _expect(value, dict, path)
        for key in shape.get(REQUIRED, ()):
            if value.get(key) is None:
                _required(f"{path}.{key}")
        for key, item in value.items():
            if key not in shape or key == REQUIRED:
                _unknown(f"{path}.{key}", [k for k in shape if k != REQUIRED])
            check(item, shape[key], f"{path}.{key}")
    elif isinstance(shape, list):
        _expect(value, list, path)
        for i, item in enumerate(value):
            if item is None:
                _fail(item, "an item", f"{path}[{i}]")
            check(item, shape[0], f"{path}[{i}]")
    elif isinstance(shape, MapOf):
        _expect(value, dict, path)
        for key, item in value.items():
            check(item, shape.values, f"{path}.{key}")
    else:
        _expect(value, shape, path)


def _check_component(value, shape: Component, path: str) -> None:
    _expect(value, dict, path)
    pod_fields = k8s_types()["PodSpec"]["fields"]
    rules = _rules_of("PodSpec")
    for key, item in value.items():
        if key in shape.extension:
            check(item, shape.extension[key], f"{path}.{key}")
        elif key in pod_fields:
            _check_field(item, pod_fields[key], path, key, False, rules)
        else:
            _unknown(f"{path}.{key}", [*shape.extension, *pod_fields], "PodSpec")


def _check_k8s(value, name: str, path: str, required: bool) -> None:
    if value is None:
        return
    _expect(value, dict, path)
    definition = k8s_types()[name]
    fields = definition["fields"]
    if required:
        for key in definition.get("required", ()):
            if value.get(key) is None:
                _required(f"{path}.{key}")
    short = name.rsplit(".", 1)[-1]
    rules = _rules_of(short)
    for key, item in value.items():
        ref = fields.get(key)
        if ref is None:
            _unknown(f"{path}.{key}", fields, short)
        _check_field(item, ref, path, key, required, rules)


def _check_field(item, ref, path: str, key: str, required: bool, rules: dict) -> None:
    """One field of a Kubernetes object: its type, then the API server's rule for it, if any."""
    if item is None:
        return
    if not _plainly_valid(item, ref):  # most fields are strings: their path is only built for a message
        _check_ref(item, ref, f"{path}.{key}", key, required)
    rule = rules.get(key)
    if rule is not None:
        rule(item, f"{path}.{key}")


def _plainly_valid(item, ref) -> bool:
    """Whether ``item`` is of ``ref``'s type without a check that could fail: a string, a boolean, or a
    list or map of strings where those are the type."""
    kind = type(item)
    if kind is str:
        return ref == "string" or ref == "quantity" or ref == "int-or-string"
    if kind is bool:
        return ref == "boolean"
    if kind is list and type(ref) is dict and ref.get("list") == "string":
        return all(type(entry) is str for entry in item)
    if kind is dict and type(ref) is dict and ref.get("map") == "string":
        return all(type(entry) is str for entry in item.values())
    return False


def _check_ref(value, ref, path: str, key: str, required: bool) -> None:
    if value is None:
        return
    if isinstance(ref, dict) and "list" in ref:
        _expect(value, list, path)
        merge_key = MERGE_KEYS.get(key)
        inner = ref["list"]
        for i, item in enumerate(value):
            if item is None:
                _fail(item, "an item", f"{path}[{i}]")
            if merge_key and isinstance(item, dict) and item.get(merge_key) is None:
                _required(f"{path}[{i}].{merge_key}")
            if not _plainly_valid(item, inner):
                _check_ref(item, inner, f"{path}[{i}]", "", required)
    elif isinstance(ref, dict):
        _expect(value, dict, path)
        for k, item in value.items():
            _check_ref(item, ref["map"], f"{path}.{k}", "", required)
    elif ref.startswith("#"):
        _check_k8s(value, ref[1:], path, required)
    else:
        _check_scalar(value, ref, path)


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


def _check_scalar(value, ref: str, path: str) -> None:
    allowed = _SCALARS[ref]
    if isinstance(value, bool) and bool not in allowed:
        _fail(value, ref.replace("-", " "), path)
    if not isinstance(value, allowed):
        _fail(value, ref.replace("-", " "), path)
    if isinstance(value, int) and not isinstance(value, bool) and ref in ("integer", "int32", "int-or-string"):
        check_integer(value, "int64" if ref == "integer" else "int32", path)


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
