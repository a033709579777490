"""Where annotation values that OME reads otherwise than they look are looked for (api.md §8.13): the
InferenceService's own annotations and its components', and each runtime's annotations and component configs'.

The keys and what OME does with each misread value live with their concept: the pod webhook's on/off keys
(``podwebhook.FLAGS``), the merged-weights key (``workloads.pods.FLAGS``), the runtime profile marker
(``runtimes.inherit.FLAGS``) and the deployment mode (``runtimes.components.warn_unknown_mode``); the ingress keys
are checked where the routes are built (``ingress.misread``). ``ome.flags`` words the warnings.
"""
from __future__ import annotations

from omerender.errors import Report
from .flags import warn_flags
from .load import Obj
from .podwebhook import FLAGS as WEBHOOK_FLAGS
from .runtimes.components import COMPONENTS, CONFIG_KEYS, warn_unknown_mode
from .runtimes.inherit import FLAGS as PROFILE_FLAGS
from .workloads.pods import FLAGS as MOUNT_FLAGS

POD_FLAGS = {**WEBHOOK_FLAGS, **MOUNT_FLAGS}   # keys that reach the pods from any of the places below


def warn_isvc(isvc: Obj, report: Report) -> None:
    """The InferenceService's ``metadata.annotations`` and each component's ``annotations`` (``report`` is located
    at the InferenceService)."""
    annotations = isvc.metadata.get("annotations")
    warn_flags(annotations, POD_FLAGS, report)
    warn_unknown_mode(annotations, report, "metadata.annotations")
    for component in COMPONENTS:
        _warn_component(isvc.spec.get(component), f"spec.{component}", report)


def warn_runtime(runtime: Obj, report: Report) -> None:
    """The runtime's own ``metadata.annotations`` and its component configs' ``annotations``, as written (a child
    that inherits them is not warned again); ``report`` is located at the runtime."""
    warn_flags(runtime.metadata.get("annotations"), PROFILE_FLAGS, report)
    for component in COMPONENTS:
        key = CONFIG_KEYS[component]
        _warn_component(runtime.spec.get(key), f"spec.{key}", report)


def _warn_component(part, path: str, report: Report) -> None:
    if not isinstance(part, dict):
        return
    annotations = part.get("annotations")
    warn_flags(annotations, POD_FLAGS, report, f"{path}.annotations")
    warn_unknown_mode(annotations, report, f"{path}.annotations")
