"""The one schema check for every rendered object: the Kubernetes API schema for core kinds, the CRD
schema for the kinds the API does not have (NON_CORE).

Each is checked against the upstream CRD omerender ships (omerender/kube/crds/, written by scripts/vendor_crds.py:
LeaderWorkerSet, ScaledObject, TriggerAuthentication, HTTPRoute, BackendTrafficPolicy, PodMonitor), converted here to
JSON Schema 2020-12 and read as the API server reads a structural schema under strict field validation -- a second
reading of the same schemas, apart from omerender's own (omerender/kube/crdschema.py):
- an object field the schema does not declare is refused (the server prunes it, or refuses it with
  fieldValidation=Strict, which is what `kubectl apply` asks for), unless x-kubernetes-preserve-unknown-fields;
- x-kubernetes-int-or-string takes an integer or a string;
- null is refused unless `nullable` (the server drops such a null silently; a null we render is a bug);
- a property with a `default` is not required: the server fills it before validating;
- `pattern` is a Go regular expression (`$` is the end of the text, never before a final newline);
- formats int32, int64 and byte are checked; list-type set and map refuse duplicates;
- metadata is a core ObjectMeta, checked against the Kubernetes schema.
CEL rules (x-kubernetes-validations) are NOT checked here: `omerender validate` evaluates them (tests/test_validate.py).
"""
from __future__ import annotations

import base64
import gzip
import binascii
import json
import re
from functools import lru_cache
from pathlib import Path

import jsonschema
import kubernetes_validate
import kubernetes_validate.utils

# kubernetes_validate reads and parses a schema file (and its definitions) on every call; they never change.
kubernetes_validate.utils.schema_contents = lru_cache(maxsize=None)(kubernetes_validate.utils.schema_contents)

PACKAGE_CRDS = Path(__file__).resolve().parents[2] / "omerender" / "kube" / "crds"
K8S_VERSION = "1.30"
SCHEMA_FILES = {"LeaderWorkerSet": "leaderworkerset.json.gz", "ScaledObject": "scaledobject.json.gz",
                "HTTPRoute": "httproute.json.gz", "BackendTrafficPolicy": "backendtrafficpolicy.json.gz",
                "PodMonitor": "podmonitor.json.gz", "TriggerAuthentication": "triggerauthentication.json.gz"}
# Kinds whose schemas are not in the Kubernetes API.
NON_CORE = frozenset(SCHEMA_FILES)
PASSED_MODELS = ("BaseModel", "ClusterBaseModel")  # the input's own objects, not rendered ones
_INT_RANGES = {"int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1)}
# Keywords of a structural schema that JSON Schema 2020-12 reads the same way.
_SAME = ("type", "enum", "minLength", "maxLength", "minimum", "maximum", "multipleOf", "minItems", "maxItems",
         "uniqueItems", "minProperties", "maxProperties", "format", "pattern", "x-kubernetes-list-type",
         "x-kubernetes-list-map-keys")


def validate_core(obj: dict) -> None:
    """Validate against the Kubernetes API schema (strict: unknown fields fail)."""
    kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def validate_object(obj: dict) -> None:
    """Check one rendered object; raises jsonschema.ValidationError (kubernetes_validate's is a subclass)."""
    kind = obj["kind"]
    if kind in PASSED_MODELS and obj.get("apiVersion") == "ome.io/v1beta1":
        # written as the input has it, for OME's model agent (--model-weights agent): the metadata is checked
        validate_core({"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj["metadata"]})
        return
    if kind not in SCHEMA_FILES:
        validate_core(obj)
        return
    validator(kind).validate(obj)
    validate_core({"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj["metadata"]})
    if kind == "LeaderWorkerSet":
        group = obj["spec"]["leaderWorkerTemplate"]
        for key in ("leaderTemplate", "workerTemplate"):
            template = group[key]
            validate_core({"apiVersion": "v1", "kind": "PodTemplate",
                           "metadata": {"name": template["metadata"]["name"],
                                        "namespace": template["metadata"]["namespace"]},
                           "template": template})


def validate_all(objects: list[dict]) -> None:
    for obj in objects:
        validate_object(obj)


@lru_cache(maxsize=None)
def _document(kind: str) -> dict:
    return json.loads(gzip.decompress((PACKAGE_CRDS / SCHEMA_FILES[kind]).read_bytes()))


@lru_cache(maxsize=None)
def schema(kind: str) -> dict:
    """The JSON Schema a kind is checked against (a vendored CRD schema converted by `structural`)."""
    document = _document(kind)
    converted = structural(document["openAPIV3Schema"])
    converted["properties"]["apiVersion"] = {"const": f"{document['group']}/{document['version']}"}
    converted["properties"]["kind"] = {"const": document["kind"]}
    converted["properties"]["metadata"] = {"type": "object", "required": ["name"]}
    converted["required"] = sorted({"apiVersion", "kind", "metadata", *converted.get("required", ())})
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **converted}


@lru_cache(maxsize=None)
def validator(kind: str) -> jsonschema.protocols.Validator:
    return CRDValidator(schema(kind), format_checker=FORMATS)


def structural(node: dict, in_junctor: bool = False) -> dict:
    """JSON Schema 2020-12 for one node of a structural OpenAPI v3 schema (see the module docstring)."""
    out = {key: node[key] for key in _SAME if key in node}
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
    if node.get("nullable") and "type" in out:
        out["type"] = [*([out["type"]] if isinstance(out["type"], str) else out["type"]), "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(flag) is True and bound in out:   # OpenAPI 3.0's boolean form
            out[flag] = out.pop(bound)
    properties = node.get("properties", {})
    if properties:
        out["properties"] = {name: structural(child, in_junctor) for name, child in properties.items()}
    if "required" in node:
        out["required"] = [name for name in node["required"] if "default" not in properties.get(name, {})]
    if isinstance(node.get("items"), dict):
        out["items"] = structural(node["items"], in_junctor)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = structural(extra, in_junctor)
    elif extra is not None:
        out["additionalProperties"] = extra
    elif node.get("type") == "object" and not in_junctor and not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    for junctor in ("allOf", "anyOf", "oneOf"):
        if junctor in node:
            out[junctor] = [structural(branch, True) for branch in node[junctor]]
    if "not" in node:
        out["not"] = structural(node["not"], True)
    return out


@lru_cache(maxsize=None)
def go_regex(pattern: str) -> str:
    """A Go (RE2) pattern as a Python one: outside a character class, `$` is the end of the text (`\\Z`)."""
    out, in_class, i = [], False, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        out.append("\\Z" if char == "$" and not in_class else char)
        i += 1
    return "".join(out)


def _pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and not re.search(go_regex(pattern), instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _list_type(validator, list_type, instance, schema):
    """list-type set and map refuse duplicate items (map: duplicate key tuples), as the API server does."""
    if not validator.is_type(instance, "array") or list_type not in ("set", "map"):
        return
    keys = schema.get("x-kubernetes-list-map-keys", ())
    seen = set()
    for item in instance:
        key = json.dumps([item.get(k) for k in keys] if list_type == "map" else item, sort_keys=True)
        if key in seen:
            yield jsonschema.ValidationError(f"duplicate entry in list-type {list_type}: {key}")
        seen.add(key)


CRDValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"pattern": _pattern, "x-kubernetes-list-type": _list_type})
FORMATS = jsonschema.FormatChecker(formats=())


def _integer_format(name: str) -> None:
    low, high = _INT_RANGES[name]
    FORMATS.checks(name)(lambda value: not isinstance(value, int) or low <= value <= high)


for _name in _INT_RANGES:
    _integer_format(_name)


@FORMATS.checks("byte", raises=binascii.Error)
def _is_base64(value) -> bool:
    return not isinstance(value, str) or base64.b64decode(value, validate=True) is not None
