"""Metric aggregation and Prometheus scraping defaults: ``ome.io/enable-metric-aggregation`` and
``ome.io/enable-prometheus-scraping``, from the ``metricsAggregator`` key of ``inferenceservice-config``.

Docs: reference/api/labels-and-annotations.md ("Keys you set": both keys, ``prometheus.ome.io/port`` and ``path``).
The queue-proxy's environment variable and port names, which the docs leave out: ome-projects/ome v1.3
pkg/webhook/admission/pod/metrics_aggregate_injector.go and pkg/constants.
"""
from __future__ import annotations

from omerender.ome.cluster.settings import MetricsAggregatorConfig
from .pod import Pod

AGGREGATION, SCRAPING = "ome.io/enable-metric-aggregation", "ome.io/enable-prometheus-scraping"
CONTAINER_PORT, CONTAINER_PATH = "prometheus.ome.io/port", "prometheus.ome.io/path"
AGGREGATE_PORT, POD_PORT, PATH = 9088, "9091", "/metrics"
DEFAULT_CONTAINER_PORT = "8080"
# A key set on the InferenceService or component wins over the ConfigMap, and only "true" turns it on (ome.flags).
FLAGS = {AGGREGATION: "metric aggregation is off, whatever the cluster's metricsAggregator says",
         SCRAPING: "OME sets no prometheus.io/port and path for scraping, whatever the cluster's metricsAggregator "
                   "says"}
QUEUE_PROXY = "queue-proxy"   # OME never creates one; a runtime may name a container so


def inject(pod: Pod, config: MetricsAggregatorConfig) -> None:
    """Each key the pod lacks is set from the ConfigMap (an absent key or field gives ""); "true" aggregation
    configures a ``queue-proxy`` container; "true" scraping overwrites ``prometheus.io/port`` and ``path``."""
    annotations = pod.annotations
    aggregation = annotations.setdefault(AGGREGATION, config.enable_metric_aggregation)
    if aggregation == "true":
        _configure_queue_proxy(pod)
    if annotations.setdefault(SCRAPING, config.enable_prometheus_scraping) == "true":
        annotations["prometheus.io/port"] = str(AGGREGATE_PORT) if aggregation == "true" else POD_PORT
        annotations["prometheus.io/path"] = PATH


def _configure_queue_proxy(pod: Pod) -> None:
    """Where to scrape the main container and where to expose the aggregate: variables updated in place or
    appended, the ``aggr-metric`` port added unless a port of that name exists."""
    port = pod.annotation(CONTAINER_PORT)
    path = pod.annotation(CONTAINER_PATH)
    wanted = (("CONTAINER_PROMETHEUS_METRICS_PORT", DEFAULT_CONTAINER_PORT if port is None else port),
              ("CONTAINER_PROMETHEUS_METRICS_PATH", PATH if path is None else path),
              ("AGGREGATE_PROMETHEUS_METRICS_PORT", str(AGGREGATE_PORT)))
    for container in pod.spec.get("containers") or []:
        if container.get("name") != QUEUE_PROXY:
            continue
        env = list(container.get("env") or [])
        for name, value in wanted:
            existing = next((e for e in env if e.get("name") == name), None)
            if existing is not None:
                existing["value"] = value
            else:
                env.append({"name": name, "value": value})
        container["env"] = env
        ports = list(container.get("ports") or [])
        if not any(p.get("name") == "aggr-metric" for p in ports):
            ports.append({"name": "aggr-metric", "containerPort": AGGREGATE_PORT, "protocol": "TCP"})
        container["ports"] = ports
