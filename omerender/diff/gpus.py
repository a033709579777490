"""GPU capacity of a render: per extended resource and accelerator class, at minReplicas and at maxReplicas.

Counted from the rendered objects: pods × the extended resources of one pod, where the replicas come from
the HorizontalPodAutoscaler or KEDA ScaledObject that targets a workload, else from the workload's own
``replicas``; a LeaderWorkerSet group is its leader plus ``size - 1`` workers.
"""
from __future__ import annotations

import functools
from collections import defaultdict
from fractions import Fraction

from omerender.errors import OmeError
from omerender.kube.quantities import known_quantity
from omerender.yamlio.data import list_or_empty
from .sides import Side

# KEDA's defaults when a ScaledObject leaves them out; an HPA's minReplicas defaults to 1.
KEDA_MIN, KEDA_MAX = 0, 100
SCALERS = ("HorizontalPodAutoscaler", "ScaledObject")
Capacity = dict[tuple[str, str | None], list[Fraction]]  # (resource, class) -> [min, max]


def capacity(side: Side) -> Capacity:
    classes = {}
    for (namespace, isvc), facts in side.result.isvcs.items():
        for obj in facts.objects:
            meta = obj.get("metadata")   # _get(obj, "metadata", "labels", "component"), inline: once per object
            labels = meta.get("labels") if isinstance(meta, dict) else None
            component = labels.get("component") if isinstance(labels, dict) else None
            classes[id(obj)] = facts.classes.get(component) if isinstance(component, str) else None
    objects = side.result.objects
    scaled = _scalers(objects)
    total: Capacity = defaultdict(lambda: [0, 0])
    for obj in objects:
        per_pod = _workload_gpus(obj)
        if not per_pod:
            continue
        low, high = scaled.get(_target(obj)) or (_replicas(obj),) * 2
        for resource, count in per_pod.items():
            entry = total[(resource, classes.get(id(obj)))]
            entry[0] += low * count
            entry[1] += high * count
    return dict(total)


def compare(base: Capacity, head: Capacity) -> list[dict]:
    keys = sorted(set(base) | set(head), key=lambda k: (k[0], k[1] or ""))
    return [{"resource": resource, "class": cls, "base": _pair(base.get((resource, cls))),
             "head": _pair(head.get((resource, cls)))} for resource, cls in keys]


def _pair(values) -> dict:
    low, high = values or (0, 0)
    return {"min": _number(low), "max": _number(high)}


def _number(value):
    value = Fraction(value)
    return int(value) if value.denominator == 1 else float(value)


def is_extended(resource: str) -> bool:
    """A resource name with a vendor domain (``nvidia.com/gpu``), as opposed to cpu, memory and the
    ``kubernetes.io`` ones."""
    domain = resource.split("/")[0] if "/" in resource else ""
    return bool(domain) and not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io")) \
        and not resource.startswith("requests.")


_extended = functools.lru_cache(maxsize=1024)(is_extended)  # a fleet names a few resources thousands of times


def _workload_gpus(obj: dict) -> dict[str, Fraction | int]:
    kind = obj.get("kind")
    if kind == "Deployment":
        return _pod_gpus(_get(obj, "spec", "template", "spec"))
    if kind != "LeaderWorkerSet":
        return {}
    template = _get(obj, "spec", "leaderWorkerTemplate") or {}
    worker = _pod_gpus(_get(template, "workerTemplate", "spec"))
    leader = _pod_gpus(_get(template, "leaderTemplate", "spec")) if _get(template, "leaderTemplate") else worker
    size = template.get("size") if isinstance(template.get("size"), int) else 1
    group = dict(leader)
    for resource, count in worker.items():
        group[resource] = group.get(resource, 0) + count * max(size - 1, 0)
    return {r: c for r, c in group.items() if c}


def _pod_gpus(pod) -> dict[str, Fraction | int]:
    """The extended resources one pod asks for: the containers' sum, or an init container's if larger."""
    if not isinstance(pod, dict):
        return {}
    total: dict[str, Fraction | int] = defaultdict(int)
    for container in list_or_empty(pod.get("containers")):
        for resource, count in _container(container).items():
            total[resource] += count
    for container in list_or_empty(pod.get("initContainers")):
        for resource, count in _container(container).items():
            total[resource] = max(total[resource], count)
    return {r: c for r, c in total.items() if c}


def _container(container) -> dict[str, Fraction | int]:
    resources = _get(container, "resources") or {}
    found = {}
    for part in ("requests", "limits"):  # extended resources: limits, where given, equal requests
        values = resources.get(part) if isinstance(resources, dict) else None
        for resource, value in (values.items() if isinstance(values, dict) else ()):
            if isinstance(resource, str) and _extended(resource):
                count = _quantity(value)
                if count is not None:  # not a quantity: the API server rejects the object; it asks for nothing
                    found[resource] = count
    return found


def _quantity(value) -> Fraction | int | None:
    """``value`` as a quantity (a whole one as an int: the sums stay exact and cheap), None where it is none."""
    try:
        count = known_quantity(value, "resources")
    except OmeError:
        return None
    return int(count) if count.denominator == 1 else count


def _scalers(objects: list[dict]) -> dict[tuple, tuple[int, int]]:
    """(kind, namespace, name) of each workload an autoscaler targets -> (min, max) replicas."""
    found = {}
    for obj in objects:
        kind = obj.get("kind")
        target = _get(obj, "spec", "scaleTargetRef") if kind in SCALERS else None
        if not isinstance(target, dict):
            continue
        namespace = _get(obj, "metadata", "namespace")
        if kind == "HorizontalPodAutoscaler":
            bounds = (_int(_get(obj, "spec", "minReplicas"), 1), _int(_get(obj, "spec", "maxReplicas"), 1))
        elif kind == "ScaledObject":
            bounds = (_int(_get(obj, "spec", "minReplicaCount"), KEDA_MIN),
                      _int(_get(obj, "spec", "maxReplicaCount"), KEDA_MAX))
        else:
            continue
        found[(target.get("kind") or "Deployment", namespace, target.get("name"))] = bounds
    return found


def _target(obj: dict) -> tuple:
    return obj.get("kind"), _get(obj, "metadata", "namespace"), _get(obj, "metadata", "name")


def _replicas(obj: dict) -> int:
    return _int(_get(obj, "spec", "replicas"), 1)


def _int(value, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _get(value, *keys):
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value

