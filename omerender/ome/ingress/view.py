"""The ingress settings in effect for one InferenceService and where each came from, for ``omerender config
--isvc``: the cluster's setting (its source as :mod:`omerender.ome.cluster.view` reports it) unless an
``ome.io/ingress-*`` annotation or the namespace's gateways override it, and what the render writes for it."""
from __future__ import annotations

from typing import Callable

from omerender.errors import Report
from ..cluster.settings import IngressConfig
from ..load import Obj
from . import overrides as o
from .routes import external_service_wanted


def effective_rows(isvc: Obj, config: IngressConfig, origin: str,
                   cluster_source: Callable[[str], str]) -> list[tuple[str, object, str]]:
    """(setting, value, source) rows; ``cluster_source(name)`` is where the cluster's ``ingress.<name>`` came from."""
    annotations = o.annotations_of(isvc.metadata)
    eff = o.resolve(isvc.metadata, isvc.namespace, config, Report(), origin)

    def source(key: str, name: str, *, nonempty: bool = True) -> str:
        present = annotations.get(key) if nonempty else key in annotations
        return f"annotation {key}" if present else cluster_source(f"ingress.{name}")

    creation = not eff.disable_creation
    if creation:
        writes = "HTTPRoutes and a BackendTrafficPolicy" if config.enable_gateway_api else "an Ingress"
    else:
        writes = "the external Service" if external_service_wanted(isvc, config) else "nothing (cluster-local)"
    rows: list[tuple[str, object, str]] = [
        ("renders", writes, "ingress creation and ingress.enableGatewayAPI"),
        ("ingress creation", "on" if creation else "off",
         source(o.DISABLE_CREATION, "disableIngressCreation", nonempty=False)),
        ("domain", eff.domain, source(o.DOMAIN, "ingressDomain")),
        ("domainTemplate", eff.domain_template, source(o.DOMAIN_TEMPLATE, "domainTemplate")),
        ("perISVCSubdomain", eff.per_isvc_subdomain, source(o.PER_ISVC_SUBDOMAIN, "perISVCSubdomain", nonempty=False)),
        ("sharedHostPrefix", eff.shared_host_prefix, source(o.SHARED_HOST_PREFIX, "sharedHostPrefix", nonempty=False)),
        ("consistentHashHeaders", list(eff.hash_headers),
         source(o.CONSISTENT_HASH_HEADERS, "consistentHashHeaders", nonempty=False)),
    ]
    for i, gateway in enumerate(eff.gateways):
        where = gateway.gateway_source
        where = where if where.startswith(("the annotation", "namespaceIngressGateways")) \
            else cluster_source(f"ingress.{where.split('[')[0]}")
        rows.append((f"gateway[{i}]", f"{gateway.gateway} ({gateway.domain})", where.removeprefix("the ")))
    return rows
