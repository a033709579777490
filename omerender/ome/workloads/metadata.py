"""Labels and annotations of the rendered objects (render.md §8.2, §8.3)."""
from __future__ import annotations

from ..load import Obj

DROPPED_ANNOTATIONS = frozenset({
    "ome.io/rollout-promote", "ome.io/rollout-rollback", "internal.ome.io/in-place-image-transition",
    "kubectl.kubernetes.io/last-applied-configuration",
})
# KRM and kustomize bookkeeping (omerender decision): never propagated to rendered objects.
DROPPED_PREFIXES = ("config.kubernetes.io/", "internal.config.kubernetes.io/", "config.k8s.io/",
                    "kustomize.config.k8s.io/")
POD_ONLY_PREFIXES = ("prometheus.io/", "k8s.grafana.com/", "loki.grafana.com/", "networking.gke.io/",
                     "rdma.ome.io/", "runtime.ome.io/")
POD_ONLY_KEYS = frozenset({"ome.io/inject-model-init", "ome.io/inject-fine-tuned-adapter",
                           "ome.io/inject-serving-sidecar"})
# Carried from the base model onto every component object (source: components/base.go, ProcessBaseAnnotations).
DECRYPTION_KEYS = ("ome.io/base-model-decryption-key-name", "ome.io/base-model-decryption-secret-name")
EXTERNAL_SERVICE_PREFIXES = ("service.beta.kubernetes.io/", "cloud.google.com/", "service.kubernetes.io/")
PROPAGATED_KEYS = "ome.io/autoscaler-propagated-metadata-keys"


def component_labels(isvc: Obj, component: str, merged: dict, runtime_name: str, model: Obj | None) -> dict:
    """``L`` of render.md §8.2."""
    labels = dict(isvc.metadata.get("labels") or {})
    labels.update(merged.get("labels") or {})
    labels.update({
        "ome.io/inferenceservice": isvc.name,
        "component": component,
        "serving-runtime": runtime_name,
        "fine-tuned-serving": "false",
    })
    if model is not None:
        category = (model.metadata.get("annotations") or {}).get("models.ome.io/category")
        labels["base-model-name"] = model.name
        labels["base-model-size"] = category or "SMALL"
        labels["base-model-type"] = "Serving"
        vendor = model.spec.get("vendor")
        if vendor:
            labels["base-model-vendor"] = str(vendor)
    return labels


def component_annotations(isvc: Obj, merged: dict, runtime_name: str, model: Obj | None) -> dict:
    """``A`` of render.md §8.2."""
    annotations = {k: v for k, v in (isvc.metadata.get("annotations") or {}).items()
                   if k not in DROPPED_ANNOTATIONS and not k.startswith(DROPPED_PREFIXES)}
    annotations.update(merged.get("annotations") or {})
    if model is not None:
        model_annotations = model.metadata.get("annotations") or {}
        annotations.update({key: model_annotations[key] for key in DECRYPTION_KEYS if key in model_annotations})
        annotations["ome.io/base-model-name"] = model.name
        vendor = model.spec.get("vendor")
        if vendor:
            annotations["ome.io/base-model-vendor"] = str(vendor)
        model_format = model.spec.get("modelFormat") or {}
        if model_format.get("name"):
            annotations["ome.io/base-model-format"] = model_format["name"]
        if model_format.get("version"):
            annotations["ome.io/base-model-format-version"] = str(model_format["version"])
    annotations["ome.io/serving-runtime"] = runtime_name
    return annotations


def queue_labels(annotations: dict) -> dict:
    """``Q`` of render.md §8.2: an annotation counts when its key is there, even with an empty value."""
    if "ome.io/volcano-queue" in annotations:
        return {"volcano.sh/queue-name": annotations["ome.io/volcano-queue"]}
    if "ome.io/dedicated-ai-cluster" not in annotations:
        return {}
    dedicated = annotations["ome.io/dedicated-ai-cluster"]
    if "kueue-enabled" in annotations:
        return {"kueue.x-k8s.io/queue-name": dedicated,
                "kueue.x-k8s.io/priority-class": "kueue-scheduling-high-priority"}
    return {"volcano.sh/queue-name": dedicated}


def without_pod_only(annotations: dict) -> dict:
    return {k: v for k, v in annotations.items()
            if k not in POD_ONLY_KEYS and not k.startswith(POD_ONLY_PREFIXES)}


def with_propagated_keys(labels: dict, annotations: dict) -> dict:
    """Annotations of an HPA or ScaledObject (render.md §8.3)."""
    keys = ",".join(sorted(labels)) + "|" + ",".join(sorted(k for k in annotations if k != PROPAGATED_KEYS))
    return {**annotations, PROPAGATED_KEYS: keys}


def external_service_annotations(isvc: Obj) -> dict:
    return {k: v for k, v in (isvc.metadata.get("annotations") or {}).items()
            if k.startswith(EXTERNAL_SERVICE_PREFIXES)}
