"""The effective cluster settings and where each came from, for ``omerender config``.

A setting comes from the input's ConfigMap when its data sets it; otherwise it is OME's own default (the ingress
loader's domain template, domain, scheme and hash headers; nvidia.com/gpu as the accelerator) or unset (OME fills
nothing: the HPA's floor of 1, Kubernetes' 30 s grace period, no PDB). Without a ConfigMap every setting is the Helm
chart's default.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .settings import ClusterConfig

CHART = "chart default"
OME_DEFAULT = "OME default"
UNSET = "unset: OME fills nothing"


def _policy(policy):
    return policy.as_spec() if policy is not None else None


def _gateway(spec) -> dict:
    out = {"omeIngressGateway": spec.gateway, "ingressDomain": spec.domain}
    return {**out, "class": spec.gateway_class} if spec.gateway_class else out


def _relabel(item) -> dict:
    out = {"sourceLabels": list(item.source_labels), "separator": item.separator, "targetLabel": item.target_label,
           "regex": item.regex, "replacement": item.replacement, "action": item.action}
    return {k: v for k, v in out.items() if v not in ("", [])}


def _namespaces(ingress) -> dict:
    return {ns: {"primary": _gateway(entry.primary),
                 **({} if entry.additional is None else {"additional": [_gateway(g) for g in entry.additional]})}
            for ns, entry in sorted(ingress.namespace_ingress_gateways.items())}


def _providers(config) -> dict:
    out = {}
    for name, provider in sorted(config.autoscaler_policy.metric_providers.items()):
        secret = provider.auth_secret_ref
        out[name] = {"serverAddress": provider.server_address,
                     **({} if secret is None else {"authSecretRef": {"name": secret.name, "key": secret.key}})}
    return out or None   # none bound: every endpoint trigger is an error


_I = lambda c: c.ingress  # noqa: E731
ROWS: tuple[tuple[str, Callable], ...] = (
    ("deploy.defaultDeploymentMode", lambda c: c.deploy.default_deployment_mode or None),
    ("deploy.replicas.defaultMinReplicas", lambda c: c.deploy.min_replicas()),
    ("deploy.replicas.defaultMaxReplicas.engine", lambda c: c.deploy.max_replicas("engine")),
    ("deploy.replicas.defaultMaxReplicas.decoder", lambda c: c.deploy.max_replicas("decoder")),
    ("deploy.replicas.defaultMaxReplicas.router", lambda c: c.deploy.max_replicas("router")),
    ("deploy.terminationGracePeriodSeconds", lambda c: c.deploy.termination_grace_period_seconds),
    ("podDisruptionBudget.rawDeployment", lambda c: _policy(c.pod_disruption_budget.raw_deployment)),
    ("podDisruptionBudget.omeNative", lambda c: _policy(c.pod_disruption_budget.ome_native)),
    ("acceleratorResources", lambda c: list(c.accelerator_resources)),
    ("ingress.ingressGateway", lambda c: _I(c).ingress_gateway),
    ("ingress.ingressService", lambda c: _I(c).ingress_service),
    ("ingress.omeIngressGateway", lambda c: _I(c).ome_ingress_gateway),
    ("ingress.omeIngressGatewayClass", lambda c: _I(c).ome_ingress_gateway_class),
    ("ingress.ingressDomain", lambda c: _I(c).ingress_domain),
    ("ingress.ingressClassName", lambda c: _I(c).ingress_class_name),
    ("ingress.additionalIngressDomains", lambda c: None if _I(c).additional_ingress_domains is None
     else list(_I(c).additional_ingress_domains)),
    ("ingress.domainTemplate", lambda c: _I(c).domain_template),
    ("ingress.urlScheme", lambda c: _I(c).url_scheme),
    ("ingress.pathTemplate", lambda c: _I(c).path_template),
    ("ingress.disableIstioVirtualHost", lambda c: _I(c).disable_istio_virtual_host),
    ("ingress.disableIngressCreation", lambda c: _I(c).disable_ingress_creation),
    ("ingress.enableGatewayAPI", lambda c: _I(c).enable_gateway_api),
    ("ingress.consistentHashHeaders", lambda c: list(_I(c).consistent_hash_headers)),
    ("ingress.perISVCSubdomain", lambda c: _I(c).per_isvc_subdomain),
    ("ingress.sharedHostPrefix", lambda c: _I(c).shared_host_prefix),
    ("ingress.additionalIngressGateways", lambda c: [_gateway(g) for g in _I(c).additional_ingress_gateways]),
    ("ingress.defaultRouteTimeoutSeconds", lambda c: _I(c).default_route_timeout_seconds),
    ("ingress.namespaceIngressGateways", lambda c: _namespaces(_I(c))),
    ("podMonitor.labels", lambda c: dict(sorted(c.pod_monitor.labels.items()))),
    ("podMonitor.relabelings", lambda c: [_relabel(r) for r in c.pod_monitor.relabelings]),
    ("podMonitor.metricRelabelings", lambda c: [_relabel(r) for r in c.pod_monitor.metric_relabelings]),
    ("autoscalerPolicy.metricProviders", _providers),
    ("autoscalerPolicy.preflight.memberGetTimeoutSeconds", lambda c: c.autoscaler_policy.member_get_timeout_seconds),
    ("autoscalerPolicy.preflight.skewDeadlineSeconds", lambda c: c.autoscaler_policy.skew_deadline_seconds),
    # read by OME's pod webhook, which writes "" for an unset field (render.md §17.3)
    ("metricsAggregator.enableMetricAggregation", lambda c: c.metrics_aggregator.enable_metric_aggregation),
    ("metricsAggregator.enablePrometheusScraping", lambda c: c.metrics_aggregator.enable_prometheus_scraping),
)
# Filled by OME's loader when the data leaves them out (configmap.go parseIngressConfig, AcceleratorResourceNames,
# parseAutoscalerPolicyConfig, which also fills a non-positive preflight value).
LOADER_DEFAULTS = ("ingress.ingressDomain", "ingress.domainTemplate", "ingress.urlScheme",
                   "ingress.consistentHashHeaders", "acceleratorResources",
                   "autoscalerPolicy.preflight.memberGetTimeoutSeconds",
                   "autoscalerPolicy.preflight.skewDeadlineSeconds")


@dataclass(frozen=True)
class Setting:
    name: str        # the ConfigMap's data key and json path: deploy.terminationGracePeriodSeconds
    value: object    # JSON-ready; None when unset
    source: str      # "configmap <file>", "chart default", "OME default", "unset: OME fills nothing"


def settings(config: ClusterConfig) -> list[Setting]:
    """Every setting omerender applies, its effective value and its source."""
    return [Setting(name, value, _source(config, name, value)) for name, read in ROWS for value in (read(config),)]


def _source(config: ClusterConfig, name: str, value) -> str:
    if config.from_chart:
        return CHART
    if name in config.fields:
        return f"configmap {config.file}"
    if name in LOADER_DEFAULTS:
        return OME_DEFAULT
    return UNSET if value is None else OME_DEFAULT
