"""What OME v1.3 creates for external access to one InferenceService: the Kubernetes Ingress, or the Gateway API
HTTPRoutes and the default BackendTrafficPolicy, or (ingress creation off) the external Service.

Source: OME v1.3 ``reconcilers/ingress/strategies`` (``gateway_api_strategy.go``, ``raw_ingress_strategy.go``) and
``reconcilers/external_service/external_service_reconciler.go`` (commit 58a57f25); docs
``concepts/rollouts-and-traffic/ingress.md``.

OME creates a component's route only once the component is ready (``builders/readiness.go``); a render cannot wait
for a pod, so every route is rendered up front (omerender decision, docs/explanation/design-decisions.md).
"""
from __future__ import annotations

from dataclasses import dataclass

from omerender.errors import OmeError, Report
from omerender.kube.apirules import ingress_class_problems, shown
from ..budget import charge_copy, text_values
from ..cluster.settings import IngressConfig
from ..load import Obj
from . import httproute, kube_ingress, traffic_policy
from .domain import describe
from .misread import warn_misread
from .overrides import Effective, annotations_of, creation_disabled, resolve, warn_unknown

VISIBILITY_LABEL = "networking.knative.dev/visibility"
CLUSTER_LOCAL = "cluster-local"
ROUTE_ORDER = ("engine", "router", "decoder")  # the strategy's order; the top-level route comes last


@dataclass(frozen=True)
class ComponentRoute:
    """A declared component as the routes see it: its Service's name and first port, and the raw
    ``spec.<component>.timeoutSeconds`` of the InferenceService (validated here)."""

    component: str  # engine, decoder or router
    service: str
    port: int
    timeout_seconds: object = None


def external_service_wanted(isvc: Obj, config: IngressConfig) -> bool:
    """``shouldCreateExternalService``: ingress creation off for this InferenceService, and not cluster-local."""
    if (isvc.metadata.get("labels") or {}).get(VISIBILITY_LABEL) == CLUSTER_LOCAL:
        return False
    return creation_disabled(annotations_of(isvc.metadata), config)


def ingress_objects(isvc: Obj, routes: list[ComponentRoute], config: IngressConfig, report: Report,
                    origin: str = "the cluster configuration") -> list[dict]:
    """The Ingress, or the HTTPRoutes and BackendTrafficPolicy, OME writes for ``isvc``; [] with ingress creation
    off. ``config`` is the cluster's ingress config, ``origin`` where it came from (``ClusterConfig.source``)."""
    meta = isvc.metadata
    warn_unknown(annotations_of(meta), config, report)
    warn_misread(annotations_of(meta), report)
    if creation_disabled(annotations_of(meta), config):
        return []
    _check_service_names(isvc.name, routes)
    eff = resolve(meta, isvc.namespace, config, report, origin)
    backends = {r.component: (r.service, r.port) for r in routes}
    if not config.enable_gateway_api:
        if eff.ingress_class_name == "":
            raise OmeError(f"{describe('ingressClassName', eff)} is empty: name the IngressClass of your ingress "
                           f"controller, such as nginx, or leave the key out")
        problems = [] if eff.ingress_class_name is None else ingress_class_problems(eff.ingress_class_name)
        if problems:  # the API server's own check of every Ingress (networking validation, ValidateIngressSpec)
            raise OmeError(f'the Ingress\'s spec.ingressClassName: Invalid value: "{shown(eff.ingress_class_name)}": '
                           f'{"; ".join(problems)} (it comes from {describe("ingressClassName", eff)}); name the '
                           f"IngressClass of your ingress controller (kubectl get ingressclass), such as nginx")
        return [kube_ingress.ingress(isvc.name, meta, isvc.namespace, eff, backends)]
    return _gateway_api_objects(isvc, routes, eff, report)


def _gateway_api_objects(isvc: Obj, routes: list[ComponentRoute], eff: Effective, report: Report) -> list[dict]:
    name, namespace, meta = isvc.name, isvc.namespace, isvc.metadata
    attached = httproute.attachments(name, meta, namespace, eff)
    _charge_attachments(attached, len(routes) + 1, eff)
    by_component = {r.component: r for r in routes}
    if eff.per_isvc_subdomain and len(routes) > 1:
        report.warn(f"with a hostname per InferenceService (perISVCSubdomain), all {len(routes) + 1} routes match "
                    f"{attached[1][0]} at /, and which one takes the requests depends on when OME created them: "
                    f"with a router or a decoder, requests can reach the wrong component; keep this InferenceService "
                    f'on the shared host with the annotation ome.io/ingress-per-isvc-subdomain: "false"',
                    code="per-isvc-routes-overlap")
    objects = []
    for component in ROUTE_ORDER:
        route = by_component.get(component)
        if route is not None:
            objects.append(httproute.http_route(route.service, name, meta, namespace, eff, attached,
                                                (route.service, route.port), _timeout(route, eff)))
    front = by_component.get("router") or by_component["engine"]
    objects.append(httproute.http_route(name, name, meta, namespace, eff, attached, (front.service, front.port),
                                        _timeout(front, eff)))
    intent = traffic_policy.traffic_intent(isvc.spec, annotations_of(meta))
    if intent is None:
        charge_copy(sum(text_values(header) for header in eff.hash_headers), f"the consistentHashHeaders of {eff.origin}",
                    "hash fewer headers", None)  # the cluster's list, copied into every BackendTrafficPolicy
        objects.append(traffic_policy.backend_traffic_policy(name, namespace, eff.hash_headers))
    else:
        report.warn(f"{intent} declares traffic intent: OME's traffic reconciler then writes the "
                    f"BackendTrafficPolicy {name} in place of the default one, and omerender renders neither",
                    code="traffic-intent")
    return objects


def _charge_attachments(attached: tuple[list[dict], list[str]], count: int, eff: Effective) -> None:
    """Every route copies the Gateways and hostnames, which the cluster's settings share among all
    InferenceServices: up to 16 of the longest names, four routes each, are 40 kB per InferenceService, so they
    are charged as runtime specs are (budget.py), by their length."""
    parents, hosts = attached
    values = sum(1 + sum(text_values(v) for v in parent.values()) for parent in parents)
    values += sum(text_values(host) for host in hosts)
    charge_copy(count * values, f"the Gateways of {eff.origin}", "list fewer or shorter Gateways", None)


def _timeout(route: ComponentRoute, eff: Effective) -> str | None:
    return httproute.timeout(route.timeout_seconds, f"spec.{route.component}.timeoutSeconds", eff)


def _check_service_names(isvc_name: str, routes: list[ComponentRoute]) -> None:
    """OME's routes name the Service ``<isvc>-<component>`` whole; a Service name longer than 63 characters is
    shortened, so the route would send to a Service that does not exist (docs: keep names to 56 characters)."""
    for route in routes:
        wanted = f"{isvc_name}-{route.component}"
        if route.service != wanted:
            longest = max(len(r.component) for r in routes)
            raise OmeError(f'the InferenceService name is {len(isvc_name)} characters: OME\'s ingress routes send '
                           f'requests to the Service "{wanted}", but Service names have at most 63 characters and '
                           f'the {route.component} Service is "{route.service}"; with ingress creation on, keep the '
                           f'name to {62 - longest} characters', field="metadata.name")
