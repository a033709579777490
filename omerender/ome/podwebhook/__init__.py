"""What OME's pod admission webhook does to each serving pod, done in the pod templates omerender writes.

OME's webhook is served by its controller manager, so a cluster without OME has none; its work goes into the
Deployment and LeaderWorkerSet templates instead (render.md §17, "Pod webhook effects"). It mutates a pod that has the
``ome.io/inferenceservice`` label, running its injectors in the order of ome-projects/ome v1.3
pkg/webhook/admission/pod/mutator.go: model-init, metrics aggregation, fine-tuned adapter, serving sidecar, RDMA,
shm, probes, observability. Every injector adds only what the pod lacks, as the webhook does.
"""
from __future__ import annotations

from typing import Callable

from omerender.errors import Report
from omerender.ome.cluster.settings import MetricsAggregatorConfig
from omerender.yamlio.data import copy_data
from . import agents, metrics, rdma, runtime_profiles
from .pod import Pod

POD_LABEL = "ome.io/inferenceservice"
# The webhook's on/off keys and what OME does when one is not exactly "true" (ome.flags warns of them).
FLAGS = {**agents.FLAGS, **metrics.FLAGS, **rdma.FLAGS}


def injectors(config: MetricsAggregatorConfig) -> tuple[Callable[[Pod], None], ...]:
    return (agents.inject_model_init, lambda pod: metrics.inject(pod, config), agents.inject_fine_tuned_adapter,
            agents.inject_serving_sidecar, rdma.inject, runtime_profiles.inject_shm, runtime_profiles.inject_probes,
            runtime_profiles.inject_observability)


def mutate_template(template: dict, where: str, config: MetricsAggregatorConfig) -> dict:
    """The pod template as the webhook leaves its pods: a new dict; ``template`` is not changed."""
    metadata = dict(template.get("metadata") or {})
    if POD_LABEL not in (metadata.get("labels") or {}):
        return template
    annotations = metadata["annotations"] = dict(metadata.get("annotations") or {})
    spec = template.get("spec") or {}
    pod = Pod(where, metadata, copy_data(spec) if _changes_spec(annotations, config) else spec)
    for inject in injectors(config):   # each returns at once when its annotation is absent (most pods)
        inject(pod)
    return {**template, "metadata": metadata, "spec": pod.spec}


def _changes_spec(annotations: dict, config: MetricsAggregatorConfig) -> bool:
    """Whether an injector may change the pod spec (only then is it copied: most pods get annotations alone)."""
    return (annotations.get(rdma.AUTO_INJECT) == "true" or bool(annotations.get(runtime_profiles.SHM))
            or bool(annotations.get(runtime_profiles.PROBE))
            or annotations.get(metrics.AGGREGATION, config.enable_metric_aggregation) == "true")


def mutate_workloads(objects: list[dict], component: str, config: MetricsAggregatorConfig,
                     report: Report) -> list[dict]:
    """Each Deployment's and LeaderWorkerSet's pod templates mutated (the objects are changed in place and
    returned); then a warning for each mount that still names no volume, as the API server refuses such pods."""
    for obj in objects:
        for where, holder, key in _templates(obj, component):
            holder[key] = mutate_template(holder[key], where, config)
            _check_mounts(holder[key]["spec"], where, report)
    return objects


def _templates(obj: dict, component: str):
    if obj.get("kind") == "Deployment":
        yield component, obj["spec"], "template"
    elif obj.get("kind") == "LeaderWorkerSet":
        group = obj["spec"]["leaderWorkerTemplate"]
        for role in ("leader", "worker"):
            if f"{role}Template" in group:
                yield f"{component}.{role}", group, f"{role}Template"


def _check_mounts(spec: dict, where: str, report: Report) -> None:
    names = {v.get("name") for v in spec.get("volumes") or []}
    for container in spec.get("containers") or []:
        for mount in container.get("volumeMounts") or []:
            if mount.get("name") not in names:
                report.warn(f"{where} container {container.get('name')} mounts {mount.get('name')}, which names no "
                            f"volume of the pod; the API server refuses such a pod", code="mount-without-volume")
