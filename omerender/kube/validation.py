"""One object checked as the target cluster's API server would check its create: built-in kinds against the field
table of the Kubernetes version (:mod:`.coreschema`), the kinds omerender writes outside the Kubernetes API, OME's own
among them, against their pinned CRDs (``crds/``, written by ``scripts/vendor_crds.py``) with their CEL rules
(:mod:`.crdschema`), and the kinds of CRDs the user gives (``--schema-location``) against those.

OME's pinned CRDs (those of the commit ``tests/data/ome`` comes from) predate OME v1.3: a field v1.3 added
(``deploymentMode``, a component's ``autoscaler``...) is not in them. Such a field, and only such a field (one the CRD
does not declare where the input shapes of :mod:`.shapes`, which follow v1.3, do), is checked against its input shape
instead of being an unknown field. AutoscalerPolicy, new in v1.3, has no pinned CRD and is checked with its input
shape whole."""
from __future__ import annotations

import gzip
import json
import re
from functools import lru_cache
from importlib import resources

from omerender.errors import ObjRef, OmeError
from . import celrules, coreschema, crdschema, k8stypes
from .shapes import REQUIRED, SPEC_SHAPES, Component, MapOf, Rule, check, check_spec

OME_API = "ome.io/v1beta1"


@lru_cache(maxsize=1)
def pinned_crds() -> dict[str, dict]:
    """``group/version/Kind`` -> the vendored CRD document (group, version, kind, source, openAPIV3Schema)."""
    found = {}
    for entry in resources.files(__package__).joinpath("crds").iterdir():
        if entry.name.endswith(".json.gz"):
            document = json.loads(gzip.decompress(entry.read_bytes()))
            found[f"{document['group']}/{document['version']}/{document['kind']}"] = document
    return found


def crd_schemas(crd: dict) -> dict[str, dict]:
    """``group/version/Kind`` -> a document like the pinned ones, for each served version of a CustomResourceDefinition
    (the user's); an error naming the field when it is not one."""
    spec = crd.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("names"), dict) or not isinstance(spec.get("group"), str):
        raise OmeError("a CustomResourceDefinition needs spec.group and spec.names.kind", field="spec")
    kind = spec["names"].get("kind")
    found = {}
    for i, version in enumerate(spec.get("versions") or []):
        schema = (version.get("schema") or {}).get("openAPIV3Schema") if isinstance(version, dict) else None
        if not isinstance(schema, dict):
            raise OmeError("a served version without schema.openAPIV3Schema",
                           field=f"spec.versions[{i}].schema.openAPIV3Schema")
        if version.get("served", True):
            found[f"{spec['group']}/{version.get('name')}/{kind}"] = {
                "group": spec["group"], "version": version.get("name"), "kind": kind, "openAPIV3Schema": schema}
    return found


def problems(obj: dict, version: str, extra: dict[str, dict] | None = None) -> list[tuple[str, str]] | None:
    """The (field path, text) problems of ``obj`` for Kubernetes ``version``; None when no schema knows its kind."""
    api, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api, str) or not isinstance(kind, str):
        return [("apiVersion" if not isinstance(api, str) else "kind", "Required value")]
    core = coreschema.type_of(api, kind, version)
    if core is not None:
        return coreschema.check(obj, core, version)
    document = (extra or {}).get(f"{api}/{kind}") or pinned_crds().get(f"{api}/{kind}")
    if document is not None:
        found = _custom(obj, document, version)
        return _with_v13_fields(obj, kind, found, version) if api == OME_API and "source" in document else found
    if api == OME_API and kind in SPEC_SHAPES:
        return _ome(obj, kind, version)
    return None


def rendered_errors(objects: list[dict], version: str) -> list[OmeError]:
    """An error for each problem of the objects a render wrote (``--validate``); a kind no schema knows is none."""
    errors = []
    for obj in objects:
        for field, text in problems(obj, version) or ():
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            ref = ObjRef(str(obj.get("kind")), str(meta.get("name")), meta.get("namespace"), obj.get("apiVersion"))
            errors.append(OmeError(f"{field}: {text} (in the rendered object; Kubernetes {version})", ref,
                                   field=field))
    return errors


def _metadata(obj: dict, version: str) -> list[tuple[str, str]]:
    meta = obj.get("metadata")
    if meta is None:
        return [("metadata", "Required value")]
    found = coreschema.check(meta, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", version, "metadata")
    if isinstance(meta, dict) and not meta.get("name") and not meta.get("generateName"):
        found.append(("metadata.name", "Required value: name or generateName is required"))
    return found


def _custom(obj: dict, document: dict, version: str) -> list[tuple[str, str]]:
    schema = document["openAPIV3Schema"]
    found = _metadata(obj, version)
    with celrules.object_budget():  # the API server's cost budget is per object
        crdschema.check(crdschema.with_defaults(obj, schema), schema, "", found)
    return found


def _with_v13_fields(obj: dict, kind: str, found: list[tuple[str, str]], version: str) -> list[tuple[str, str]]:
    """``found`` (an OME object's problems against its pinned, pre-v1.3 CRD) with each unknown field that v1.3
    declares checked against its input shape instead."""
    kept = []
    for field, text in found:
        shape = _v13_shape(kind, field) if text.startswith('unknown field "') else None
        value = _value_at(obj, field) if shape is not None else _MISSING
        if value is _MISSING:
            kept.append((field, text))
            continue
        with k8stypes.kube_version_in_use(version):
            try:
                check(value, shape, field)
            except OmeError as err:
                kept.append(_problem(err))
    return kept


_STEP = re.compile(r"\[(\d+)\]|[^.\[\]]+")


def _steps(field: str) -> list:
    return [int(index) if index else name for index, name in
            ((m.group(1), m.group(0)) for m in _STEP.finditer(field))]


def _v13_shape(kind: str, field: str):
    """The input shape of ``field`` (``spec.engine.autoscaler``), where the shapes declare it as an OME field (not a
    Kubernetes type's, which the CRD holds as OME's Kubernetes release has it); else None."""
    steps = _steps(field)
    if steps[:1] != ["spec"] or kind not in SPEC_SHAPES:
        return None
    shape = SPEC_SHAPES[kind]
    for step in steps[1:]:
        shape = shape.shape if isinstance(shape, Rule) else shape
        if step == REQUIRED or shape is object:
            return None  # below ``object`` (any value), the shapes declare no field: the CRD's word stands
        if isinstance(step, int):
            shape = shape[0] if isinstance(shape, list) else None
        elif isinstance(shape, Component):
            shape = shape.extension.get(step)
        elif isinstance(shape, MapOf):
            shape = shape.values
        elif isinstance(shape, dict):
            shape = shape.get(step)
        else:
            shape = None
        if shape is None:
            return None
    return shape


_MISSING = object()


def _value_at(obj: dict, field: str):
    """The value at ``field``; _MISSING where the path does not lead to one (a field name holding "." or "[")."""
    value = obj
    for step in _steps(field):
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return value


def _problem(err: OmeError) -> tuple[str, str]:
    text = err.text.split(": ", 1)[1] if err.field and err.text.startswith(err.field + ": ") else err.text
    return err.field or "spec", text


def _ome(obj: dict, kind: str, version: str) -> list[tuple[str, str]]:
    found = _metadata(obj, version)
    unknown = sorted(set(obj) - {"apiVersion", "kind", "metadata", "spec", "status"})
    found += [(key, f'unknown field "{key}"') for key in unknown]
    spec = obj.get("spec")
    with k8stypes.kube_version_in_use(version):
        try:
            check_spec(kind, spec if spec is not None else {})
        except OmeError as err:
            found.append(_problem(err))
    return found
