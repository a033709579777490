"""Synthetic fleets for the benchmarks: N InferenceServices over M runtimes.

The runtimes are the OME catalog's single-node runtimes (``tests/data/ome``) plus generated
variants: renamed copies (cluster-scoped or namespaced), some with an accelerator pool, and,
unless ``inherit=False``, inheritance chains (a disabled profile, a child, a grandchild).
Models are the catalog models paired with their runtimes, with the fields OME's model agent
records written in (api.md §9.4-§9.5). InferenceServices name a runtime or leave it to
auto-selection, and some choose an accelerator class by name or by policy.

``write_fleet(directory, n, m)`` lays out::

    DIR/inputs/{classes,models,runtimes,isvcs}.yaml   what ``omerender render DIR/inputs`` reads
    DIR/omerender-fn.yaml                              the KRM function config (a transformer)
    DIR/kustomization.yaml                             resources: inputs/*; transformers: the fn

Everything is derived from the index of each object, so a fleet is the same on every run.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

CATALOG = Path(__file__).resolve().parents[1] / "tests" / "data" / "ome"
ENGINE_PREFIXES = ("srt-", "vllm-")
NAME_SUFFIXES = ("-pd-grpc", "-pd", "-grpc")
NAMESPACES = tuple(f"team-{i:02d}" for i in range(20))
INHERIT_FROM = "ome.io/inherit-from"
CLASS_POOL = ["nvidia-h100", "nvidia-l40s", "nvidia-a100", "nvidia-h200"]
POLICIES = ("Cheapest", "MostCapable", "FirstAvailable")


@dataclass(frozen=True)
class Pair:
    """A catalog runtime and the catalog model it serves, completed per api.md §9.5."""

    runtime: dict
    model: dict

    @property
    def auto_selectable(self) -> bool:
        return any(e.get("autoSelect") is True for e in self.runtime["spec"]["supportedModelFormats"])


# ---------------------------------------------------------------- the catalog

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.load_all(path.read_text(), Loader=_Loader) if d]


@lru_cache(maxsize=None)
def catalog_models(catalog: Path = CATALOG) -> dict[str, dict]:
    found = {}
    for path in sorted((catalog / "models").rglob("*.yaml")):
        if path.name != "kustomization.yaml":
            for doc in _docs(path):
                found[doc["metadata"]["name"]] = doc
    return found


def catalog_runtimes(catalog: Path = CATALOG) -> list[dict]:
    """One runtime per name (the first file in path order), in name order."""
    by_name: dict[str, dict] = {}
    for path in sorted((catalog / "runtimes").rglob("*.yaml")):
        if path.name != "kustomization.yaml":
            for doc in _docs(path):
                by_name.setdefault(doc["metadata"]["name"], doc)
    return [by_name[name] for name in sorted(by_name)]


def _served_model_name(runtime: dict) -> str | None:
    runner = (runtime["spec"].get("engineConfig") or {}).get("runner") or {}
    tokens = [str(t) for t in (runner.get("command") or []) + (runner.get("args") or [])]
    for i, token in enumerate(tokens):
        if token == "--served-model-name" and i + 1 < len(tokens):
            return tokens[i + 1]
        if token.startswith("--served-model-name="):
            return token.split("=", 1)[1]
    return None


def paired_model_name(runtime: dict, models: dict[str, dict]) -> str | None:
    """api.md §9.4: strip the engine prefix and one suffix; else match the served model name."""
    name = runtime["metadata"]["name"]
    name = next((name[len(p):] for p in ENGINE_PREFIXES if name.startswith(p)), name)
    name = next((name[: -len(s)] for s in NAME_SUFFIXES if name.endswith(s)), name)
    if name in models:
        return name
    served = _served_model_name(runtime)
    return next((m for m, doc in models.items() if served and doc["spec"]["storage"]["storageUri"] == f"hf://{served}"),
                None)


def completed_model(model: dict, runtime: dict) -> dict:
    """api.md §9.5: the model with the runtime's format, framework, architecture and a size in range."""
    entries = runtime["spec"]["supportedModelFormats"]
    entry = next((e for e in entries if e.get("autoSelect") is True), entries[0])
    spec = {k: v for k, v in model["spec"].items()
            if k not in ("modelFormat", "modelFramework", "modelArchitecture", "quantization", "modelParameterSize")}
    for key in ("modelFormat", "modelFramework"):
        spec[key] = {k: v for k, v in entry[key].items() if k in ("name", "version")}
    for key in ("modelArchitecture", "quantization"):
        if entry.get(key):
            spec[key] = entry[key]
    size_range = runtime["spec"].get("modelSizeRange") or {}
    spec["modelParameterSize"] = size_range.get("max") or size_range.get("min") or "7B"
    return {**model, "spec": spec}


def _usable(runtime: dict) -> bool:
    """Single-node runtimes whose commands hold no Go template text (api.md §9.6, §9.2)."""
    engine = runtime["spec"].get("engineConfig") or {}
    return "leader" not in engine and "worker" not in engine and "{{" not in repr(runtime)


def catalog_pairs(catalog: Path = CATALOG) -> list[Pair]:
    """Each usable runtime with its model; a model completed differently for two runtimes gets a renamed copy."""
    models = catalog_models(catalog)
    pairs, completions = [], {}
    for runtime in catalog_runtimes(catalog):
        name = paired_model_name(runtime, models)
        if name and _usable(runtime):
            model = completed_model(models[name], runtime)
            copies = completions.setdefault(name, [])
            if model["spec"] not in copies:
                copies.append(model["spec"])
            position = copies.index(model["spec"])
            if position:
                model = {**model, "metadata": {**model["metadata"], "name": f"{name}-{position}"}}
            pairs.append(Pair(runtime, model))
    return pairs


# ---------------------------------------------------------------- accelerator classes

CLASS_GPUS = 8  # every class's GPUs per pod

def _accelerator_class(name: str, product: str, memory: str, cc: str, bandwidth: str, fp16: int, cost: str) -> dict:
    return {"apiVersion": "ome.io/v1beta1", "kind": "AcceleratorClass", "metadata": {"name": name},
            "spec": {"vendor": "nvidia", "family": name.split("-")[1],
                     "discovery": {"nodeSelector": {"nvidia.com/gpu.product": product}},
                     "capabilities": {"memoryGB": memory, "computeCapability": cc, "memoryBandwidthGBps": bandwidth,
                                      "features": ["tensor-cores", "fp8"], "performance": {"fp16Tflops": fp16}},
                     "resources": [{"name": "nvidia.com/gpu", "quantity": str(CLASS_GPUS)}],
                     "cost": {"perHour": cost}}}


def accelerator_classes() -> list[dict]:
    return [_accelerator_class("nvidia-h100", "NVIDIA-H100-80GB-HBM3", "80Gi", "9.0", "3350", 989, "4.5"),
            _accelerator_class("nvidia-l40s", "NVIDIA-L40S", "48Gi", "8.9", "864", 362, "1.8"),
            _accelerator_class("nvidia-a100", "NVIDIA-A100-SXM4-80GB", "80Gi", "8.0", "2039", 312, "3.0"),
            _accelerator_class("nvidia-h200", "NVIDIA-H200", "141Gi", "9.0", "4800", 989, "6.0")]


# ---------------------------------------------------------------- runtime variants

@dataclass(frozen=True)
class Runtime:
    """A runtime of the fleet and what an InferenceService needs to name it."""

    doc: dict
    pair: Pair
    namespace: str | None  # set for a ServingRuntime
    pool: bool  # has an accelerator pool
    selectable: bool  # may be named by an InferenceService (profiles may not)
    chained: bool = False  # part of an inheritance chain

    @property
    def name(self) -> str:
        return self.doc["metadata"]["name"]


def _with_mem_frac(runner: dict, value: str) -> dict:
    command = [value if i and runner["command"][i - 1] == "--mem-frac" else t
               for i, t in enumerate(runner.get("command") or [])]
    return {**runner, "command": command}


def _variant_spec(spec: dict, index: int, pool: bool) -> dict:
    spec = copy.deepcopy(spec)
    for entry in spec["supportedModelFormats"]:
        entry["autoSelect"] = False  # variants are named on purpose; auto-selection stays on the catalog
    engine = spec["engineConfig"]
    engine["labels"] = {**(engine.get("labels") or {}), "fleet.example.com/variant": str(index)}
    engine["runner"] = _with_mem_frac(engine["runner"], f"0.{80 + index % 10}")
    if pool and _gpus(engine["runner"]) <= CLASS_GPUS:
        # a class sets the GPUs of each pod: a runtime that asks for more would crash at start (and fail the render)
        spec["acceleratorRequirements"] = {"acceleratorClasses": CLASS_POOL[: 2 + index % 3]}
    return spec


def _gpus(runner: dict) -> int:
    resources = runner.get("resources") or {}
    asked = (resources.get("limits") or {}).get("nvidia.com/gpu") or (resources.get("requests") or {}).get(
        "nvidia.com/gpu") or 0
    return int(str(asked))


def _runtime_doc(kind: str, name: str, spec: dict, namespace: str | None = None,
                 annotations: dict | None = None) -> dict:
    metadata: dict = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": spec}


def _plain_variant(pair: Pair, index: int) -> Runtime:
    pool = index % 2 == 0
    namespace = NAMESPACES[index % len(NAMESPACES)] if index % 4 == 1 else None
    kind = "ServingRuntime" if namespace else "ClusterServingRuntime"
    name = f"{pair.runtime['metadata']['name']}-v{index}"
    return Runtime(_runtime_doc(kind, name, _variant_spec(pair.runtime["spec"], index, pool), namespace),
                   pair, namespace, pool, True)


def _chain(pair: Pair, index: int) -> list[Runtime]:
    """A disabled profile, a child that enables it and adds a pool, and a grandchild (a ServingRuntime)."""
    base = pair.runtime["metadata"]["name"]
    profile_spec = {**_variant_spec(pair.runtime["spec"], index, False), "disabled": True}
    profile = _runtime_doc("ClusterServingRuntime", f"{base}-profile{index}", profile_spec,
                           annotations={"ome.io/runtime-profile": "true"})
    child = _runtime_doc("ClusterServingRuntime", f"{base}-child{index}",
                         {"disabled": False, "acceleratorRequirements": {"acceleratorClasses": CLASS_POOL[:2]},
                          "engineConfig": {"labels": {"fleet.example.com/tier": "child"}}},
                         annotations={INHERIT_FROM: profile["metadata"]["name"]})
    namespace = NAMESPACES[index % len(NAMESPACES)]
    grandchild = _runtime_doc("ServingRuntime", f"{base}-grandchild{index}",
                              {"engineConfig": {"annotations": {"fleet.example.com/owner": namespace}}},
                              namespace, annotations={INHERIT_FROM: child["metadata"]["name"]})
    return [Runtime(profile, pair, None, False, False, True), Runtime(child, pair, None, True, True, True),
            Runtime(grandchild, pair, namespace, True, True, True)]


def fleet_runtimes(pairs: list[Pair], m: int, inherit: bool = True) -> list[Runtime]:
    """The catalog runtimes, then variants until there are m; every 4th variant slot is a chain of three."""
    runtimes = [Runtime(p.runtime, p, None, False, True) for p in pairs][:m]
    index = 0
    while len(runtimes) < m:
        pair = pairs[index % len(pairs)]
        if inherit and index % 4 == 3 and m - len(runtimes) >= 3:
            runtimes.extend(_chain(pair, index))
        else:
            runtimes.append(_plain_variant(pair, index))
        index += 1
    return runtimes


# ---------------------------------------------------------------- InferenceServices

def _accelerator_selector(index: int) -> dict:
    if index % 2:
        return {"acceleratorClass": CLASS_POOL[index // 2 % 2]}
    return {"policy": POLICIES[index // 2 % len(POLICIES)]}


def _isvc(index: int, namespace: str, model: str, runtime: Runtime | None) -> dict:
    spec: dict = {"model": {"name": model}, "engine": {"minReplicas": 1, "maxReplicas": 1 + index % 3}}
    pair_spec = (runtime.pair if runtime else None)
    if runtime is not None:
        spec["runtime"] = {"name": runtime.name}
        if runtime.namespace:
            spec["runtime"]["kind"] = "ServingRuntime"
        if runtime.pool and index % 3:
            spec["acceleratorSelector"] = _accelerator_selector(index)
    runtime_spec = pair_spec.runtime["spec"] if pair_spec else {}
    if "decoderConfig" in runtime_spec:
        spec["decoder"] = {"minReplicas": 1, "maxReplicas": 1}
    if "routerConfig" in runtime_spec and index % 2 == 0:
        spec["router"] = {"minReplicas": 1, "maxReplicas": 1}
    return {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": f"svc-{index:05d}", "namespace": namespace,
                         "labels": {"fleet.example.com/team": namespace}},
            "spec": spec}


def fleet_isvcs(runtimes: list[Runtime], pairs: list[Pair], n: int, auto_every: int = 4) -> list[dict]:
    """Every auto_every-th InferenceService leaves the runtime to auto-selection; the rest name one."""
    named = [r for r in runtimes if r.selectable]
    auto = [p for p in pairs if p.auto_selectable]
    isvcs = []
    for index in range(n):
        if index % auto_every == 0 and auto:
            pair = auto[index // auto_every % len(auto)]
            # no router: the runtime auto-selection picks may be a family member without one (api.md §9.5)
            isvc = _isvc(index, NAMESPACES[index % len(NAMESPACES)], pair.model["metadata"]["name"], None)
        else:
            runtime = named[index * len(named) // n]  # spread over all runtimes, variants included
            namespace = runtime.namespace or NAMESPACES[index % len(NAMESPACES)]
            isvc = _isvc(index, namespace, runtime.pair.model["metadata"]["name"], runtime)
        isvcs.append(isvc)
    return isvcs


# ---------------------------------------------------------------- writing

FN_CONFIG = {"apiVersion": "omerender.io/v1alpha1", "kind": "OMERender", "metadata": {
    "name": "omerender", "annotations": {"config.kubernetes.io/function": "exec:\n  path: omerender-fn\n"}}}


def _dump_all(docs: list[dict]) -> str:
    return yaml.dump_all(docs, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False, width=1 << 16)


def write_fleet(directory: Path, n: int, m: int, inherit: bool = True, fn_path: str = "omerender-fn",
                catalog: Path = CATALOG, pairs: list[Pair] | None = None) -> dict[str, int]:
    """Write the fleet; return counts of what it holds."""
    pairs = pairs if pairs is not None else catalog_pairs(catalog)
    runtimes = fleet_runtimes(pairs, m, inherit)
    isvcs = fleet_isvcs(runtimes, pairs, n)
    models = sorted({p.model["metadata"]["name"]: p.model for p in pairs}.items())
    inputs = directory / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    files = {"classes.yaml": accelerator_classes(), "models.yaml": [m for _, m in models],
             "runtimes.yaml": [r.doc for r in runtimes], "isvcs.yaml": isvcs}
    for name, docs in files.items():
        (inputs / name).write_text(_dump_all(docs))
    fn_config = copy.deepcopy(FN_CONFIG)
    fn_config["metadata"]["annotations"]["config.kubernetes.io/function"] = f"exec:\n  path: {fn_path}\n"
    (directory / "omerender-fn.yaml").write_text(_dump_all([fn_config]))
    (directory / "kustomization.yaml").write_text(_dump_all([{
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "resources": [f"inputs/{name}" for name in files], "transformers": ["omerender-fn.yaml"]}]))
    return {"isvcs": n, "runtimes": len(runtimes), "models": len(models),
            "auto-selected": sum(1 for i in isvcs if "runtime" not in i["spec"]),
            "in chains": sum(1 for r in runtimes if r.chained),
            "with class": sum(1 for i in isvcs if "acceleratorSelector" in i["spec"])}


def write_rendered(directory: Path, rendered_yaml: str) -> None:
    """The floor fleet: the rendered objects as plain YAML under a kustomization with no function."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "rendered.yaml").write_text(rendered_yaml)
    (directory / "kustomization.yaml").write_text(_dump_all([{
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["rendered.yaml"]}]))


def main() -> None:
    import argparse
    parser = argparse.ArgumentParser(description="Write one synthetic fleet.")
    parser.add_argument("directory", type=Path)
    parser.add_argument("-n", type=int, default=1000, help="InferenceServices")
    parser.add_argument("-m", type=int, default=1000, help="runtimes")
    parser.add_argument("--no-inherit", action="store_true", help="leave out inheritance chains")
    args = parser.parse_args()
    print(write_fleet(args.directory, args.n, args.m, not args.no_inherit))


if __name__ == "__main__":
    main()
