"""Regenerate omerender/kube/k8s_types/: one table per supported Kubernetes version (``1.28.json.gz`` ...) of the
field types of the built-in kinds omerender writes or reads (core/v1, apps/v1, batch/v1, autoscaling, policy/v1,
rbac.authorization.k8s.io/v1, networking.k8s.io/v1) and every type they use, taken from the Kubernetes OpenAPI
schemas that the kubernetes-validate package carries for each version.

omerender checks the pod fields of every InferenceService component and runtime config against the table of
``--kube-version``, so that a wrong type or an unknown field is an error naming the field instead of an object the
API server would refuse; ``omerender validate`` checks whole objects of these kinds against it.
tests/test_k8s_types.py fails when the committed tables differ from what this writes.
Run: python scripts/gen_k8s_types.py [--check]
"""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

# OME v1.3 needs Kubernetes 1.28 or newer (ome-docs getting-started/install.md); every newer release the
# pinned kubernetes-validate carries is shipped too (the newest is the default).
FIRST = (1, 28)
GROUPS = ("", "apps", "batch", "autoscaling", "policy", "rbac.authorization.k8s.io", "networking.k8s.io")
SPECIAL = {"io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
           "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "int-or-string"}
OUT = Path(__file__).resolve().parents[1] / "omerender" / "kube" / "k8s_types"


def typeref(schema: dict, defs: dict, todo: list):
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name in SPECIAL:
            return SPECIAL[name]
        target = defs[name]
        if "properties" not in target:
            return _scalar(target)
        todo.append(name)
        return "#" + name
    if "oneOf" in schema:
        return "int-or-string"
    kind = _scalar(schema)
    if kind == "integer" and schema.get("format") == "int32":
        return "int32"  # the API server refuses a larger number; the rest are int64
    if kind == "array":
        return {"list": typeref(schema.get("items", {}), defs, todo)}
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return {"map": typeref(schema["additionalProperties"], defs, todo)}
    return kind


def _scalar(schema: dict) -> str:
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    return kind


def table(defs: dict) -> dict:
    """The kinds of GROUPS (``group/version/Kind`` -> type name) and every type they reach."""
    kinds = {}
    for name, schema in defs.items():
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            if gvk["group"] in GROUPS and not gvk["kind"].endswith("List") and "properties" in schema:
                api = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
                kinds[f"{api}/{gvk['kind']}"] = name
    types, todo = {}, sorted(kinds.values())
    while todo:
        name = todo.pop()
        if name in types:
            continue
        schema = defs[name]
        entry = {"fields": {key: typeref(value, defs, todo) for key, value in sorted(schema["properties"].items())}}
        if schema.get("required"):
            entry["required"] = sorted(schema["required"])
        types[name] = entry
    return {"kinds": dict(sorted(kinds.items())), "types": dict(sorted(types.items()))}


def versions(schemas: Path) -> list[str]:
    found = []
    for folder in schemas.glob("v*-local-strict"):
        major, minor, _ = folder.name[1:].split("-")[0].split(".")
        if (int(major), int(minor)) >= FIRST:
            found.append(f"{major}.{minor}")
    return sorted(found, key=lambda v: tuple(map(int, v.split("."))))


def generate() -> dict[str, bytes]:
    """File name -> the bytes this script writes (gzip with no name or time in it: the same input, the same bytes)."""
    import kubernetes_validate
    schemas = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    files = {}
    for version in versions(schemas):
        defs = json.loads((schemas / f"v{version}.0-local-strict" / "_definitions.json").read_text())["$defs"]
        data = {"source": f"Kubernetes OpenAPI schema v{version}.0 (kubernetes-validate)", **table(defs)}
        text = json.dumps(data, separators=(",", ":")).encode()
        files[f"{version}.json.gz"] = gzip.compress(text, compresslevel=9, mtime=0)
    return files


def main() -> None:
    files = generate()
    if sys.argv[1:] == ["--check"]:
        stale = sorted(set(files) ^ {p.name for p in OUT.glob("*.json.gz")} |
                       {n for n, b in files.items() if (OUT / n).exists() and (OUT / n).read_bytes() != b})
        if stale:
            sys.exit(f"out of date: {', '.join(stale)}; run: python scripts/gen_k8s_types.py")
        return
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*.json.gz"):
        if old.name not in files:
            old.unlink()
    for name, data in files.items():
        (OUT / name).write_bytes(data)
    print(f"wrote {len(files)} tables to {OUT} ({sum(map(len, files.values()))} bytes)")


if __name__ == "__main__":
    main()
