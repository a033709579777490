"""Schemas of the non-core kinds omerender writes, and one check for every rendered object."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import jsonschema

from conftest import validate_k8s

HERE = Path(__file__).resolve().parent
SCHEMA_FILES = {"LeaderWorkerSet": "leaderworkerset.json", "ScaledObject": "scaledobject.json"}


@lru_cache(maxsize=None)
def schema(kind: str) -> dict:
    return json.loads((HERE / SCHEMA_FILES[kind]).read_text())


def validate_object(obj: dict) -> None:
    """Kubernetes schema for core kinds; our CRD-derived schema for LeaderWorkerSet and ScaledObject,
    whose pod templates are checked as core/v1 PodTemplates."""
    kind = obj["kind"]
    if kind not in SCHEMA_FILES:
        validate_k8s(obj)
        return
    jsonschema.validate(obj, schema(kind), cls=jsonschema.Draft202012Validator)
    if kind == "LeaderWorkerSet":
        group = obj["spec"]["leaderWorkerTemplate"]
        for key in ("leaderTemplate", "workerTemplate"):
            template = group[key]
            validate_k8s({"apiVersion": "v1", "kind": "PodTemplate",
                          "metadata": {"name": template["metadata"]["name"],
                                       "namespace": template["metadata"]["namespace"]},
                          "template": template})


def validate_all(objects: list[dict]) -> None:
    for obj in objects:
        validate_object(obj)
