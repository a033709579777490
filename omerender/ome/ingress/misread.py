"""Warnings for ``ome.io/ingress-*`` annotation values that OME reads differently from their look.

OME v1.3 ``pkg/controller/v1beta1/inferenceservice/utils`` ``ResolveIngressConfig`` (commit 58a57f25), as
:mod:`.overrides` reproduces it: a present ``ome.io/ingress-disable-creation`` or
``ome.io/ingress-per-isvc-subdomain`` is true only when it is exactly ``"true"`` (``"yes"``, ``"True"``, ``"treu"``
are false, whatever the cluster's config says); the gateway of ``ome.io/ingress-gateway`` is split on ``/`` and
its first and last parts are the namespace and the name (``other-gw`` is ``other-gw/other-gw``, ``a/b/c`` is
``a/c``: :func:`.httproute.parent_ref`).
"""
from __future__ import annotations

from omerender.errors import Report
from ..flags import warn_flags
from .overrides import DISABLE_CREATION, GATEWAY, PER_ISVC_SUBDOMAIN

BOOLEANS = {
    DISABLE_CREATION: "ingress creation stays on for this InferenceService",
    PER_ISVC_SUBDOMAIN: "per-InferenceService subdomains are off for this InferenceService",
}


def warn_misread(annotations: dict, report: Report) -> None:
    """One warning per annotation whose value OME reads otherwise than it looks (see the module)."""
    warn_flags(annotations, BOOLEANS, report)
    gateway = annotations.get(GATEWAY)
    if isinstance(gateway, str) and gateway and gateway.count("/") != 1:
        parts = gateway.split("/")
        read = f"{parts[0]}/{parts[-1]}"
        report.warn(f'annotation {GATEWAY}: "{gateway}" is not <namespace>/<name>: OME takes the first and the last '
                    f"part, the Gateway {parts[-1]} in namespace {parts[0]} ({read}); write <namespace>/<name>",
                    field=f"metadata.annotations.{GATEWAY}", code="misread-annotation")
