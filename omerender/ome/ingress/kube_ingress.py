"""The Kubernetes Ingress (``networking.k8s.io/v1``) OME writes when Gateway API routing is off.

Source: OME v1.3 ``reconcilers/ingress/builders/ingress_builder.go`` (commit 58a57f25); docs
``concepts/rollouts-and-traffic/ingress.md`` (Through a Kubernetes Ingress). One Ingress named after the
InferenceService; every rule matches the prefix ``/`` on a host of its own:

- with a router: the InferenceService's host and the router's host to the router, the engine's host to the
  engine, and the decoder's host to the decoder when there is one;
- with a decoder and no router: the InferenceService's host and the engine's to the engine, the decoder's to the
  decoder;
- otherwise the InferenceService's host to the engine.

Hosts come from ``domainTemplate`` with ``.Name`` the InferenceService's name, or the component Service's. The
Ingress carries all the InferenceService's annotations (OME copies them unfiltered; omerender drops KRM
bookkeeping only) and no labels.
"""
from __future__ import annotations

from ..workloads.metadata import DROPPED_PREFIXES
from .domain import template_host
from .overrides import Effective

API_VERSION = "networking.k8s.io/v1"


def _rule(host: str, service: str, port: int) -> dict:
    return {"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix",
                                              "backend": {"service": {"name": service, "port": {"number": port}}}}]}}


def _targets(backends: dict[str, tuple[str, int]]) -> list[tuple[str | None, str]]:
    """(host's component, or None for the InferenceService's host; component the rule sends to), in OME's order."""
    if "router" in backends:
        found = [(None, "router"), ("router", "router"), ("engine", "engine")]
        return found + ([("decoder", "decoder")] if "decoder" in backends else [])
    if "decoder" in backends:
        return [(None, "engine"), ("engine", "engine"), ("decoder", "decoder")]
    return [(None, "engine")]


def ingress(isvc_name: str, meta: dict, namespace: str, eff: Effective, backends: dict[str, tuple[str, int]]) -> dict:
    """``backends``: component -> (Service name, Service port)."""
    rules = []
    for host_of, target in _targets(backends):
        name = isvc_name if host_of is None else backends[host_of][0]
        host = template_host(name, meta, namespace, eff, eff.domain)
        rules.append(_rule(host, *backends[target]))
    metadata = {"name": isvc_name, "namespace": namespace}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if not k.startswith(DROPPED_PREFIXES)}
    if annotations:
        metadata["annotations"] = annotations
    spec = {"rules": rules}
    if eff.ingress_class_name is not None:
        spec = {"ingressClassName": eff.ingress_class_name, **spec}
    return {"apiVersion": API_VERSION, "kind": "Ingress", "metadata": metadata, "spec": spec}
