"""Annotation keys under OME's prefixes that OME v1.3 does not read: a warning naming the nearest key it reads
(``ome.io/deployment-mode`` → ``ome.io/deploymentMode``), since OME ignores a misspelt key without a word.

The keys OME v1.3 reads on an InferenceService, its components, a runtime (and its component configs), a model, and
the pods these annotations reach: OME v1.3's docs, reference/api/labels-and-annotations.md (the InferenceService,
ServingRuntime and ClusterServingRuntime, BaseModel and ClusterBaseModel, and Pods tables: every key a row says OME
reads, or sets and reads) and reference/api/traffic-annotations.md (the circuit breaker, retry and timeout families,
and the ``ome.io/btp.`` and ``ome.io/dr.`` prefixes), with ome-projects/ome pkg/constants/constants.go
(``models.ome.io/target-instance-shapes``). Keys under ``omerender.io/`` (omerender's own), ``prometheus.ome.io/`` and
``alfred.ome.io/`` are not under the prefixes checked. Keys OME sets and never reads on these objects (such as
``ome.io/serving-runtime``) are warned about too: writing them changes nothing.
"""
from __future__ import annotations

import difflib

from omerender.errors import ObjRef, Report
from omerender.suggest import per_owner

PREFIXES = ("ome.io/", "rdma.ome.io/", "runtime.ome.io/", "models.ome.io/")

READ = frozenset({
    # InferenceService: deployment and runtime, legacy autoscaling, scheduling queues
    "ome.io/deploymentMode", "ome.io/accelerator-class", "ome.io/runtime-sync", "ome.io/autoscalerClass",
    "ome.io/targetUtilizationPercentage", "ome.io/metrics", "ome.io/volcano-queue", "ome.io/dedicated-ai-cluster",
    # ingress
    "ome.io/ingress-disable-creation", "ome.io/ingress-domain", "ome.io/ingress-domain-template",
    "ome.io/ingress-url-scheme", "ome.io/ingress-gateway", "ome.io/ingress-additional-gateways",
    "ome.io/ingress-per-isvc-subdomain", "ome.io/ingress-shared-host-prefix", "ome.io/ingress-consistent-hash-headers",
    "ome.io/ingress-path-template", "ome.io/ingress-additional-domains", "ome.io/ingress-disable-istio-virtualhost",
    # traffic (the families are in FAMILIES)
    "ome.io/managed-by-conflict-acked", "ome.io/service-type", "ome.io/load-balancer-ip",
    # rollout actions and OMENative operations
    "ome.io/rollout-paused", "ome.io/rollout-promote", "ome.io/rollout-rollback", "ome.io/rollout-repin",
    "ome.io/rollout-ready-timeout", "ome.io/revision-history-limit",
    # multi-cluster placement
    "ome.io/accelerator-requirements", "ome.io/cluster-selector", "ome.io/local-queue", "ome.io/global-host",
    "ome.io/traffic-drain", "ome.io/placement-origin-uid", "ome.io/placement-execution", "ome.io/rollout-plan-source",
    # runtimes
    "ome.io/engine", "ome.io/runtime-profile", "ome.io/inherit-from",
    # models
    "models.ome.io/category", "models.ome.io/target-instance-shapes",
    # pods: keys you set
    "ome.io/inject-model-init", "ome.io/base-model-decryption-key-name", "ome.io/base-model-decryption-secret-name",
    "ome.io/disable-model-decryption", "ome.io/inject-serving-sidecar", "ome.io/enable-metric-aggregation",
    "ome.io/enable-prometheus-scraping", "rdma.ome.io/auto-inject", "rdma.ome.io/profile", "rdma.ome.io/container-name",
    "runtime.ome.io/container-name", "runtime.ome.io/shm-profile", "runtime.ome.io/probe-profile",
    "runtime.ome.io/probe-port", "runtime.ome.io/observability-profile", "runtime.ome.io/observability-port",
    # pods: keys OME sets and reads
    "ome.io/inject-fine-tuned-adapter", "ome.io/fine-tuned-weight-ft-strategy",
    "ome.io/fine-tuned-serving-with-merged-weights", "ome.io/base-model-name", "ome.io/base-model-vendor",
    "ome.io/base-model-format", "ome.io/base-model-format-version",
})
# Families of keys read by their prefix (traffic-annotations.md; the migration requests of labels-and-annotations.md).
FAMILIES = ("ome.io/circuit-breaker-", "ome.io/retry-", "ome.io/timeout-", "ome.io/btp.", "ome.io/dr.",
            "ome.io/migration-request-v1-")
INGRESS = "ome.io/ingress-"   # on the InferenceService itself, ingress.overrides.warn_unknown names these


def _fold(key: str) -> str:
    return key.lower().replace("-", "").replace("_", "")


_FOLDED = {_fold(key): key for key in READ}   # deployment-mode and DeploymentMode are deploymentMode
_SORTED = sorted(READ)
MAX_LOOKUPS = 64      # nearest keys looked for per render (each ~10 ms on a busy core)
MAX_KEY = 100         # a longer key (a key's name part is at most 63 characters) is compared with none
MAX_FOUND = 4096
_FOUND: dict[str, str] = {}   # a misspelt key -> the key it nearly is, across renders
_LOOKUPS: dict[int, tuple] = {}   # id(owner) -> (its weak reference, [lookups left])


def unread(key) -> bool:
    """Whether ``key`` is under :data:`PREFIXES` and OME v1.3 does not read it."""
    return (isinstance(key, str) and key.startswith(PREFIXES) and key not in READ
            and not key.startswith(FAMILIES))


def warn_unread(annotations, path: str, report: Report, owner: object, ref: ObjRef | None = None,
                file: str | None = None, skip: tuple[str, ...] = ()) -> None:
    """One warning per key of ``annotations`` (at ``path``) that OME v1.3 does not read, but those starting with
    ``skip``, each with the nearest key it reads where one is near (:func:`nearest_read`; ``owner``, the render's
    inputs, bounds how many are looked for)."""
    if not isinstance(annotations, dict):
        return
    for key in annotations:   # in the order written
        if unread(key) and not (skip and key.startswith(skip)):
            near = nearest_read(key, owner)
            hint = f'; did you mean "{near}"?' if near else ""
            report.warn(f"annotation {key} is not one OME v1.3 reads, and has no effect{hint}", ref=ref,
                        field=f"{path}.{key}", file=file, code="unknown-annotation")


def nearest_read(key: str, owner: object) -> str | None:
    """The key OME reads that ``key`` nearly is: the same but for case, ``-`` and ``_``, else the closest by
    difflib's ratio (0.6 at least). A comparison with every key costs milliseconds, so a render looks for at most
    :data:`MAX_LOOKUPS` (a hostile input may hold thousands of keys); a key found is kept for the next object."""
    near = _FOLDED.get(_fold(key)) or _FOUND.get(key)
    if near is not None or len(key) > MAX_KEY or not _spend(owner):
        return near
    found = difflib.get_close_matches(key, _SORTED, n=1, cutoff=0.6)
    if found and len(_FOUND) < MAX_FOUND:
        _FOUND[key] = found[0]
    return found[0] if found else None


def _spend(owner: object) -> bool:
    left = per_owner(_LOOKUPS, owner, MAX_LOOKUPS)
    left[0] -= 1
    return left[0] >= 0
