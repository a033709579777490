"""The Kubernetes objects of one component and the external Service (render.md §8.3, §10–§13)."""
from __future__ import annotations

from omerender.errors import OmeError, Report
from omerender.kube.names import scaledobject_name, trunc63
from omerender.yamlio.data import copy_data
from .autoscaling import LEGACY_CLASS_KEY, Scaling, hpa_spec, scaledobject_spec
from .metadata import with_propagated_keys, without_pod_only

SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer")


def _meta(name: str, namespace: str, labels: dict | None = None, annotations: dict | None = None) -> dict:
    meta = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return meta


def deployment(comp_name: str, namespace: str, labels: dict, annotations: dict, pod: dict, strategy: dict | None,
               replicas: int | None) -> dict:
    app = trunc63(comp_name)
    spec = {"selector": {"matchLabels": {"app": app}}, "strategy": _strategy(strategy),
            "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
            "template": {"metadata": _meta(comp_name, namespace, labels, annotations), "spec": pod}}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": _meta(comp_name, namespace, labels, annotations), "spec": spec}


def _strategy(strategy: dict | None) -> dict:
    strategy = {key: copy_data(value) for key, value in dict(strategy or {}).items()}  # the runtime's, shared
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate" and not strategy.get("rollingUpdate"):
        strategy["rollingUpdate"] = {"maxUnavailable": 0, "maxSurge": 1}
    return strategy


def service_type(annotations: dict, report: Report) -> str:
    value = annotations.get("ome.io/service-type")
    if value is None:
        return "ClusterIP"
    if value not in SERVICE_TYPES:
        report.warn(f'ome.io/service-type "{value}" is not ClusterIP, NodePort or LoadBalancer; using ClusterIP',
                    code="invalid-service-type")
        return "ClusterIP"
    return value


def service_ports(pod: dict, app_protocols: dict | None, path: str) -> list[dict]:
    """One Service port per containerPort of the pod's first container (render.md §10)."""
    first = pod["containers"][0]
    container_ports = first.get("ports") or []
    if not container_ports:
        return [{"name": first.get("name"), "port": 8080, "targetPort": 8080, "protocol": "TCP"}]
    if len(container_ports) > 1 and any(not p.get("name") for p in container_ports):
        raise OmeError(f"{path}: container {first.get('name')} has several ports and one without a name; the Service "
                       f"needs a name for each", field=f"spec.{path}.runner.ports")
    ports = []
    for p in container_ports:
        port = {"port": p["containerPort"], "targetPort": p["containerPort"], "protocol": p.get("protocol") or "TCP"}
        if p.get("name"):
            port["name"] = p["name"]
            if (app_protocols or {}).get(p["name"]):
                port["appProtocol"] = app_protocols[p["name"]]
        ports.append(port)
    return ports


def service(name: str, namespace: str, labels: dict, annotations: dict, selector: dict, ports: list[dict],
            kind: str) -> dict:
    spec = {"type": kind, "selector": selector, "ports": ports}
    if kind == "LoadBalancer" and annotations.get("ome.io/load-balancer-ip"):
        spec["loadBalancerIP"] = annotations["ome.io/load-balancer-ip"]
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": _meta(name, namespace, labels, without_pod_only(annotations)), "spec": spec}


def autoscaler_object(comp_name: str, namespace: str, labels: dict, annotations: dict, scaling: Scaling) -> dict | None:
    kind = scaling.autoscaler.get("class")
    annotations = with_propagated_keys(labels, _resolved_class(annotations, kind))
    if kind == "HPA":
        return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                "metadata": _meta(comp_name, namespace, labels, annotations), "spec": hpa_spec(comp_name, scaling)}
    if kind == "KEDA":
        return {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
                "metadata": _meta(scaledobject_name(comp_name), namespace, labels, annotations),
                "spec": scaledobject_spec(comp_name, scaling)}
    return None


def _resolved_class(annotations: dict, kind) -> dict:
    """The legacy ``ome.io/autoscalerClass``, when the scaler's annotations carry it, names the class that won
    (``hpa`` or ``keda``), not the one written: a policy or inline block that outranks ``hpa`` leaves ``keda`` on
    the ScaledObject (OME v1.3 autoscaler dispatch, ``buildComponentMeta``)."""
    if LEGACY_CLASS_KEY not in annotations or kind not in ("HPA", "KEDA"):
        return annotations
    return {**annotations, LEGACY_CLASS_KEY: kind.lower()}


def pdb(comp_name: str, namespace: str, labels: dict, annotations: dict, budget: dict) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": _meta(comp_name, namespace, labels, annotations),
            "spec": {**budget, "selector": {"matchLabels": {"app": trunc63(comp_name)}}}}


def router_rbac(isvc_name: str, namespace: str, labels: dict) -> list[dict]:
    name = f"{isvc_name}-router"
    meta = _meta(name, namespace, labels)
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta,
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta,
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
         "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]},
    ]


def external_service(isvc_name: str, namespace: str, annotations: dict, kind: str, fronted: str, port: int) -> dict:
    labels = {"ome.io/inferenceservice": isvc_name, "component": "external-service"}
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": _meta(isvc_name, namespace, labels, annotations),
            "spec": {"type": kind, "selector": {"ome.io/inferenceservice": isvc_name, "component": fronted},
                     "ports": [{"name": "http", "port": port, "targetPort": port, "protocol": "TCP"}]}}
