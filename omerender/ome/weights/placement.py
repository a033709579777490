"""Where the download Job's pod runs: where the pods that mount its claim run, so a ``WaitForFirstConsumer`` claim
binds in a zone and on nodes the serving pods reach, and the node pulls the image it will serve with; or where the
render says (``--weights-node-selector``, ``--weights-toleration``) for clusters that download on dedicated nodes.

A pod's placement here is its nodeSelector, its node affinity (never pod affinity: the Job's pod is none of the
pods those terms select, and a term that waits for a serving pod would wait for the Job's own marker) and its
tolerations; the priority class is added where every pod that mounts the claim has the same one."""
from __future__ import annotations

import json

from .settings import WeightsSettings

PRIORITY = "priorityClassName"


def pod_specs(obj: dict) -> list[dict]:
    """The pod specs of a rendered workload (a Deployment's, a LeaderWorkerSet's leader's and workers')."""
    spec = obj.get("spec") or {}
    if obj.get("kind") == "LeaderWorkerSet":
        group = spec.get("leaderWorkerTemplate") or {}
        templates = [group.get("leaderTemplate"), group.get("workerTemplate")]
    else:
        templates = [spec.get("template")]
    return [t["spec"] for t in templates if isinstance(t, dict) and isinstance(t.get("spec"), dict)]


def mounts_claim(pod: dict, claim: str) -> bool:
    return any((v.get("persistentVolumeClaim") or {}).get("claimName") == claim for v in pod.get("volumes") or [])


def of_pod(pod: dict) -> dict:
    """The pod's placement, as the Job's pod takes it (without the priority class)."""
    out: dict = {}
    if pod.get("nodeSelector"):
        out["nodeSelector"] = dict(pod["nodeSelector"])
    node_affinity = (pod.get("affinity") or {}).get("nodeAffinity")
    if node_affinity:
        out["affinity"] = {"nodeAffinity": node_affinity}
    if pod.get("tolerations"):
        out["tolerations"] = list(pod["tolerations"])
    return out


def key(placement: dict) -> str:
    return json.dumps(placement, sort_keys=True)


def from_settings(settings: WeightsSettings) -> dict:
    out: dict = {}
    if settings.node_selector:
        out["nodeSelector"] = dict(settings.node_selector)
    if settings.tolerations:
        out["tolerations"] = [dict(t) for t in settings.tolerations]
    return out


def described(placement: dict) -> str:
    """A placement in a message: its node selector and how many tolerations and node affinity terms it has."""
    parts = []
    if placement.get("nodeSelector"):
        parts.append("nodeSelector " + ", ".join(f"{k}={v}" for k, v in sorted(placement["nodeSelector"].items())))
    if placement.get("affinity"):
        parts.append("a node affinity")
    if placement.get("tolerations"):
        count = len(placement["tolerations"])
        parts.append(f"{count} toleration{'s' if count != 1 else ''}")
    return ", ".join(parts) or "no node selector, node affinity or tolerations"
