"""OME's cluster configuration as the controller holds it after loading ``inferenceservice-config``.

Frozen values, tuples not lists, each field AFTER OME's loader defaults (configmap.go's parse functions). The
shape is the contract of docs/spec and the notes CONTRACT: ingress and monitoring read these, the render reads
:class:`DeployConfig` and :class:`PodDisruptionBudgetConfig`. Go source: ome-projects/ome
pkg/controller/v1beta1/controllerconfig/configmap.go (commit 4dfb96b1a473d68f5c0da4ccdc17b313069d59bb).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

COMPONENTS = ("engine", "decoder", "router")
CHART_SOURCE = "the Helm chart's defaults"


def _empty() -> Mapping:
    return MappingProxyType({})


@dataclass(frozen=True)
class GatewaySpec:
    """Go IngressGatewaySpec."""

    gateway: str              # "namespace/name" (json omeIngressGateway)
    domain: str               # json ingressDomain
    gateway_class: str = ""   # json class


@dataclass(frozen=True)
class NamespaceGateways:
    """Go NamespaceIngressGateway."""

    primary: GatewaySpec
    additional: tuple[GatewaySpec, ...] | None   # None = keep the cluster default; () = none


@dataclass(frozen=True)
class IngressConfig:
    """Go IngressConfig, data key ``ingress``."""

    ingress_gateway: str = ""
    ingress_service: str = ""
    ome_ingress_gateway: str = ""
    ome_ingress_gateway_class: str = ""
    ingress_domain: str = ""
    ingress_class_name: str | None = None
    additional_ingress_domains: tuple[str, ...] | None = None
    domain_template: str = ""
    url_scheme: str = ""
    path_template: str = ""
    disable_istio_virtual_host: bool = False
    disable_ingress_creation: bool = False
    enable_gateway_api: bool = False
    consistent_hash_headers: tuple[str, ...] = ()
    per_isvc_subdomain: bool = False
    shared_host_prefix: str = ""
    additional_ingress_gateways: tuple[GatewaySpec, ...] = ()
    default_route_timeout_seconds: int | None = None
    namespace_ingress_gateways: Mapping[str, NamespaceGateways] = field(default_factory=_empty)


@dataclass(frozen=True)
class RelabelConfig:
    """Go RelabelConfig."""

    source_labels: tuple[str, ...] = ()
    separator: str = ""
    target_label: str = ""
    regex: str = ""
    replacement: str = ""
    action: str = ""


@dataclass(frozen=True)
class PodMonitorConfig:
    """Go PodMonitorConfig, data key ``podMonitor``."""

    labels: Mapping[str, str] = field(default_factory=_empty)
    relabelings: tuple[RelabelConfig, ...] = ()
    metric_relabelings: tuple[RelabelConfig, ...] = ()


@dataclass(frozen=True)
class ReplicaDefaults:
    """Go ReplicasDefaultsConfig (``deploy.replicas``): None is unconfigured, which fills nothing."""

    min_replicas: int | None = None
    max_replicas: Mapping[str, int] = field(default_factory=_empty)   # component -> default maxReplicas


@dataclass(frozen=True)
class DeployConfig:
    """Go DeployConfig, data key ``deploy``: what the reconciler fills on a merged component that neither the
    InferenceService nor its runtime set (specdefaults.go). None everywhere when unconfigured."""

    default_deployment_mode: str = ""
    replicas: ReplicaDefaults | None = None
    termination_grace_period_seconds: int | None = None
    min_ready_seconds: int | None = None   # OMENative only; read, never rendered

    def min_replicas(self) -> int | None:
        return self.replicas.min_replicas if self.replicas is not None else None

    def max_replicas(self, component: str) -> int | None:
        return self.replicas.max_replicas.get(component) if self.replicas is not None else None


@dataclass(frozen=True)
class BudgetPolicy:
    """Go PodDisruptionBudgetPolicy: exactly one of minAvailable and maxUnavailable."""

    name: str                 # "minAvailable" or "maxUnavailable"
    value: int | str          # an int, or a percentage string as written

    def as_spec(self) -> dict:
        return {self.name: self.value}


@dataclass(frozen=True)
class PodDisruptionBudgetConfig:
    """Go PodDisruptionBudgetConfig, data key ``podDisruptionBudget``: a mode without a policy gets no PDB unless
    the component asks for one."""

    raw_deployment: BudgetPolicy | None = None
    ome_native: BudgetPolicy | None = None


@dataclass(frozen=True)
class SecretKeyRef:
    """Go corev1.SecretKeySelector as a metric provider's ``authSecretRef`` (``optional`` is read, never used)."""

    name: str = ""
    key: str = ""


@dataclass(frozen=True)
class MetricProvider:
    """Go AutoscalerPolicyMetricProvider: where a logical provider name points on this cluster."""

    server_address: str
    auth_secret_ref: SecretKeyRef | None = None


@dataclass(frozen=True)
class AutoscalerPolicyConfig:
    """Go AutoscalerPolicyConfig, data key ``autoscalerPolicy`` (controllerconfig, the AutoscalerPolicy feature's
    file): the metric provider bindings, and the placement preflight's tunables after the loader's defaults."""

    metric_providers: Mapping[str, MetricProvider] = field(default_factory=_empty)
    member_get_timeout_seconds: int = 5     # DefaultPolicyMemberGetTimeoutSeconds; multi-cluster only, never used
    skew_deadline_seconds: int = 900        # DefaultPolicySkewDeadlineSeconds; likewise


@dataclass(frozen=True)
class MetricsAggregatorConfig:
    """Go pod.MetricsAggregator, data key ``metricsAggregator``: read by OME's pod webhook, never by the controller.
    Strings as written ("" when unset); the webhook acts on exactly "true"."""

    enable_metric_aggregation: str = ""
    enable_prometheus_scraping: str = ""


@dataclass(frozen=True)
class ClusterConfig:
    """The whole configuration the render reads, and where it came from."""

    source: str                                   # "<file>: ConfigMap ome/inferenceservice-config", or CHART_SOURCE
    ingress: IngressConfig = field(default_factory=IngressConfig)
    pod_monitor: PodMonitorConfig = field(default_factory=PodMonitorConfig)
    deploy: DeployConfig = field(default_factory=DeployConfig)
    pod_disruption_budget: PodDisruptionBudgetConfig = field(default_factory=PodDisruptionBudgetConfig)
    accelerator_resources: tuple[str, ...] = ("nvidia.com/gpu",)   # AcceleratorResourceNames(), fallback applied
    autoscaler_policy: AutoscalerPolicyConfig = field(default_factory=AutoscalerPolicyConfig)
    metrics_aggregator: MetricsAggregatorConfig = field(default_factory=MetricsAggregatorConfig)
    file: str | None = None                       # the ConfigMap's file; None for the chart's defaults
    keys: frozenset[str] = frozenset()            # the data keys the ConfigMap sets (all of them, read or not)
    fields: frozenset[str] = frozenset()          # "<key>.<json path>" of each field the data sets ("deploy.replicas")

    @property
    def from_chart(self) -> bool:
        return self.file is None
