"""Regenerate omerender/k8s_types.json: the field types of core/v1 PodSpec and everything it uses,
taken from the Kubernetes OpenAPI schema that the kubernetes-validate package carries.

omerender checks the pod fields of every InferenceService component and runtime config against
this table, so that a wrong type or an unknown field is an error naming the field instead of an
object the API server would refuse. Run: python scripts/gen_k8s_types.py [VERSION]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import kubernetes_validate

VERSION = sys.argv[1] if len(sys.argv) > 1 else "1.30.0"
ROOTS = ("io.k8s.api.core.v1.PodSpec", "io.k8s.api.apps.v1.DeploymentStrategy")
OUT = Path(__file__).resolve().parents[1] / "omerender" / "k8s_types.json"


def short(ref: str) -> str:
    return ref.rsplit(".", 1)[-1] if ref.startswith("io.k8s.api.") else ref.rsplit("/", 1)[-1]


def typeref(schema: dict, defs: dict, todo: list):
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        special = {"io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
                   "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "int-or-string"}
        if name in special:
            return special[name]
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


def main() -> None:
    folder = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / f"v{VERSION}-local-strict"
    defs = json.loads((folder / "_definitions.json").read_text())["$defs"]
    table, todo = {}, list(ROOTS)
    while todo:
        name = todo.pop()
        if name in table:
            continue
        schema = defs[name]
        table[name] = {"fields": {key: typeref(value, defs, todo) for key, value in sorted(schema["properties"].items())},
                       "required": sorted(schema.get("required", []))}
    data = {"source": f"Kubernetes OpenAPI schema v{VERSION} (kubernetes-validate)", "types": dict(sorted(table.items()))}
    OUT.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    print(f"wrote {OUT} ({len(table)} types)")


if __name__ == "__main__":
    main()
