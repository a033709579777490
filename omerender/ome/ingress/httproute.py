"""Gateway API HTTPRoutes (``gateway.networking.k8s.io/v1``): one per declared component, and the top-level
route named after the InferenceService.

Source: OME v1.3 ``reconcilers/ingress/builders/httproute_builder.go`` and ``strategies/gateway_api_strategy.go``
(commit 58a57f25); docs ``concepts/rollouts-and-traffic/ingress.md`` (Routes) and
``guides/networking/configure-route-timeouts.md``.

Written form (omerender decision, docs/how-to/cluster-config-and-ingress.md): the fields OME sets, plus the two defaults
the HTTPRoute CRD gives every ``backendRefs`` entry (``group: ""``, ``weight: 1``), so that the object rendered is
the object the API server stores and a diff against the cluster shows nothing.
"""
from __future__ import annotations

from omerender.errors import OmeError
from omerender.kube.apirules import dns1123_label, shown
from ..workloads.metadata import DROPPED_PREFIXES
from .domain import describe, route_host
from .overrides import Effective, Gateway
from .paths import filters, path_prefix

API_VERSION = "gateway.networking.k8s.io/v1"
GATEWAY_GROUP = "gateway.networking.k8s.io"
# constants.ServiceAnnotationDisallowedList and RevisionTemplateLabelDisallowedList
DROPPED_ANNOTATIONS = frozenset({"internal.ome.io/storage-initializer-sourceuri",
                                 "kubectl.kubernetes.io/last-applied-configuration",
                                 "ome.io/rollout-promote", "ome.io/rollout-rollback"})
DROPPED_LABELS = frozenset({"networking.knative.dev/visibility"})
MAX_DURATION_SECONDS = 99_999  # Gateway API Duration: at most 5 digits per unit
OBJECT_NAME_MAX = 253
MAX_HOSTNAMES = 16  # the HTTPRoute CRD's maxItems for spec.hostnames (parentRefs: 32)


def route_metadata(name: str, namespace: str, meta: dict) -> dict:
    """The InferenceService's labels and annotations, less those OME keeps off the routes (and KRM bookkeeping)."""
    out = {"name": name, "namespace": namespace}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in DROPPED_LABELS}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                   if k not in DROPPED_ANNOTATIONS and not k.startswith(DROPPED_PREFIXES)}
    if labels:
        out["labels"] = labels
    if annotations:
        out["annotations"] = annotations
    return out


def parent_ref(gateway: Gateway, eff: Effective) -> dict:
    """``namespace/name``; OME splits on ``/`` and takes the first and the last part (``gw`` alone is ``gw/gw``)."""
    if not gateway.gateway:
        raise OmeError(f"HTTPRoutes need a Gateway, and {describe(gateway.gateway_source, eff)} is empty: name it as "
                       f"<namespace>/<name>, such as envoy-gateway-system/ome-gateway")
    parts = gateway.gateway.split("/")
    namespace, name = parts[0], parts[-1]
    problems = dns1123_label(namespace) if namespace else ["it is empty"]
    if problems or not name or len(name) > OBJECT_NAME_MAX:
        detail = "; ".join(problems) if problems else f"the name must have 1 to {OBJECT_NAME_MAX} characters"
        raise OmeError(f'the Gateway "{shown(gateway.gateway)}" of {describe(gateway.gateway_source, eff)} is not '
                       f'<namespace>/<name>: {detail}')
    return {"group": GATEWAY_GROUP, "kind": "Gateway", "namespace": namespace, "name": name}


def timeout(seconds, field: str, eff: Effective) -> str | None:
    """The rule's request timeout: the component's ``timeoutSeconds``, else the config's default (negative: none)."""
    if seconds is None:
        if eff.default_timeout is None or eff.default_timeout < 0:
            return None
        seconds, field = eff.default_timeout, describe("defaultRouteTimeoutSeconds", eff)
    if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 0 or seconds > MAX_DURATION_SECONDS:
        raise OmeError(f'{field}: {shown(seconds)} is not a request timeout an HTTPRoute takes: it must be a whole '
                       f'number of seconds from 0 to {MAX_DURATION_SECONDS} (0 turns the timeout off)',
                       field=field if field.startswith("spec.") else None)
    return f"{seconds}s"


def rule(prefix: str, route_filters: list[dict], service: str, namespace: str, port: int,
         request_timeout: str | None) -> dict:
    out = {"matches": [{"path": {"type": "PathPrefix", "value": prefix}}],
           "filters": route_filters,
           "backendRefs": [{"group": "", "kind": "Service", "name": service, "namespace": namespace, "port": port,
                            "weight": 1}]}
    if request_timeout is not None:
        out["timeouts"] = {"request": request_timeout}
    return out


def attachments(isvc_name: str, meta: dict, namespace: str, eff: Effective) -> tuple[list[dict], list[str]]:
    """The parentRefs and the hostnames every route of the InferenceService has, index-aligned per Gateway."""
    if len(eff.gateways) > MAX_HOSTNAMES:
        raise OmeError(f"the InferenceService's routes would attach to {len(eff.gateways)} Gateways, one hostname "
                       f"each, and an HTTPRoute has at most {MAX_HOSTNAMES} hostnames: list fewer additional gateways")
    parents = [parent_ref(gateway, eff) for gateway in eff.gateways]
    seen: dict[tuple[str, str], Gateway] = {}
    for parent, gateway in zip(parents, eff.gateways):
        key = (parent["namespace"], parent["name"])
        if key in seen:
            first, second = describe(seen[key].gateway_source, eff), describe(gateway.gateway_source, eff)
            raise OmeError(f'the Gateway {key[0]}/{key[1]} is named twice, by {first} '
                           f'and by {second}; an HTTPRoute names each Gateway once '
                           f'(the API server refuses it otherwise): remove one')
        seen[key] = gateway
    return parents, [route_host(isvc_name, meta, namespace, eff, gateway) for gateway in eff.gateways]


def http_route(name: str, isvc_name: str, meta: dict, namespace: str, eff: Effective,
               attached: tuple[list[dict], list[str]], backend: tuple[str, int], request_timeout: str | None) -> dict:
    """One route: ``name`` is its own name (and its path segment), ``backend`` the Service and port it sends to."""
    parents, hosts = attached
    prefix = path_prefix(namespace, name, eff.per_isvc_subdomain)
    spec = {"parentRefs": [dict(p) for p in parents], "hostnames": list(hosts),
            "rules": [rule(prefix, filters(isvc_name, namespace, eff.per_isvc_subdomain), backend[0], namespace,
                           backend[1], request_timeout)]}
    return {"apiVersion": API_VERSION, "kind": "HTTPRoute", "metadata": route_metadata(name, namespace, meta),
            "spec": spec}
