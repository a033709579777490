"""The PodMonitor (``monitoring.coreos.com/v1``) of a RawDeployment or MultiNode component.

OME v1.3 creates one for each such component when the Prometheus Operator's PodMonitor CRD was installed before
its controller started, and needs that CRD: without it their InferenceServices never become Ready (docs:
getting-started/install.md "The PodMonitor CRD", guides/operate-ome/metrics.md "Use OME's PodMonitors"). A render
cannot see the cluster, so the caller decides (``Options.pod_monitors``).

Shape (source: sgl-project/ome pkg/controller/v1beta1/inferenceservice/reconcilers/podmonitor/
podmonitor_reconciler.go and extra_endpoints.go at eb2686d2): named like the workload, labelled and selecting
``app: trunc63(name)`` in the component's own namespace, one endpoint scraping ``/metrics`` every 10 s on the
metrics port, then the endpoints of the ``prometheus.ome.io/extra-endpoints`` annotation. The ConfigMap's
``podMonitor`` key applies only to OMENative components, which omerender does not render (docs: metrics.md).
"""
from __future__ import annotations

from omerender.errors import Report
from omerender.gorules.text import trim_space
from omerender.kube.names import trunc63
from ..budget import charge_copy

EXTRA_ENDPOINTS_KEY = "prometheus.ome.io/extra-endpoints"
METRICS_PATH = "/metrics"
INTERVAL = "10s"
FALLBACK_PORT = "http"
ENDPOINT_VALUES = 4  # a podMetricsEndpoints entry: the map and its port, path and interval
SKIPPED_NAMED = 3


def metrics_port_name(pod: dict | None) -> str:
    """The first container's port named ``metrics``, else its first port's name, else ``http``."""
    containers = (pod or {}).get("containers") or []
    ports = (containers[0].get("ports") or []) if containers else []
    if any(port.get("name") == "metrics" for port in ports):
        return "metrics"
    if ports and ports[0].get("name"):
        return ports[0]["name"]
    return FALLBACK_PORT


def extra_endpoints(annotations: dict, report: Report) -> list[dict]:
    """The endpoints of ``prometheus.ome.io/extra-endpoints``: comma-separated ``<port-name>:<path>`` entries,
    split at the first ``:``, blanks trimmed as Go's strings.TrimSpace trims them (it keeps U+001C to U+001F,
    which Python's ``strip()`` removes). OME skips a malformed entry (it logs it); omerender warns."""
    raw = trim_space(str(annotations.get(EXTRA_ENDPOINTS_KEY) or ""))
    # each component's PodMonitor copies the endpoints, and a runtime's annotation is shared by every
    # InferenceService naming it: charged before they are parsed, as runtime specs are (budget.py)
    charge_copy(ENDPOINT_VALUES * (raw.count(",") + 1) if raw else 0, f"the annotation {EXTRA_ENDPOINTS_KEY}",
                "give fewer extra endpoints", None)
    found, skipped = [], []
    for entry in (trim_space(e) for e in raw.split(",")) if raw else ():
        if not entry:
            continue
        name, colon, path = (trim_space(part) for part in entry.partition(":"))
        if not colon or not name or not path.startswith("/"):
            skipped.append(entry)
            continue
        found.append(_endpoint(name, path))
    if skipped:
        report.warn(_skipped_text(skipped), code="pod-monitor-endpoint-skipped")
    return found


def _skipped_text(skipped: list[str]) -> str:
    """One warning for all the malformed entries of the annotation, naming the first few (one line each would
    be 50,000 lines for one annotation)."""
    named = ", ".join(f'"{entry}"' for entry in skipped[:SKIPPED_NAMED])
    more = f" and {len(skipped) - SKIPPED_NAMED:,} more" if len(skipped) > SKIPPED_NAMED else ""
    if len(skipped) == 1:
        return f'{EXTRA_ENDPOINTS_KEY} entry {named} is not "<port-name>:/<path>"; OME skips it'
    return f'{EXTRA_ENDPOINTS_KEY} entries {named}{more} are not "<port-name>:/<path>"; OME skips them'


def _endpoint(port: str, path: str) -> dict:
    return {"port": port, "path": path, "interval": INTERVAL}


def pod_monitor(name: str, namespace: str, annotations: dict, pod: dict, report: Report) -> dict:
    """The PodMonitor of the component whose workload is ``name``, scraping pods like ``pod`` (the Deployment's
    pod, or a LeaderWorkerSet's leader pod)."""
    app = {"app": trunc63(name)}
    endpoints = [_endpoint(metrics_port_name(pod), METRICS_PATH), *extra_endpoints(annotations, report)]
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(app)},
            "spec": {"namespaceSelector": {"matchNames": [namespace]}, "selector": {"matchLabels": dict(app)},
                     "podMetricsEndpoints": endpoints}}
