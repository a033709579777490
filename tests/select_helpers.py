"""Builders for selection tests: plain dicts shaped like the YAML users write (selection.md §8 shorthand)."""
from __future__ import annotations

import copy

from omerender.errors import Report
from omerender.ome.load import index
from omerender.yamlio.reading import Doc

API = "ome.io/v1beta1"
NS = "llama-demo"
L3 = "llama-3-2-3b-instruct"


def entry(fmt="safetensors", fmt_v="1.0.0", fw="transformers", fw_v="4.45.0.dev0", arch="LlamaForCausalLM",
          auto=None, priority=None, fmt_w=None, fw_w=None, fmt_op=None, fw_op=None, **extra) -> dict:
    """An entry; defaults give E-L3 (matches L3 exactly). ``None`` leaves a field out."""
    model_format = {"name": fmt}
    model_framework = {"name": fw}
    for target, key, value in ((model_format, "version", fmt_v), (model_format, "operator", fmt_op),
                               (model_format, "weight", fmt_w), (model_framework, "version", fw_v),
                               (model_framework, "operator", fw_op), (model_framework, "weight", fw_w)):
        if value is not None:
            target[key] = value
    result = {"modelFormat": model_format, "modelFramework": model_framework}
    if arch is not None:
        result["modelArchitecture"] = arch
    if auto is not None:
        result["autoSelect"] = auto
    if priority is not None:
        result["priority"] = priority
    result.update(extra)
    return result


def runtime_spec(entries=None, size=None, classes=None, disabled=None, engine_mode=None, decoder_mode=None,
                 **extra) -> dict:
    spec = {"supportedModelFormats": entries if entries is not None else [entry(auto=True)]}
    if size is not None:
        low, high = size
        spec["modelSizeRange"] = {k: v for k, v in (("min", low), ("max", high)) if v is not None}
    if classes is not None:
        spec["acceleratorRequirements"] = {"acceleratorClasses": classes}
    if disabled is not None:
        spec["disabled"] = disabled
    spec["engineConfig"] = {"runner": {"name": "ome-container", "image": "img"}}
    if engine_mode is not None:
        spec["engineConfig"]["annotations"] = {"ome.io/deploymentMode": engine_mode}
    if decoder_mode is not None:
        spec["decoderConfig"] = {"annotations": {"ome.io/deploymentMode": decoder_mode}}
    spec.update(extra)
    return spec


def csr(name, **kw) -> dict:
    return {"apiVersion": API, "kind": "ClusterServingRuntime", "metadata": {"name": name}, "spec": runtime_spec(**kw)}


def sr(name, ns=NS, **kw) -> dict:
    return {"apiVersion": API, "kind": "ServingRuntime", "metadata": {"name": name, "namespace": ns},
            "spec": runtime_spec(**kw)}


def model_spec(fmt="safetensors", fmt_v="1.0.0", fw="transformers", fw_v="4.45.0.dev0", arch="LlamaForCausalLM",
               size="3.21B", **extra) -> dict:
    """Model L3 by default. ``None`` leaves a field out."""
    spec = {"storage": {"storageUri": "hf://meta-llama/Llama-3.2-3B-Instruct", "path": "/raid/models/l3"}}
    if fmt is not None:
        spec["modelFormat"] = {"name": fmt, **({"version": fmt_v} if fmt_v is not None else {})}
    if fw is not None:
        spec["modelFramework"] = {"name": fw, **({"version": fw_v} if fw_v is not None else {})}
    if arch is not None:
        spec["modelArchitecture"] = arch
    if size is not None:
        spec["modelParameterSize"] = size
    spec.update(extra)
    return spec


def cbm(name=L3, **kw) -> dict:
    return {"apiVersion": API, "kind": "ClusterBaseModel", "metadata": {"name": name}, "spec": model_spec(**kw)}


def bm(name=L3, ns=NS, **kw) -> dict:
    return {"apiVersion": API, "kind": "BaseModel", "metadata": {"name": name, "namespace": ns},
            "spec": model_spec(**kw)}


def isvc(name="svc", ns=NS, model=L3, runtime=None, engine=True, **spec) -> dict:
    body = {}
    if model is not None:
        body["model"] = model if isinstance(model, dict) else {"name": model}
    if runtime is not None:
        body["runtime"] = runtime if isinstance(runtime, dict) else {"name": runtime}
    if engine is True:
        body["engine"] = {"minReplicas": 1}
    elif isinstance(engine, dict):
        body["engine"] = engine
    annotations = spec.pop("annotations", None)
    body.update(spec)
    meta = {"name": name, "namespace": ns}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": API, "kind": "InferenceService", "metadata": meta, "spec": body}


def load(*objects):
    """Index plain dicts as omerender would (deep-copied, so tests can check nothing is mutated)."""
    docs = [Doc(copy.deepcopy(o), "in.yaml", i) for i, o in enumerate(objects)]
    return index(docs)


def texts(report: Report, severity="warning") -> list[str]:
    return [m.text for m in report.messages if m.severity == severity]
