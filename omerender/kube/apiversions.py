"""Whether the target cluster serves what a render wrote: its API versions (``helm template --api-versions``;
Argo CD's ``KUBE_API_VERSIONS``) and its Kubernetes version (``--kube-version``; ``KUBE_VERSION``).

Argo CD hands a plugin the destination cluster's served API versions as one comma-separated list, each
``group/version`` followed by ``group/version/Kind`` for every kind it serves (``v1`` and ``v1/Pod`` for the core
group: argo-cd util/argo APIResourcesToStrings, reposerver/repository getPluginEnvs). An object of a group/version
(or, where the list names kinds, a kind) missing from it would fail the sync at apply time with "could not find
the requested resource"; here it fails the render, naming what to install.
"""
from __future__ import annotations

import re

from omerender.errors import OmeError

# group -> what serves it, for the groups omerender's own output uses beyond Kubernetes' built-in ones
COMPONENTS = {
    "keda.sh": "KEDA (https://keda.sh), which KEDA autoscaling needs",
    "leaderworkerset.x-k8s.io": "LeaderWorkerSet (https://lws.sigs.k8s.io), which multi-node components need",
    "gateway.networking.k8s.io": "the Gateway API CRDs (https://gateway-api.sigs.k8s.io), which HTTPRoutes need",
    "gateway.envoyproxy.io": "Envoy Gateway (https://gateway.envoyproxy.io), which its traffic policies need",
    "monitoring.coreos.com": "the Prometheus Operator's CRDs, which PodMonitors need (or leave out pod-monitors)",
    "ome.io": "OME's CRDs, which the OME objects kept by keep-inputs and the models written for OME's model agent "
              "need (or leave out keep-inputs, and render with --model-weights download)",
}
# Kubernetes' own API groups ("" is the core group): a cluster lacks them only when older, or with them turned off
BUILTIN_GROUPS = frozenset({"", "apps", "autoscaling", "batch", "policy"}) | frozenset(
    f"{name}.k8s.io" for name in ("networking", "rbac.authorization", "discovery", "coordination", "storage",
                                  "scheduling", "node", "certificates", "admissionregistration", "apiextensions",
                                  "events", "resource", "flowcontrol.apiserver", "authentication", "authorization"))
# built-in group/version -> the first Kubernetes minor version (1.x) that serves it
BUILTIN_SINCE = {"autoscaling/v2": 23, "policy/v1": 21, "networking.k8s.io/v1": 19, "discovery.k8s.io/v1": 21}
MAX_ENTRIES = 10_000
_ENTRY = re.compile(r"(?:[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?v[0-9]+(?:(?:alpha|beta)[0-9]+)?(?:/[A-Za-z][A-Za-z0-9]{0,62})?")
_KUBE_VERSION = re.compile(r"v?([0-9]{1,3})\.([0-9]{1,3})(?:\.[0-9]{1,5})?(?:[-+][0-9A-Za-z.+-]{0,100})?")


def _shown(text: str) -> str:
    """``text`` for a message: escaped (a newline must not forge an error: line) and shortened."""
    shown = text.encode("unicode_escape").decode("ascii")
    return shown if len(shown) <= 80 else shown[:77] + "..."


def parse_api_versions(values: list[str], source: str) -> frozenset[str] | None:
    """The served entries named by ``values`` (each a comma-separated list); None when they name none (unknown:
    nothing is checked). ``source`` names where they came from, for messages."""
    entries = [e.strip() for value in values for e in value.split(",") if e.strip()]
    if len(entries) > MAX_ENTRIES:
        raise OmeError(f"{source} names {len(entries)} API versions; at most {MAX_ENTRIES} are read")
    for entry in entries:
        if not _ENTRY.fullmatch(entry):
            raise OmeError(f'{source}: "{_shown(entry)}" is no API version (GROUP/VERSION, GROUP/VERSION/Kind, '
                           f"v1 or v1/Kind, as kubectl api-versions prints them)")
    return frozenset(entries) or None


def parse_kube_version(value: str | None, source: str) -> tuple[int, int] | None:
    """(major, minor) of a Kubernetes version such as ``1.30.2``, ``v1.29.4+k3s1``; None when unset."""
    if not value:
        return None
    found = _KUBE_VERSION.fullmatch(value.strip())
    if not found:
        raise OmeError(f'{source}: "{_shown(value)}" is no Kubernetes version (MAJOR.MINOR[.PATCH], e.g. 1.30.2)')
    return int(found.group(1)), int(found.group(2))


def unserved(objects: list[dict], served: frozenset[str] | None, kube_version: tuple[int, int] | None,
             source: str, place=None) -> list[OmeError]:
    """An error for each object whose group/version (or kind) the cluster doesn't serve. A CustomResourceDefinition
    in ``objects`` counts as serving its kinds: the sync creates it first. ``place(obj)``, where given, is the
    (file, origin) of the input the object came from, which the error names; None where it doesn't know."""
    if served is None and kube_version is None:
        return []
    defined = _defined_by_crds(objects)
    errors = []
    for obj in objects:
        api, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        problem = (_not_served(api, kind, served, defined, source) if served is not None else None) or \
            _too_old(api, kube_version)
        if problem:
            file, origin = (place(obj) if place else None) or (None, None)
            errors.append(OmeError(f"{kind} {_where(obj)}: {problem}", file=file, origin=origin))
    return errors


def _not_served(api: str, kind: str, served: frozenset[str], defined: set[str], source: str) -> str | None:
    if f"{api}/{kind}" in defined:
        return None
    kinds_listed = any(entry.startswith(api + "/") for entry in served)
    if api in served and (not kinds_listed or f"{api}/{kind}" in served):
        return None
    group = api.rpartition("/")[0]
    what = f"{api} {kind}" if api in served else api
    if group in BUILTIN_GROUPS:
        return (f"the cluster doesn't serve {what} ({source}), which Kubernetes itself provides: the cluster is "
                f"older or has it turned off")
    install = COMPONENTS.get(group, f"what serves {group} (its CRD or operator)")
    return f"the cluster doesn't serve {what} ({source}); install {install}"


def _too_old(api: str, kube_version: tuple[int, int] | None) -> str | None:
    since = BUILTIN_SINCE.get(api)
    if kube_version is None or since is None or kube_version >= (1, since):
        return None
    return f"{api} needs Kubernetes 1.{since} or later; the cluster runs {kube_version[0]}.{kube_version[1]}"


def _defined_by_crds(objects: list[dict]) -> set[str]:
    defined = set()
    for obj in objects:
        if obj.get("kind") != "CustomResourceDefinition" or not isinstance(obj.get("spec"), dict):
            continue
        spec = obj["spec"]
        names = spec.get("names") if isinstance(spec.get("names"), dict) else {}
        for version in spec.get("versions") or []:
            if isinstance(version, dict) and version.get("served", True):
                defined.add(f"{spec.get('group')}/{version.get('name')}/{names.get('kind')}")
    return defined


def _where(obj: dict) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
    isvc = (meta.get("labels") or {}).get("ome.io/inferenceservice") if isinstance(meta.get("labels"), dict) else None
    return f"{name} (of InferenceService {isvc})" if isvc else name
