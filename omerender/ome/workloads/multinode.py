"""A MultiNode engine or decoder: leader and worker pods, the LeaderWorkerSet and its Service
(render.md §7.1, §8.3, §11)."""
from __future__ import annotations

import copy
from dataclasses import dataclass, replace

from omerender.errors import OmeError, Report
from omerender.kube.names import lws_name, trunc63
from ..runtimes.components import Component
from . import objects
from .metadata import queue_labels
from .pods import PodPlan, build_pod

HEAD_LABEL = "ray.io/node-type"
WORKER_DROPPED_ANNOTATIONS = ("prometheus.io/path", "prometheus.io/port", "prometheus.io/scrape")


@dataclass(frozen=True)
class GroupMeta:
    """Metadata shared by the LeaderWorkerSet and its Service."""

    comp_name: str      # <isvc>-<component>
    namespace: str
    labels: dict        # L of render.md §8.2
    annotations: dict   # A of render.md §8.2


def worker_size(comp: Component) -> int:
    """Worker pods per leader: the merged ``worker.size`` (isvc over runtime), else 1."""
    size = (comp.merged.get("worker") or {}).get("size")
    if size is None:
        return 1
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise OmeError(f"spec.{comp.name}.worker.size: Invalid value: {size!r}: must be a non-negative integer",
                       field=f"spec.{comp.name}.worker.size")
    return size


def role_plan(base: PodPlan, comp: Component, role: str, pods_per_replica: int) -> PodPlan:
    """The plan of the leader or worker pod, from the component's plan (render.md §11 Pods)."""
    return replace(base, role=role, fields=comp.merged.get(role) or {}, isvc_fields=comp.isvc.get(role) or {},
                   pods_per_replica=pods_per_replica,
                   no_container=f"the {role} of {comp.name} has no runner in the runtime or in spec.{comp.name}.{role}")


def build(meta: GroupMeta, comp: Component, base_plan: PodPlan, replicas: int, report: Report) -> list[dict]:
    """The LeaderWorkerSet and its Service."""
    size = 1 + worker_size(comp)
    leader_pod = build_pod(role_plan(base_plan, comp, "leader", size), report)
    worker_pod = build_pod(role_plan(base_plan, comp, "worker", size), report)
    queue = queue_labels(meta.annotations)
    leader_meta = _template_meta(meta, {**meta.labels, "app": trunc63(meta.comp_name), HEAD_LABEL: "head", **queue},
                                 meta.annotations)
    worker_annotations = {k: v for k, v in meta.annotations.items() if k not in WORKER_DROPPED_ANNOTATIONS}
    worker_meta = _template_meta(meta, {**meta.labels, **queue}, worker_annotations)
    lws = leader_worker_set(meta, replicas, size, {"metadata": leader_meta, "spec": leader_pod},
                            {"metadata": worker_meta, "spec": worker_pod})
    ports = objects.service_ports(leader_pod, comp.merged.get("servicePortAppProtocols"), f"{comp.name}.leader")
    service = objects.service(trunc63(meta.comp_name), meta.namespace, meta.labels, meta.annotations,
                                {HEAD_LABEL: "head"}, ports, objects.service_type(meta.annotations, report))
    return [lws, service]


def _template_meta(meta: GroupMeta, labels: dict, annotations: dict) -> dict:
    out = {"name": meta.comp_name, "namespace": meta.namespace, "labels": labels}
    if annotations:
        out["annotations"] = dict(annotations)
    return out


def leader_worker_set(meta: GroupMeta, replicas: int, size: int, leader: dict, worker: dict) -> dict:
    metadata = {"name": lws_name(meta.comp_name), "namespace": meta.namespace, "labels": dict(meta.labels)}
    if meta.annotations:
        metadata["annotations"] = dict(meta.annotations)
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": metadata,
        "spec": {
            "replicas": replicas,
            "startupPolicy": "LeaderCreated",
            "networkConfig": {"subdomainPolicy": "Shared"},
            "rolloutStrategy": {"type": "RollingUpdate",
                                "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 1}},
            "leaderWorkerTemplate": {"size": size, "restartPolicy": "RecreateGroupOnPodRestart",
                                     "leaderTemplate": copy.deepcopy(leader),
                                     "workerTemplate": copy.deepcopy(worker)},
        },
    }


def warn_ignored_scaling(comp: Component, report: Report) -> None:
    """A MultiNode component has no autoscaler and no PodDisruptionBudget (render.md §9.2, §9.3)."""
    if comp.isvc.get("autoscaler") is not None or comp.config.get("autoscaler") is not None:
        report.warn(f"{comp.name} is MultiNode: its autoscaler is ignored (OME does not autoscale a LeaderWorkerSet)",
                    code="multinode-autoscaler-ignored")
    budget = [f for f in ("minAvailable", "maxUnavailable") if comp.merged.get(f) is not None]
    if budget:
        report.warn(f"{comp.name} is MultiNode: {budget[0]} is ignored (OME makes no PodDisruptionBudget for a "
                    f"LeaderWorkerSet)", code="multinode-budget-ignored")


def shared_leader_service_warnings(rendered: list[tuple[dict, object]]) -> list[tuple[str, object]]:
    """One warning per namespace that gets more than one LeaderWorkerSet: each of their Services
    selects ``ray.io/node-type: head``, i.e. the leaders of all of them (render.md §11). Each with the input the
    first LeaderWorkerSet (by name) was rendered from, which the message names; the text counts the rest."""
    by_namespace: dict[str, dict[str, object]] = {}
    for obj, source in rendered:
        if obj.get("kind") == "LeaderWorkerSet":
            by_namespace.setdefault(obj["metadata"].get("namespace") or "", {})[obj["metadata"]["name"]] = source
    return [(f"namespace {ns} gets {len(names)} LeaderWorkerSets ({_listed(sorted(names))}); the Service of each "
             f"selects {HEAD_LABEL}: head, which matches the leader pods of all of them, as in OME",
             names[min(names)])
            for ns, names in sorted(by_namespace.items()) if len(names) > 1]


LISTED = 10  # names a message lists before it counts the rest


def _listed(names: list[str]) -> str:
    more = len(names) - LISTED
    return ", ".join(names[:LISTED]) + (f" and {more:,} more" if more > 0 else "")
