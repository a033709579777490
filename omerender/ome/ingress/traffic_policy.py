"""The default Envoy Gateway BackendTrafficPolicy (``gateway.envoyproxy.io/v1alpha1``) written next to the
HTTPRoutes: consistent hashing on the configured headers, merged into the Gateway's own policy.

Source: OME v1.3 ``reconcilers/ingress/builders`` ``BackendTrafficPolicyBuilder.Build`` and
``strategies/gateway_api_strategy.go`` (written only without traffic intent; ``traffic`` ``ResolvedIntent.HasIntent``)
(commit 58a57f25); docs
``concepts/rollouts-and-traffic/traffic-policy.md`` (Defaults when you declare nothing) and
``pkg/constants/traffic_annotations.go`` (commit 4dfb96b1) for what declares intent.
"""
from __future__ import annotations

API_VERSION = "gateway.envoyproxy.io/v1alpha1"
# Annotations that declare traffic intent (constants/traffic_annotations.go), besides any field of spec.traffic.
INTENT_ANNOTATIONS = frozenset({
    "ome.io/circuit-breaker-max-connections", "ome.io/circuit-breaker-max-parallel-requests",
    "ome.io/circuit-breaker-max-pending-requests", "ome.io/circuit-breaker-max-parallel-retries",
    "ome.io/circuit-breaker-per-endpoint-max-connections", "ome.io/retry-attempts", "ome.io/retry-on",
    "ome.io/retry-per-try-timeout", "ome.io/timeout-idle", "ome.io/timeout-max-connection-duration",
    "ome.io/timeout-tcp-connect",
})
INTENT_PREFIXES = ("ome.io/btp.", "ome.io/dr.")  # pass-through to the Envoy Gateway or Istio policy
INTENT_FIELDS = ("algorithm", "consistentHash", "endpointOverride")  # ResolvedIntent.HasIntent's typed core


def traffic_intent(spec: dict, annotations: dict) -> str | None:
    """What declares traffic intent on the InferenceService, for the message; None when nothing does."""
    traffic = spec.get("traffic")
    if isinstance(traffic, dict):
        for key in INTENT_FIELDS:
            if traffic.get(key) is not None:
                return f"spec.traffic.{key}"
    for key in sorted(annotations):
        if key in INTENT_ANNOTATIONS or key.startswith(INTENT_PREFIXES):
            return f"the annotation {key}"
    return None


def backend_traffic_policy(isvc_name: str, namespace: str, headers: tuple[str, ...]) -> dict:
    return {
        "apiVersion": API_VERSION, "kind": "BackendTrafficPolicy",
        "metadata": {"name": isvc_name, "namespace": namespace,
                     "labels": {"app.kubernetes.io/part-of": isvc_name,
                                "app.kubernetes.io/managed-by": "ome-controller"}},
        "spec": {"mergeType": "StrategicMerge",
                 "targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": isvc_name}],
                 "loadBalancer": {"type": "ConsistentHash",
                                  "consistentHash": {"type": "Headers",
                                                     "headers": [{"name": h} for h in headers]}}},
    }
