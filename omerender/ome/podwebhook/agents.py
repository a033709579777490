"""The OCI agent containers: ``model-init``, ``fine-tuned-adapter`` and ``serving-sidecar``. Not reproduced
(omerender decision, render.md §17.4): each reads OCI Vault or Object Storage with the OCI settings of its ConfigMap
key into the ``model-empty-dir`` volume, and the adapter needs the FineTunedWeight object, which a render does not
have. A pod that asks for one is an error naming the annotation.

Docs: reference/api/labels-and-annotations.md ("Keys you set": ``ome.io/inject-model-init``,
``ome.io/inject-serving-sidecar``; "Keys OME sets": ``ome.io/inject-fine-tuned-adapter``). Triggers and the
"already there" checks: ome-projects/ome v1.3 pkg/webhook/admission/pod/model_init_injector.go,
fine_tuned_adapter_injector.go and serving_sidecar_injector.go.
"""
from __future__ import annotations

from omerender.errors import OmeError
from .pod import Pod, shown

MODEL_INIT, ADAPTER, SIDECAR = "ome.io/inject-model-init", "ome.io/inject-fine-tuned-adapter", \
    "ome.io/inject-serving-sidecar"
# What OME does when a flag is not exactly "true" (ome.flags): the webhook compares with == "true".
FLAGS = {MODEL_INIT: "no model-init container is added, and the pods mount the base model as usual",
         SIDECAR: "no serving-sidecar container is added"}
NEEDS = "omerender cannot add it; apply this InferenceService on a cluster that runs OME's controller manager " \
        "(its pod webhook), or remove the annotation"


def inject_model_init(pod: Pod) -> None:
    """``"true"`` exactly asks for the ``model-init`` init container, unless the pod has one."""
    if pod.annotation(MODEL_INIT) == "true" and not _has(pod, "initContainers", "model-init"):
        raise _needs_webhook(pod, MODEL_INIT, "the model-init init container (model decryption with OCI Vault)")


def inject_fine_tuned_adapter(pod: Pod) -> None:
    """Any non-empty value (a FineTunedWeight's name) asks for the adapter's download init container."""
    if pod.annotation(ADAPTER):
        raise _needs_webhook(pod, ADAPTER, "the fine-tuned-adapter init container (the adapter from OCI Object "
                                           "Storage)")


def inject_serving_sidecar(pod: Pod) -> None:
    """``"true"`` exactly asks for the ``serving-sidecar`` container, unless the pod has one."""
    if pod.annotation(SIDECAR) == "true" and not _has(pod, "containers", "serving-sidecar"):
        raise _needs_webhook(pod, SIDECAR, "the serving-sidecar container (fine-tuned weights from OCI Object "
                                           "Storage)")


def _has(pod: Pod, field: str, name: str) -> bool:
    return any(c.get("name") == name for c in pod.spec.get(field) or [])


def _needs_webhook(pod: Pod, key: str, what: str) -> OmeError:
    return OmeError(f"{pod.where} pod: {key}: {shown(pod.annotation(key) or '')} asks OME's pod webhook for {what}; "
                    f"{NEEDS}")
