"""The OME catalog in tests/data/ome, paired up as api.md §9.4–§9.5 describe, for sweep tests."""
from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path

import yaml

from conftest import CATALOG

ENGINE_PREFIXES = ("srt-", "vllm-")
SUFFIXES = ("-pd-grpc", "-pd", "-grpc")


@lru_cache(maxsize=None)
def runtime_files() -> tuple[Path, ...]:
    return tuple(sorted((CATALOG / "runtimes").rglob("*-rt.yaml")) + sorted(
        p for p in (CATALOG / "runtimes").rglob("*.yaml")
        if p.name != "kustomization.yaml" and not p.name.endswith("-rt.yaml")))


@lru_cache(maxsize=None)
def models() -> dict[str, dict]:
    found = {}
    for path in sorted((CATALOG / "models").rglob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "ClusterBaseModel":
                found[doc["metadata"]["name"]] = doc
    return found


def load_runtime(path: Path) -> dict:
    return next(d for d in yaml.safe_load_all(path.read_text()) if d)


def _served_model_name(runtime: dict) -> str | None:
    configs = [runtime["spec"].get(key) or {} for key in ("engineConfig", "decoderConfig")]
    for runner in [part.get("runner") for config in configs
                   for part in (config, config.get("leader") or {}, config.get("worker") or {})]:
        tokens = [t for item in list((runner or {}).get("command") or []) + list((runner or {}).get("args") or [])
                  for t in (item.split() if isinstance(item, str) else [item])]
        for i, token in enumerate(tokens):
            if token == "--served-model-name" and i + 1 < len(tokens):
                return tokens[i + 1]
            if isinstance(token, str) and token.startswith("--served-model-name="):
                return token.split("=", 1)[1]
    return None


def paired_model_name(runtime: dict) -> str | None:
    """api.md §9.4: by name, else by the served model name."""
    name = runtime["metadata"]["name"]
    for prefix in ENGINE_PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name in models():
        return name
    served = _served_model_name(runtime)
    for model in models().values():
        if served and model["spec"]["storage"]["storageUri"] == f"hf://{served}":
            return model["metadata"]["name"]
    return None


def completed_model(model: dict, runtime: dict) -> dict:
    """api.md §9.5: the model with the fields the model agent would record, taken from the runtime."""
    model = copy.deepcopy(model)
    entries = runtime["spec"]["supportedModelFormats"]
    entry = next((e for e in entries if e.get("autoSelect") is True), entries[0])
    spec = model["spec"]
    spec["modelFormat"] = copy.deepcopy(entry["modelFormat"])
    spec["modelFramework"] = copy.deepcopy(entry["modelFramework"])
    for key in ("modelFormat", "modelFramework"):
        spec[key] = {k: v for k, v in spec[key].items() if k in ("name", "version")}
    for key in ("modelArchitecture", "quantization"):
        spec.pop(key, None)
        if entry.get(key):
            spec[key] = entry[key]
    size_range = runtime["spec"].get("modelSizeRange") or {}
    spec["modelParameterSize"] = size_range.get("max") or size_range.get("min") or "7B"
    return model


def isvc_for(runtime: dict, model_name: str | None, namespace: str = "sweep") -> dict:
    spec: dict = {"runtime": {"name": runtime["metadata"]["name"]}, "engine": {}}
    if model_name:
        spec["model"] = {"name": model_name}
    if "decoderConfig" in runtime["spec"]:
        spec["decoder"] = {}
    if "routerConfig" in runtime["spec"]:
        spec["router"] = {}
    return {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": "svc", "namespace": namespace}, "spec": spec}
