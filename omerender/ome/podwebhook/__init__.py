"""What OME's pod admission webhook does to each serving pod, done in the pod templates omerender writes.

OME's webhook is served by its controller manager, so a cluster without OME has none; its work goes into the
Deployment and LeaderWorkerSet templates instead (render.md §17, "Pod webhook effects"). It mutates a pod that has the
``ome.io/inferenceservice`` label, running its injectors in the order of ome-projects/ome v1.3
pkg/webhook/admission/pod/mutator.go: model-init, metrics aggregation, fine-tuned adapter, serving sidecar, RDMA,
shm, probes, observability. Every injector adds only what the pod lacks, as the webhook does.
"""
from __future__ import annotations

from typing import Callable

from omerender.errors import OmeError
from omerender.kube.podrules import pod_refusal
from omerender.ome.cluster.settings import MetricsAggregatorConfig
from omerender.yamlio.data import Recent, copy_data
from ..shared import keyed_table
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


def mutate_workloads(objects: list[dict], component: str, config: MetricsAggregatorConfig) -> list[dict]:
    """Each Deployment's and LeaderWorkerSet's pod templates mutated (the objects are changed in place and
    returned); then each template meets the API server's pod rules (kube.podrules), as its pods would be refused."""
    for obj in objects:
        for where, holder, key in _templates(obj, component):
            built = holder[key].get("spec")
            holder[key] = mutate_template(holder[key], where, config)
            # a LeaderWorkerSet's templates are copies of their own (multinode.leader_worker_set)
            check_template(holder[key], where, obj.get("kind") == "Deployment" and holder[key].get("spec") is built)
    return objects


def _templates(obj: dict, component: str):
    if obj.get("kind") == "Deployment":
        yield component, obj["spec"], "template"
    elif obj.get("kind") == "LeaderWorkerSet":
        group = obj["spec"]["leaderWorkerTemplate"]
        for role in ("leader", "worker"):
            if f"{role}Template" in group:
                yield f"{component}.{role}", group, f"{role}Template"


# What the webhook adds, by volume name, and the annotation it adds it for: the input a clash comes from.
ADDED_VOLUMES = {"dshm": (runtime_profiles.SHM, rdma.AUTO_INJECT), "devinf": (rdma.AUTO_INJECT,)}


def check_template(template: dict, where: str, as_built: bool = False) -> None:
    """The serving pod after every step that changes it (runtime and InferenceService, model and weights, webhook):
    the API server's pod rules, the error naming the component's pod template and the field (E-I8). ``as_built``:
    the spec is the pod build's, which the webhook left as it was (see :func:`_judged`)."""
    spec = template.get("spec")
    as_built = as_built and type(spec) is dict
    if as_built and _judged(spec):
        return
    found = pod_refusal(spec)
    if found is None:
        if as_built:
            _judge(spec)
        return
    text = found.text
    mount = _clashing_mount(template, found)
    keys = [k for k in ADDED_VOLUMES.get(mount, ()) if ((template.get("metadata") or {}).get("annotations") or {})
            .get(k)]
    if keys and found.detail:
        text = f"{found.path}: {found.problem} ({found.detail}; OME's pod webhook adds {mount} for {keys[0]})"
    raise OmeError(f"{where} pod template: {text}", field=f"spec.template.spec.{found.path}")


# A Deployment's spec that the webhook leaves as built is the pod build's: the same dict for every InferenceService
# whose pod has the same key (workloads.pods.build_pod), which whatever holds it only reads. One found valid is
# remembered by identity, the dict held so that its address is not reused while it is, and not judged again; a spec
# the webhook changed is a copy of its own, judged each time.
JUDGED = "pods-judged"   # the render table's entry: a Recent of its own
JUDGED_LIMIT = 1536      # as many as the pod build keeps (workloads.pods.POD_LIMIT)


def _judged(spec: dict) -> bool:
    return keyed_table(JUDGED, _judged_table).get(id(spec)) is spec


def _judge(spec: dict) -> None:
    keyed_table(JUDGED, _judged_table).remember(id(spec), spec)


def _judged_table() -> Recent:
    return Recent(JUDGED_LIMIT)


def _clashing_mount(template: dict, found) -> str | None:
    """The name of the volume the refused mount mounts, when the refusal is a mount's."""
    if ".volumeMounts[" not in found.path:
        return None
    group, _, rest = found.path.partition("[")
    index, _, rest = rest.partition("].volumeMounts[")
    container = ((template.get("spec") or {}).get(group) or [])[int(index)]
    return container["volumeMounts"][int(rest.partition("]")[0])].get("name")
