"""One object checked as the target cluster's API server would check its create: built-in kinds against the field
table of the Kubernetes version (:mod:`.coreschema`), the kinds omerender writes outside the Kubernetes API against
their pinned CRDs (``crds/``, written by ``scripts/vendor_crds.py``) with their CEL rules (:mod:`.crdschema`), OME's
own kinds against the shapes of OME's CRDs (:mod:`.shapes`), and the kinds of CRDs the user gives
(``--schema-location``) against those."""
from __future__ import annotations

import gzip
import json
from functools import lru_cache
from importlib import resources

from omerender.errors import ObjRef, OmeError
from . import celrules, coreschema, crdschema, k8stypes
from .shapes import SPEC_SHAPES, check_spec

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
        return _custom(obj, document, version)
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


def _ome(obj: dict, kind: str, version: str) -> list[tuple[str, str]]:
    found = _metadata(obj, version)
    unknown = sorted(set(obj) - {"apiVersion", "kind", "metadata", "spec", "status"})
    found += [(key, f'unknown field "{key}"') for key in unknown]
    spec = obj.get("spec")
    with k8stypes.kube_version_in_use(version):
        try:
            check_spec(kind, spec if spec is not None else {})
        except OmeError as err:
            text = err.text.split(": ", 1)[1] if err.field and err.text.startswith(err.field + ": ") else err.text
            found.append((err.field or "spec", text))
    return found
