"""The Kubernetes Job OME's benchmark controller creates for a BenchmarkJob (benchmarks.md §3).

OME v1.3 docs ``concepts/serving/benchmarks.md`` ("How a benchmark runs": the Job's name and label, no retry, the
pod's defaults and what ``podOverride`` does to each); Go ``pkg/controller/v1beta1/benchmark/controller.go`` and
``reconcilers/job/job.go`` (v0.1.5; the v1.3 docs describe the same Job) for what the docs leave open: the
``logging-forward`` annotation, the pod template's metadata (the Job's own), ``backoffLimit: 0``, the container's
name (the BenchmarkJob's, or ``genai-bench`` once ``podOverride`` is merged in), ``ENABLE_UI=false``, and the order
of the arguments. The Job has no ownerReferences: no BenchmarkJob exists in a cluster without OME.
"""
from __future__ import annotations

from omerender.kube.names import model_ready_key
from ..cluster.benchmark import BenchmarkJobConfig
from ..load import Obj
from .endpoint import Target
from .storage import Output

COMMAND = "genai-bench"
OVERRIDE_CONTAINER_NAME = "genai-bench"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
HF_KEY = "HUGGINGFACE_API_KEY"


def build_job(bench: Obj, target: Target, output: Output, config: BenchmarkJobConfig, model_selector: bool) -> dict:
    """The Job; ``model_selector``: pin the pod to nodes where the model is Ready (off with
    ``--no-model-node-selector``, as for serving pods)."""
    spec = bench.spec
    container = {"name": bench.name, "image": config.image,
                 "resources": {"requests": {"cpu": config.cpu_request, "memory": config.memory_request},
                               "limits": {"cpu": config.cpu_limit, "memory": config.memory_limit}},
                 "env": _env(spec), "command": [COMMAND], "args": arguments(spec, target, output)}
    volumes, mounts = [], []
    if target.tokenizer:
        model_name = target.model.name   # the volume is named after the model (UpdateVolumeMounts)
        volumes.append({"name": model_name, "hostPath": {"path": target.tokenizer}})
        mounts.append({"name": model_name, "mountPath": target.tokenizer, "readOnly": True})
        container["env"].append({"name": "MODEL_PATH", "value": target.tokenizer})
    if output.volume is not None:
        volumes.append(output.volume)
        mounts.append(output.mount)
    if mounts:
        container["volumeMounts"] = mounts
    pod: dict = {"containers": [container], "tolerations": [dict(GPU_TOLERATION)], "restartPolicy": "Never"}
    if volumes:
        pod["volumes"] = volumes
    if target.model is not None and model_selector:
        model = target.model
        key = model_ready_key(model.kind, model.name, model.namespace)
        pod["nodeSelector"] = {key: "Ready"}
    if spec.get("podOverride") is not None:
        pod = apply_override(pod, spec["podOverride"])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _metadata(bench),
            "spec": {"backoffLimit": 0, "template": {"metadata": _metadata(bench), "spec": pod}}}


def _metadata(bench: Obj) -> dict:
    """The Job's metadata, which OME gives its pod template too (buildMetadata; createJob)."""
    return {"name": bench.name, "namespace": bench.namespace, "labels": {"benchmark": bench.name},
            "annotations": {"logging-forward": "true"}}


def _env(spec: dict) -> list[dict]:
    env = [{"name": "ENABLE_UI", "value": "false"}]
    secret = (spec.get("huggingFaceSecretReference") or {}).get("name")
    if secret:
        env.append({"name": HF_KEY, "valueFrom": {"secretKeyRef": {"name": secret, "key": HF_KEY}}})
    return env


def arguments(spec: dict, target: Target, output: Output) -> list[str]:
    """genai-bench's arguments, in the controller's order (buildBenchmarkCommand)."""
    args = ["benchmark", "--api-backend", target.api_backend, "--api-base", target.api_base,
            "--api-model-name", target.model_name, "--task", spec["task"],
            "--max-time-per-run", str(spec["maxTimePerIteration"]),
            "--max-requests-per-run", str(spec["maxRequestsPerIteration"])]
    if target.api_key:
        args += ["--api-key", target.api_key]
    if target.tokenizer:
        args += ["--model-tokenizer", target.tokenizer]
    for scenario in spec.get("trafficScenarios") or []:
        args += ["--traffic-scenario", scenario]
    for level in spec.get("numConcurrency") or []:
        args += ["--num-concurrency", str(level)]
    if spec.get("resultFolderName") is not None:
        args += ["--experiment-folder-name", spec["resultFolderName"]]
    metadata = spec.get("serviceMetadata")
    if metadata is not None:
        args += ["--server-engine", metadata["engine"], "--server-gpu-type", metadata["gpuType"],
                 "--server-version", metadata["version"], "--server-gpu-count", str(metadata["gpuCount"])]
    return args + output.args


def apply_override(pod: dict, override: dict) -> dict:
    """``podOverride`` merged in as the v1.3 docs say: image replaced; resources per name; env by name and
    volumeMounts by mountPath (an item with the same key replaces OME's, others are added); envFrom and affinity
    set; nodeSelector per key; tolerations replace the default; volumes by name."""
    container = dict(pod["containers"][0], name=OVERRIDE_CONTAINER_NAME)
    if override.get("image"):
        container["image"] = override["image"]
    resources = override.get("resources") or {}
    for kind in ("requests", "limits"):
        if resources.get(kind):
            container["resources"] = dict(container["resources"], **{kind: {**container["resources"].get(kind, {}),
                                                                           **resources[kind]}})
    for key in ("claims",):
        if resources.get(key):
            container["resources"] = dict(container["resources"], **{key: resources[key]})
    _merge_list(container, "env", override.get("env"), "name")
    if override.get("envFrom"):
        container["envFrom"] = override["envFrom"]
    _merge_list(container, "volumeMounts", override.get("volumeMounts"), "mountPath")
    merged = dict(pod, containers=[container])
    _merge_list(merged, "volumes", override.get("volumes"), "name")
    if override.get("nodeSelector"):
        merged["nodeSelector"] = {**merged.get("nodeSelector", {}), **override["nodeSelector"]}
    if override.get("tolerations"):
        merged["tolerations"] = override["tolerations"]
    if override.get("affinity"):
        merged["affinity"] = override["affinity"]
    return merged


def _merge_list(holder: dict, key: str, items: list | None, merge_key: str) -> None:
    if not items:
        return
    merged = list(holder.get(key) or [])
    position = {item.get(merge_key): i for i, item in enumerate(merged)}
    for item in items:
        at = position.get(item.get(merge_key))
        if at is None:
            position[item.get(merge_key)] = len(merged)
            merged.append(item)
        else:
            merged[at] = item
    holder[key] = merged
