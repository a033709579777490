"""Runtime profiles: ``runtime.ome.io/shm-profile``, ``probe-profile`` and ``observability-profile`` (new in v1.3).

Docs: reference/api/labels-and-annotations.md ("Keys you set": the ``runtime.ome.io/`` rows, and "The webhook
denies a pod with an unknown ``runtime.ome.io/`` profile or an invalid port"). The probes' timings, which the docs
leave out: ome-projects/ome v1.3 pkg/webhook/admission/pod/runtime_profile_injector.go.
"""
from __future__ import annotations

import re

from .pod import MAIN_CONTAINER, Pod, add_mount, shown

CONTAINER = "runtime.ome.io/container-name"
SHM, PROBE, PROBE_PORT = "runtime.ome.io/shm-profile", "runtime.ome.io/probe-profile", "runtime.ome.io/probe-port"
OBSERVABILITY, OBSERVABILITY_PORT = "runtime.ome.io/observability-profile", "runtime.ome.io/observability-port"
DEFAULT_PORT = 30000
SHM_PROFILES = ("default",)
PROBE_PATHS = {"sglang-http": "/health", "vllm-http": "/health"}
OBSERVABILITY_PATHS = {"prometheus": "/metrics"}
# (field, initialDelaySeconds, periodSeconds, timeoutSeconds, failureThreshold, successThreshold); 0 is left unset
PROBE_TIMINGS = (("readinessProbe", 60, 30, 30, 5, 1), ("livenessProbe", 0, 60, 30, 5, 0),
                 ("startupProbe", 60, 30, 30, 60, 0))
_ATOI = re.compile(r"[+-]?[0-9]{1,12}")   # strconv.Atoi's syntax; longer is out of range either way


def _target(pod: Pod) -> dict | None:
    return pod.container(pod.annotation(CONTAINER) or MAIN_CONTAINER)


def _profile(pod: Pod, key: str) -> str | None:
    value = pod.annotation(key)
    return value or None


def inject_shm(pod: Pod) -> None:
    """A memory-backed emptyDir ``dshm`` at ``/dev/shm``, without a size limit, unless the pod has a volume or the
    container a mount of that name."""
    name = _profile(pod, SHM)
    if name is None:
        return
    if name not in SHM_PROFILES:
        raise pod.denied(f"unknown shm profile: {shown(name)} ({SHM}); OME v1.3 has {', '.join(SHM_PROFILES)}")
    container = _target(pod)
    if container is None:
        return
    pod.add_volume({"name": "dshm", "emptyDir": {"medium": "Memory"}})
    add_mount(container, "dshm", "/dev/shm")


def inject_probes(pod: Pod) -> None:
    """HTTP GET probes of the profile's path on ``runtime.ome.io/probe-port``, each only where the container has
    none of that kind."""
    name = _profile(pod, PROBE)
    if name is None:
        return
    path = PROBE_PATHS.get(name)
    if path is None:
        raise pod.denied(f"unknown probe profile: {shown(name)} ({PROBE}); OME v1.3 has {', '.join(PROBE_PATHS)}")
    port = _port(pod, PROBE_PORT)
    container = _target(pod)
    if container is None:
        return
    for field, delay, period, timeout, failures, successes in PROBE_TIMINGS:
        if container.get(field) is None:
            probe = {"httpGet": {"path": path, "port": port}}
            if delay:
                probe["initialDelaySeconds"] = delay
            probe.update(periodSeconds=period, timeoutSeconds=timeout, failureThreshold=failures)
            if successes:
                probe["successThreshold"] = successes
            container[field] = probe


def inject_observability(pod: Pod) -> None:
    """``prometheus.io/scrape``, ``port`` and ``path``, each only where the pod does not set it."""
    name = _profile(pod, OBSERVABILITY)
    if name is None:
        return
    path = OBSERVABILITY_PATHS.get(name)
    if path is None:
        raise pod.denied(f"unknown observability profile: {shown(name)} ({OBSERVABILITY}); OME v1.3 has "
                         f"{', '.join(OBSERVABILITY_PATHS)}")
    port = _port(pod, OBSERVABILITY_PORT)
    for key, value in (("prometheus.io/scrape", "true"), ("prometheus.io/port", str(port)),
                       ("prometheus.io/path", path)):
        pod.annotations.setdefault(key, value)


def _port(pod: Pod, key: str) -> int:
    value = pod.annotation(key)
    if not value:
        return DEFAULT_PORT
    if not _ATOI.fullmatch(value) or not 0 < int(value) <= 65535:
        raise pod.denied(f"invalid port {shown(value)} (annotation {key}); give a port from 1 to 65535")
    return int(value)
