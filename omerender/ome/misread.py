"""Where annotation values that OME reads otherwise than they look are looked for (api.md §8.13): the
InferenceService's own annotations and its components', and each runtime's annotations and component configs'.

The keys and what OME does with each misread value live with their concept: the pod webhook's on/off keys
(``podwebhook.FLAGS``), the merged-weights key (``workloads.pods.FLAGS``), the runtime profile marker
(``runtimes.inherit.FLAGS``) and the deployment mode (``runtimes.components.warn_unknown_mode``); the ingress keys
are checked where the routes are built (``ingress.misread``). ``ome.flags`` words the warnings.
"""
from __future__ import annotations

from omerender.errors import Report
from . import annotation_keys
from .flags import warn_flags
from .load import Obj
from .podwebhook import FLAGS as WEBHOOK_FLAGS
from .runtimes.components import COMPONENTS, CONFIG_KEYS, warn_unknown_mode
from .runtimes.inherit import FLAGS as PROFILE_FLAGS
from .workloads.pods import FLAGS as MOUNT_FLAGS

POD_FLAGS = {**WEBHOOK_FLAGS, **MOUNT_FLAGS}   # keys that reach the pods from any of the places below


def warn_isvc(isvc: Obj, report: Report, owner: object) -> None:
    """The InferenceService's ``metadata.annotations`` and each component's ``annotations`` (``report`` is located
    at the InferenceService; ``owner``, the render's inputs, carries the budget of key suggestions)."""
    annotations = isvc.metadata.get("annotations")
    warn_flags(annotations, POD_FLAGS, report)
    warn_unknown_mode(annotations, report, "metadata.annotations")
    annotation_keys.warn_unread(annotations, "metadata.annotations", report, owner, skip=(annotation_keys.INGRESS,))
    for component in COMPONENTS:
        _warn_component(isvc.spec.get(component), f"spec.{component}", report, owner)


def warn_runtime(runtime: Obj, report: Report, owner: object) -> None:
    """The runtime's own ``metadata.annotations`` and its component configs' ``annotations``, as written (a child
    that inherits them is not warned again); ``report`` is located at the runtime."""
    annotations = runtime.metadata.get("annotations")
    warn_flags(annotations, PROFILE_FLAGS, report)
    annotation_keys.warn_unread(annotations, "metadata.annotations", report, owner)
    for component in COMPONENTS:
        key = CONFIG_KEYS[component]
        _warn_component(runtime.spec.get(key), f"spec.{key}", report, owner)


def warn_model(model: Obj, report: Report, owner: object) -> None:
    """A BaseModel's or ClusterBaseModel's ``metadata.annotations`` (``report`` is located at the model)."""
    annotation_keys.warn_unread(model.metadata.get("annotations"), "metadata.annotations", report, owner)


def _warn_component(part, path: str, report: Report, owner: object) -> None:
    if not isinstance(part, dict):
        return
    annotations = part.get("annotations")
    warn_flags(annotations, POD_FLAGS, report, f"{path}.annotations")
    warn_unknown_mode(annotations, report, f"{path}.annotations")
    annotation_keys.warn_unread(annotations, f"{path}.annotations", report, owner)
