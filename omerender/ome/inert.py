"""InferenceService fields of OME v1.3 that only OME's controller can act on: accepted, with one warning each
saying what OME does with the field and that a render does not (api.md §3.2, §3.4, §8.8). The topology fields
count in a runtime's ``engineConfig``/``decoderConfig`` too, warned once at the runtime.

Sources (OME v1.3 docs, ome-projects/ome-docs ``src/lib/content``): ``concepts/rollouts-and-traffic/rollout-groups.md``
(``spec.rollout``: groups of OMENative components rolled out together), ``concepts/rollouts-and-traffic/traffic-map.md``
and ``reference/kubectl-ome/placement.md`` (``spec.placement`` and ``spec.routing``: the alpha multi-cluster control
plane), ``concepts/omenative/overview.md`` (the topology fields: where an OMENative Instance's pods are placed).
"""
from __future__ import annotations

from omerender.errors import Report

SPEC_FIELDS = {
    "rollout": "OME rolls the OMENative components of each rollout group out together, by canary, blue-green or "
               "rolling update; a render does not: its workloads roll out as Kubernetes updates them",
    "placement": "OME's multi-cluster control plane (alpha) chooses the workload clusters that run this "
                 "InferenceService; a render does not: its objects run on the cluster they are applied to",
    "routing": "OME's multi-cluster control plane (alpha) weighs each workload cluster's share of the requests in a "
               "TrafficMap; a render writes no TrafficMap",
}
TOPOLOGY_FIELDS = {
    "topologyKey": "OME keeps each OMENative Instance's pods in one topology domain of this node label",
    "topologySpread": "OME spreads OMENative Instances across topology domains, Preferred or Required",
    "topologySpreadKey": "OME spreads OMENative Instances across the topology domains of this node label",
}


def warn_inert_runtime_fields(spec: dict, report: Report) -> None:
    """One warning per topology field set in a runtime's own ``engineConfig`` or ``decoderConfig`` (``report`` is
    located at the runtime): the same fields, merged under the InferenceService's engine and decoder, and as inert."""
    _warn_topology(spec, ("engineConfig", "decoderConfig"), report)


def warn_inert_fields(spec: dict, report: Report) -> None:
    """One warning per field of :data:`SPEC_FIELDS` set in the InferenceService's spec, and per topology field
    set on its engine or decoder."""
    for name, effect in SPEC_FIELDS.items():
        if spec.get(name) is not None:
            report.warn(f"spec.{name} is ignored: {effect}", field=f"spec.{name}", code="inert-field")
    _warn_topology(spec, ("engine", "decoder"), report)


def _warn_topology(spec: dict, components: tuple[str, str], report: Report) -> None:
    for component in components:
        part = spec.get(component)
        for name, effect in TOPOLOGY_FIELDS.items():
            if isinstance(part, dict) and part.get(name) is not None:
                report.warn(f"spec.{component}.{name} is ignored: {effect}; a render places pods as Kubernetes "
                            f"schedules them", field=f"spec.{component}.{name}", code="inert-field")
