"""The cluster configuration on each side (OME's ConfigMap inferenceservice-config, else the Helm chart's
defaults): the settings that differ, so a review sees the cause beside its effect on every InferenceService."""
from __future__ import annotations

from omerender.ome.cluster.view import settings
from .sides import Side


def compare(base: Side, head: Side) -> list[dict]:
    """``{setting, base, head}`` for each setting whose effective value differs; [] when none does."""
    old, new = base.inputs.cluster_config, head.inputs.cluster_config
    if old == new:
        return []
    return [{"setting": a.name, "base": a.value, "head": b.value}
            for a, b in zip(settings(old), settings(new)) if a.value != b.value]
