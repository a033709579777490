"""Path matches of the HTTPRoutes, and the rewrite that strips them.

Source: OME v1.3 ``builders/httproute_builder.go`` ``pathPrefix`` and ``componentFilters`` (commit 58a57f25):
on the shared host every route matches ``/<namespace>/<route>/`` and rewrites it to ``/``; with a hostname per
InferenceService it matches ``/`` and keeps the path as sent.
"""
from __future__ import annotations

ISVC_NAME_HEADER = "OMe-Isvc-Name"  # sic: OME's constants.IsvcNameHeader
ISVC_NAMESPACE_HEADER = "OME-Isvc-Namespace"


def path_prefix(namespace: str, route: str, per_isvc_subdomain: bool) -> str:
    return "/" if per_isvc_subdomain else f"/{namespace}/{route}/"


def filters(isvc_name: str, namespace: str, per_isvc_subdomain: bool) -> list[dict]:
    """The InferenceService headers, then (shared host only) the rewrite of the matched prefix to ``/``."""
    found = [{"type": "RequestHeaderModifier",
              "requestHeaderModifier": {"set": [{"name": ISVC_NAME_HEADER, "value": isvc_name},
                                                {"name": ISVC_NAMESPACE_HEADER, "value": namespace}]}}]
    if not per_isvc_subdomain:
        found.append({"type": "URLRewrite",
                      "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}})
    return found
